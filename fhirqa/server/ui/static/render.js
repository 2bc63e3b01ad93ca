// Rendering: patient search results, the patient header, the answer, its evidence and the plan.
// Pure DOM building from JSON the server returned; no fetching here (app.js does that).

import { h, fmtDay, fmtTime, fmtValue } from './dom.js';

/** The raw-resource URL of `ref` (Type/id) for `patientId`: the href of every source link. */
export function resourceHref(base, patientId, ref) {
  const [type, id] = String(ref).split('/');
  const path = `ui/api/patients/${encodeURIComponent(patientId)}/resources/${encodeURIComponent(type)}/${encodeURIComponent(id || '')}`;
  return new URL(path, base).href;
}

/** A link to a raw resource; app.js intercepts it (the request needs the bearer token). */
export function resourceLink(base, patientId, ref, text) {
  const short = String(ref).replace(/^([A-Za-z]+\/)(.{8}).{4,}$/, '$1$2…');
  return h('a', { href: resourceHref(base, patientId, ref), class: 'resource-link', 'data-ref': ref,
    title: `Show ${ref} as recorded`, 'aria-label': `${text || ref}: show the ${String(ref).split('/')[0]} resource` }, text || short);
}

/** Search results: one button per patient (Enter or Space picks it); `current` shows as pressed. */
export function patientResults(patients, current) {
  if (!patients.length) return [h('li', { class: 'muted' }, 'No patient matches (within what this token may see).')];
  return patients.map((p) => h('li', {},
    h('button', { type: 'button', class: 'patient-choice', 'data-id': p.id, 'aria-pressed': String(p.id === current) },
      h('span', { class: 'choice-name' }, p.name),
      h('span', { class: 'choice-meta' },
        [p.birth_date ? `born ${p.birth_date}` : null, p.gender, p.mrn ? `MRN ${p.mrn}` : null].filter(Boolean).join(' · ')))));
}

/** Demographic facts as <dt>/<dd> pairs. */
export function demographicFacts(p) {
  const facts = [
    ['Born', p.birth_date ? `${p.birth_date}${p.age != null ? ` (${p.age} y)` : ''}` : null],
    ['Sex', p.gender],
    ['MRN', p.mrn],
    ['Died', p.deceased ? fmtDay(p.deceased_time) || 'yes' : null],
    ['Lives in', [p.city, p.state].filter(Boolean).join(', ') || null],
    ['Language', p.language],
    ['Id', p.id],
  ];
  // <div> groups keep each term with its value when the line wraps (valid inside <dl>).
  return facts.filter(([, v]) => v).map(([k, v]) => h('div', { class: 'fact' },
    h('dt', {}, k), h('dd', { class: `fact-${k.toLowerCase().replace(/\s+/g, '-')}` }, v)));
}

/** One header list (problems, medications, allergies), or why it is empty. */
export function headerList(items, base, patientId, describe, withheld) {
  if (withheld) return [h('li', { class: 'muted' }, 'Not available with this token’s scopes.')];
  if (!items || !items.length) return [h('li', { class: 'muted' }, 'None recorded.')];
  return items.map((item) => h('li', {}, resourceLink(base, patientId, item.ref, item.name), describe(item)));
}

/** A label and colour class for an answer status. */
export function statusBadge(status) {
  const labels = { answered: 'Answered', 'no-data': 'No data', ambiguous: 'Ambiguous', refused: 'Refused', error: 'Error' };
  return h('span', { class: `badge badge-${status}`, 'data-status': status }, labels[status] || status);
}

/** The answer's values with the unit ("7.1 %"; a list for several). */
export function answerValues(answer) {
  const values = answer.answer || [];
  if (!values.length) return null;
  const unit = answer.unit ? ` ${answer.unit}` : '';
  if (values.length === 1) return h('p', { class: 'answer-value', id: 'answer-value' }, `${fmtValue(values[0])}${typeof values[0] === 'number' ? unit : ''}`);
  return h('ul', { class: 'answer-values', id: 'answer-value' }, values.map((v) => h('li', {}, `${fmtValue(v)}${typeof v === 'number' ? unit : ''}`)));
}

/** Evidence rows: time, item, value, unit, source (link to the raw resource). */
export function evidenceRows(evidence, base, patientId) {
  // data-label: narrow screens show each row as a card with the column names (see style.css).
  return evidence.map((row) => h('tr', { 'data-ref': row.ref },
    h('td', { class: 'c-time', 'data-label': 'Time (as recorded)' }, h('time', { datetime: row.time || '' }, fmtTime(row.time) || '—')),
    h('td', { class: 'c-item', 'data-label': 'Item' }, row.label || row.field || '—'),
    h('td', { class: 'c-value', 'data-label': 'Value' }, fmtValue(row.value)),
    h('td', { class: 'c-unit', 'data-label': 'Unit' }, row.unit || ''),
    h('td', { class: 'c-source', 'data-label': 'Source' },
      h('div', {}, resourceLink(base, patientId, row.ref), h('span', { class: 'field' }, row.field || '')))));
}

/** One tool call as a line: name(arguments) → what came back. */
function toolCall(call, index) {
  const args = Object.entries(call.arguments || {}).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ');
  const r = call.result || {};
  const bits = [];
  if (r.ok === false) bits.push(`error: ${r.error || 'failed'}`);
  if (r.count !== undefined) bits.push(`${r.count} row${r.count === 1 ? '' : 's'}`);
  // items is a list of names, or a summary string ("<10 entries>") when the list was long.
  if (Array.isArray(r.items) && r.items.length) bits.push(r.items.slice(0, 3).join('; ') + (r.items.length > 3 ? '; …' : ''));
  else if (typeof r.items === 'string') bits.push(r.items);
  if (r.time_range) bits.push(`${fmtDay(r.time_range.earliest)} – ${fmtDay(r.time_range.latest)}`);
  if (r.window) bits.push(`window ${fmtDay(r.window.start)} – ${fmtDay(r.window.end)}`);
  if (r.row && r.row.ref) bits.push(r.row.ref);
  if (r.handle) bits.push(`→ ${r.handle}`);
  return h('li', { class: 'tool-call', 'data-tool': call.tool },
    h('code', {}, `${call.tool}(${args})`), bits.length ? h('span', { class: 'tool-result' }, bits.join(' · ')) : null,
    h('span', { class: 'visually-hidden' }, ` step ${index + 1}`));
}

/** The plan the engine followed: how it read the question, the views and fields, each tool call. */
export function planContent(trace) {
  if (!trace) return [h('p', { class: 'muted' }, 'No trace was returned.')];
  const parts = [];
  const parse = trace.plan && trace.plan.parse;
  if (parse) {
    const read = [['intent', parse.intent], ['item', parse.entity], ['window', parse.window], ['drug', parse.drug],
      ['aggregate', parse.aggregate], ['position', parse.position]].filter(([, v]) => v);
    parts.push(h('p', { class: 'plan-parse' }, 'Read the question as ', ...read.flatMap(([k, v], i) =>
      [i ? ', ' : '', h('strong', {}, k), ` ${v}`]), '.'));
  }
  const views = trace.views || [];
  parts.push(h('p', { class: 'plan-views' }, 'Views: ', views.length ? views.map((v) => h('span', { class: 'chip' }, v)) : 'none'));
  const fields = Object.entries(trace.fields || {});
  if (fields.length) parts.push(h('p', { class: 'plan-fields' }, 'Fields: ', fields.map(([v, f]) => `${v}(${f.join(', ')})`).join('; ')));
  const calls = trace.tool_calls || [];
  parts.push(calls.length ? h('ol', { class: 'tool-calls', id: 'tool-calls' }, calls.map(toolCall))
    : h('p', { class: 'muted' }, 'No tool calls.'));
  if (trace.now) parts.push(h('p', { class: 'muted' }, `Answered as of ${fmtTime(trace.now)}.`));
  return parts;
}

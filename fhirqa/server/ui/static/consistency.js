// The Notes panel: the patient's notes, and for the chosen one its text with every entity the
// note–table consistency check read highlighted by verdict (consistent, inconsistent,
// unverifiable), keyboard-focusable, with a detail box (status, mismatching fields, reason and
// the record rows compared) on click or Enter.
//
// Data: GET ui/api/patients/{id}/notes (the list), GET ui/api/patients/{id}/notes/{Type}/{id} (one
// note's text) and POST api/patients/{id}/check-consistency {note} (the report). The note text is
// only ever inserted as text nodes. Spans are code-point offsets (Python's), so the text is cut by
// code points, not UTF-16 units.

import * as api from './api.js';
import { byId, fmtTime, fmtValue, h, show } from './dom.js';
import { resourceLink } from './render.js';

const STATUS_LABEL = { consistent: 'Consistent', inconsistent: 'Inconsistent', unverifiable: 'Unverifiable' };
const RANK = { inconsistent: 3, consistent: 2, unverifiable: 1 };
const state = { patientId: null, seq: 0, report: null };
const el = {};

/** Time, item, value and unit of a compared row, whatever view it comes from. */
export function rowCells(row) {
  const time = ['time', 'onset_time', 'start_time', 'recorded_time', 'end_time'].map((k) => row[k]).find(Boolean);
  const value = [row.value, row.dose, row.value_text, row.status].find((v) => v !== undefined && v !== null && v !== '');
  return { time: time ? fmtTime(time) : '—', item: row.name || row.medication_name || row.display || '—',
    value: value === undefined ? '—' : fmtValue(value), unit: row.unit || row.dose_unit || '' };
}

/** The worst status of a group of entities (inconsistent > consistent > unverifiable). */
function worst(statuses) {
  return statuses.reduce((a, b) => ((RANK[b] || 0) > (RANK[a] || 0) ? b : a), 'unverifiable');
}

/**
 * Marks for the report's entities over `text`: entities with the same span share one mark; a span
 * overlapping an earlier one starts where that one ends (or joins it when nothing is left of it).
 * Returns DOM nodes: text nodes and <mark> elements.
 */
export function highlightedText(text, entities) {
  const chars = Array.from(text);
  const groups = new Map();
  entities.forEach((entity, index) => {
    const span = (entity.entity && entity.entity.span) || [];
    const [start, end] = [Number(span[0]), Number(span[1])];
    if (!Number.isInteger(start) || !Number.isInteger(end) || end <= start || start < 0 || end > chars.length) return;
    const key = `${start},${end}`;
    if (!groups.has(key)) groups.set(key, { start, end, indices: [] });
    groups.get(key).indices.push(index);
  });
  const ordered = [...groups.values()].sort((a, b) => a.start - b.start || b.end - a.end);
  const nodes = [];
  let cursor = 0;
  let last = null;
  for (const group of ordered) {
    const from = Math.max(group.start, cursor);
    if (from >= group.end && last) {
      last.indices.push(...group.indices); // wholly inside the previous mark
      continue;
    }
    if (from > cursor) nodes.push(document.createTextNode(chars.slice(cursor, from).join('')));
    last = { ...group, from, node: null };
    nodes.push(last);
    cursor = group.end;
  }
  if (cursor < chars.length) nodes.push(document.createTextNode(chars.slice(cursor).join('')));
  return nodes.map((node) => (node instanceof Node ? node : markFor(node, chars, entities)));
}

function markFor(group, chars, entities) {
  const statuses = group.indices.map((i) => entities[i].status);
  const status = worst(statuses);
  const tip = group.indices.map((i) => summary(entities[i])).join('\n');
  return h('mark', {
    class: `ent ent-${status}`, tabindex: 0, role: 'button', 'aria-haspopup': 'true',
    'data-span': `${group.start},${group.end}`, 'data-status': status,
    'data-entities': group.indices.join(' '), 'data-statuses': statuses.join(' '), title: tip,
    'aria-label': `${chars.slice(group.from, group.end).join('')}: ${STATUS_LABEL[status] || status}. Press Enter for details.`,
  }, chars.slice(group.from, group.end).join(''));
}

/** One line for the hover tooltip: status, fields, and the first compared row. */
function summary(entity) {
  const parts = [`${STATUS_LABEL[entity.status] || entity.status}`];
  if (entity.fields && entity.fields.length) parts.push(`(${entity.fields.join(', ')})`);
  const row = (entity.rows || [])[0];
  if (row) {
    const c = rowCells(row);
    parts.push(`— record: ${c.item} ${c.value === '—' ? '' : c.value} ${c.unit} ${c.time}`.replace(/\s+/g, ' '));
    if (entity.rows.length > 1) parts.push(`(+${entity.rows.length - 1} more)`);
  } else if (entity.reason) {
    parts.push(`— ${entity.reason}`);
  }
  return parts.join(' ');
}

/** The detail box of one mark: each entity it covers, with its verdict and compared rows. */
function detailContent(entities, indices, patientId, noteText) {
  const chars = Array.from(noteText);
  return indices.map((i) => {
    const e = entities[i];
    const span = e.entity.span;
    const rows = e.rows || [];
    const ent = e.entity || {};
    const written = [ent.value_text, ent.unit].filter(Boolean).join(' ');
    return h('div', { class: `entity-card ent-card-${e.status}`, 'data-index': i, 'data-status': e.status },
      h('h3', {}, h('span', { class: `badge ent-badge-${e.status}` }, STATUS_LABEL[e.status] || e.status), ' ',
        `“${chars.slice(span[0], span[1]).join('')}”`),
      h('dl', { class: 'entity-facts' },
        h('div', {}, h('dt', {}, 'Kind'), h('dd', {}, [ent.category, ent.context].filter(Boolean).join(', ') || '—')),
        written ? h('div', {}, h('dt', {}, 'Note says'), h('dd', {}, written)) : null,
        h('div', { class: 'entity-fields' }, h('dt', {}, 'Mismatching fields'), h('dd', {}, (e.fields || []).join(', ') || 'none')),
        (e.items || []).length ? h('div', {}, h('dt', {}, 'Record items'), h('dd', {}, e.items.join('; '))) : null,
        h('div', { class: 'entity-reason' }, h('dt', {}, 'Reason'), h('dd', {}, e.reason || '—'))),
      rows.length
        ? h('div', { class: 'table-wrap' }, h('table', { class: 'evidence compared' },
          h('caption', { class: 'small' }, `Record rows compared (${rows.length})`),
          h('thead', {}, h('tr', {}, ...['Time (as recorded)', 'Item', 'Value', 'Unit', 'Source'].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, ...rows.map((row) => {
            const c = rowCells(row);
            return h('tr', { 'data-ref': row.ref || '' },
              h('td', { class: 'c-time', 'data-label': 'Time' }, c.time),
              h('td', { class: 'c-item', 'data-label': 'Item' }, c.item),
              h('td', { class: 'c-value', 'data-label': 'Value' }, c.value),
              h('td', { class: 'c-unit', 'data-label': 'Unit' }, c.unit),
              h('td', { class: 'c-ref', 'data-label': 'Source' }, row.ref ? resourceLink(api.BASE, patientId, row.ref) : '—'));
          }))))
        : h('p', { class: 'muted small' }, 'No record rows were compared.'));
  });
}

// ---------------------------------------------------------------- controller

function setState(value) {
  el.notes.dataset.state = value;
}

/** Forget the patient's notes (a new patient, or signing out). */
export function resetNotes() {
  state.seq += 1;
  state.patientId = null;
  state.report = null;
  show(el.notes, false);
  show(el['note-view'], false);
  el['note-list'].replaceChildren();
  el['note-text'].replaceChildren();
  el['entity-detail'].replaceChildren();
  setState('idle');
}

/** Load the list of notes of `patientId` into the panel. */
export async function showNotes(patientId) {
  resetNotes();
  const seq = state.seq;
  state.patientId = patientId;
  show(el.notes, true);
  setState('listing');
  try {
    const body = await api.get(`ui/api/patients/${api.seg(patientId)}/notes`);
    if (seq !== state.seq) return;
    const notes = body.notes || [];
    el['note-list'].replaceChildren(...(notes.length ? notes.map((n) => h('li', {},
      h('button', { type: 'button', class: 'note-choice', 'data-ref': n.ref, 'aria-pressed': 'false' },
        h('span', { class: 'note-date' }, fmtTime(n.time) || 'no date'),
        h('span', { class: 'note-type' }, n.title || n.note_type || n.ref.split('/')[0])))) : [h('li', { class: 'muted' }, 'No notes with text.')]));
    setState('listed');
  } catch (err) {
    if (seq !== state.seq) return;
    el['note-list'].replaceChildren(h('li', { class: 'error' }, `Notes cannot be shown: ${err.message}`));
    setState('error');
  }
}

async function openNote(ref) {
  const patientId = state.patientId;
  const seq = ++state.seq;
  for (const button of el['note-list'].querySelectorAll('.note-choice')) {
    button.setAttribute('aria-pressed', String(button.dataset.ref === ref));
  }
  setState('checking');
  show(el['note-view'], true);
  el['note-title'].textContent = ref;
  el['note-counts'].textContent = 'Checking the note against the record…';
  el['note-text'].replaceChildren();
  el['entity-detail'].replaceChildren();
  show(el['entity-detail'], false);
  try {
    const [type, id] = ref.split('/');
    const [note, checked] = await Promise.all([
      api.get(`ui/api/patients/${api.seg(patientId)}/notes/${api.seg(type)}/${api.seg(id)}`),
      api.post(`api/patients/${api.seg(patientId)}/check-consistency`, { note: ref }),
    ]);
    if (seq !== state.seq) return;
    const report = (checked.reports || [])[0] || { entities: [], counts: {} };
    state.report = { report, text: note.text || '', patientId };
    el['note-title'].textContent = `${note.title || note.note_type || 'Note'} · ${fmtTime(note.time)}`;
    const counts = report.counts || {};
    el['note-counts'].replaceChildren(...['consistent', 'inconsistent', 'unverifiable'].map((s) =>
      h('span', { class: `count ent-badge-${s}`, 'data-status': s }, `${counts[s] || 0} ${s}`)));
    el['note-text'].dataset.ref = ref;
    el['note-text'].replaceChildren(...highlightedText(note.text || '', report.entities || []));
    setState('ready');
  } catch (err) {
    if (seq !== state.seq) return;
    el['note-counts'].textContent = `The note could not be checked: ${err.message}`;
    setState('error');
  }
}

function openDetail(mark) {
  const current = state.report;
  if (!current) return;
  for (const other of el['note-text'].querySelectorAll('mark.ent[aria-expanded="true"]')) other.setAttribute('aria-expanded', 'false');
  mark.setAttribute('aria-expanded', 'true');
  const indices = mark.dataset.entities.split(' ').map(Number);
  el['entity-detail'].dataset.span = mark.dataset.span;
  el['entity-detail'].replaceChildren(
    h('div', { class: 'dialog-head' }, h('h3', { id: 'entity-detail-title', tabindex: -1 }, 'Checked in the note'),
      h('button', { type: 'button', class: 'quiet entity-close' }, 'Close')),
    ...detailContent(current.report.entities, indices, current.patientId, current.text));
  show(el['entity-detail'], true);
  el['entity-detail'].scrollIntoView({ block: 'nearest' });
}

/** Look the panel's elements up and wire its events (once, at start). */
export function initNotes() {
  for (const id of ['notes', 'note-list', 'note-view', 'note-title', 'note-counts', 'note-text', 'entity-detail']) el[id] = byId(id);
  el['note-list'].addEventListener('click', (event) => {
    const button = event.target.closest('.note-choice');
    if (button) openNote(button.dataset.ref);
  });
  el['note-text'].addEventListener('click', (event) => {
    const mark = event.target.closest('mark.ent');
    if (mark) openDetail(mark);
  });
  el['note-text'].addEventListener('keydown', (event) => {
    const mark = event.target.closest('mark.ent');
    if (mark && (event.key === 'Enter' || event.key === ' ')) {
      event.preventDefault();
      openDetail(mark);
    }
  });
  el['entity-detail'].addEventListener('click', (event) => {
    if (!event.target.closest('.entity-close')) return;
    const span = el['entity-detail'].dataset.span;
    show(el['entity-detail'], false);
    const mark = el['note-text'].querySelector(`mark.ent[data-span="${span}"]`);
    if (mark) {
      mark.setAttribute('aria-expanded', 'false');
      mark.focus();
    }
  });
  setState('idle');
}

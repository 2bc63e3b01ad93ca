// Which chart an answer deserves, built from the answer's own evidence rows.
//
// The evidence decides: observation values → the lab or vital over time (its full series fetched
// for context, the evidence points highlighted, the reference range shaded); medication rows → a
// lane per drug with its orders, dispenses and administrations; both → one chart with the drug's
// start marked, so values before and after it read at a glance. The question's time window comes
// from the plan the engine followed (its filter_by_date call), and a "no-data" answer shades that
// window empty instead of hiding the chart.

import { isoDay, parseTime, rangeText } from './chart.js';

const unique = (items) => [...new Set(items)];

/** The most frequent item (first seen wins ties). */
function mostCommon(items) {
  const counts = new Map();
  for (const item of items) counts.set(item, (counts.get(item) || 0) + 1);
  let best = null;
  for (const [item, n] of counts) if (best === null || n > counts.get(best)) best = item;
  return best;
}

/** The time window the engine filtered on, from the trace ({start, end} in ms, or null). */
export function traceWindow(trace) {
  const calls = (trace && trace.tool_calls) || [];
  const filters = calls.filter((c) => c.tool === 'filter_by_date' && c.arguments);
  if (!filters.length) return null;
  const last = filters[filters.length - 1].arguments;
  const now = parseTime(trace.now) ?? Date.now();
  const start = parseTime(last.start);
  const end = parseTime(last.end) ?? now;
  if (start === null && last.end == null) return null;
  return { start: start ?? Number.NaN, end };
}

/** The item a no-data answer looked for (the engine's get_resources on observations). */
function soughtItem(trace) {
  for (const call of (trace && trace.tool_calls) || []) {
    const result = call.result || {};
    if (call.tool === 'get_resources' && result.view === 'observation' && (result.items || []).length) {
      return result.items[0];
    }
  }
  return null;
}

/**
 * What to chart for `answer`: { kind: 'lab' | 'meds' | 'lab-drug' | null, lab, meds, window,
 * emptyWindow, markers } — lab is an observation name, meds medication names.
 */
export function chartPlan(answer) {
  const evidence = answer.evidence || [];
  const obs = evidence.filter((r) => (r.field || '').startsWith('observation.') && typeof r.value === 'number');
  const medRows = evidence.filter((r) => (r.field || '').startsWith('medication.') && r.label);
  const emptyWindow = answer.status === 'no-data';
  let lab = obs.length ? mostCommon(obs.map((r) => r.label)) : null;
  if (!lab && emptyWindow) lab = soughtItem(answer.trace);
  const meds = unique(medRows.map((r) => r.label)).slice(0, 6);
  const markers = [];
  if (lab && meds.length) {
    // The drug's start as the answer saw it: its earliest evidence row.
    const first = medRows.map((r) => ({ r, t: parseTime(r.time) })).filter((x) => x.t !== null)
      .sort((a, b) => a.t - b.t)[0];
    if (first) markers.push({ t: first.t, name: first.r.label, suffix: `started ${isoDay(first.t)}` });
  }
  const kind = lab && meds.length ? 'lab-drug' : lab ? 'lab' : meds.length ? 'meds' : null;
  let window = traceWindow(answer.trace);
  if (window && !Number.isFinite(window.start)) window = null;
  return { kind, lab, meds, window, emptyWindow, markers };
}

/** `ref|time-in-ms` — how an evidence row and a view row are recognised as the same record. */
function key(ref, time) {
  return `${ref}|${parseTime(time)}`;
}

/** Series points of `lab` from observation view rows, the evidence rows flagged (and added if missing). */
function labSeries(lab, rows, evidence) {
  const used = new Set(evidence.filter((r) => r.label === lab).map((r) => key(r.ref, r.time)));
  const points = [];
  const seen = new Set();
  let refLow = null;
  let refHigh = null;
  let latestRange = -Infinity;
  let unit = null;
  for (const row of rows) {
    if (row.name !== lab || typeof row.value !== 'number') continue;
    const t = parseTime(row.time);
    if (t === null) continue;
    const k = key(row.ref, row.time);
    seen.add(k);
    const abnormal = (Number.isFinite(row.ref_low) && row.value < row.ref_low)
      || (Number.isFinite(row.ref_high) && row.value > row.ref_high);
    points.push({ t, v: row.value, ref: row.ref, evidence: used.has(k), abnormal });
    if ((Number.isFinite(row.ref_low) || Number.isFinite(row.ref_high)) && t >= latestRange) {
      latestRange = t;
      refLow = Number.isFinite(row.ref_low) ? row.ref_low : null;
      refHigh = Number.isFinite(row.ref_high) ? row.ref_high : null;
    }
    unit = row.unit || unit;
  }
  for (const r of evidence) {
    if (r.label !== lab || typeof r.value !== 'number' || seen.has(key(r.ref, r.time))) continue;
    const t = parseTime(r.time);
    if (t !== null) points.push({ t, v: r.value, ref: r.ref, evidence: true, abnormal: false });
    unit = unit || r.unit;
  }
  return { points, refLow, refHigh, unit };
}

/** One lane per medication: orders (requests, statements) as spans; dispenses and administrations as events. */
function medLanes(names, rows, evidence) {
  const used = new Set(evidence.map((r) => r.ref));
  return names.map((name) => {
    const orders = [];
    const events = [];
    for (const row of rows) {
      if (row.medication_name !== name) continue;
      const t = parseTime(row.time);
      if (t === null) continue;
      const dose = row.dosage_text || (row.dose != null ? `${row.dose} ${row.dose_unit || ''}`.trim() : '');
      const label = `${row.kind} ${isoDay(t)}${row.end_time ? ` – ${isoDay(parseTime(row.end_time))}` : ''}`
        + `${dose ? ` · ${dose}` : ''}${row.status ? ` · ${row.status}` : ''}`;
      if (row.kind === 'request' || row.kind === 'statement') {
        orders.push({ start: t, end: parseTime(row.end_time), ref: row.ref, evidence: used.has(row.ref), label });
      } else {
        events.push({ t, kind: row.kind, ref: row.ref, evidence: used.has(row.ref), label });
      }
    }
    // Evidence rows the view did not return (a narrower token, a truncated read) still show.
    for (const r of evidence) {
      if (r.label !== name || rows.some((row) => row.ref === r.ref)) continue;
      const t = parseTime(r.time);
      if (t !== null) orders.push({ start: t, end: null, ref: r.ref, evidence: true, label: `${r.label} ${isoDay(t)}` });
    }
    return { name, orders, events };
  });
}

/** The drawTimeline() spec and a legend for `plan`, from the evidence and the fetched view rows. */
export function buildSpec(plan, answer, obsRows, medRows) {
  const evidence = answer.evidence || [];
  const spec = { series: [], meds: [], markers: plan.markers, window: plan.window, emptyWindow: plan.emptyWindow };
  const parts = [];
  const legend = [];
  if (plan.lab) {
    const { points, refLow, refHigh, unit } = labSeries(plan.lab, obsRows, evidence);
    Object.assign(spec, { series: points, refLow, refHigh, unit });
    const times = points.map((p) => p.t);
    const used = points.filter((p) => p.evidence).length;
    // A no-data answer's evidence is the nearest record outside the window: context, not the answer.
    const usedAs = plan.emptyWindow ? 'nearest record outside the window' : 'used by the answer';
    parts.push(points.length
      ? `${plan.lab}: ${points.length} result${points.length === 1 ? '' : 's'} from ${isoDay(Math.min(...times))} to ${isoDay(Math.max(...times))}, ${used} ${usedAs}`
      : `${plan.lab}: no results`);
    legend.push({ cls: 'sw-series', label: 'result' });
    if (used) legend.push({ cls: 'sw-evidence', label: usedAs });
    if (points.some((p) => p.abnormal)) legend.push({ cls: 'sw-abnormal', label: 'outside reference range' });
    const range = rangeText(refLow, refHigh, unit);
    if (range) {
      parts.push(`reference range ${range}`);
      legend.push({ cls: 'sw-ref', label: `reference range ${range}` });
    }
  }
  if (plan.meds.length) {
    spec.meds = medLanes(plan.meds, medRows, evidence);
    parts.push(`medications: ${plan.meds.join(', ')}`);
    // Only the kinds of marks the chart really has.
    const events = spec.meds.flatMap((lane) => lane.events.map((e) => e.kind));
    if (spec.meds.some((lane) => lane.orders.length)) legend.push({ cls: 'sw-order', label: 'order or statement (start – end)' });
    if (events.includes('dispense')) legend.push({ cls: 'sw-dispense', label: 'dispense' });
    if (events.includes('administration')) legend.push({ cls: 'sw-admin', label: 'administration' });
  }
  if (plan.window) {
    parts.push(`window ${isoDay(plan.window.start)} to ${isoDay(plan.window.end)}${plan.emptyWindow ? ' (no data in it)' : ''}`);
    legend.push({ cls: plan.emptyWindow ? 'sw-window-empty' : 'sw-window', label: plan.emptyWindow ? 'window (no data)' : 'question window' });
  }
  for (const m of plan.markers) {
    parts.push(`${m.name} ${m.suffix}`);
    legend.push({ cls: 'sw-marker', label: 'drug started' });
  }
  spec.title = plan.kind === 'lab-drug' ? `${plan.lab} and ${plan.meds.join(', ')}`
    : plan.lab || `Medications: ${plan.meds.join(', ')}`;
  spec.description = `${parts.join('; ')}.`;
  return { spec, legend, caption: spec.description };
}

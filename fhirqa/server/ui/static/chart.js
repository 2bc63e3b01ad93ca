// A small SVG charting helper: values over time, reference ranges, a time window, markers, and
// medication lanes (orders as bars, dispenses and administrations as ticks and dots) sharing one
// time axis. Hand-written so the page needs no library and no network; SVG (not canvas) so points
// keep their own tooltips (<title>) and the chart scales crisply. Styling is by CSS class only:
// the page's Content-Security-Policy forbids inline style attributes.

const NS = 'http://www.w3.org/2000/svg';
const DAY = 86400000;
let chartCount = 0;

/** An SVG element with attributes and children (strings become text nodes, never markup). */
function s(tag, attrs = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

/** Milliseconds since the epoch for an ISO string (null when missing or unparsable). A time written without an
 * offset (a calendar bound of a window, which the engine reads on each record's own clock) is taken as UTC, not as
 * the browser's zone: the chart's axis is UTC, its labels and tables show each time as recorded. */
export function parseTime(iso) {
  if (!iso) return null;
  const text = String(iso);
  const floating = /^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(text);
  const ms = Date.parse(floating ? `${text}Z` : text);
  return Number.isNaN(ms) ? null : ms;
}

/** `YYYY-MM-DD` in UTC, the chart axis's day. */
export function isoDay(ms) {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Round-number ticks covering [min, max] (the classic "nice numbers" choice of step). */
export function niceTicks(min, max, count = 5) {
  const span = max - min || Math.abs(max) || 1;
  const raw = span / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((c) => c >= raw) || raw;
  const ticks = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) ticks.push(+v.toFixed(10));
  return { ticks, step };
}

/** A number as a tick label, with as many decimals as the step needs. */
function tickLabel(value, step) {
  const decimals = Math.max(0, Math.min(4, -Math.floor(Math.log10(step) + 1e-9)));
  return value.toFixed(decimals);
}

/** Calendar-aligned time ticks between t0 and t1 (UTC), at most `max` of them. */
export function timeTicks(t0, t1, max = 8) {
  const steps = [[1, 'day'], [7, 'day'], [1, 'month'], [3, 'month'], [6, 'month'], [1, 'year'],
    [2, 'year'], [5, 'year'], [10, 'year']];
  const spanDays = (t1 - t0) / DAY;
  const approx = { day: 1, month: 30.44, year: 365.25 };
  const [n, unit] = steps.find(([k, u]) => spanDays / (k * approx[u]) <= max) || steps[steps.length - 1];
  const start = new Date(t0);
  let d;
  if (unit === 'year') d = Date.UTC(Math.ceil(start.getUTCFullYear() / n) * n, 0, 1);
  else if (unit === 'month') d = Date.UTC(start.getUTCFullYear(), Math.ceil(start.getUTCMonth() / n) * n, 1);
  else d = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate());
  const ticks = [];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  while (d <= t1 && ticks.length < 60) {
    const date = new Date(d);
    if (d >= t0) {
      const label = unit === 'year' ? String(date.getUTCFullYear())
        : unit === 'month' ? `${months[date.getUTCMonth()]} ${date.getUTCFullYear()}`
          : isoDay(d);
      ticks.push({ t: d, label });
    }
    if (unit === 'year') d = Date.UTC(date.getUTCFullYear() + n, 0, 1);
    else if (unit === 'month') d = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + n, 1);
    else d += n * DAY;
  }
  return ticks;
}

/** A linear scale from a domain to a pixel range. */
function scale(d0, d1, r0, r1) {
  const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
  return (v) => r0 + (v - d0) * k;
}

/** Text shortened to about `chars` characters (full text stays in the tooltip). */
function clip(text, chars) {
  return text.length > chars ? `${text.slice(0, Math.max(1, chars - 1))}…` : text;
}

/** The x (time) domain of everything the chart shows, padded a little on both sides. */
function timeDomain(spec) {
  const times = [];
  for (const p of spec.series || []) times.push(p.t);
  if (spec.window) times.push(spec.window.start, spec.window.end);
  for (const m of spec.markers || []) times.push(m.t);
  for (const lane of spec.meds || []) {
    for (const o of lane.orders) times.push(o.start, o.end);
    for (const e of lane.events) times.push(e.t);
  }
  const finite = times.filter((t) => Number.isFinite(t));
  if (!finite.length) return [Date.now() - 365 * DAY, Date.now()];
  let t0 = Math.min(...finite);
  let t1 = Math.max(...finite);
  if (t1 - t0 < 30 * DAY) { t0 -= 15 * DAY; t1 += 15 * DAY; }
  const pad = (t1 - t0) * 0.04;
  return [t0 - pad, t1 + pad];
}

/** The y (value) domain: the values and the reference range, padded; never below 0 for positive data. */
function valueDomain(spec) {
  const values = (spec.series || []).map((p) => p.v);
  for (const r of [spec.refLow, spec.refHigh]) if (Number.isFinite(r)) values.push(r);
  if (!values.length) return [0, 1];
  let v0 = Math.min(...values);
  let v1 = Math.max(...values);
  if (v0 === v1) { v0 -= Math.abs(v0) * 0.1 || 1; v1 += Math.abs(v1) * 0.1 || 1; }
  const pad = (v1 - v0) * 0.1;
  const low = v0 >= 0 && v0 - pad < 0 ? 0 : v0 - pad;
  return [low, v1 + pad];
}

/**
 * Draw a timeline into `container` (its content is replaced); returns the <svg>.
 *
 * spec: { title, unit, series: [{t, v, ref, evidence, abnormal, label}], refLow, refHigh,
 *         window: {start, end} | null, emptyWindow, markers: [{t, name, suffix}],
 *         meds: [{name, orders: [{start, end, ref, evidence, label}], events: [{t, kind, ref, evidence, label}]}],
 *         description }
 */
export function drawTimeline(container, spec) {
  const id = `chart-${++chartCount}`;
  const width = Math.max(300, Math.round(container.clientWidth || 720));
  const series = spec.series || [];
  const meds = spec.meds || [];
  const hasValues = series.length > 0;
  const narrow = width < 520;
  const margin = { left: hasValues ? (narrow ? 44 : 56) : 12, right: narrow ? 10 : 18, top: 30 };
  const plotHeight = hasValues ? Math.round(Math.min(300, Math.max(180, width * 0.34))) : 0;
  const laneHeight = 34;
  const lanesTop = margin.top + plotHeight + (hasValues ? 14 : 0);
  const axisTop = lanesTop + meds.length * laneHeight;
  const height = axisTop + 28;
  const x0 = margin.left;
  const x1 = width - margin.right;

  const [t0, t1] = timeDomain(spec);
  const x = scale(t0, t1, x0, x1);
  const [v0, v1] = valueDomain(spec);
  const y = scale(v0, v1, margin.top + plotHeight, margin.top);
  const clampX = (t) => Math.max(x0, Math.min(x1, x(t)));

  const title = s('title', { id: `${id}-title` }, spec.title || 'Timeline');
  const desc = s('desc', { id: `${id}-desc` }, spec.description || '');
  const root = s('svg', {
    class: 'chart-svg', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
    'aria-labelledby': `${id}-title ${id}-desc`,
  }, title, desc);

  // Time grid and axis first, so everything else draws over it.
  const ticks = timeTicks(t0, t1, Math.max(3, Math.floor((x1 - x0) / (narrow ? 70 : 90))));
  const grid = s('g', { class: 'grid' });
  for (const tick of ticks) {
    const tx = x(tick.t);
    grid.append(s('line', { x1: tx, x2: tx, y1: margin.top, y2: axisTop, class: 'gridline' }));
    grid.append(s('text', { x: tx, y: axisTop + 18, class: 'tick tick-x', 'text-anchor': 'middle' }, tick.label));
  }
  grid.append(s('line', { x1: x0, x2: x1, y1: axisTop, y2: axisTop, class: 'axis' }));
  root.append(grid);

  if (hasValues) {
    const { ticks: yTicks, step } = niceTicks(v0, v1, plotHeight > 220 ? 6 : 4);
    const yAxis = s('g', { class: 'grid' });
    for (const v of yTicks) {
      yAxis.append(s('line', { x1: x0, x2: x1, y1: y(v), y2: y(v), class: 'gridline' }));
      yAxis.append(s('text', { x: x0 - 6, y: y(v) + 4, class: 'tick', 'text-anchor': 'end' }, tickLabel(v, step)));
    }
    if (spec.unit) yAxis.append(s('text', { x: x0, y: margin.top - 12, class: 'unit', 'text-anchor': 'start' }, spec.unit));
    root.append(yAxis);

    // Reference range: a band; a one-sided range (eGFR ≥ 60) runs to the edge of the plot.
    if (Number.isFinite(spec.refLow) || Number.isFinite(spec.refHigh)) {
      const lo = Number.isFinite(spec.refLow) ? spec.refLow : v0;
      const hi = Number.isFinite(spec.refHigh) ? spec.refHigh : v1;
      const top = y(Math.min(hi, v1));
      const bottom = y(Math.max(lo, v0));
      root.append(s('rect', { x: x0, y: top, width: x1 - x0, height: Math.max(0, bottom - top), class: 'ref-band' },
        s('title', {}, `reference range ${rangeText(spec.refLow, spec.refHigh, spec.unit)}`)));
    }
  }

  // The question's time window, over the values and the medication lanes alike.
  if (spec.window && Number.isFinite(spec.window.start) && Number.isFinite(spec.window.end)) {
    const wx0 = clampX(spec.window.start);
    const wx1 = clampX(spec.window.end);
    const windowBox = s('g', { class: spec.emptyWindow ? 'window window-empty' : 'window' });
    windowBox.append(s('rect', { x: wx0, y: margin.top, width: Math.max(2, wx1 - wx0), height: axisTop - margin.top, class: 'window-rect' },
      s('title', {}, `window ${isoDay(spec.window.start)} – ${isoDay(spec.window.end)}`)));
    const label = spec.emptyWindow ? 'no data in this window' : 'window';
    // Centre the label on the window but keep it inside the plot (a narrow window sits at an edge).
    const half = label.length * 3.4;
    const lx = Math.max(x0 + half, Math.min(x1 - half, (wx0 + wx1) / 2));
    const ly = spec.emptyWindow && hasValues ? margin.top + plotHeight / 2 : margin.top - 4;
    windowBox.append(s('text', { x: lx, y: ly, class: 'window-label', 'text-anchor': 'middle' }, label));
    root.append(windowBox);
  }

  for (const marker of spec.markers || []) {
    if (!Number.isFinite(marker.t)) continue;
    const mx = x(marker.t);
    const g = s('g', { class: 'marker' });
    g.append(s('line', { x1: mx, x2: mx, y1: margin.top - 6, y2: axisTop, class: 'marker-line' }));
    const anchor = mx > (x0 + x1) / 2 ? 'end' : 'start';
    // Room for the label on the marker's open side; the drug name gives way, the date does not.
    const room = Math.floor((anchor === 'end' ? mx - x0 : x1 - mx) / 6.8);
    const suffix = marker.suffix ? ` ${marker.suffix}` : '';
    const text = clip(marker.name || '', Math.max(8, room - suffix.length)) + suffix;
    g.append(s('text', { x: mx + (anchor === 'end' ? -4 : 4), y: margin.top + 12, class: 'marker-label', 'text-anchor': anchor }, text));
    if (hasValues) {
      g.append(s('text', { x: mx - 4, y: margin.top + plotHeight - 6, class: 'marker-side', 'text-anchor': 'end' }, 'before'));
      g.append(s('text', { x: mx + 4, y: margin.top + plotHeight - 6, class: 'marker-side', 'text-anchor': 'start' }, 'after'));
    }
    g.append(s('title', {}, `${marker.name || ''}${suffix}`));
    root.append(g);
  }

  if (hasValues) {
    const sorted = [...series].sort((a, b) => a.t - b.t);
    const path = sorted.map((p, i) => `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' ');
    root.append(s('path', { d: path, class: 'series' }));
    const points = s('g', { class: 'points' });
    // Evidence points last, so they sit on top of their neighbours.
    for (const p of [...sorted.filter((q) => !q.evidence), ...sorted.filter((q) => q.evidence)]) {
      const cls = ['pt', p.evidence ? 'pt-evidence' : '', p.abnormal ? 'pt-abnormal' : ''].filter(Boolean).join(' ');
      const text = `${isoDay(p.t)}: ${p.v}${spec.unit ? ` ${spec.unit}` : ''}${p.abnormal ? ' (outside the reference range)' : ''}${p.evidence ? ' — used in the answer' : ''}`;
      // Evidence points take keyboard focus so their values can be read without a mouse.
      points.append(s('circle', {
        cx: x(p.t), cy: y(p.v), r: p.evidence ? 6.5 : 4, class: cls, 'data-ref': p.ref || null,
        tabindex: p.evidence ? 0 : null, 'aria-label': p.evidence ? text : null, role: p.evidence ? 'img' : null,
      }, s('title', {}, text)));
    }
    root.append(points);
  }

  meds.forEach((lane, i) => {
    const top = lanesTop + i * laneHeight;
    const mid = top + 22;
    const g = s('g', { class: 'med-lane' });
    g.append(s('line', { x1: x0, x2: x1, y1: mid, y2: mid, class: 'lane-line' }));
    g.append(s('text', { x: x0 + 2, y: top + 10, class: 'lane-label' }, clip(lane.name, Math.floor((x1 - x0) / 6.5))));
    for (const order of lane.orders) {
      const ox0 = clampX(order.start);
      const ox1 = clampX(Number.isFinite(order.end) ? order.end : order.start + 30 * DAY);
      g.append(s('rect', { x: ox0, y: mid - 6, width: Math.max(3, ox1 - ox0), height: 12, rx: 3,
        class: order.evidence ? 'med-order med-evidence' : 'med-order', 'data-ref': order.ref || null },
      s('title', {}, order.label)));
    }
    for (const event of lane.events) {
      const ex = x(event.t);
      const cls = `med-${event.kind}${event.evidence ? ' med-evidence' : ''}`;
      const mark = event.kind === 'administration'
        ? s('circle', { cx: ex, cy: mid, r: 3.5, class: cls, 'data-ref': event.ref || null })
        : s('line', { x1: ex, x2: ex, y1: mid - 9, y2: mid + 9, class: cls, 'data-ref': event.ref || null });
      mark.append(s('title', {}, event.label));
      g.append(mark);
    }
    root.append(g);
  });

  container.replaceChildren(root);
  return root;
}

/** "4–5.6 %", "≥ 60 mL/min", "≤ 99 mg/dL". */
export function rangeText(low, high, unit) {
  const u = unit ? ` ${unit}` : '';
  if (Number.isFinite(low) && Number.isFinite(high)) return `${low}–${high}${u}`;
  if (Number.isFinite(low)) return `≥ ${low}${u}`;
  if (Number.isFinite(high)) return `≤ ${high}${u}`;
  return '';
}

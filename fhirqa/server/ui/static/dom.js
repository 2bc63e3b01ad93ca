// Tiny DOM helpers. Record content (names, values, note text) is always inserted as text nodes,
// never as markup: a value in a FHIR record must not be able to run script in this page.

/** An element with attributes (`class`, `data-*`, `aria-*`, booleans) and children. */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (value === true) node.setAttribute(name, '');
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** The element with this id (throws early when the page and the script disagree). */
export function byId(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`page element #${id} is missing`);
  return node;
}

/** Show or hide an element (the `hidden` attribute, so CSS and assistive tech agree). */
export function show(node, visible = true) {
  node.hidden = !visible;
}

const WRITTEN = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::[\d.]+)?(Z|[+-]\d{2}:\d{2})?$/;

/** A time as the record wrote it: `2026-04-02 08:55 -05:00` (its own clock and offset; `UTC` for Z, nothing for
 * a time written without one); the day is the record's local day, as the answers read it. '' when missing. */
export function fmtTime(iso) {
  if (!iso) return '';
  const m = WRITTEN.exec(String(iso));
  if (!m) return String(iso);
  const zone = m[3] === 'Z' || m[3] === '+00:00' ? ' UTC' : m[3] ? ` ${m[3]}` : '';
  return `${m[1]} ${m[2]}${zone}`;
}

/** `2026-04-02` from an ISO date or time; '' when missing. */
export function fmtDay(iso) {
  return iso ? fmtTime(iso).slice(0, 10) || String(iso).slice(0, 10) : '';
}

/** A value as shown in tables: numbers as JSON writes them, lists joined, missing as an em dash. */
export function fmtValue(value) {
  if (value === null || value === undefined || value === '') return '—';
  if (Array.isArray(value)) return value.map(fmtValue).join('; ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

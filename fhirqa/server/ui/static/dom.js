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

/** `2026-04-02 13:55` from an ISO time, in UTC like the store; '' when missing. */
export function fmtTime(iso) {
  if (!iso) return '';
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return String(iso);
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
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

// Talking to the fhirqa server: the access token and authenticated JSON requests.
//
// Why the token lives here and nowhere else: it is the key to patient records, so it is kept in
// this module's closure only — never in localStorage, sessionStorage, a cookie or the DOM, where
// other scripts, extensions or the next user of the machine could read it. Reloading the page
// forgets it; that is deliberate.

/** The server's base URL: the page is served at <base>/ui/, so the base is one level up. */
export const BASE = new URL('../', window.location.href);

let token = null;

/** Keep `value` as the bearer token for every later request (null signs out). */
export function setToken(value) {
  token = value ? String(value).trim() : null;
}

/** True while a token is held. */
export function hasToken() {
  return token !== null && token !== '';
}

/** An error answer of the server, with its HTTP status and the OperationOutcome's text. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** The diagnostics of an OperationOutcome (or a generic line when the body is something else). */
async function errorText(response) {
  try {
    const body = await response.json();
    const issues = (body && body.issue) || [];
    const text = issues.map((i) => i.diagnostics || i.code).filter(Boolean).join('; ');
    if (text) return text;
    if (body && body.error_description) return body.error_description;
  } catch (_) {
    // not JSON: fall through
  }
  return `${response.status} ${response.statusText}`.trim();
}

/**
 * One authenticated request; resolves to the parsed JSON body, rejects with ApiError.
 * `credentials: 'omit'`: no cookies are ever sent (the bearer token is the only credential), and
 * `referrerPolicy: 'no-referrer'` keeps patient ids in URLs out of Referer headers.
 */
export async function request(method, path, { query, body } = {}) {
  if (!hasToken()) throw new ApiError(401, 'not signed in');
  const url = new URL(path.replace(/^\//, ''), BASE);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  const headers = { Authorization: `Bearer ${token}`, Accept: 'application/json, application/fhir+json' };
  const init = { method, headers, credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  if (!response.ok) {
    const error = new ApiError(response.status, await errorText(response));
    // 401: the token expired or was revoked. The page listens and asks for a new one.
    if (response.status === 401) window.dispatchEvent(new CustomEvent('fhirqa:unauthorized', { detail: error.message }));
    throw error;
  }
  return response.json();
}

/** GET `path` (relative to the server base) with query parameters. */
export function get(path, query) {
  return request('GET', path, { query });
}

/** POST a JSON body to `path`. */
export function post(path, body) {
  return request('POST', path, { body });
}

/** Path segment escaping for ids that come from data (they are validated server-side too). */
export function seg(value) {
  return encodeURIComponent(String(value));
}

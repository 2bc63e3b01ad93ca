// The page's controller: sign in, pick a patient, ask, show the answer, its evidence, chart and plan.
//
// All data comes from this server's authenticated endpoints (api.js adds the bearer token); the
// page holds nothing between reloads. Each step that fetches remembers a sequence number so a slow
// answer for a patient the user has since left is dropped instead of shown under the wrong name.

import * as api from './api.js';
import { drawTimeline } from './chart.js';
import { buildSpec, chartPlan } from './chartspec.js';
import { initNotes, resetNotes, showNotes } from './consistency.js';
import { byId, fmtDay, h, show } from './dom.js';
import {
  answerValues, demographicFacts, evidenceRows, headerList, patientResults, planContent, statusBadge,
} from './render.js';

const EXAMPLES = [
  'What was the most recent HbA1c?',
  'How has the HbA1c changed over the last 3 years?',
  'What was the potassium in 2019?',
  'What was the HbA1c after starting insulin?',
  'What medications is the patient on?',
];

const state = { session: null, patientId: null, seq: 0, lastChart: null };
const el = {};

/** Look the page's elements up once. */
function bind() {
  for (const id of ['login', 'login-form', 'token', 'login-error', 'workspace', 'who', 'signout', 'search-form',
    'search', 'search-note', 'results', 'pick-hint', 'patient', 'patient-name', 'patient-facts', 'problems',
    'medications', 'allergies', 'ask', 'ask-form', 'question', 'asof', 'ask-button', 'examples', 'status', 'result',
    'answer-badge', 'answer-main', 'answer-text', 'nodata', 'nodata-detail', 'candidates', 'chart', 'chart-area', 'chart-title',
    'chart-caption', 'chart-legend', 'evidence-caption', 'evidence-rows', 'plan', 'plan-body', 'resource-dialog',
    'resource-title', 'resource-json', 'resource-close']) {
    el[id] = byId(id);
  }
}

/** A line in the status region (read out by screen readers); `error` styles it as a problem. */
function say(text, error = false) {
  el.status.textContent = text || '';
  el.status.classList.toggle('error', Boolean(error));
}

/** Mark the page busy or idle (tests and assistive tech can wait on it). */
function busy(on) {
  document.body.dataset.busy = on ? 'true' : 'false';
  document.body.setAttribute('aria-busy', on ? 'true' : 'false');
}

// ---------------------------------------------------------------- sign in / out

async function signIn(token) {
  api.setToken(token);
  show(el['login-error'], false);
  busy(true);
  try {
    const session = await api.get('ui/api/session');
    state.session = session;
    el.who.textContent = `Signed in as ${session.subject}${session.client_id !== session.subject ? ` (${session.client_id})` : ''}`
      + (session.patient ? ' · limited to one patient' : '') + (session.dev ? ' · dev mode' : '');
    show(el.login, false);
    show(el.workspace, true);
    show(el.signout, true);
    document.body.dataset.signedIn = 'true';
    if (session.patient) {
      el['search-note'].textContent = 'This token reaches one patient only.';
      show(el['search-note'], true);
      await search('');
      await selectPatient(session.patient);
    } else {
      await search('');
      el.search.focus();
    }
  } catch (err) {
    api.setToken(null);
    el['login-error'].textContent = `Could not sign in: ${err.message}`;
    show(el['login-error'], true);
    el.token.focus();
  } finally {
    busy(false);
  }
}

function signOut(reason) {
  api.setToken(null);
  Object.assign(state, { session: null, patientId: null, lastChart: null });
  state.seq += 1; // whatever is still in flight is dropped when it lands
  busy(false);
  document.body.dataset.signedIn = 'false';
  el.who.textContent = '';
  el.results.replaceChildren();
  el.search.value = '';
  show(el.workspace, false);
  show(el.signout, false);
  show(el.login, true);
  resetPatient();
  say('');
  if (typeof reason === 'string' && reason) {
    el['login-error'].textContent = reason;
    show(el['login-error'], true);
  } else {
    show(el['login-error'], false);
  }
  el.token.focus();
}

// ---------------------------------------------------------------- patients

async function search(query) {
  try {
    const body = await api.get('ui/api/patients', { q: query });
    el.results.replaceChildren(...patientResults(body.patients, state.patientId));
    return body.patients;
  } catch (err) {
    el.results.replaceChildren(h('li', { class: 'error' }, `Search failed: ${err.message}`));
    return [];
  } finally {
    // A counter that changes with every finished search, so a same-looking result list still
    // tells an observer (a test, a screen reader hint) that the search ran.
    el.results.dataset.searches = String(Number(el.results.dataset.searches || 0) + 1);
  }
}

function resetPatient() {
  state.patientId = null;
  show(el.patient, false);
  show(el.ask, false);
  show(el.result, false);
  show(el['pick-hint'], true);
  for (const id of ['problems', 'medications', 'allergies', 'patient-facts']) el[id].replaceChildren();
  resetNotes();
}

async function selectPatient(patientId) {
  const seq = ++state.seq;
  busy(true);
  say('Loading the patient…');
  try {
    const header = await api.get(`ui/api/patients/${api.seg(patientId)}/header`);
    if (seq !== state.seq) return;
    renderHeader(patientId, header);
    for (const button of el.results.querySelectorAll('.patient-choice')) {
      button.setAttribute('aria-pressed', String(button.dataset.id === patientId));
    }
    say('');
    el.question.focus();
  } catch (err) {
    if (seq !== state.seq) return;
    resetPatient();
    say(`Cannot open this patient: ${err.message}`, true);
  } finally {
    if (seq === state.seq) busy(false);
  }
}

function renderHeader(patientId, header) {
  const p = header.patient;
  const withheld = new Set(header.withheld || []);
  state.patientId = patientId;
  document.title = `${p.name} · fhirqa`;
  el['patient-name'].textContent = p.name;
  el['patient-facts'].replaceChildren(...demographicFacts(p));
  el.problems.replaceChildren(...headerList(header.problems, api.BASE, patientId,
    (c) => (c.onset_time ? h('span', { class: 'muted' }, ` since ${fmtDay(c.onset_time)}`) : null), withheld.has('problems')));
  el.medications.replaceChildren(...headerList(header.medications, api.BASE, patientId,
    (m) => (m.dosage_text ? h('span', { class: 'muted block' }, m.dosage_text) : null), withheld.has('medications')));
  el.allergies.replaceChildren(...headerList(header.allergies, api.BASE, patientId,
    (a) => (a.reaction ? h('span', { class: 'muted' }, ` (${a.reaction})`) : null), withheld.has('allergies')));
  show(el['pick-hint'], false);
  show(el.patient, true);
  show(el.ask, true);
  show(el.result, false);
  showNotes(patientId);
}

// ---------------------------------------------------------------- asking

async function ask(question) {
  const patientId = state.patientId;
  if (!patientId || !question.trim()) return;
  const seq = ++state.seq;
  const body = { question: question.trim() };
  if (el.asof.value) body.now = el.asof.value;
  busy(true);
  el['ask-button'].disabled = true;
  say('Asking…');
  try {
    const answer = await api.post(`api/patients/${api.seg(patientId)}/ask`, body);
    if (seq !== state.seq) return;
    renderAnswer(patientId, answer);
    say('');
    // On a short or narrow screen the answer lands below the fold: bring it up (focus stays in
    // the question field, so a follow-up question is one keystroke away).
    if (el.result.getBoundingClientRect().top > window.innerHeight * 0.7) el.result.scrollIntoView({ block: 'start' });
    await renderChart(patientId, answer, seq);
  } catch (err) {
    if (seq !== state.seq) return;
    show(el.result, false);
    say(`The question could not be answered: ${err.message}`, true);
  } finally {
    el['ask-button'].disabled = false;
    if (seq === state.seq) busy(false);
  }
}

function renderAnswer(patientId, answer) {
  el.result.dataset.status = answer.status;
  el['answer-badge'].replaceChildren(statusBadge(answer.status));
  const values = answerValues(answer);
  el['answer-main'].replaceChildren(...(values ? [values] : []));
  el['answer-text'].textContent = answer.text || '';

  const noData = answer.status === 'no-data';
  show(el.nodata, noData);
  if (noData) {
    const n = (answer.evidence || []).length;
    el['nodata-detail'].textContent = n
      ? `Nothing was recorded in the window the question asks about. The nearest record${n === 1 ? '' : 's'} outside it ${n === 1 ? 'is' : 'are'} listed below for context; ${n === 1 ? 'it is' : 'they are'} not the answer.`
      : 'Nothing was recorded in the window the question asks about.';
  }
  const candidates = answer.candidates || [];
  show(el.candidates, candidates.length > 0);
  el.candidates.replaceChildren(...candidates.map((c) => h('li', {}, typeof c === 'string' ? c : JSON.stringify(c))));

  const evidence = answer.evidence || [];
  el['evidence-caption'].textContent = noData
    ? `Nearest records outside the window (${evidence.length})`
    : `Records the answer rests on (${evidence.length})`;
  el['evidence-rows'].replaceChildren(...(evidence.length ? evidenceRows(evidence, api.BASE, patientId)
    : [h('tr', { class: 'empty' }, h('td', { colspan: 5, class: 'muted' }, 'No records.'))]));
  try {
    el['plan-body'].replaceChildren(...planContent(answer.trace));
  } catch (err) {
    // The trace's shape varies by backend: an unexpected one must not hide the answer above it.
    el['plan-body'].replaceChildren(h('p', { class: 'muted' }, `The plan could not be shown: ${err.message}`));
  }
  show(el.chart, false);
  el.result.dataset.chart = 'pending';
  show(el.result, true);
}

/** Rows of one item from a view (empty when the token may not read that view). */
async function viewRows(patientId, view, name) {
  try {
    const body = await api.get(`Patient/${api.seg(patientId)}/views/${view}`, { name, limit: 2000 });
    return body.rows || [];
  } catch (_) {
    return [];
  }
}

async function renderChart(patientId, answer, seq) {
  const plan = chartPlan(answer);
  if (!plan.kind) {
    el.result.dataset.chart = 'none';
    state.lastChart = null;
    return;
  }
  const [obsRows, medRowsPerDrug] = await Promise.all([
    plan.lab ? viewRows(patientId, 'observation', plan.lab) : Promise.resolve([]),
    Promise.all(plan.meds.map((m) => viewRows(patientId, 'medication', m))),
  ]);
  if (seq !== state.seq) return;
  const built = buildSpec(plan, answer, obsRows, medRowsPerDrug.flat());
  state.lastChart = built;
  show(el.chart, true);
  el.chart.dataset.kind = plan.kind;
  el['chart-title'].textContent = built.spec.title;
  drawTimeline(el['chart-area'], built.spec);
  el['chart-caption'].textContent = built.caption;
  el['chart-legend'].replaceChildren(...built.legend.map((item) =>
    h('li', {}, h('span', { class: `swatch ${item.cls}`, 'aria-hidden': 'true' }), item.label)));
  el.result.dataset.chart = plan.kind;
}

// ---------------------------------------------------------------- raw resources

async function openResource(link) {
  const ref = link.dataset.ref;
  el['resource-title'].textContent = ref;
  el['resource-json'].textContent = 'Loading…';
  if (!el['resource-dialog'].open) el['resource-dialog'].showModal();
  try {
    const url = new URL(link.href);
    const resource = await api.get(url.pathname.slice(api.BASE.pathname.length));
    el['resource-json'].textContent = JSON.stringify(resource, null, 2);
  } catch (err) {
    el['resource-json'].textContent = `Cannot show ${ref}: ${err.message}`;
  }
  el['resource-json'].focus();
}

// ---------------------------------------------------------------- wiring

function wire() {
  el['login-form'].addEventListener('submit', (event) => {
    event.preventDefault();
    const token = el.token.value;
    el.token.value = ''; // out of the DOM at once; only api.js's closure keeps it
    signIn(token);
  });
  el.signout.addEventListener('click', () => signOut());
  window.addEventListener('fhirqa:unauthorized', (event) => {
    if (state.session) signOut(`Signed out: ${event.detail}. Paste a new token to go on.`);
  });
  el['search-form'].addEventListener('submit', (event) => {
    event.preventDefault();
    search(el.search.value);
  });
  el.results.addEventListener('click', (event) => {
    const button = event.target.closest('.patient-choice');
    if (button) selectPatient(button.dataset.id);
  });
  el['ask-form'].addEventListener('submit', (event) => {
    event.preventDefault();
    ask(el.question.value);
  });
  el.examples.replaceChildren(...EXAMPLES.map((q) => h('button', { type: 'button', class: 'example' }, q)));
  el.examples.addEventListener('click', (event) => {
    const button = event.target.closest('.example');
    if (!button) return;
    el.question.value = button.textContent;
    ask(button.textContent);
  });
  // Source links need the bearer token, so they are fetched here and shown in a dialog.
  document.addEventListener('click', (event) => {
    const link = event.target.closest('a.resource-link');
    if (!link) return;
    event.preventDefault();
    openResource(link);
  });
  el['resource-close'].addEventListener('click', () => el['resource-dialog'].close());
  // Charts are drawn at the container's pixel width; redraw when it changes (rotation, resizing).
  let lastWidth = 0;
  new ResizeObserver(() => {
    const width = el['chart-area'].clientWidth;
    if (state.lastChart && !el.chart.hidden && Math.abs(width - lastWidth) > 8) {
      lastWidth = width;
      drawTimeline(el['chart-area'], state.lastChart.spec);
    }
  }).observe(el['chart-area']);
}

function start() {
  bind();
  initNotes();
  wire();
  busy(false);
  document.body.dataset.signedIn = 'false';
  // --dev: the server put a token in a <meta> element; take it into memory and drop the element.
  const meta = document.querySelector('meta[name="fhirqa-dev-token"]');
  if (meta) {
    const token = meta.getAttribute('content');
    meta.remove();
    if (token) {
      signIn(token);
      return;
    }
  }
  el.token.focus();
}

start();

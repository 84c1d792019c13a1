// The ahp dashboard: a client of the observer protocol (docs/observer-protocol.md).
// Plain JavaScript modules, no build step, no third-party code.

const ROOT = 'ahp-root://';
const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('data-')) e.setAttribute(k, v);
    else if (k === 'onclick') e.addEventListener('click', v);
    else e[k] = v;
  }
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(k ?? ''));
  return e;
};

const state = {
  ws: null, nextId: 1, pending: new Map(), lastSeen: new Map(), clientId: crypto.randomUUID(),
  principal: null, canApprove: false, sessions: new Map(), approvals: new Map(), policy: null, stats: null,
  current: null, session: null, page: 'sessions', retry: 0,
};

function send(method, params, notify = false) {
  const msg = { jsonrpc: '2.0', method, params };
  if (notify) { state.ws.send(JSON.stringify(msg)); return Promise.resolve(); }
  msg.id = state.nextId++;
  state.ws.send(JSON.stringify(msg));
  return new Promise((resolve, reject) => state.pending.set(msg.id, { resolve, reject }));
}

function connect() {
  const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/observe');
  state.ws = ws;
  ws.onopen = async () => {
    try {
      if (state.lastSeen.size === 0) {
        const subs = [ROOT];
        const r = await send('initialize', { channel: ROOT, protocolVersions: ['1.0.0'], clientId: state.clientId,
          clientInfo: { name: 'ahp-dashboard' }, initialSubscriptions: subs });
        loggedIn(r._meta.ahp.principal, r._meta.ahp.canApprove);
        for (const s of r.snapshots) applySnapshot(s);
      } else {
        // serverSeq is one sequence over every channel: the last one seen
        // on any channel is where the stream stopped.
        const lastSeenServerSeq = Math.max(...state.lastSeen.values());
        const r = await send('reconnect', { channel: ROOT, clientId: state.clientId, lastSeenServerSeq, subscriptions: [...state.lastSeen.keys()] });
        loggedIn(r._meta.ahp.principal, r._meta.ahp.canApprove);
        if (r.type === 'replay') {
          r.actions.forEach(applyAction);
          for (const ch of r.missing || []) state.lastSeen.delete(ch);
        } else r.snapshots.forEach(applySnapshot);
      }
      state.retry = 0;
      $('#conn').textContent = 'live'; $('#conn').classList.add('live');
      render();
    } catch (e) {
      if (e.code === -32007 || e.code === -32009) showLogin(e.code === -32009 ? e.message : '');
    }
  };
  ws.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    if (m.id !== undefined && m.id !== null && state.pending.has(m.id)) {
      const p = state.pending.get(m.id); state.pending.delete(m.id);
      m.error ? p.reject(m.error) : p.resolve(m.result);
      return;
    }
    if (m.method === 'action') { applyAction(m.params); render(); return; }
    if (m.method === 'root/sessionAdded') { state.sessions.set(m.params.summary.resource, m.params.summary); render(); return; }
    if (m.method === 'root/sessionSummaryChanged') {
      state.sessions.set(m.params.session, { ...(state.sessions.get(m.params.session) || {}), ...m.params.changes }); render(); return;
    }
    if (m.method === 'root/sessionRemoved') { state.sessions.delete(m.params.session); render(); return; }
  };
  ws.onclose = () => {
    $('#conn').textContent = 'reconnecting'; $('#conn').classList.remove('live');
    for (const p of state.pending.values()) p.reject({ code: -1, message: 'connection closed' });
    state.pending.clear();
    if (state.principal === null && state.lastSeen.size === 0) return; // not logged in
    setTimeout(connect, Math.min(5000, 250 * 2 ** state.retry++));
  };
}

function applySnapshot(s) {
  state.lastSeen.set(s.resource, s.fromSeq);
  if (s.resource === ROOT) {
    const st = s.state;
    const m = st._meta.ahp;
    state.sessions = new Map(m.sessions.map((x) => [x.resource, x]));
    state.approvals = new Map(m.approvals.map((a) => [a.id, a]));
    state.policy = m.policy; state.stats = m.stats;
  } else if (state.current === s.resource) {
    const m = s.state._meta.ahp;
    state.session = { summary: s.state, timeline: m.timeline, runs: new Map(m.runs.map((r) => [r.runId, r])),
      inputNeeded: s.state.inputNeeded };
  }
}

function applyAction(env) {
  const last = state.lastSeen.get(env.channel);
  if (last !== undefined && env.serverSeq <= last) return; // already applied
  state.lastSeen.set(env.channel, env.serverSeq);
  const a = env.action;
  if (env.channel === ROOT) {
    if (a.type === 'ahp/approvalAdded') state.approvals.set(a.approval.id, a.approval);
    else if (a.type === 'ahp/approvalRemoved') state.approvals.delete(a.approvalId);
    else if (a.type === 'ahp/statsChanged') state.stats = a.stats;
    else if (a.type === 'ahp/policyChanged') state.policy = a.policy;
    return;
  }
  if (env.channel !== state.current || !state.session) return;
  const s = state.session;
  const entry = a.type === 'ahp/recorded' ? a.entry : null;
  if (entry) { s.timeline.push(entry); if (s.timeline.length > 500) s.timeline.shift(); }
  if (a.type === 'session/inputNeededSet') s.inputNeeded = [...s.inputNeeded.filter((r) => r.id !== a.request.id), a.request];
  if (a.type === 'session/inputNeededRemoved') s.inputNeeded = s.inputNeeded.filter((r) => r.id !== a.id);
  if (a.type === 'ahp/runChanged') s.runs.set(a.run.runId, a.run);
}

function loggedIn(p, canApprove) {
  state.principal = p; state.canApprove = canApprove;
  $('#who').textContent = `${p.id} (${p.roles.join(', ')})`;
  $('#nav').hidden = false;
  show(state.page);
}

function showLogin(msg) {
  state.principal = null; state.lastSeen.clear();
  document.querySelectorAll('.page').forEach((p) => (p.hidden = p.id !== 'page-login'));
  $('#nav').hidden = true;
  $('#login-error').textContent = msg || '';
}

function show(page) {
  state.page = page;
  document.querySelectorAll('.page').forEach((p) => (p.hidden = p.id !== 'page-' + page));
  document.querySelectorAll('#nav button').forEach((b) => b.classList.toggle('active', b.dataset.page === page));
  render();
}

async function openSession(resource) {
  if (state.current && state.current !== resource) {
    send('unsubscribe', { channel: state.current }, true);
    state.lastSeen.delete(state.current);
  }
  state.current = resource; state.session = null;
  const r = await send('subscribe', { channel: resource });
  applySnapshot(r.snapshot);
  render();
}

const fmtTime = (t) => (t ? new Date(t).toLocaleTimeString() : '');

function render() {
  const n = state.approvals.size;
  $('#approval-count').textContent = String(n);
  if (state.page === 'sessions') renderSessions();
  if (state.page === 'approvals') renderApprovals();
  if (state.page === 'policy') renderPolicy();
  if (state.page === 'charts') renderCharts();
}

function renderSessions() {
  const ahp = (s) => (s._meta && s._meta.ahp) || {};
  const rows = [...state.sessions.values()].sort((a, b) => (ahp(b).lastActivity || '').localeCompare(ahp(a).lastActivity || ''));
  $('#sessions tbody').replaceChildren(...rows.map((s) => {
    const m = ahp(s);
    const counts = Object.entries(m.counts || {}).map(([k, v]) => `${k} ${v}`).join(', ');
    return el('tr', { 'data-session': s.title, class: s.resource === state.current ? 'selected' : '', onclick: () => openSession(s.resource) },
      el('td', {}, s.title), el('td', {}, m.agentId || ''), el('td', {}, m.framework || ''), el('td', {}, m.state || ''),
      el('td', {}, counts), el('td', {}, String(m.pendingApprovals || 0)), el('td', {}, fmtTime(m.lastActivity)));
  }));
  const view = $('#session-view');
  view.hidden = !state.session;
  if (!state.session) return;
  const s = state.session;
  $('#session-title').textContent = s.summary.title;
  $('#timeline tbody').replaceChildren(...s.timeline.slice().reverse().map((e) => el('tr', {
    class: 'tl-row', 'data-event-type': e.eventType, 'data-outcome': e.outcome || '',
    onclick: () => { const p = $('#payload'); p.hidden = false; p.textContent = e.event ? showJSON(e.event) : `(event of ${e.eventBytes} bytes not inline)`; },
  }, el('td', {}, fmtTime(e.time)), el('td', { class: 'depth' }, '↳'.repeat(e.depth) + e.depth), el('td', {}, e.agentId),
  el('td', {}, e.eventType), el('td', {}, e.toolName || ''), el('td', { class: 'outcome-' + (e.outcome || 'none') }, e.outcome || '·'),
  el('td', {}, e.ruleId || ''), el('td', {}, e.reason || ''), el('td', {}, e.blocking ? e.latencyMs.toFixed(2) + ' ms' : ''))));
  $('#runs').replaceChildren(...[...s.runs.values()].map(renderRun));
  if (s.runs.size === 0) $('#runs').append(el('p', {}, 'No run reported.'));
}

function renderRun(r) {
  const rec = r.record || {};
  const tasks = rec.tasks || [];
  const byParent = new Map();
  for (const t of tasks) {
    const parent = (t.depends_on || [])[0] || '';
    if (!byParent.has(parent)) byParent.set(parent, []);
    byParent.get(parent).push(t);
  }
  const tree = (parent, depth) => (byParent.get(parent) || []).flatMap((t) => [
    el('div', { class: 'task', 'data-task': t.id }, `${'  '.repeat(depth)}${t.status === 'completed' ? '✔' : t.status === 'failed' ? '✘' : '○'} ${t.title} [${t.status}]` +
      ((t.evidence || []).length ? ` — evidence: ${t.evidence.map((x) => x.kind + (x.uri ? ' ' + x.uri : '')).join(', ')}` : '')),
    ...(depth < 10 ? tree(t.id, depth + 1) : []),
  ]);
  const checks = ((rec.verification || {}).checks || []).map((c) => el('div', { class: 'check' }, `${c.status === 'passed' ? '✔' : c.status === 'failed' ? '✘' : '·'} ${c.subject}: ${c.status}`));
  return el('div', { class: 'run', 'data-run': r.runId },
    el('strong', {}, `Run ${r.runId}: ${r.status}`), runConnection(rec.connection_ended),
    el('div', {}, 'Timeline: ' + (rec.timeline || []).map((t) => t.to).join(' → ')),
    el('div', {}, 'Tasks:'), ...tree('', 0),
    el('div', {}, 'Verification: ' + ((rec.verification || {}).status || 'none')), ...checks,
    (r.flags || []).length ? el('div', { class: 'error' }, 'Flags: ' + r.flags.join(', ')) : '');
}

// runConnection shows, next to a run's status, that its agent's connection
// ended while the run was open (until the agent's next run event clears it).
function runConnection(c) {
  if (!c) return '';
  const lost = c.connection === 'lost';
  const title = (lost ? 'The agent\'s connection was lost' : 'The agent closed its connection') +
    (c.at ? ' at ' + new Date(c.at).toLocaleString() : '') + (c.error ? ': ' + c.error : '');
  return el('span', { class: 'run-conn' + (lost ? ' lost' : ''), 'data-connection': c.connection, title },
    `connection ${lost ? 'lost' : 'closed'}${c.at ? ' ' + fmtTime(c.at) : ''}`);
}

function renderApprovals() {
  const list = [...state.approvals.values()];
  $('#no-approvals').hidden = list.length > 0;
  const keep = new Map([...document.querySelectorAll('#approvals textarea')].map((t) => [t.dataset.for, t.value]));
  $('#approvals').replaceChildren(...list.map((a) => {
    const reason = el('textarea', { class: 'reason', placeholder: 'reason (recorded with the decision)' });
    reason.dataset.for = a.id; reason.value = keep.get(a.id) || '';
    const status = el('span', { class: 'error' });
    const answer = async (approve) => {
      try { await send('ahp/answerApproval', { channel: ROOT, approvalId: a.id, approve, reason: reason.value }); }
      catch (e) { status.textContent = e.message; }
    };
    const buttons = state.canApprove
      ? [el('button', { class: 'approve', onclick: () => answer(true) }, 'Approve'), el('button', { class: 'deny', onclick: () => answer(false) }, 'Deny')]
      : [el('em', {}, 'Only approvers may answer.')];
    return el('div', { class: 'approval', 'data-approval-id': a.id, 'data-session': a.sessionId },
      el('div', {}, el('strong', {}, a.reason), ` — rule ${a.ruleId}, session ${a.sessionId}, agent ${a.agentId}, since ${fmtTime(a.created)}`),
      ...(a.effects && a.effects.length ? [el('div', { class: 'effects-title' }, 'What it does (as the harness reads it):'),
        el('ul', { class: 'effects' }, ...a.effects.slice(0, 50).map((e) => el('li', {}, el('code', {}, e.kind), ' ', effectText(e)))),
        ...(a.effects.length > 50 ? [el('div', {}, `… and ${a.effects.length - 50} more (ahp approvals show ${a.id})`)] : [])] : []),
      el('pre', {}, a.event ? showJSON(a.event)
        : `(the event, ${a.eventBytes || 'size unknown'} bytes, is too large to show here: read it with \`ahp approvals show ${a.id}\` or GET /v1/approvals/${a.id} before answering)`),
      reason, ...buttons, status);
  }));
}

// effectText describes one effect in words: the fields that are set, with
// invisible characters escaped as in showJSON.
function effectText(e) {
  const parts = [];
  const add = (k, v) => { if (v) parts.push(`${k} ${v}`); };
  add('program', e.program);
  if (e.argv && e.argv.length) parts.push('argv ' + showJSON(e.argv).replace(/\s*\n\s*/g, ' '));
  add('path', e.path); add('to', e.dest);
  if (e.recursive) parts.push('recursive');
  add('mode', e.mode); add('host', e.host && e.port ? `${e.host}:${e.port}` : e.host); add('url', e.url);
  add('sending', e.source); add('into', e.into);
  if (e.targets && e.targets.length) add('targets', e.targets.join(', '));
  add('on host', e.remote); add('why unknown:', e.reason);
  return parts.join(' · ').replace(/[\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0'));
}

// showJSON pretty-prints a value for a human, writing invisible and
// direction-changing characters (zero-width, bidi overrides, BOM) as
// \uXXXX escapes: what an approver reads is what runs.
function showJSON(v) {
  return JSON.stringify(v, null, 2).replace(/[\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0'));
}

function renderPolicy() {
  const p = state.policy;
  if (!p) return;
  $('#policy-version').textContent = p.version;
  const r = p.lastReload;
  $('#policy-reload').textContent = r ? `Last reload ${fmtTime(r.at)}: ${r.ok ? 'applied' : 'refused: ' + r.error}` : 'No reload since the start.';
  $('#rules tbody').replaceChildren(...p.rules.map((x) => el('tr', { 'data-rule': x.id }, el('td', {}, x.id), el('td', {}, String(x.hits)))));
}

const COLORS = { allow: '#2e7d32', block: '#c62828', escalate: '#ef6c00', defer: '#f9a825', modify: '#00838f', rejected: '#6a1b9a' };
const color = (k) => COLORS[k] || '#5c6bc0';

function bars(canvas, labels, values, colorOf) {
  const c = canvas.getContext('2d');
  const W = canvas.width, H = canvas.height, pad = 30;
  c.clearRect(0, 0, W, H);
  const maxV = Math.max(1, ...values.map((v) => (Array.isArray(v) ? v.reduce((s, x) => s + x[1], 0) : v)));
  const bw = (W - pad * 2) / Math.max(1, values.length);
  c.font = '11px system-ui'; c.fillStyle = '#333';
  c.fillText(String(maxV), 2, pad);
  values.forEach((v, i) => {
    let y = H - pad;
    for (const [k, n] of Array.isArray(v) ? v : [['', v]]) {
      const h = (n / maxV) * (H - pad * 2);
      c.fillStyle = colorOf(k, i); c.fillRect(pad + i * bw + 1, y - h, Math.max(1, bw - 2), h); y -= h;
    }
    if (labels[i] && (values.length < 20 || i % 10 === 0)) { c.fillStyle = '#333'; c.fillText(labels[i], pad + i * bw, H - 10); }
  });
}

// shortRule keeps what tells rules apart: a pack's rule ids share their
// prefix ("destructive_shell."), so a long id shows its end.
function shortRule(id) {
  return id.length <= 22 ? id : '…' + id.slice(-21);
}

function renderCharts() {
  const st = state.stats;
  if (!st) return;
  const outcomes = new Set();
  st.perSecond.forEach((s) => Object.keys(s.outcomes).forEach((k) => outcomes.add(k)));
  bars($('#chart-rate'), st.perSecond.map((s, i) => String(i - 59) + 's'), st.perSecond.map((s) => Object.entries(s.outcomes)), (k) => color(k));
  $('#legend-rate').replaceChildren(...[...outcomes].map((k) => { const i = el('i'); i.style.background = color(k); return el('span', {}, i, k); }));
  const lat = st.latencyBoundsMs.map((b) => '≤' + b + 'ms').concat(['more']);
  bars($('#chart-latency'), lat, st.latencyCounts, () => '#5c6bc0');
  const rules = Object.entries(st.blocksByRule).sort((a, b) => b[1] - a[1]).slice(0, 12);
  bars($('#chart-blocks'), rules.map((r) => shortRule(r[0])), rules.map((r) => r[1]), () => '#c62828');
}

document.addEventListener('DOMContentLoaded', () => {
  document.querySelectorAll('#nav button').forEach((b) => b.addEventListener('click', () => show(b.dataset.page)));
  $('#login-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const r = await fetch('/login', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ credential: $('#credential').value }), credentials: 'same-origin' });
    $('#credential').value = '';
    if (!r.ok) { $('#login-error').textContent = ((await r.json()).error || {}).message || 'login failed'; return; }
    state.lastSeen.clear();
    connect();
  });
  showLogin('');
  connect(); // an existing session cookie logs in at once
});

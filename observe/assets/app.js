// The ahp dashboard: a client of the observer protocol (docs/observer-protocol.md).
// Plain JavaScript modules, no build step, no third-party code.
//
// Built to stay usable under load (docs/dashboard.md): messages are queued
// and applied in slices of at most a few milliseconds per task;
// lists are patched in place (rows and cards are created once and updated,
// never rebuilt), the timeline draws only the rows in view, and the page
// says when it is behind or paused instead of lagging silently.

const ROOT = 'ahp-root://';

// ─── Wire adapter ────────────────────────────────────────────────────────
// Everything the page reads from the server's messages goes through W, so
// that both wire shapes work: the older one (top-level ahpXxx members,
// status "active", epoch-ms times, listSessions.sessions) and the Agent
// Host Protocol's (extensions under _meta.ahp, status bitset, ISO times,
// items). Nothing below W reads a wire member directly.
const ahp = (o) => (o && o._meta && o._meta.ahp) || {};
const pick = (o, old, name) => (o ? (o[old] !== undefined ? o[old] : ahp(o)[name]) : undefined);
const toMs = (t) => (t === undefined || t === null || t === '' ? 0 : typeof t === 'number' ? t
  : Date.parse(String(t).replace(/(\.\d{3})\d+/, '$1')) || 0);
const STATUS_BITS = [[2, 'error'], [16, 'input needed'], [8, 'active'], [64, 'archived'], [1, 'idle']];
const W = {
  principal: (r) => pick(r.serverInfo, 'ahpPrincipal', 'principal') || pick(r, 'ahpPrincipal', 'principal'),
  canApprove: (r) => !!(pick(r.serverInfo, 'ahpCanApprove', 'canApprove') ?? pick(r, 'ahpCanApprove', 'canApprove')),
  reconnectKind: (res) => res.type || res.kind,
  // root state
  sessions: (st) => pick(st, 'ahpSessions', 'sessions') || st.items || [],
  approvals: (st) => pick(st, 'ahpApprovals', 'approvals') || [],
  policy: (st) => pick(st, 'ahpPolicy', 'policy'),
  stats: (st) => pick(st, 'ahpStats', 'stats'),
  // session state
  timeline: (st) => pick(st, 'ahpTimeline', 'timeline') || [],
  runs: (st) => pick(st, 'ahpRuns', 'runs') || [],
  inputNeeded: (st) => st.inputNeeded || [],
  summary: (st) => st.summary || st, // the spec's SessionState is the summary, flat
  // session summary
  resource: (s) => s.resource,
  title: (s) => s.title || s.resource,
  agent: (s) => pick(s, 'ahpAgentId', 'agentId') || '',
  framework: (s) => pick(s, 'ahpFramework', 'framework') || '',
  counts: (s) => pick(s, 'ahpCounts', 'counts') || {},
  pending: (s) => pick(s, 'ahpPendingApprovals', 'pendingApprovals') || 0,
  lastActivity: (s) => toMs(pick(s, 'ahpLastActivity', 'lastActivity') ?? s.modifiedAt),
  created: (s) => toMs(s.createdAt),
  status: (s) => {
    const st = s.status;
    if (typeof st !== 'number') return st || '';
    if (ahp(s).state) return ahp(s).state; // idle, active or ended, as the harness says
    if (s.lifecycle && typeof s.lifecycle === 'string' && s.lifecycle !== 'active') return s.lifecycle;
    return (STATUS_BITS.find(([b]) => (st & b) === b) || [0, String(st)])[1];
  },
  // an approval (root list, or the one an action carries)
  apExtra: (a) => ahp(a),
  actionApproval: (a) => (a._meta && (a._meta.ahpApproval || (a._meta.ahp && a._meta.ahp.approval))) || null,
  // the timeline entry an action carries
  actionEntry: (a) => {
    if (a.type === 'ahp/recorded') return a.entry;
    const m = ahp(a);
    return m.eventType ? m : m.entry || null;
  },
  ruleHits: (a) => ahp(a).ruleHits || (a.stats && a.stats.ruleHits) || null,
  decision: (a) => ahp(a), // ahp/approvalRemoved: decidedBy, decisionReason, decidedAt
};

// ─── Small helpers ───────────────────────────────────────────────────────
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
// setText changes a node's text only when it differs (no layout work otherwise).
const setText = (node, t) => { t = String(t ?? ''); if (node.textContent !== t) node.textContent = t; };
// One formatter for every time shown (toLocaleTimeString builds one per
// call, which is most of the cost of drawing a row).
const TIME_FMT = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: 'numeric', second: 'numeric' });
const fmtTime = (t) => (t ? TIME_FMT.format(new Date(toMs(t))) : '');
const INVISIBLE = /[\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF]/g;
const escapeInvisible = (s) => s.replace(INVISIBLE, (c) => '\\u' + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0'));
// showJSON pretty-prints a value for a human, writing invisible and
// direction-changing characters as \uXXXX escapes: what an approver reads
// is what runs.
const showJSON = (v) => escapeInvisible(JSON.stringify(v, null, 2));
const fmtDur = (ms) => {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? s + ' s' : s < 3600 ? Math.floor(s / 60) + ' min ' + String(s % 60).padStart(2, '0') + ' s' : Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
};
const sessionIdOf = (res) => { try { return decodeURIComponent(res.replace(/^ahp-session:\//, '')); } catch { return res; } };
const sessionChannel = (id) => 'ahp-session:/' + encodeURIComponent(id);
const isNoise = (e) => e.eventType === 'handshake' || e.eventType === 'connection_ended';

// what returns what an event asks for, in one line: the command, the
// file and its change, the URL, or the tool's input.
function what(ev) {
  const p = (ev && ev.payload) || {};
  const a = p.arguments || p.tool_input || {};
  if (typeof a.command === 'string') return escapeInvisible(a.command);
  if (typeof a.cmd === 'string') return escapeInvisible(a.cmd);
  const path = a.file_path || a.path;
  if (typeof path === 'string') return escapeInvisible(path);
  if (typeof a.url === 'string') return escapeInvisible(a.url);
  if (p.tool_name) return p.tool_name + ' ' + escapeInvisible(JSON.stringify(a)).slice(0, 200);
  return ev && ev.event_type ? ev.event_type : '';
}

// fileChange returns the new content an event would write, when it is a
// file edit (cut to 40 lines), or ''.
function fileChange(ev) {
  const a = ((ev && ev.payload) || {}).arguments || ((ev && ev.payload) || {}).tool_input || {};
  if (typeof a.file_path !== 'string' && typeof a.path !== 'string') return '';
  const parts = [];
  if (typeof a.old_string === 'string') parts.push(...a.old_string.split('\n').map((l) => '- ' + l));
  if (typeof a.new_string === 'string') parts.push(...a.new_string.split('\n').map((l) => '+ ' + l));
  if (typeof a.content === 'string') parts.push(...a.content.split('\n').map((l) => '+ ' + l));
  const more = parts.length > 40 ? `\n… ${parts.length - 40} more lines` : '';
  return escapeInvisible(parts.slice(0, 40).join('\n')) + more;
}

// ─── State ───────────────────────────────────────────────────────────────
const MAX_TIMELINE = 2000; // entries kept for the open session
const state = {
  ws: null, nextId: 1, pending: new Map(), lastSeen: new Map(), clientId: crypto.randomUUID(),
  principal: null, canApprove: false, sessions: new Map(), approvals: new Map(), decided: [], policy: null, stats: null,
  ruleHits: null, current: null, session: null, page: 'sessions', retry: 0,
  inbox: [], scheduled: false, behindMs: 0,
  dirty: { sessions: false, approvals: false, timeline: false, runs: false, policy: false, charts: false, pendingHere: false },
};
// Measurements for the page's own load tests (observe/e2e): event-to-screen
// delays (ms) of timeline rows drawn while live, and the slowest frame.
// applied counts the actions of the open session applied, connects the
// connections opened (a reconnect counts).
const perf = (window.__ahpPerf = { e2s: [], maxPumpMs: 0, dropped: 0, applied: 0, connects: 0 });
window.__ahpState = state; // for the browser tests' checks of the model

// BATCHES asks the harness to send the messages it has queued for us
// together as one JSON-RPC batch (an array) in one WebSocket message: a
// browser pays per message, and a busy session sends thousands a second.
// It also asks for lean timeline entries (no event inline: a row shows a
// summary; the event is fetched with ahp/event when a row is opened).
const BATCHES = { ahp: { batchMessages: true, leanTimeline: true } };

function send(method, params, notify = false) {
  const msg = { jsonrpc: '2.0', method, params };
  if (notify) { state.ws.send(JSON.stringify(msg)); return Promise.resolve(); }
  msg.id = state.nextId++;
  state.ws.send(JSON.stringify(msg));
  return new Promise((resolve, reject) => state.pending.set(msg.id, { resolve, reject }));
}

// ─── Connection ──────────────────────────────────────────────────────────
function connect() {
  const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/observe');
  state.ws = ws;
  ws.onopen = async () => {
    perf.connects++;
    try {
      if (state.lastSeen.size === 0) {
        const r = await send('initialize', { channel: ROOT, protocolVersions: ['1.0.0'], clientId: state.clientId,
          clientInfo: { name: 'ahp-dashboard' }, initialSubscriptions: [ROOT], _meta: BATCHES });
        loggedIn(W.principal(r), W.canApprove(r));
        for (const s of r.snapshots) applySnapshot(s);
        if (state.current) await subscribeCurrent();
      } else {
        // The Host Protocol's reconnect: serverSeq is one sequence over
        // every channel, so the last one seen anywhere is where the
        // stream stopped; the answer is a replay or fresh snapshots.
        const lastSeenServerSeq = Math.max(...state.lastSeen.values());
        const r = await send('reconnect', { channel: ROOT, clientId: state.clientId, lastSeenServerSeq, subscriptions: [...state.lastSeen.keys()],
          _meta: BATCHES });
        loggedIn(W.principal(r), W.canApprove(r));
        if (W.reconnectKind(r) === 'replay') {
          r.actions.forEach(applyAction);
          for (const ch of r.missing || []) state.lastSeen.delete(ch);
        } else (r.snapshots || []).forEach(applySnapshot);
      }
      state.retry = 0;
      markAll();
      showConn();
    } catch (e) {
      if (e.code === -32007 || e.code === -32009) showLogin(e.code === -32009 ? e.message : '');
    }
  };
  ws.onmessage = (ev) => {
    // Answers to our requests are handled at once (a click's answer never
    // waits behind a backlog); everything else is queued for the pump.
    // A tool call's start and readiness repeat what its confirmation
    // carries, except for approvals: skip them unread (the most frequent
    // messages under load). A JSON array is a batch of messages (asked
    // for with BATCHES), each taken as if it had come alone.
    const d = ev.data;
    if (d.charCodeAt(0) === 91 /* [ */) { for (const m of JSON.parse(d)) take(m); return; }
    if (d.length < 65536 && (d.includes('"chat/toolCallStart"') || d.includes('"chat/toolCallReady"')) && !d.includes('pproval')) return;
    take(JSON.parse(d));
  };
  const take = (m) => {
    if (m.id !== undefined && m.id !== null && state.pending.has(m.id)) {
      const p = state.pending.get(m.id); state.pending.delete(m.id);
      m.error ? p.reject(m.error) : p.resolve(m.result);
      return;
    }
    const t = m.params && m.params.action && m.params.action.type;
    if ((t === 'chat/toolCallStart' || t === 'chat/toolCallReady') && !W.actionApproval(m.params.action)) return;
    state.inbox.push({ m, t: performance.now() });
    if (state.inbox.length > 50000) { resync(); return; }
    schedule();
  };
  ws.onclose = () => {
    showConn(state.principal === null ? 'offline' : 'reconnecting');
    for (const p of state.pending.values()) p.reject({ code: -1, message: 'connection closed' });
    state.pending.clear();
    if (state.principal === null && state.lastSeen.size === 0) return; // not logged in
    setTimeout(connect, Math.min(5000, 250 * 2 ** state.retry++));
  };
}

// resync drops a backlog too large to work through and starts again from
// fresh snapshots (the page says so while it happens).
function resync() {
  perf.dropped += state.inbox.length;
  state.inbox = [];
  state.lastSeen.clear();
  showConn('resyncing');
  try { state.ws.close(); } catch {}
}

async function subscribeCurrent() {
  const r = await send('subscribe', { channel: state.current });
  applySnapshot(r.snapshot);
  markAll();
}

// ─── The pump: apply queued messages in slices, then draw once ──────────
const SLICE_MS = 8;
function schedule() {
  if (state.scheduled) return;
  state.scheduled = true;
  // A task, not an animation frame: applying messages draws nothing by
  // itself, and what render changes in the page asks the browser for a
  // frame on its own; a frame requested per message cost a whole frame
  // (style, paint, compositing) per message even when nothing changed.
  // Timers also run in a hidden tab, where frames do not.
  setTimeout(pump, 0);
}

function pump() {
  state.scheduled = false;
  state.lastLag = 0;
  const t0 = performance.now();
  const q = state.inbox;
  let i = 0;
  state.lagFirst = state.lagLast = null;
  while (i < q.length && performance.now() - t0 < SLICE_MS) {
    try { handle(q[i++].m); } catch (e) { console.error(e); }
  }
  for (const e of state.lagFirst ? [state.lagLast, state.lagFirst] : []) {
    const lag = Date.now() - toMs(e.time);
    state.minLag = Math.min(state.minLag ?? Infinity, lag); // the clocks' offset, at best
    state.lastLag = Math.max(state.lastLag || 0, lag - state.minLag);
  }
  state.inbox = i === q.length ? [] : q.slice(i);
  render();
  const now = performance.now();
  perf.maxPumpMs = Math.max(perf.maxPumpMs, now - t0);
  // Behind: messages wait in our queue, or the entries just applied are
  // older than the freshest ever seen (the socket or the server is
  // behind: a lag the queue does not show).
  state.behindMs = Math.max(state.inbox.length ? now - state.inbox[0].t : 0, state.lastLag);
  state.lastPump = now;
  showConn();
  if (state.inbox.length) schedule();
}

function handle(m) {
  if (m.method === 'action') { applyAction(m.params); return; }
  if (m.method === 'root/sessionAdded') { addSession(m.params.summary); return; }
  if (m.method === 'root/sessionSummaryChanged') { changeSession(m.params.session, m.params.changes); return; }
  if (m.method === 'root/sessionRemoved') { removeSession(m.params.session); return; }
}

function addSession(s) { state.sessions.set(W.resource(s), s); state.dirty.sessions = true; }
function changeSession(res, changes) {
  state.sessions.set(res, { ...(state.sessions.get(res) || { resource: res }), ...changes });
  state.dirty.sessions = true;
}
function removeSession(res) { state.sessions.delete(res); state.dirty.sessions = true; }

function markAll() { for (const k of Object.keys(state.dirty)) state.dirty[k] = true; render(); }

function showConn(text) {
  const c = $('#conn');
  let t = text, cls = '';
  if (!t) {
    if (!state.ws || state.ws.readyState !== WebSocket.OPEN) { t = 'offline'; }
    else if (state.behindMs > 500) { t = `behind ${(state.behindMs / 1000).toFixed(1)} s (${state.inbox.length} queued)`; cls = 'behind'; }
    else { t = 'live'; cls = 'live'; }
  }
  setText(c, t);
  if (c.className !== 'conn ' + cls) c.className = 'conn ' + cls;
}

// ─── Applying snapshots and actions to the model ────────────────────────
function applySnapshot(s) {
  state.lastSeen.set(s.resource, s.fromSeq);
  if (s.resource === ROOT) {
    const st = s.state;
    state.sessions = new Map(W.sessions(st).map((x) => [W.resource(x), x]));
    state.approvals = new Map(W.approvals(st).map((a) => [a.id, a]));
    state.policy = W.policy(st); state.stats = W.stats(st); state.ruleHits = null;
    markAll();
  } else if (state.current === s.resource) {
    const tl = W.timeline(s.state).slice(-MAX_TIMELINE);
    const quiet = tl.filter((e) => !isNoise(e));
    state.session = { summary: W.summary(s.state), all: tl, quiet, allBase: 0, quietBase: 0, noise: tl.length - quiet.length,
      runs: new Map(W.runs(s.state).map((r) => [r.runId, r])), inputNeeded: W.inputNeeded(s.state) };
    tlView.reset();
    state.dirty.timeline = state.dirty.runs = state.dirty.pendingHere = true;
  }
}

function applyAction(env) {
  const last = state.lastSeen.get(env.channel);
  if (last !== undefined && env.serverSeq <= last) return; // already applied
  state.lastSeen.set(env.channel, env.serverSeq);
  const a = env.action;
  if (env.channel === ROOT) {
    switch (a.type) {
      case 'ahp/approvalAdded': state.approvals.set(a.approval.id, a.approval); state.dirty.approvals = state.dirty.pendingHere = true; break;
      case 'ahp/approvalRemoved': approvalRemoved(a); break;
      case 'ahp/statsChanged': state.stats = a.stats; state.ruleHits = W.ruleHits(a) || state.ruleHits; state.dirty.charts = state.dirty.policy = true; break;
      case 'ahp/policyChanged': state.policy = a.policy; state.ruleHits = null; state.dirty.policy = true; break;
      case 'root/sessionAdded': addSession(a.summary); break;
      case 'root/sessionSummaryChanged': changeSession(a.session, a.changes); break;
      case 'root/sessionRemoved': removeSession(a.session); break;
    }
    return;
  }
  if (env.channel !== state.current || !state.session) return;
  perf.applied++;
  const s = state.session;
  let entry = W.actionEntry(a);
  const ap = W.actionApproval(a);
  if (!entry && ap && (a.type === 'chat/toolCallReady' || a.type === 'chat/toolCallConfirmed')) entry = approvalEntry(ap, a);
  if (entry) {
    // The lag is read in pump from the oldest and the newest entry it
    // applied (the largest and the smallest), not from every entry.
    if (entry.time && !entry.synthetic) { state.lagFirst ??= entry; state.lagLast = entry; }
    // Two bounded lists, each numbered from its start (base counts the
    // entries cut off), so that the view can hold its place in either.
    s.all.push(entry);
    if (isNoise(entry)) s.noise++; else s.quiet.push(entry);
    if (s.all.length > MAX_TIMELINE * 1.25) {
      const cut = s.all.length - MAX_TIMELINE;
      s.noise -= s.all.slice(0, cut).filter(isNoise).length;
      s.all = s.all.slice(cut); s.allBase += cut;
    }
    if (s.quiet.length > MAX_TIMELINE * 1.25) {
      const cut = s.quiet.length - MAX_TIMELINE;
      s.quiet = s.quiet.slice(cut); s.quietBase += cut;
    }
    state.dirty.timeline = true;
    tlView.fresh++;
  }
  if (a.type === 'session/inputNeededSet') { s.inputNeeded = [...s.inputNeeded.filter((r) => r.id !== a.request.id), a.request]; state.dirty.pendingHere = true; }
  if (a.type === 'session/inputNeededRemoved') { s.inputNeeded = s.inputNeeded.filter((r) => r.id !== a.id); state.dirty.pendingHere = true; }
  if (a.type === 'ahp/runChanged') { s.runs.set(a.run.runId, a.run); state.dirty.runs = true; }
}

// approvalEntry is the timeline line of an approval that was raised
// (pending) or decided, from the approval an action carries.
function approvalEntry(ap, a) {
  const x = W.apExtra(ap);
  const decided = a.type === 'chat/toolCallConfirmed';
  const status = decided ? ap.status || (a.approved ? 'approved' : 'denied') : 'pending';
  let reason = ap.reason;
  if (decided) reason = (x.decidedBy ? `${ap.status} by ${x.decidedBy}` : ap.status) + (x.decisionReason ? ': ' + x.decisionReason : '');
  return { time: decided ? x.decidedAt || new Date().toISOString() : ap.created, eventType: decided ? 'approval decided' : 'approval requested',
    agentId: ap.agentId, depth: 0, toolName: ((ap.event || {}).payload || {}).tool_name || '', outcome: status, ruleId: ap.ruleId,
    reason, approvalId: ap.id, event: ap.event, synthetic: true };
}

function approvalRemoved(a) {
  const ap = state.approvals.get(a.approvalId);
  state.approvals.delete(a.approvalId);
  const d = W.decision(a);
  state.decided.unshift({ id: a.approvalId, status: a.status, by: d.decidedBy || '', reason: d.decisionReason || '',
    at: d.decidedAt || new Date().toISOString(), ap });
  if (state.decided.length > 50) state.decided.length = 50;
  state.dirty.approvals = state.dirty.pendingHere = true;
}

// ─── Pages ───────────────────────────────────────────────────────────────
function loggedIn(p, canApprove) {
  p = p && p.id ? { id: p.id, roles: p.roles || [] } : { id: '(unknown principal)', roles: [] };
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
  markAll();
}

async function openSession(resource) {
  if (state.current === resource && state.session) return;
  if (state.current && state.current !== resource) {
    send('unsubscribe', { channel: state.current }, true);
    state.lastSeen.delete(state.current);
  }
  state.current = resource; state.session = null;
  $('#payload').hidden = true; $('#payload').textContent = ''; // never the previous session's event
  state.dirty.sessions = true;
  render();
  await subscribeCurrent();
}

function render() {
  setText($('#approval-count'), state.approvals.size);
  const d = state.dirty;
  if (state.page === 'sessions') {
    if (d.sessions) { d.sessions = false; renderSessions(); }
    if (d.pendingHere) { d.pendingHere = false; renderPendingHere(); }
    if (d.timeline) {
      // At least TL_MS between draws of a busy timeline (TL_FLOOD_MS in a
      // flood): the rows in view change a few times a second, not at
      // every message.
      const every = tlView.fresh > FLOOD_ROWS ? TL_FLOOD_MS : TL_MS;
      const wait = every - (performance.now() - tlView.lastUpdate);
      if (wait <= 0) { d.timeline = false; tlView.update(); } else if (!state.tlTimer) state.tlTimer = setTimeout(() => { state.tlTimer = null; schedule(); }, wait);
    }
    if (d.runs) { d.runs = false; renderRuns(); }
  }
  if (state.page === 'approvals' && d.approvals) { d.approvals = false; renderApprovals(); }
  if (state.page === 'policy' && d.policy) { d.policy = false; renderPolicy(); }
  if (state.page === 'charts' && d.charts) { d.charts = false; renderCharts(); }
}

// ─── Sessions: a stable list, patched in place ──────────────────────────
// Rows keep their place: the newest session goes on top, but while the
// pointer is over the list new sessions wait below a note, and nothing
// moves under it. Summaries patch the cells of their row.
const sessionRows = new Map(); // resource → {tr, cells}
function renderSessions() {
  const tbody = $('#sessions tbody');
  for (const [res, r] of sessionRows) if (!state.sessions.has(res)) { r.tr.remove(); sessionRows.delete(res); }
  const fresh = [...state.sessions.values()].filter((s) => !sessionRows.has(W.resource(s)))
    .sort((a, b) => W.created(a) - W.created(b) || W.lastActivity(a) - W.lastActivity(b));
  const held = sessionRows.size > 0 && $('#sessions').matches(':hover') ? fresh.length : 0;
  if (!held) {
    for (const s of fresh) {
      const res = W.resource(s);
      const cells = Array.from({ length: 7 }, () => el('td'));
      const tr = el('tr', { 'data-session': W.title(s), onclick: () => openSession(res) }, ...cells);
      sessionRows.set(res, { tr, cells });
      tbody.prepend(tr);
    }
  }
  const note = $('#sessions-held');
  note.hidden = !held;
  setText(note, held ? `${held} new session${held > 1 ? 's' : ''} — shown when the pointer leaves the list` : '');
  for (const [res, r] of sessionRows) {
    const s = state.sessions.get(res);
    const counts = Object.entries(W.counts(s)).map(([k, v]) => `${k} ${v}`).join(', ');
    const vals = [W.title(s), W.agent(s), W.framework(s), W.status(s), counts, String(W.pending(s)), fmtTime(W.lastActivity(s))];
    vals.forEach((v, i) => setText(r.cells[i], v));
    r.tr.classList.toggle('selected', res === state.current);
    r.tr.classList.toggle('has-pending', W.pending(s) > 0);
  }
  const view = $('#session-view');
  view.hidden = !state.current;
  if (state.current) setText($('#session-title'), state.session ? W.title(state.session.summary) : state.current);
}

// ─── The timeline: bounded, virtual, newest on top ──────────────────────
// Only the rows in view exist (a fixed pool, patched); the rest is
// spacer. Scrolled away from the top, or paused, the rows in view stay
// put and a note counts the new ones.
const ROW_H = 26;
// A busy timeline is drawn at most ten times a second, and in a flood
// (more than FLOOD_ROWS new entries since the last draw: about 1,000 a
// second) four times: each draw is a layout and a paint of the rows in
// view, the page's largest cost under load, and rows that change faster
// than that cannot be read anyway.
const TL_MS = 100;
const TL_FLOOD_MS = 250;
const FLOOD_ROWS = 100;
const tlView = {
  pool: [], paused: false, showNoise: false, top: null, selected: null, lastUpdate: 0, fresh: 0,
  init() {
    this.box = $('#timeline-box');
    this.table = $('#timeline tbody');
    this.before = el('tr', { class: 'spacer' }, el('td', { colSpan: 9 })); this.after = el('tr', { class: 'spacer' }, el('td', { colSpan: 9 }));
    this.table.append(this.before, this.after);
    this.box.addEventListener('scroll', () => { if (this.live()) this.update(); else this.draw(); }, { passive: true });
    $('#tl-pause').addEventListener('click', () => { this.paused = !this.paused; this.update(); });
    $('#tl-noise').addEventListener('change', (e) => { this.showNoise = e.target.checked; this.top = null; this.box.scrollTop = 0; this.update(); });
    $('#tl-new').addEventListener('click', () => { this.paused = false; this.box.scrollTop = 0; this.update(); });
  },
  reset() { this.top = null; this.selected = null; if (this.box) this.box.scrollTop = 0; },
  live() { return !this.paused && this.box.scrollTop < ROW_H / 2; },
  // update rebuilds the list of rows shown (newest first, transport
  // noise folded) while live; while paused or scrolled it keeps the rows
  // the reader looks at and counts the new ones instead.
  update() {
    const s = state.session;
    this.lastUpdate = performance.now();
    this.fresh = 0; // entries applied since this draw
    if (!s) { this.top = null; this.draw(); return; }
    const arr = this.showNoise ? s.all : s.quiet, base = this.showNoise ? s.allBase : s.quietBase;
    const newest = base + arr.length - 1;
    if (this.top === null || this.live()) this.top = newest;
    const newCount = newest - this.top;
    const tl = $('#tl-state');
    setText(tl, this.paused ? 'paused' : this.live() ? 'live' : 'scrolled: not following');
    tl.className = 'tl-state ' + (this.live() ? 'live' : 'paused');
    setText($('#tl-pause'), this.paused ? 'Resume' : 'Pause');
    $('#tl-new').hidden = newCount <= 0;
    setText($('#tl-new'), newCount > 0 ? `↑ ${newCount} new — show` : '');
    setText($('#tl-noise-count'), `${s.noise} transport event${s.noise === 1 ? '' : 's'} (handshakes, connection ends)`);
    this.draw(true);
  },
  // rowAt returns the entry shown at row i (0: the top, the newest).
  rowAt(i) {
    const s = state.session;
    if (!s || this.top === null) return undefined;
    const arr = this.showNoise ? s.all : s.quiet, base = this.showNoise ? s.allBase : s.quietBase;
    return arr[this.top - i - base];
  },
  rowCount() {
    const s = state.session;
    if (!s || this.top === null) return 0;
    return Math.max(0, this.top - (this.showNoise ? s.allBase : s.quietBase) + 1);
  },
  draw(fresh) {
    const n = this.rowCount();
    const h = this.box.clientHeight || 600;
    const first = Math.max(0, Math.floor(this.box.scrollTop / ROW_H) - 5);
    const count = Math.min(n - first, Math.ceil(h / ROW_H) + 10);
    while (this.pool.length < count) {
      const cells = Array.from({ length: 9 }, () => el('td'));
      const tr = el('tr', { class: 'tl-row' }, ...cells);
      tr.addEventListener('click', () => this.open(tr._entry, tr));
      this.pool.push({ tr, cells, entry: null });
      this.table.insertBefore(tr, this.after);
    }
    this.before.style.height = first * ROW_H + 'px';
    this.after.style.height = Math.max(0, n - first - Math.max(0, count)) * ROW_H + 'px';
    const now = Date.now();
    const live = fresh && this.live();
    this.pool.forEach((r, i) => {
      const e = i < count ? this.rowAt(first + i) : undefined;
      r.tr.hidden = !e;
      if (!e || r.entry === e) { if (e) r.tr.classList.toggle('selected', e === this.selected); return; }
      r.entry = e; r.tr._entry = e;
      r.tr.dataset.eventType = e.eventType; r.tr.dataset.outcome = e.outcome || '';
      if (e.approvalId) r.tr.dataset.approvalId = e.approvalId; else delete r.tr.dataset.approvalId;
      r.tr.classList.toggle('synthetic', !!e.synthetic);
      r.tr.classList.toggle('selected', e === this.selected);
      const decided = e.decidedBy ? `${e.approvalStatus || 'decided'} by ${e.decidedBy}${e.approvalReason ? ': “' + e.approvalReason + '”' : ''}` : '';
      const reason = [e.reason, decided].filter((x) => x && !(decided && x.startsWith('denied by'))).join(' — ');
      const vals = [fmtTime(e.time), '↳'.repeat(Math.min(e.depth || 0, 8)) + (e.depth || 0), e.agentId, e.eventType, e.toolName || '',
        e.outcome || '·', e.ruleId || '', reason, e.blocking ? e.latencyMs.toFixed(2) + ' ms' : ''];
      vals.forEach((v, k) => setText(r.cells[k], v));
      r.cells[5].className = 'outcome-' + (e.outcome || 'none');
      r.cells[7].title = reason;
      if (live && !e._drawn && !e.synthetic) perf.e2s.length < 200000 && perf.e2s.push(now - toMs(e.time));
      e._drawn = true;
    });
  },
  // open shows an entry's event beside the timeline, in view.
  open(e, tr) {
    if (!e) return;
    this.selected = e;
    this.pool.forEach((r) => r.tr.classList.toggle('selected', r.entry === e));
    const p = $('#payload');
    p.hidden = false;
    if (tr) tr.classList.add('selected');
    if (e.event || !e.auditId || !e.eventBytes) { p.textContent = e.event ? showJSON(e.event) : `(event of ${e.eventBytes || 0} bytes not inline)`; return; }
    // A lean entry: its event comes on demand, once.
    p.textContent = `(loading the event of ${e.eventBytes} bytes…)`;
    const channel = state.current;
    send('ahp/event', { channel, auditId: e.auditId }).then((r) => {
      if (r.event) e.event = r.event;
      if (this.selected === e && state.current === channel) p.textContent = e.event ? showJSON(e.event) : `(event of ${e.eventBytes} bytes not inline)`;
    }, () => { if (this.selected === e) p.textContent = `(event of ${e.eventBytes} bytes not inline)`; });
  },
};

// renderPendingHere shows, above the timeline, what in this session waits
// for a human (as on the approvals page, in short), and the last decisions.
function renderPendingHere() {
  const box = $('#session-pending');
  if (!state.current) { box.replaceChildren(); return; }
  const sid = sessionIdOf(state.current);
  const list = [...state.approvals.values()].filter((a) => a.sessionId === sid);
  const have = new Map([...box.querySelectorAll('.pending-here')].map((n) => [n.dataset.approvalId, n]));
  for (const [id, n] of have) if (!list.some((a) => a.id === id)) n.remove();
  for (const a of list) {
    if (have.has(a.id)) continue;
    const line = el('div', { class: 'pending-here', 'data-approval-id': a.id },
      el('strong', {}, 'Waiting for approval: '), el('code', {}, what(a.event) || a.reason), ` — rule ${a.ruleId}: ${a.reason} · `,
      el('span', { class: 'waited', 'data-created': a.created }), ' · ',
      el('span', { class: 'deadline', 'data-deadline': W.apExtra(a).deadline || '', 'data-fallback': W.apExtra(a).fallback || '' }), ' ',
      el('button', { onclick: () => { show('approvals'); focusCard(a.id); } }, 'Open card'));
    box.append(line);
  }
  tick();
}

function focusCard(id) {
  requestAnimationFrame(() => {
    const c = document.querySelector(`.approval[data-approval-id="${CSS.escape(id)}"]`);
    if (c) { c.scrollIntoView({ block: 'center' }); c.classList.add('focus'); const t = c.querySelector('textarea'); if (t) t.focus(); }
  });
}

function renderRuns() {
  const s = state.session;
  if (!s) { $('#runs').replaceChildren(); return; }
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

// ─── Approvals: cards made once, never rebuilt ──────────────────────────
// A card puts first what a person decides on: what would run or change,
// the rule and its reason, the agent and what it did just before, how
// long it has waited and what happens when nobody answers. The raw event
// is one click away. Typing in a card is never disturbed: cards are
// added and removed, not redrawn.
const cards = new Map(); // approval id → card element
function renderApprovals() {
  const box = $('#approvals');
  for (const [id, c] of cards) {
    if (!state.approvals.has(id) && !c.classList.contains('answering')) { c.remove(); cards.delete(id); }
  }
  for (const a of state.approvals.values()) if (!cards.has(a.id)) { const c = card(a); cards.set(a.id, c); box.append(c); }
  $('#no-approvals').hidden = state.approvals.size > 0;
  renderDecided();
  tick();
}

function card(a) {
  const x = W.apExtra(a);
  const ev = a.event;
  const reason = el('textarea', { class: 'reason', placeholder: 'reason (recorded with the decision)' });
  reason.dataset.for = a.id;
  const status = el('div', { class: 'answer-status' });
  const c = el('div', { class: 'approval', 'data-approval-id': a.id, 'data-session': a.sessionId });
  const answer = async (approve, btns) => {
    btns.forEach((b) => (b.disabled = true));
    c.classList.add('answering');
    setText(status, approve ? 'Approving…' : 'Denying…'); status.className = 'answer-status sending';
    try {
      await answerApproval(a, approve, reason.value);
      setText(status, `${approve ? 'Approved' : 'Denied'} by you${reason.value ? ': ' + reason.value : ''}`);
      status.className = 'answer-status done';
      setTimeout(() => { c.classList.remove('answering'); state.dirty.approvals = true; schedule(); }, 1500);
    } catch (e) {
      setText(status, e.message || String(e)); status.className = 'answer-status error';
      btns.forEach((b) => (b.disabled = false)); c.classList.remove('answering');
    }
  };
  let buttons;
  if (state.canApprove) {
    const ok = el('button', { class: 'approve' }, 'Approve'), no = el('button', { class: 'deny' }, 'Deny');
    ok.addEventListener('click', () => answer(true, [ok, no]));
    no.addEventListener('click', () => answer(false, [ok, no]));
    buttons = [ok, no];
  } else buttons = [el('em', {}, 'Only approvers may answer.')];
  const tool = ((ev || {}).payload || {}).tool_name || '';
  const change = fileChange(ev);
  const recent = (x.recent || []).map((r) => el('li', {}, `${fmtTime(r.time)} ${r.toolName || r.eventType} `,
    el('code', {}, escapeInvisible(r.summary || '')), ' → ', el('span', { class: 'outcome-' + (r.outcome || 'none') }, r.outcome || 'notified'),
    r.ruleId ? ` (${r.ruleId})` : ''));
  const raw = el('details', { class: 'raw' }, el('summary', {}, 'Raw event'), el('pre', {}));
  raw.addEventListener('toggle', () => {
    if (raw.open) raw.querySelector('pre').textContent = ev ? showJSON(ev)
      : `(the event, ${a.eventBytes || 'size unknown'} bytes, is too large to show here: read it with \`ahp approvals show ${a.id}\` or GET /v1/approvals/${a.id})`;
  });
  c.append(
    el('div', { class: 'ask' }, el('span', { class: 'tool' }, tool || 'action'), el('code', { class: 'command' }, what(ev) || '(see the raw event)')),
    change ? el('pre', { class: 'change' }, change) : '',
    el('div', { class: 'rule' }, el('strong', {}, a.reason), ` — rule `, el('code', {}, a.ruleId)),
    el('div', { class: 'clock' }, el('span', { class: 'waited', 'data-created': a.created }), ' · ',
      el('span', { class: 'deadline', 'data-deadline': x.deadline || '', 'data-fallback': x.fallback || '' })),
    el('div', { class: 'who' }, `Agent `, el('strong', {}, a.agentId || '(unknown)'), `, session `,
      el('a', { href: '#', onclick: (e) => { e.preventDefault(); show('sessions'); openSession(sessionChannel(a.sessionId)); } }, a.sessionId)),
    recent.length ? el('div', { class: 'recent' }, 'Just before:', el('ul', {}, ...recent)) : el('div', { class: 'recent' }, 'No earlier action of this agent in the session.'),
    ...(a.effects && a.effects.length ? [el('div', { class: 'effects-title' }, 'What it does (as the harness reads it):'),
      el('ul', { class: 'effects' }, ...a.effects.slice(0, 50).map((e) => el('li', {}, el('code', {}, e.kind), ' ', effectText(e)))),
      ...(a.effects.length > 50 ? [el('div', {}, `… and ${a.effects.length - 50} more (ahp approvals show ${a.id})`)] : [])] : []),
    raw, reason, el('div', { class: 'buttons' }, ...buttons), status);
  return c;
}

// answerApproval answers through approvals/answer, or (a server that
// lacks it) by dispatching chat/toolCallConfirmed on the session channel.
async function answerApproval(a, approve, reason) {
  try {
    await send('ahp/answerApproval', { channel: ROOT, approvalId: a.id, approve, reason });
  } catch (e) {
    if (e.code !== -32601) throw e;
    await send('dispatchAction', { channel: sessionChannel(a.sessionId), clientSeq: state.nextId,
      action: { type: 'chat/toolCallConfirmed', toolCallId: a.toolCallId || 'ap-' + a.id, approved: approve, reasonMessage: reason } });
  }
}

// renderDecided lists the last decisions seen: who decided what and why.
function renderDecided() {
  const box = $('#decided');
  const have = new Set([...box.children].map((n) => n.dataset.approvalId));
  const fresh = state.decided.filter((d) => !have.has(d.id)).reverse();
  for (const d of fresh) {
    const ap = d.ap || {};
    box.prepend(el('li', { 'data-approval-id': d.id, 'data-status': d.status || '' }, `${fmtTime(d.at)} `,
      el('span', { class: 'outcome-' + (d.status === 'approved' ? 'allow' : 'block') }, d.status || 'decided'),
      d.by ? ` by ${d.by}` : '', ': ', el('code', {}, what(ap.event) || d.id), ap.ruleId ? ` (rule ${ap.ruleId}, session ${ap.sessionId})` : '',
      d.reason ? el('span', { class: 'why' }, ` — “${d.reason}”`) : ''));
  }
  while (box.children.length > 50) box.lastChild.remove();
  $('#decided-title').hidden = box.children.length === 0;
}

// tick refreshes the clocks on cards and pending lines: how long each
// approval has waited, and how long is left before its fallback applies.
function tick() {
  const now = Date.now();
  document.querySelectorAll('.waited').forEach((n) => setText(n, 'waiting ' + fmtDur(now - toMs(n.dataset.created))));
  document.querySelectorAll('.deadline').forEach((n) => {
    const d = toMs(n.dataset.deadline), fb = n.dataset.fallback;
    const left = d - now;
    setText(n, !d ? 'no deadline known' : left > 0 ? `${fmtDur(left)} left, then ${fb || 'the fallback'}` : `deadline passed: ${fb || 'fallback'} applies`);
    n.classList.toggle('urgent', d > 0 && left < 30000);
  });
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
  return escapeInvisible(parts.join(' · '));
}

// ─── Policy: rule hits counted live, rows patched ───────────────────────
const ruleRows = new Map();
function renderPolicy() {
  const p = state.policy;
  if (!p) return;
  setText($('#policy-version'), p.version);
  const r = p.lastReload;
  setText($('#policy-reload'), r ? `Last reload ${fmtTime(r.at)}: ${r.ok ? 'applied' : 'refused: ' + r.error}` : 'No reload since the start.');
  const hits = new Map(p.rules.map((x) => [x.id, x.hits]));
  if (state.ruleHits) for (const [id, n] of Object.entries(state.ruleHits)) hits.set(id, n);
  const tbody = $('#rules tbody');
  for (const [id, row] of ruleRows) if (!hits.has(id)) { row.tr.remove(); ruleRows.delete(id); }
  for (const [id, n] of hits) {
    let row = ruleRows.get(id);
    if (!row) {
      const cells = [el('td', {}, id), el('td', { class: 'hits' })];
      row = { tr: el('tr', { 'data-rule': id }, ...cells), cells, n: -1 };
      ruleRows.set(id, row); tbody.append(row.tr);
    }
    if (row.n !== n) {
      if (row.n >= 0) { row.tr.classList.remove('bump'); void row.tr.offsetWidth; row.tr.classList.add('bump'); }
      row.n = n; setText(row.cells[1], n);
    }
  }
}

// ─── Charts ─────────────────────────────────────────────────────────────
const COLORS = { allow: '#2e7d32', block: '#c62828', escalate: '#ef6c00', defer: '#f9a825', modify: '#00838f', rejected: '#6a1b9a' };
const color = (k) => COLORS[k] || '#5c6bc0';

function bars(canvas, labels, values, colorOf) {
  const c = canvas.getContext('2d');
  const W2 = canvas.width, H = canvas.height, pad = 30;
  c.clearRect(0, 0, W2, H);
  const maxV = Math.max(1, ...values.map((v) => (Array.isArray(v) ? v.reduce((s, x) => s + x[1], 0) : v)));
  const bw = (W2 - pad * 2) / Math.max(1, values.length);
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
  tlView.init();
  document.querySelectorAll('#nav button').forEach((b) => b.addEventListener('click', () => show(b.dataset.page)));
  const list = $('#sessions');
  list.addEventListener('mouseleave', () => { state.dirty.sessions = true; schedule(); });
  $('#login-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const r = await fetch('/login', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ credential: $('#credential').value }), credentials: 'same-origin' });
    $('#credential').value = '';
    if (!r.ok) { $('#login-error').textContent = ((await r.json()).error || {}).message || 'login failed'; return; }
    state.lastSeen.clear();
    connect();
  });
  setInterval(tick, 1000);
  setInterval(() => { if (!state.inbox.length && performance.now() - (state.lastPump || 0) > 1000) state.behindMs = 0; showConn(); }, 500);
  showLogin('');
  connect(); // an existing session cookie logs in at once
});

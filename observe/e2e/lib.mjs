// Shared setup of the dashboard's browser tests: a real `ahp serve` on a
// unix socket and a loopback admin port, Debian's chromium through
// playwright-core, and the bench/dashload driver for paced agent events.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { chromium } from 'playwright-core';

export const here = dirname(fileURLToPath(import.meta.url));
export const repo = join(here, '..', '..');
export const results = join(here, 'test-results');
mkdirSync(results, { recursive: true });
export const APPROVER = 'approver-key-0123456789';
export const OBSERVER = 'observer-key-0123456789';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

// build returns the path of a binary built from pkg (or env's when set).
export function build(envName, name, pkg, dir) {
  if (process.env[envName]) return process.env[envName];
  const out = join(dir, name);
  execFileSync('go', ['build', '-o', out, pkg], { cwd: repo, stdio: 'inherit' });
  return out;
}

export const POLICY = `rules:
  - id: approve-deploy
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("deploy")'
    outcome:
      decision: escalate
      reason: "deploys need an approval"
      await_approval: {timeout: 90s, fallback: block, approver_role: approver}
`;

// pinned returns the command and arguments that run cmd on the CPUs
// cpus (a taskset list such as "0"), or cmd itself when cpus is empty.
const pinned = (cpus, cmd, args) => (cpus ? ['taskset', ['-c', cpus, cmd, ...args]] : [cmd, args]);

// startHarness starts ahp serve with the test credentials and policy.
// With cpus, the harness and the agents its load method starts run on
// those CPUs only; args are added to ahp serve's.
export async function startHarness({ cpus = '', args = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ahp-dashboard-'));
  const sock = join(dir, 'ahp.sock');
  const bin = build('AHP_BIN', 'ahp', './cmd/ahp', dir);
  const loader = build('DASHLOAD_BIN', 'dashload', './bench/dashload', dir);
  writeFileSync(join(dir, 'creds.yaml'), `version: 1
principals:
  - id: alice
    roles: [approver]
    api_keys: ["${APPROVER}"]
  - id: watcher
    roles: [observer]
    api_keys: ["${OBSERVER}"]
`, { mode: 0o600 });
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const serve = spawn(...pinned(cpus, bin, ['serve', '--listen', 'unix:' + sock, '--admin', base, '--data-dir', join(dir, 'data'),
    '--credentials', join(dir, 'creds.yaml'), '--policy', join(dir, 'policy.yaml'), '--log-level', 'error', ...args]), { stdio: 'inherit' });
  for (let i = 0; ; i++) {
    try { const r = await fetch(base + '/readyz'); if (r.ok && existsSync(sock)) break; } catch {}
    if (i > 200) throw new Error('ahp serve did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
  const h = {
    dir, sock, bin, base,
    // send runs `ahp send` and resolves with its exit code.
    send(args) {
      return new Promise((resolve) => {
        const p = spawn(bin, ['send', '--connect', 'unix:' + sock, '--timeout', '90s', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
        p.on('exit', (code) => resolve(code));
      });
    },
    // load sends paced pre_action events (bench/dashload) and resolves
    // with its result line; bounded in count and time.
    load({ session, rate, seconds, agent = 'loader', workers = 4 }) {
      return new Promise((resolve, reject) => {
        const p = spawn(...pinned(cpus, loader, ['-connect', 'unix:' + sock, '-session', session, '-agent', agent, '-rate', String(rate),
          '-duration', seconds + 's', '-count', String(rate > 0 ? rate * seconds : 1000000), '-workers', String(workers)]),
        { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        p.stdout.on('data', (d) => (out += d));
        p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error('dashload exit ' + code))));
      });
    },
    adminToken: () => readFileSync(join(dir, 'data', 'admin.token'), 'utf8').trim(),
    pid: serve.pid,
    stop() { serve.kill('SIGINT'); },
  };
  return h;
}

// launch starts Debian's chromium. With { yieldCPU: true } every process
// of that browser runs at the lowest CPU priority, so that it takes only
// the CPU the harness and the agents leave idle, as when dashboards run on
// the approvers' own machines. nice alone is not enough on Linux with
// autogroup scheduling (kernel.sched_autogroup_enabled=1): Playwright
// starts the browser in a session of its own (setsid), whose autogroup
// competes with the harness's as an equal whatever the nice value of its
// processes; so the wrapper also sets that autogroup's nice to 19.
// { idle: true } also runs it under the SCHED_IDLE policy (chrt --idle),
// whose threads any ordinary thread that wakes preempts at once; tried for
// the decisions/s test and not used: the agents lost more, not less
// (bench/README.md, "Observers that do not slow agents").
export async function launch({ yieldCPU = false, nice = 19, cpus = '', idle = false } = {}) {
  let executablePath = CHROMIUM;
  if (yieldCPU || cpus) {
    const dir = mkdtempSync(join(tmpdir(), 'ahp-chromium-'));
    executablePath = join(dir, 'chromium-wrapped');
    const lines = ['#!/bin/sh'];
    if (yieldCPU) lines.push(`echo ${nice} > /proc/self/autogroup 2>/dev/null`);
    lines.push(`exec ${yieldCPU ? `nice -n ${nice} ` : ''}${yieldCPU && idle ? 'chrt --idle 0 ' : ''}${cpus ? `taskset -c ${cpus} ` : ''}${CHROMIUM} "$@"`);
    writeFileSync(executablePath, lines.join('\n') + '\n', { mode: 0o755 });
  }
  const before = new Set(children().get(process.pid) || []);
  const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu',
    '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  // The browser's main process: our child that the launch added.
  browser.pid = (children().get(process.pid) || []).find((p) => !before.has(p) && /chrom/.test(comm(p)));
  return browser;
}

// launchUnattached starts Debian's chromium on its own, with a DevTools
// port but no client attached, at the lowest CPU priority when yieldCPU
// (autogroup nice 19, as launch). Connect with
// chromium.connectOverCDP(b.endpoint) to set pages up, then close that
// connection: the pages of the default context go on running with no
// driver attached. An attached Playwright enables the DevTools Network
// domain, which copies every WebSocket message a page receives to the
// driver (the dashboards' whole stream, parsed again by Node on the
// harness's cores): not what a person's browser does.
export async function launchUnattached({ yieldCPU = true, nice = 19 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ahp-chromium-'));
  const port = await freePort();
  const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--user-data-dir=' + join(dir, 'profile'), '--remote-debugging-address=127.0.0.1',
    '--remote-debugging-port=' + port, 'about:blank'];
  const [cmd, cargs] = yieldCPU
    ? ['sh', ['-c', `echo ${nice} > /proc/self/autogroup 2>/dev/null; exec nice -n ${nice} "$0" "$@"`, CHROMIUM, ...args]]
    : [CHROMIUM, args];
  const p = spawn(cmd, cargs, { stdio: 'ignore', detached: true });
  const endpoint = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try { const r = await fetch(endpoint + '/json/version'); if (r.ok) break; } catch {}
    if (i > 100) { try { process.kill(-p.pid, 'SIGKILL'); } catch {} throw new Error('chromium did not open its DevTools port'); }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { pid: p.pid, endpoint, close() { try { process.kill(-p.pid, 'SIGKILL'); } catch {} } };
}

// children maps each process id to its children's ids (from /proc).
function children() {
  const m = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!m.has(ppid)) m.set(ppid, []);
      m.get(ppid).push(Number(d));
    } catch { /* gone */ }
  }
  return m;
}

function comm(pid) {
  try { return readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { return ''; }
}

// browserPids returns the process ids of a browser launch started: its
// main process and every descendant (zygotes, renderers, utilities).
export function browserPids(browser) {
  if (!browser.pid) return [];
  const m = children();
  const out = [];
  const walk = (pid) => { out.push(pid); for (const c of m.get(pid) || []) walk(c); };
  walk(browser.pid);
  return out;
}

// affinityOf returns the CPUs process pid may run on, as a list such as
// "0-1" (/proc/PID/status, Cpus_allowed_list), or '' if it is gone.
export function affinityOf(pid) {
  try {
    return /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] || '';
  } catch {
    return '';
  }
}

// cpuList expands a CPU list such as "0-1,4" into its numbers, in order.
export function cpuList(list) {
  const out = [];
  for (const part of list.split(',').filter(Boolean)) {
    const [a, b = a] = part.split('-').map(Number);
    for (let i = a; i <= b; i++) out.push(i);
  }
  return out;
}

// cpuSeconds returns the CPU time (user + system) pids have used so far.
export function cpuSeconds(pids) {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // from field 3 (state) on
      ticks += Number(f[11]) + Number(f[12]); // utime, stime
    } catch { /* gone */ }
  }
  return ticks / 100; // USER_HZ
}

// policiesOf counts the scheduling policies of the threads of pids
// ({0: SCHED_OTHER, 5: SCHED_IDLE, …}: n threads).
export function policiesOf(pids) {
  const n = {};
  for (const pid of pids) {
    let tids = [];
    try { tids = readdirSync(`/proc/${pid}/task`); } catch { continue; }
    for (const tid of tids) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const policy = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]; // field 41
        n[policy] = (n[policy] || 0) + 1;
      } catch { /* gone */ }
    }
  }
  return n;
}

// autogroupNice returns the nice value of pid's autogroup ('' when the
// kernel has none).
export function autogroupNice(pid) {
  try { return readFileSync(`/proc/${pid}/autogroup`, 'utf8').trim().split(' nice ')[1] ?? ''; } catch { return ''; }
}

// autogroupOn reports whether the kernel schedules by autogroup.
export function autogroupOn() {
  try { return readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1'; } catch { return false; }
}

// niceOf returns the nice value of pid.
export function niceOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  } catch { return NaN; }
}

// contextFor returns a browser context logged in as key (one login: the
// harness bounds the dashboard logins a principal holds). Its pages
// record the Event Timing API's entries (input to next paint, for inputs
// of 16 ms or more) in window.__evt.
export async function contextFor(browser, base, key) {
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await ctx.addInitScript(() => {
    window.__evt = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__evt.push({ name: e.name, duration: e.duration, delay: e.processingStart - e.startTime }); })
      .observe({ type: 'event', durationThreshold: 16, buffered: true });
  });
  const page = await ctx.newPage();
  await login(page, base, key);
  await page.close();
  return ctx;
}

// openPage opens the dashboard in ctx (logged in by its cookie).
export async function openPage(ctx, base) {
  const page = await ctx.newPage();
  await page.goto(base + '/');
  await page.waitForSelector('#nav:not([hidden])');
  await page.waitForSelector('#conn.live');
  return page;
}

export async function login(page, base, key) {
  await page.goto(base + '/');
  await page.fill('#credential', key);
  await page.click('#login-btn');
  await page.waitForSelector('#nav:not([hidden])');
  await page.waitForSelector('#conn.live');
}

// slowestInput returns the longest input-to-paint time (ms) of clicks and
// key presses seen since the last call (0 when all were under 16 ms).
export async function slowestInput(page) {
  return page.evaluate(() => {
    const m = Math.max(0, ...window.__evt.filter((e) => /pointer|mouse|click|key/.test(e.name)).map((e) => e.duration));
    window.__evt = [];
    return m;
  });
}

export const quantile = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

// Shared setup of the dashboard's browser tests: a real `ahp serve` on a
// unix socket and a loopback admin port, Debian's chromium through
// playwright-core, and the bench/dashload driver for paced agent events.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, existsSync, readFileSync } from 'node:fs';
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

// startHarness starts ahp serve with the test credentials and policy.
export async function startHarness() {
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
  const serve = spawn(bin, ['serve', '--listen', 'unix:' + sock, '--admin', base, '--data-dir', join(dir, 'data'),
    '--credentials', join(dir, 'creds.yaml'), '--policy', join(dir, 'policy.yaml'), '--log-level', 'error'], { stdio: 'inherit' });
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
        const p = spawn(loader, ['-connect', 'unix:' + sock, '-session', session, '-agent', agent, '-rate', String(rate),
          '-duration', seconds + 's', '-count', String(rate > 0 ? rate * seconds : 1000000), '-workers', String(workers)],
        { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        p.stdout.on('data', (d) => (out += d));
        p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error('dashload exit ' + code))));
      });
    },
    adminToken: () => readFileSync(join(dir, 'data', 'admin.token'), 'utf8').trim(),
    stop() { serve.kill('SIGINT'); },
  };
  return h;
}

export async function launch() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu',
    '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
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

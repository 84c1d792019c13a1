// The link of an approval notification opens the approval's card on the
// dashboard (docs/notifications.md): a real `ahp serve` posts the pending
// approval to a webhook receiver on loopback, and chromium follows the link
// in it. Run from .ci/run with the other browser tests.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import { freePort, build, launch, POLICY, results } from './lib.mjs';

const APPROVER = 'approver-key-deeplink-0123';

const dir = mkdtempSync(join(tmpdir(), 'ahp-deeplink-'));
const sock = join(dir, 'ahp.sock');
let bin;
let serve, browser, base, hook;
const bodies = [];
let arrived = () => {};

function send(args) {
  return new Promise((resolve) => {
    const p = spawn(bin, ['send', '--connect', 'unix:' + sock, '--timeout', '90s', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    p.on('exit', (code) => resolve(code));
  });
}

function nextBody(pred) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('no notification arrived: ' + JSON.stringify(bodies))), 20000);
    const check = () => {
      const b = bodies.find(pred);
      if (b) { clearTimeout(t); arrived = () => {}; resolve(b); } else arrived = check;
    };
    check();
  });
}

before(async () => {
  bin = build('AHP_BIN', 'ahp', './cmd/ahp', dir);
  hook = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => { data += c; });
    req.on('end', () => { bodies.push(JSON.parse(data)); res.end('ok'); arrived(); });
  });
  await new Promise((r) => hook.listen(0, '127.0.0.1', r));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  writeFileSync(join(dir, 'creds.yaml'), `version: 1
principals:
  - id: alice
    roles: [approver]
    api_keys: ["${APPROVER}"]
`, { mode: 0o600 });
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  writeFileSync(join(dir, 'ahp.yaml'), `data_dir: ${join(dir, 'data')}
listen: ["unix:${sock}"]
admin: ${base}
log: {level: error}
auth: {credentials: ${join(dir, 'creds.yaml')}}
policy: {files: [${join(dir, 'policy.yaml')}]}
notifications:
  dashboard_url: ${base}
  sinks:
    - {name: test, format: json, url_env: AHP_E2E_HOOK_URL, events: [pending]}
`);
  serve = spawn(bin, ['serve', '--config', join(dir, 'ahp.yaml')], { stdio: 'inherit',
    env: { ...process.env, AHP_E2E_HOOK_URL: `http://127.0.0.1:${hook.address().port}/hook` } });
  for (let i = 0; i < 200; i++) {
    try { const r = await fetch(base + '/readyz'); if (r.ok && existsSync(sock)) break; } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  if (serve) serve.kill('SIGINT');
  if (hook) hook.close();
});

test("a notification's link opens its approval card, after the login", async () => {
  // Two approvals wait; the link names the second.
  const first = send(['--session', 'link-1', 'pre_action', '{"tool_name":"bash","arguments":{"command":"deploy staging"}}']);
  await nextBody((b) => b.session_id === 'link-1');
  const second = send(['--session', 'link-2', 'pre_action', '{"tool_name":"bash","arguments":{"command":"deploy prod"}}']);
  const body = await nextBody((b) => b.session_id === 'link-2');
  assert.equal(body.kind, 'pending');
  assert.equal(body.link, `${base}/#approval=${encodeURIComponent(body.approval_id)}`);

  const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
  await page.goto(body.link);
  await page.fill('#credential', APPROVER);
  await page.click('#login-btn');
  await page.waitForSelector('#nav:not([hidden])');
  const card = `.approval.linked[data-approval-id="${body.approval_id}"]`;
  await page.waitForSelector(card);
  assert.equal(await page.isVisible('#page-approvals'), true, 'the approvals page is shown');
  assert.equal(await page.locator('.approval').count(), 2);
  await page.screenshot({ path: join(results, 'deeplink.png') });

  // Release the waiting agents.
  const tok = (await import('node:fs')).readFileSync(join(dir, 'data', 'admin.token'), 'utf8').trim();
  for (const b of bodies) {
    await fetch(`${base}/v1/approvals/${b.approval_id}/deny`, { method: 'POST', headers: { Authorization: 'Bearer ' + tok }, body: '{"reason":"done"}' });
  }
  assert.equal(await first, 2);
  assert.equal(await second, 2);
  await page.close();
});

// Browser tests of the ahp dashboard: Playwright (playwright-core) drives
// Debian's chromium against a real `ahp serve`; events come from `ahp send`.
// Run from .ci/run, or: AHP_BIN=/path/to/ahp npm test (in observe/e2e).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startHarness, launch, results, APPROVER, OBSERVER } from './lib.mjs';

let h, browser, base, dir;

// send runs `ahp send` and resolves with its exit code.
const send = (args) => h.send(args);

before(async () => {
  h = await startHarness();
  ({ base, dir } = h);
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  if (h) h.stop();
});

async function login(page, key) {
  await page.goto(base + '/');
  await page.screenshot({ path: join(results, '01-login.png') });
  await page.fill('#credential', key);
  await page.click('#login-btn');
  await page.waitForSelector('#nav:not([hidden])');
  await page.waitForSelector('#conn.live');
}

test('events sent with ahp send appear in the session timeline live', async () => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await login(page, OBSERVER);
  // The cookie is HttpOnly: the page's script cannot read it.
  assert.equal(await page.evaluate(() => document.cookie), '');
  assert.equal(await send(['--session', 'live-1', '--agent', 'coder', 'pre_action', '{"tool_name":"bash","arguments":{"command":"ls -la"}}']), 0);
  await page.click('tr[data-session="live-1"]');
  await page.waitForSelector('#timeline tr.tl-row[data-event-type="pre_action"][data-outcome="allow"]');
  // Now live: a block and a notification arrive while the page is open.
  assert.equal(await send(['--session', 'live-1', '--agent', 'coder', 'pre_action', '{"tool_name":"bash","arguments":{"command":"rm -rf /"}}']), 2);
  await send(['--session', 'live-1', '--agent', 'coder', 'post_action', '{"tool_name":"bash","result":"ok"}']);
  await page.waitForSelector('#timeline tr.tl-row[data-event-type="pre_action"][data-outcome="block"]');
  await page.waitForSelector('#timeline tr.tl-row[data-event-type="post_action"]');
  const rule = await page.textContent('#timeline tr.tl-row[data-outcome="block"] td:nth-child(7)');
  assert.ok(rule.length > 0, 'the blocking rule is shown');
  await page.click('#timeline tr.tl-row[data-outcome="block"]');
  await page.waitForSelector('#payload:not([hidden])');
  // The timeline's entries are lean: the event comes on demand (ahp/event).
  await page.waitForFunction(() => /rm -rf/.test(document.querySelector('#payload').textContent), null, { timeout: 5000 });
  await page.screenshot({ path: join(results, '02-sessions.png'), fullPage: true });
  // An observer sees approvals but cannot answer them.
  const pending = send(['--session', 'live-1', 'pre_action', '{"tool_name":"bash","arguments":{"command":"deploy staging"}}']);
  await page.click('#nav button[data-page="approvals"]');
  await page.waitForSelector('.approval');
  assert.equal(await page.locator('.approval button.approve').count(), 0);
  // Answer it as the local admin, through the admin API, to release it.
  const id = await page.getAttribute('.approval', 'data-approval-id');
  const { readFileSync } = await import('node:fs');
  const tok = readFileSync(join(dir, 'data', 'admin.token'), 'utf8').trim();
  const r = await fetch(`${base}/v1/approvals/${id}/deny`, { method: 'POST', headers: { Authorization: 'Bearer ' + tok }, body: '{"reason":"cleanup"}' });
  assert.equal(r.status, 200);
  assert.equal(await pending, 2);
  await page.close();
});

test('an escalation is approved and denied with a click', async () => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await login(page, APPROVER);
  await page.click('#nav button[data-page="approvals"]');

  const approved = send(['--session', 'deploy-1', '--agent', 'release', 'pre_action', '{"tool_name":"bash","arguments":{"command":"deploy prod"}}']);
  await page.waitForSelector('.approval[data-session="deploy-1"] button.approve');
  // The card says what the action does (its effects), not only its words.
  const effects = await page.textContent('.approval[data-session="deploy-1"] ul.effects');
  assert.match(effects, /run/);
  assert.match(effects, /program deploy/);
  await page.fill('.approval[data-session="deploy-1"] textarea.reason', 'release window open');
  await page.screenshot({ path: join(results, '03-approvals.png'), fullPage: true });
  await page.click('.approval[data-session="deploy-1"] button.approve');
  assert.equal(await approved, 0, 'the waiting agent is released with allow');
  await page.waitForSelector('.approval[data-session="deploy-1"]', { state: 'detached' });

  const denied = send(['--session', 'deploy-2', '--agent', 'release', 'pre_action', '{"tool_name":"bash","arguments":{"command":"deploy prod again"}}']);
  await page.waitForSelector('.approval[data-session="deploy-2"] button.deny');
  await page.fill('.approval[data-session="deploy-2"] textarea.reason', 'not today');
  await page.click('.approval[data-session="deploy-2"] button.deny');
  assert.equal(await denied, 2, 'a denial blocks the waiting agent');

  await page.click('#nav button[data-page="policy"]');
  await page.waitForSelector('#rules tr[data-rule="approve-deploy"]');
  await page.screenshot({ path: join(results, '04-policy.png'), fullPage: true });
  await page.click('#nav button[data-page="charts"]');
  await page.waitForTimeout(1500); // one statistics update
  await page.screenshot({ path: join(results, '05-charts.png'), fullPage: true });
  await page.click('#nav button[data-page="sessions"]');
  await page.click('tr[data-session="deploy-1"]');
  await page.waitForSelector('#timeline tr.tl-row[data-outcome="allow"]');
  await page.screenshot({ path: join(results, '06-session.png'), fullPage: true });
  await page.close();
});

test('a run shows at once that its agent connection ended', async () => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await login(page, OBSERVER);
  const lifecycle = (status, n) => ['--session', 'run-1', '--agent', 'coder', 'run_lifecycle',
    JSON.stringify({ run_id: 'r-1', session_id: 'run-1', status, updated_at: `2026-11-21T10:00:0${n}Z` })];
  // ahp send closes its connection after the event: the run is marked
  // while nobody watches the session, and the page gets it on opening it.
  assert.equal(await send(lifecycle('planning', 1)), 0);
  await page.click('tr[data-session="run-1"]');
  await page.waitForSelector('.run[data-run="r-1"] .run-conn[data-connection="closed"]');
  // Watched: the next event clears the mark, its connection's end sets it
  // again, both live (no reload).
  assert.equal(await send(lifecycle('executing', 2)), 0);
  await page.waitForFunction(() => /executing/.test(document.querySelector('.run[data-run="r-1"] strong')?.textContent || '') &&
    document.querySelector('.run[data-run="r-1"] .run-conn[data-connection="closed"]'));
  await page.screenshot({ path: join(results, '07-run-connection.png'), fullPage: true });
  await page.close();
});

test('a cross-site login is refused', async () => {
  const r = await fetch(base + '/login', { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: 'https://evil.example' },
    body: JSON.stringify({ credential: APPROVER }) });
  assert.equal(r.status, 403);
});

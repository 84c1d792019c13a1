// The dashboard under load (issue 27): an approver types, clicks and reads
// while agents' events flow at 50 to 500 per second, driven by
// bench/dashload over the harness's unix socket (bounded in count and
// time). Screenshots go to test-results/ (and, with AHP_DOCS_SCREENSHOTS=1,
// to docs/); measured figures to test-results/load.json.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, copyFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startHarness, launch, contextFor, openPage, slowestInput, quantile, results, repo, APPROVER, OBSERVER, browserPids, cpuSeconds, niceOf, autogroupNice, autogroupOn, policiesOf, affinityOf, cpuList } from './lib.mjs';

let h, browser, approver, observer;
const figures = {};
const shot = async (page, name, opts = {}) => {
  const path = join(results, name + '.png');
  await page.screenshot({ path, ...opts });
  if (process.env.AHP_DOCS_SCREENSHOTS) copyFileSync(path, join(repo, 'docs', 'dashboard-' + name + '.png'));
};

before(async () => {
  h = await startHarness();
  browser = await launch();
  approver = await contextFor(browser, h.base, APPROVER);
  observer = await contextFor(browser, h.base, OBSERVER);
});

after(async () => {
  writeFileSync(join(results, 'load.json'), JSON.stringify(figures, null, 2));
  console.log('dashboard load figures: ' + JSON.stringify(figures));
  if (browser) await browser.close();
  if (h) h.stop();
});

const ev = (cmd) => JSON.stringify({ tool_name: 'bash', arguments: { command: cmd } });

async function openSession(page, id) {
  await page.click('#nav button[data-page="sessions"]');
  await page.waitForSelector(`tr[data-session="${id}"]`);
  await page.click(`tr[data-session="${id}"]`);
  await page.waitForFunction((id) => document.querySelector('#session-title')?.textContent === id, id);
  await page.mouse.move(5, 890); // off the session list
}

test('a reason typed at 50 events/s keeps every character and its focus', async () => {
  const page = await openPage(approver, h.base);
  assert.equal(await h.send(['--session', 'typing', '--agent', 'coder', 'pre_action', ev('git status')]), 0);
  const load = h.load({ session: 'typing', rate: 50, seconds: 14, agent: 'coder' });
  await openSession(page, 'typing');
  const denied = h.send(['--session', 'typing', '--agent', 'coder', 'pre_action', ev('deploy prod --force')]);
  // The pending approval shows in its session, above the timeline.
  await page.waitForSelector('#session-pending .pending-here');
  assert.match(await page.textContent('#session-pending'), /deploy prod --force/);
  await page.click('#session-pending .pending-here button');
  const card = '.approval[data-session="typing"]';
  await page.waitForSelector(card + ' textarea.reason');
  const reason = 'not during the release freeze; ask again after 14:00, with the rollback plan';
  await page.click(card + ' textarea.reason');
  // Meanwhile another approval arrives: a card is added, none is rebuilt.
  const other = h.send(['--session', 'typing-2', '--agent', 'coder', 'pre_action', ev('deploy staging')]);
  await page.keyboard.type(reason, { delay: 25 });
  await page.waitForSelector('.approval[data-session="typing-2"]');
  assert.equal(await page.inputValue(card + ' textarea.reason'), reason, 'every character typed stays');
  assert.ok(await page.evaluate((c) => document.activeElement === document.querySelector(c + ' textarea.reason'), card), 'the box keeps its focus');
  await page.click(card + ' button.deny');
  assert.equal(await denied, 2, 'the denial reaches the agent');
  // Who decided what and why: in the decided list, and in the session.
  await page.waitForSelector('#decided li[data-status="denied"]');
  const line = await page.textContent('#decided li[data-status="denied"]');
  assert.match(line, /denied by alice/); assert.ok(line.includes(reason)); assert.match(line, /deploy prod --force/);
  await shot(page, 'approvals-decided', { fullPage: true });
  await openSession(page, 'typing');
  await page.waitForFunction(() => window.__ahpState.session.all.some((e) => e.decidedBy === 'alice' || /denied by alice/.test(e.reason || '')));
  // Release the other one as the admin (it would hold the page otherwise).
  const id = await page.getAttribute('.approval[data-session="typing-2"]', 'data-approval-id').catch(() => null);
  if (id) await fetch(`${h.base}/v1/approvals/${id}/deny`, { method: 'POST', headers: { Authorization: 'Bearer ' + h.adminToken() }, body: '{"reason":"cleanup"}' });
  else {
    await page.click('#nav button[data-page="approvals"]');
    const id2 = await page.getAttribute('.approval[data-session="typing-2"]', 'data-approval-id');
    await fetch(`${h.base}/v1/approvals/${id2}/deny`, { method: 'POST', headers: { Authorization: 'Bearer ' + h.adminToken() }, body: '{"reason":"cleanup"}' });
  }
  await other;
  const r = await load;
  assert.equal(r.errors, 0);
  await page.close();
});

test('Approve at 500 events/s: the click is answered within 100 ms and the card says what matters', async () => {
  const page = await openPage(approver, h.base);
  assert.equal(await h.send(['--session', 'hot', '--agent', 'release', 'pre_action', ev('ls -la /srv/app')]), 0);
  assert.equal(await h.send(['--session', 'hot', '--agent', 'release', 'pre_action', ev('rm -rf /')]), 2);
  const load = h.load({ session: 'hot', rate: 500, seconds: 16, agent: 'loader' });
  await openSession(page, 'hot');
  await page.waitForTimeout(2000); // the flood is on
  const approved = h.send(['--session', 'hot', '--agent', 'release', 'pre_action', ev('deploy prod')]);
  await page.waitForSelector('#session-pending .pending-here');
  await shot(page, 'session-under-load');
  await slowestInput(page);
  await page.click('#nav button[data-page="approvals"]');
  const card = '.approval[data-session="hot"]';
  await page.waitForSelector(card + ' button.approve');
  const navMs = await slowestInput(page);
  // What a person decides on comes first.
  assert.equal((await page.textContent(card + ' .ask .command')).trim(), 'deploy prod');
  assert.match(await page.textContent(card + ' .rule'), /deploys need an approval — rule approve-deploy/);
  assert.match(await page.textContent(card + ' .who'), /Agent release, session hot/);
  const recent = await page.textContent(card + ' .recent');
  assert.match(recent, /ls -la \/srv\/app/); assert.match(recent, /rm -rf \/ → block/);
  assert.match(await page.textContent(card + ' .waited'), /^waiting \d+ s$/);
  assert.match(await page.textContent(card + ' .deadline'), /^1 min [0-9]{2} s left, then block$/);
  assert.match(await page.textContent(card + ' ul.effects'), /program deploy/);
  // The raw event is one click away.
  await page.click(card + ' details.raw summary');
  // The page fills the raw event in on the frame after the click: wait for it.
  await page.waitForFunction((sel) => /"event_type": "pre_action"/.test((document.querySelector(sel) || {}).textContent || ''),
    card + ' details.raw pre', { timeout: 5000 });
  await shot(page, 'approval-card', { fullPage: true });
  const t0 = Date.now();
  await page.click(card + ' button.approve');
  await page.waitForSelector(card + ' .answer-status.done, ' + card + ':not(:has(.answer-status))', { timeout: 5000 }).catch(() => {});
  const clickToAnswered = Date.now() - t0;
  const clickMs = await slowestInput(page);
  assert.equal(await approved, 0, 'the waiting agent is released with allow');
  const released = Date.now() - t0;
  figures.approveAt500 = { inputToPaintMs: clickMs, navInputToPaintMs: navMs, clickToAnsweredMs: clickToAnswered, clickToAgentReleasedMs: released };
  assert.ok(clickMs < 100, `the Approve click took ${clickMs} ms to paint`);
  assert.ok(navMs < 100, `the Approvals tab took ${navMs} ms to paint`);
  // Event to screen on the open session, with the flood still on.
  await openSession(page, 'hot');
  await page.evaluate(() => { window.__ahpPerf.e2s = []; });
  await page.waitForTimeout(3000);
  const e2s = await page.evaluate(() => window.__ahpPerf.e2s);
  figures.approveAt500.e2sP99Ms = quantile(e2s, 0.99);
  assert.ok(e2s.length > 300, `${e2s.length} rows drawn in 3 s`);
  assert.ok(quantile(e2s, 0.99) < 1000, `event-to-screen p99 ${quantile(e2s, 0.99)} ms`);
  // The timeline is bounded and virtual: only the rows in view exist.
  assert.ok(await page.locator('#timeline tr.tl-row').count() < 80);
  const r = await load;
  figures.approveAt500.load = r;
  assert.equal(r.errors, 0);
  await page.close();
});

test('event-to-screen latency at 50, 200 and 500 events/s', async () => {
  const page = await openPage(observer, h.base);
  figures.eventToScreen = [];
  for (const rate of [50, 200, 500]) {
    const session = 'rate-' + rate;
    assert.equal(await h.send(['--session', session, 'pre_action', ev('true')]), 0);
    await openSession(page, session);
    await page.evaluate(() => { window.__ahpPerf.e2s = []; window.__ahpPerf.maxPumpMs = 0; });
    const r = await h.load({ session, rate, seconds: 8 });
    await page.waitForTimeout(500);
    const p = await page.evaluate(() => ({ e2s: window.__ahpPerf.e2s, maxPumpMs: window.__ahpPerf.maxPumpMs }));
    const row = { rate, sent: r.sent, perSecond: Math.round(r.perSecond), drawn: p.e2s.length, p50Ms: quantile(p.e2s, 0.5), p99Ms: quantile(p.e2s, 0.99),
      maxMs: Math.max(...p.e2s), maxPumpMs: Math.round(p.maxPumpMs) };
    figures.eventToScreen.push(row);
    // Drawn ten times a second, a flood pushes some rows below the view
    // before a draw: they are in the list (scroll down), not measured.
    assert.ok(row.drawn >= r.sent * (rate > 200 ? 0.3 : 0.9), `rows drawn ${row.drawn} of ${r.sent} sent`);
    assert.ok(row.p99Ms < 1000, `p99 at ${rate}/s: ${row.p99Ms} ms`);
  }
  await page.close();
});

// What 5 dashboards cost the agents (issue 27: observers must not slow
// agents). In a deployment the dashboards run in the approvers' browsers,
// on their own machines: what the harness's host spends on them is the
// observer stream. The bound is measured that way on this machine's cores:
// the harness and its agents on one CPU, the dashboards' browser and this
// test's driver (Playwright copies every WebSocket message a page gets to
// it) on another (the first two this process may use); 0 and 5 dashboards watching the session the agents
// saturate, alternated, BOUND_ROUNDS rounds (more when the bound is
// missed). The median over rounds of each 5-dashboard run's rate over its
// round's 0-dashboard rate must be at least 1 - BOUND. The aim is no loss
// beyond noise: the harness's own CPU per decision rose 1–4 % with 5
// dashboards in the runs of 2026-11-28, and the medians were 0.93 and 0.98,
// but single runs on a 2-core machine move by ±10 %, so the bound is 15 %.
// The two runs of a round go in turn one and the other order.
// Recorded besides, on shared cores (regression bounds only): the same 5
// dashboards in a browser at the lowest CPU priority (lib.mjs launch
// yieldCPU: autogroup and nice 19), at normal priority, and 5 on the
// catalogue only. There the browsers' and the driver's own CPU comes out
// of the agents' share (21–41 % on quiet runs, most of it theirs: see
// bench/README.md, "Observers that do not slow agents").
// Every dashboard must stay connected (no reconnect, no backlog dropped)
// and get every decision's action, counted in the page; how many it had
// applied by the end of the load, and how long it took to catch up, are
// recorded (a page short of CPU falls behind while the agents saturate the
// harness: its backlog waits in the harness's queue for it, bounded by
// --observe-queue). 4 agents as fast as they are answered, 5 s a run.
const BOUND = 0.15; // browsers off the harness's core: 5 dashboards on the busy session cost at most 15 %
const SHARED_BOUND = 0.5; // browser at low priority on the harness's cores: at most 50 % (a regression guard)
const CATALOGUE_BOUND = 0.2; // 5 on the catalogue only, shared cores: at most 20 %
const BOUND_ROUNDS = 5;
const MAX_ROUNDS = 8;
const CATCH_UP_MS = 60000;

// pinDriver moves every thread of this Node process (the test driver) to
// the CPUs cpus (a taskset list).
const pinDriver = (cpus) => execFileSync('taskset', ['-a', '-p', '-c', cpus, String(process.pid)], { stdio: 'ignore' });

test('decisions per second with 0 and with 5 dashboards open', { timeout: 30 * 60000 }, async () => {
  // The first two CPUs this process may run on (a CI runner's may not
  // be numbered from 0): the harness's and the browsers'.
  const driverCpus = affinityOf(process.pid);
  const allowed = cpuList(driverCpus);
  assert.ok(allowed.length >= 2, `the measurement needs two CPUs (one for the harness, one for the browsers); this process may use ${driverCpus}`);
  const [harnessCpu, browserCpu] = allowed.map(String);
  // Harnesses of their own, whose observer queues hold a slow page's
  // backlog (65,536 messages) instead of disconnecting it: one on every
  // core, one on CPU 0 only.
  const args = ['--observe-queue', '65536'];
  const hm = await startHarness({ args });
  const hp = await startHarness({ cpus: harnessCpu, args });
  const low = await launch({ yieldCPU: true });
  // The browser for the harness on its own core starts unpinned (a
  // chromium started under taskset hung at login in a CI run) and its
  // processes are moved to their CPU once logged in, and again once its
  // pages are open (their renderers are new processes).
  const own = await launch();
  const pinOwn = () => {
    for (const pid of browserPids(own)) {
      try { execFileSync('taskset', ['-a', '-p', '-c', browserCpu, String(pid)], { stdio: 'ignore' }); } catch { /* gone */ }
    }
  };
  try {
    const lowCtx = await contextFor(low, hm.base, OBSERVER);
    const sharedCtx = await contextFor(browser, hm.base, OBSERVER);
    const ownCtx = await contextFor(own, hp.base, OBSERVER);
    pinOwn();
    // Chromium (as root) sets some of its threads' nice below 19 again;
    // with autogroup scheduling what counts against the harness is the
    // browser's autogroup, which it leaves alone.
    const lowPids = browserPids(low);
    const groups = lowPids.map(autogroupNice);
    figures.yieldingBrowser = { processes: lowPids.length, nice: lowPids.map(niceOf), autogroupNice: groups, threadPolicies: policiesOf(lowPids) };
    assert.ok(lowPids.length > 1, 'the yielding browser\'s processes are found');
    if (autogroupOn()) assert.ok(groups.every((g) => g === '19'), `every process of the yielding browser is in an autogroup at nice 19: ${groups}`);
    else assert.equal(niceOf(lowPids[0]), 19, 'the yielding browser runs at nice 19');
    const ownPids = browserPids(own);
    assert.ok(ownPids.length > 1 && ownPids.every((pid) => affinityOf(pid) === browserCpu), `every process of the pinned browser runs on CPU ${browserCpu} only: ${ownPids.map(affinityOf)}`);
    assert.equal(affinityOf(hp.pid), harnessCpu, `the pinned harness runs on CPU ${harnessCpu} only`);

    const pages = [];
    const close = async () => { while (pages.length) await pages.pop().close(); };
    const perfOf = (p) => p.evaluate(() => ({ applied: window.__ahpPerf.applied, connects: window.__ahpPerf.connects, dropped: window.__ahpPerf.dropped }));
    const run = async (hx, n, ctx, watch) => {
      await close();
      while (pages.length < n) {
        const p = await openPage(ctx, hx.base);
        if (watch) await openSession(p, 'max');
        pages.push(p);
      }
      if (hx === hp) {
        pinOwn();
        const off = browserPids(own).filter((pid) => { const a = affinityOf(pid); return a !== '' && a !== browserCpu; });
        assert.deepEqual(off, [], `every process of the browser on its own core runs on CPU ${browserCpu}`);
      }
      const before = await Promise.all(pages.map(perfOf));
      const cpu0 = cpuSeconds([hx.pid]);
      const r = await hx.load({ session: 'max', rate: 0, seconds: 5, workers: 4 });
      const cpu = cpuSeconds([hx.pid]) - cpu0;
      const atEnd = await Promise.all(pages.map((p, i) => perfOf(p).then((x) => x.applied - before[i].applied)));
      const t0 = Date.now();
      const catchUpMs = await Promise.all(pages.map((p, i) => (!watch ? 0
        : p.waitForFunction(([b, want]) => window.__ahpPerf.applied - b >= want, [before[i].applied, r.sent], { timeout: CATCH_UP_MS, polling: 100 })
          .then(() => Date.now() - t0, () => -1))));
      const after = await Promise.all(pages.map(perfOf));
      return { r, cpuPerDecisionUs: Math.round((cpu / r.sent) * 1e6), atEnd, catchUpMs,
        reconnects: after.map((x, i) => x.connects - before[i].connects), dropped: after.map((x, i) => x.dropped - before[i].dropped) };
    };
    for (const hx of [hm, hp]) assert.equal(await hx.send(['--session', 'max', 'pre_action', ev('true')]), 0);
    const rows = [];
    // [harness, dashboards, context, watching the session, label, the label of its baseline]
    const configs = [[hp, 0, null, false, 'none, own core', ''], [hp, 5, ownCtx, true, 'session, browser on its own core', 'none, own core'],
      [hm, 0, null, false, 'none', ''], [hm, 5, lowCtx, true, 'session, low priority', 'none'], [hm, 5, sharedCtx, true, 'session, shared CPU', 'none'],
      [hm, 5, lowCtx, false, 'catalogue, low priority', 'none']];
    const baseOf = Object.fromEntries(configs.map((c) => [c[4], c[5]]));
    const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
    const against = (w, k) => median(rows.filter((r) => r.watching === w).map((r) => r[k] / rows.find((z) => z.round === r.round && z.watching === baseOf[w])[k]));
    const ratio = (w) => against(w, 'perSecond');
    const mainLabel = 'session, browser on its own core';
    for (let round = 1; round <= MAX_ROUNDS; round++) {
      if (round > BOUND_ROUNDS && ratio(mainLabel) >= 1 - BOUND) break;
      const order = round % 2 ? configs : [configs[1], configs[0], ...configs.slice(2)];
      for (const [hx, n, ctx, watch, label] of order) {
        // The driver runs where the browser it drives does.
        pinDriver(hx === hp ? browserCpu : driverCpus);
        const m = await run(hx, n, ctx, watch);
        rows.push({ round, dashboards: n, watching: label, perSecond: Math.round(m.r.perSecond), p50Ms: m.r.p50Ms, p99Ms: m.r.p99Ms,
          sent: m.r.sent, serverCpuPerDecisionUs: m.cpuPerDecisionUs, appliedByEnd: m.atEnd, catchUpMs: m.catchUpMs, reconnects: m.reconnects, dropped: m.dropped });
        console.log('decisions/s run: ' + JSON.stringify(rows.at(-1)));
        for (let i = 0; i < n; i++) {
          assert.equal(m.reconnects[i], 0, `${label}: dashboard ${i} lost its connection during the run`);
          assert.equal(m.dropped[i], 0, `${label}: dashboard ${i} dropped a backlog`);
          if (watch) assert.ok(m.catchUpMs[i] >= 0, `${label}: dashboard ${i} got ${m.atEnd[i]} of ${m.r.sent} decisions by the end and not all within ${CATCH_UP_MS} ms after`);
        }
      }
    }
    pinDriver(driverCpus);
    await close();
    figures.decisionsPerSecond = rows;
    const rate = (w) => median(rows.filter((r) => r.watching === w).map((r) => r.perSecond));
    const cpuUs = (w) => median(rows.filter((r) => r.watching === w).map((r) => r.serverCpuPerDecisionUs));
    // The harness's own CPU per decision against its round's with none (recorded, not bounded: it moves with the machine's load).
    figures.decisionsPerSecondSummary = Object.fromEntries(configs.map(([, , , , w, base]) => [w, { perSecond: rate(w), serverCpuPerDecisionUs: cpuUs(w),
      ratioToNone: base ? Math.round(ratio(w) * 1000) / 1000 : 1, cpuRatioToNone: base ? Math.round(against(w, 'serverCpuPerDecisionUs') * 1000) / 1000 : 1 }]));
    figures.decisionsPerSecondSummary.bounds = { ownCore: BOUND, shared: SHARED_BOUND, catalogue: CATALOGUE_BOUND };
    console.log('decisions/s: ' + JSON.stringify(figures.decisionsPerSecondSummary));
    assert.ok(ratio(mainLabel) >= 1 - BOUND,
      `5 dashboards watching the busy session (browser off the harness's core) cost the agents more than ${BOUND * 100} %: ${JSON.stringify(figures.decisionsPerSecondSummary)}`);
    assert.ok(ratio('session, low priority') >= 1 - SHARED_BOUND,
      `5 dashboards watching the busy session (browser at low priority, shared cores) cost the agents more than ${SHARED_BOUND * 100} %`);
    assert.ok(ratio('catalogue, low priority') >= 1 - CATALOGUE_BOUND, `5 dashboards on the catalogue cost more than ${CATALOGUE_BOUND * 100} %`);
    // Sharing the cores, the browsers take CPU from the harness; what must
    // never happen is observers holding agents up (near zero).
    assert.ok(ratio('session, shared CPU') > 0.15, 'dashboards sharing the CPU must not stop the agents');
    await sharedCtx.close();
  } finally {
    pinDriver(driverCpus);
    await low.close();
    await own.close();
    hm.stop();
    hp.stop();
  }
});

test('the session list stays put under the pointer; transport noise is folded; rule hits count live', async () => {
  const page = await openPage(observer, h.base);
  assert.equal(await h.send(['--session', 'steady-a', 'pre_action', ev('true')]), 0);
  await page.waitForSelector('tr[data-session="steady-a"]');
  // The pointer rests on a row: new sessions wait; nothing moves.
  await page.hover('tr[data-session="steady-a"]');
  const y0 = (await page.locator('tr[data-session="steady-a"]').boundingBox()).y;
  for (const s of ['steady-b', 'steady-c']) assert.equal(await h.send(['--session', s, 'pre_action', ev('true')]), 0);
  assert.equal(await h.send(['--session', 'steady-a', 'pre_action', ev('echo again')]), 0);
  await page.waitForSelector('#sessions-held:not([hidden])');
  assert.match(await page.textContent('#sessions-held'), /2 new sessions/);
  assert.equal(await page.locator('tr[data-session="steady-b"]').count(), 0);
  assert.equal((await page.locator('tr[data-session="steady-a"]').boundingBox()).y, y0, 'the row under the pointer did not move');
  await page.mouse.move(5, 890);
  await page.waitForSelector('tr[data-session="steady-c"]');
  const order = await page.$$eval('#sessions tbody tr', (rs) => rs.map((r) => r.dataset.session));
  assert.ok(order.indexOf('steady-c') < order.indexOf('steady-a'), 'new sessions come in on top once the pointer left');
  // Every `ahp send` is a handshake and a connection end: folded away.
  await openSession(page, 'steady-a');
  await page.waitForSelector('#timeline tr.tl-row[data-event-type="pre_action"]');
  assert.equal(await page.locator('#timeline tr.tl-row[data-event-type="handshake"]:not([hidden])').count(), 0);
  assert.match(await page.textContent('#tl-noise-count'), /^[1-9]\d* transport events/);
  await page.check('#tl-noise');
  await page.waitForSelector('#timeline tr.tl-row[data-event-type="handshake"]:not([hidden])');
  await page.uncheck('#tl-noise');
  // Rule hits on the policy page follow decisions without a reload.
  await page.click('#nav button[data-page="policy"]');
  await page.waitForSelector('#rules tr[data-rule="approve-deploy"]');
  const hitsOf = async () => {
    const rows = await page.$$eval('#rules tbody tr', (rs) => rs.map((r) => [r.dataset.rule, Number(r.cells[1].textContent)]));
    return new Map(rows);
  };
  const before = await hitsOf();
  assert.equal(await h.send(['--session', 'steady-a', 'pre_action', ev('rm -rf /')]), 2);
  await page.waitForFunction((b) => [...document.querySelectorAll('#rules tbody tr')].some((r) => Number(r.cells[1].textContent) > (b[r.dataset.rule] || 0)),
    Object.fromEntries(before), { timeout: 5000 });
  await shot(page, 'policy', { fullPage: true });
  await page.close();
});

test('paused and behind are shown, not hidden; a clicked event opens in view', async () => {
  const page = await openPage(observer, h.base);
  assert.equal(await h.send(['--session', 'pause', 'pre_action', ev('true')]), 0);
  const load = h.load({ session: 'pause', rate: 200, seconds: 10 });
  await openSession(page, 'pause');
  await page.waitForFunction(() => document.querySelectorAll('#timeline tr.tl-row:not([hidden])').length > 20);
  // Pause: the rows stay, the new ones are counted.
  await page.click('#tl-pause');
  const first = await page.textContent('#timeline tr.tl-row td:nth-child(8)').catch(() => '');
  const top = await page.evaluate(() => document.querySelector('#timeline tr.tl-row')._entry);
  await page.waitForSelector('#tl-new:not([hidden])');
  assert.equal(await page.textContent('#tl-state'), 'paused');
  assert.deepEqual(await page.evaluate(() => document.querySelector('#timeline tr.tl-row')._entry), top, 'the rows in view stay put');
  await shot(page, 'session-paused');
  await page.click('#tl-new');
  await page.waitForFunction(() => document.querySelector('#tl-state').textContent === 'live');
  // Scrolled far down, a clicked row's event opens beside it, in view.
  await page.evaluate(() => { document.querySelector('#timeline-box').scrollTop = 15 * 26; });
  await page.waitForFunction(() => /scrolled/.test(document.querySelector('#tl-state').textContent));
  const row = page.locator('#timeline tr.tl-row:not([hidden])').nth(12);
  await row.click();
  const box = await page.locator('#payload').boundingBox();
  assert.ok(box && box.y >= 0 && box.y < 900, `the event opens at y=${box && box.y}`);
  await page.waitForFunction(() => /echo load/.test(document.querySelector('#payload').textContent), null, { timeout: 5000 });
  // A main thread held for 1.5 s leaves a backlog: the badge says so.
  await page.evaluate(() => {
    window.__connSeen = [];
    new MutationObserver(() => window.__connSeen.push(document.querySelector('#conn').textContent))
      .observe(document.querySelector('#conn'), { childList: true, characterData: true, subtree: true });
    const t = performance.now(); while (performance.now() - t < 1500) { /* busy */ }
  });
  await page.waitForFunction(() => window.__connSeen.some((t) => /^behind/.test(t)), null, { timeout: 5000 });
  await page.waitForFunction(() => document.querySelector('#conn').textContent === 'live', null, { timeout: 10000 });
  void first;
  assert.equal((await load).errors, 0);
  await page.close();
});

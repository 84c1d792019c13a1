// Before/after figures for bench/README.md (not part of npm test): what 5
// dashboards watching the session the agents saturate cost the agents,
// for several ahp binaries alternated in each round (the dashboard's
// JavaScript is embedded in the binary, so a binary is a server and a
// page). Each round and binary: one harness, 4 agents (bench/dashload)
// as fast as answered for SECONDS on session max, first with no
// dashboard, then with 5 in a browser at autogroup nice 19 (lib.mjs
// launch({yieldCPU}); LOW=0: normal priority; RATE=n: paced agents). Printed per run: decisions/s, the harness's CPU
// per decision and the browser's CPU per action per page (both from
// /proc), and the bytes and WebSocket messages one page received per
// action.
//
//	DASHLOAD_BIN=/tmp/dashload ROUNDS=3 node dashcost.mjs before=/tmp/ahp-before after=/tmp/ahp
import { chromium } from 'playwright-core';
import { startHarness, launch, launchUnattached, contextFor, openPage, login, OBSERVER, browserPids, cpuSeconds } from './lib.mjs';

const seconds = Number(process.env.SECONDS || 5);
// RATE paces the agents (events/s; 0: as fast as answered) and LOW=0 runs
// the browser at normal priority: together, the browser's CPU per action
// in a steady state, apart from the starving of a low-priority browser.
const rate = Number(process.env.RATE || 0);
const low = process.env.LOW !== '0';
// DETACH=1: the dashboards' browser runs with no driver attached during
// the load (lib.mjs launchUnattached): Playwright copies every WebSocket
// message of its pages to this Node process otherwise.
const detach = process.env.DETACH === '1';
// COUNTS: the dashboard counts to run (default 0,5); PROFILE=dir: each
// harness writes a CPU profile there (name-round.pprof, all its counts).
const counts = (process.env.COUNTS || '0,5').split(',').map(Number);
const profile = process.env.PROFILE || '';
// HARNESS_CPUS: the CPUs (a taskset list) the harness and its agents run
// on; run node itself under taskset for the browser's and the driver's.
const harnessCpus = process.env.HARNESS_CPUS || '';
let round = 0;
const rounds = Number(process.env.ROUNDS || 3);
const bins = process.argv.slice(2).map((a) => a.split('='));
if (!bins.length) throw new Error('usage: node dashcost.mjs name=/path/to/ahp ...');

async function openSession(page, id) {
  await page.click('#nav button[data-page="sessions"]');
  await page.waitForSelector(`tr[data-session="${id}"]`);
  await page.click(`tr[data-session="${id}"]`);
  await page.waitForFunction((id) => document.querySelector('#session-title')?.textContent === id, id);
  await page.mouse.move(5, 890);
}

// Counts what a page's WebSockets receive (bytes, messages).
const countSockets = () => {
  window.__wsIn = { bytes: 0, msgs: 0 };
  const Orig = window.WebSocket;
  window.WebSocket = class extends Orig {
    constructor(...a) {
      super(...a);
      this.addEventListener('message', (ev) => { window.__wsIn.bytes += ev.data.length; window.__wsIn.msgs++; });
    }
  };
};

async function measure(name, bin, browser) {
  process.env.AHP_BIN = bin;
  const h = await startHarness({ cpus: harnessCpus, args: ['--observe-queue', '65536', ...(profile ? ['--cpuprofile', `${profile}/${name}-${round}.pprof`] : [])] });
  const out = [];
  try {
    let ctx;
    if (detach) {
      browser.cdp = await chromium.connectOverCDP(browser.endpoint);
      ctx = browser.cdp.contexts()[0];
      await ctx.addInitScript(countSockets);
      const p = await ctx.newPage();
      await login(p, h.base, OBSERVER);
      await p.close();
    } else {
      ctx = await contextFor(browser, h.base, OBSERVER);
      await ctx.addInitScript(countSockets);
    }
    await h.send(['--session', 'max', 'pre_action', JSON.stringify({ tool_name: 'bash', arguments: { command: 'true' } })]);
    for (const n of counts) {
      let pages = [];
      for (let i = 0; i < n; i++) {
        const p = await openPage(ctx, h.base);
        await openSession(p, 'max');
        pages.push(p);
      }
      const stat = (p) => p.evaluate(() => ({ applied: window.__ahpPerf.applied, ...window.__wsIn }));
      const before = await Promise.all(pages.map(stat));
      if (detach && n) await browser.cdp.close(); // the pages go on, with no driver attached
      const pids = browserPids(browser);
      const b0 = cpuSeconds(pids);
      const n0 = process.cpuUsage();
      const c0 = cpuSeconds([h.pid]);
      const r = await h.load({ session: 'max', rate, seconds, workers: 4 });
      const cpu = cpuSeconds([h.pid]) - c0;
      if (detach && n) {
        browser.cdp = await chromium.connectOverCDP(browser.endpoint);
        ctx = browser.cdp.contexts()[0];
        pages = ctx.pages().filter((p) => p.url().startsWith(h.base));
      }
      // The pages catch up (their CPU until then counts too).
      for (const [i, p] of pages.entries()) {
        await p.waitForFunction(([b, want]) => window.__ahpPerf.applied - b >= want, [before[i].applied, r.sent], { timeout: 120000, polling: 100 });
      }
      const bcpu = cpuSeconds(pids) - b0;
      const nu = process.cpuUsage(n0); // this Node process: Playwright's end of the DevTools pipe
      const after = await Promise.all(pages.map(stat));
      const per = (k) => (n ? after.reduce((s, x, i) => s + x[k] - before[i][k], 0) / n / r.sent : 0);
      out.push({ name, dashboards: n, perSecond: Math.round(r.perSecond), sent: r.sent, p50Ms: r.p50Ms, p99Ms: r.p99Ms,
        harnessCpuUsPerDecision: Math.round((cpu / r.sent) * 1e6),
        browserCpuUsPerActionPerPage: n ? Math.round((bcpu / r.sent / n) * 1e6) : 0,
        driverCpuUsPerActionPerPage: n ? Math.round(((nu.user + nu.system) / r.sent / n)) : 0,
        bytesPerActionPerPage: Math.round(per('bytes')), messagesPerActionPerPage: Math.round(per('msgs') * 1000) / 1000 });
      console.log(JSON.stringify(out.at(-1)));
      for (const p of pages) await p.close();
    }
    if (detach) await browser.cdp.close(); else await ctx.close();
  } finally {
    h.stop();
  }
  return out;
}

const browser = detach ? await launchUnattached({ yieldCPU: low }) : await launch({ yieldCPU: low });
const rows = [];
try {
  for (let r = 1; r <= rounds; r++) {
    round = r;
    for (const [name, bin] of bins) rows.push(...(await measure(name, bin, browser)).map((x) => ({ round: r, ...x })));
  }
} finally {
  await browser.close();
}
console.log('| round | binary | dashboards | decisions/s | of the run\'s 0 | agent p50 / p99 | harness CPU per decision | browser CPU per action per page | bytes / messages per action per page |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const x of rows) {
  const none = rows.find((z) => z.round === x.round && z.name === x.name && z.dashboards === 0) || x;
  console.log(`| ${x.round} | ${x.name} | ${x.dashboards} | ${x.perSecond} | ${x.dashboards ? Math.round((x.perSecond / none.perSecond) * 100) + ' %' : ''} | ` +
    `${x.p50Ms} / ${x.p99Ms} ms | ${x.harnessCpuUsPerDecision} µs | ${x.dashboards ? x.browserCpuUsPerActionPerPage + ' µs' : ''} | ` +
    `${x.dashboards ? x.bytesPerActionPerPage + ' / ' + x.messagesPerActionPerPage : ''} |`);
}
process.exit(0);

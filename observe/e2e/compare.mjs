// Before/after figures for bench/README.md (not part of npm test): the
// dashboard of one ahp binary and of another, alternately, on a session
// fed at 50, 200 and 500 events/s by bench/dashload. For each: the
// event-to-screen delay of timeline rows (p50, p99) and the
// input-to-paint time of a click on a tab during the flood.
//
//	AHP_BEFORE=/tmp/ahp-before AHP_AFTER=/tmp/ahp DASHLOAD_BIN=/tmp/dashload node compare.mjs
//
// Event to screen: the new page records it itself (window.__ahpPerf: the
// row drawn, minus the entry's time); the old page draws synchronously in
// its message handler, so for it the next animation frame after the
// handler is when the row is on screen.
import { startHarness, launch, contextFor, openPage, quantile, OBSERVER } from './lib.mjs';

const seconds = Number(process.env.SECONDS_PER_RATE || 8);
const rates = [50, 200, 500];

async function measure(bin, label, browser) {
  process.env.AHP_BIN = bin;
  const h = await startHarness();
  const ctx = await contextFor(browser, h.base, OBSERVER);
  await ctx.addInitScript(() => {
    window.__e2sOld = [];
    const Orig = window.WebSocket;
    window.WebSocket = class extends Orig {
      set onmessage(fn) {
        super.onmessage = (ev) => {
          fn(ev);
          if (window.__ahpPerf) return; // the new page measures itself
          const m = /"entry":\{[^]*?"time":"([^"]+)"/.exec(ev.data) || /"_meta":\{"ahp":\{[^]*?"time":"([^"]+)"/.exec(ev.data);
          if (m) { const t = Date.parse(m[1].replace(/(\.\d{3})\d+/, '$1')); requestAnimationFrame(() => window.__e2sOld.push(Date.now() - t)); }
        };
      }
      get onmessage() { return super.onmessage; }
    };
  });
  const out = [];
  for (const rate of rates) {
    const session = `cmp-${rate}`;
    await h.send(['--session', session, 'pre_action', '{"tool_name":"bash","arguments":{"command":"true"}}']);
    const page = await openPage(ctx, h.base);
    await page.click(`tr[data-session="${session}"]`, { timeout: 60000 });
    await page.mouse.move(5, 890);
    await page.waitForTimeout(300);
    await page.evaluate(() => { window.__e2sOld = []; window.__evt = []; if (window.__ahpPerf) window.__ahpPerf.e2s = []; });
    const load = h.load({ session, rate, seconds });
    await page.waitForTimeout(seconds * 500);
    const t0 = Date.now();
    let clickMs;
    try {
      await page.click('#nav button[data-page="policy"]', { timeout: 30000 });
      await page.waitForSelector('#page-policy:not([hidden])', { timeout: 30000 });
      clickMs = Date.now() - t0;
    } catch { clickMs = '>30000'; }
    const paint = await Promise.race([new Promise((r) => setTimeout(() => r(-1), 60000)), page.evaluate(() => Math.max(0, ...window.__evt.filter((e) => /pointer|mouse|click/.test(e.name)).map((e) => e.duration)))]);
    await page.click('#nav button[data-page="sessions"]', { timeout: 60000 }).catch(() => {});
    const r = await load;
    await page.waitForTimeout(1000);
    const e2s = await Promise.race([page.evaluate(() => (window.__ahpPerf ? window.__ahpPerf.e2s : window.__e2sOld)),
      new Promise((r) => setTimeout(() => r([]), 60000))]).catch(() => []);
    out.push({ label, rate, sent: r.sent, agentP99Ms: r.p99Ms, rowsMeasured: e2s.length, e2sP50Ms: quantile(e2s, 0.5), e2sP99Ms: quantile(e2s, 0.99),
      tabClickToShownMs: clickMs, tabInputToPaintMs: Math.round(paint) });
    console.log(JSON.stringify(out[out.length - 1]));
    await page.close();
  }
  await ctx.close();
  h.stop();
  await new Promise((r) => setTimeout(r, 500));
  return out;
}

const browser = await launch();
for (const [label, bin] of [['before', process.env.AHP_BEFORE], ['after', process.env.AHP_AFTER], ['before', process.env.AHP_BEFORE], ['after', process.env.AHP_AFTER]]) {
  await measure(bin, label, browser);
}
await browser.close();

// The panel with long threads (issue 38): the real panel in the playground, headless Chromium, our
// server and the scripted provider (tests/e2e_harness.py). Each thread is built through the real
// routes (one POST /api/assistant/chat carrying N-1 turns and a question: the server stores them
// and the scripted answer); the panel then opens it from the thread list, as a user does.
//
//   node e2e/longthreads.bench.mjs [--quick] [--turns 10,1000,3000] [--runs 3] [--words 5000]
//                                 [--profile PREFIX]
//
// Per size it prints (medians of the runs): the time from a click on the thread to its last message
// shown (the click's event time to the first frame painted with the last answer in view, both
// taken in the page), the longest task meanwhile, the JS heap after a GC, the panel's DOM nodes, keystroke
// input-to-paint (median / p95) and the time 20 characters typed take, 30 mouse moves and a scroll
// from the bottom to the top (the longest frame), a streamed answer of `--words` words (a word every
// 10 ms: long tasks, the longest, the mean frame interval, keystrokes meanwhile), the time from
// Enter to the request leaving and the bytes that request uploads, reopening the thread after
// another was shown and reloading the page (which reopens it), each to the page settled (its last
// message shown and the long tasks begun up to a second after it ended; a reload counts from the
// panel mounted, and its time from the reload's start is printed too); then TARGET lines for the
// largest size. `--quick` (CI, tests/test_benches_quick.py through bench/panel_threads.py): 200
// turns, 1 run, 300 words. `--profile PREFIX`: CPU profiles of the first run's phases (PROFILE).
// Needs what the e2e tests need (ui/e2e/README.md): Chromium and the built panel and playground.
import { performance } from "node:perf_hooks";
import { launchBrowser, openAssistant, openTarget, panel, reply, startHarness, stopButton, sendButton, waitReady } from "./support.mjs";
import { writeFileSync } from "node:fs";
import { summarize } from "./cpuprofile.mjs";
import { buildThread, roomyWindow, VOCAB } from "./threads.mjs";

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};
const QUICK = flag("--quick");
const SIZES = option("--turns", QUICK ? "200" : "10,1000,3000").split(",").map(Number);
const RUNS = Number(option("--runs", QUICK ? "1" : "3"));
const WORDS = Number(option("--words", QUICK ? "300" : "5000"));
const CHAT = "/api/assistant/chat";
/** --profile PREFIX: a CPU profile of each phase of the first run of each size, saved as
 * PREFIX-<turns>-<phase>.cpuprofile, its busy stretches over 50 ms printed (e2e/cpuprofile.mjs). */
const PROFILE = option("--profile", "");

/** Runs `work` under the CDP profiler when --profile is given (the first run only). */
async function profiled(page, browser, name, run, work) {
  if (!PROFILE || run !== 1) return work();
  const cdp = await browser.context.newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  try {
    return await work();
  } finally {
    const { profile } = await cdp.send("Profiler.stop");
    await cdp.detach().catch(() => {});
    const file = `${PROFILE}-${name}.cpuprofile`;
    writeFileSync(file, JSON.stringify(profile));
    console.error(`== profile ${file}\n${summarize(profile)}`);
  }
}

// ---- what the page records (installed before the page's own scripts) ----

function recorder() {
  const r = (window.__bench = { tasks: [], frames: [], keys: [], chatAt: [], enterAt: [] });
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) r.tasks.push([e.startTime, e.duration]);
  }).observe({ type: "longtask", buffered: true });
  // input-to-paint of each key: from the event's time to after the frame its handlers painted
  addEventListener(
    "keydown",
    (e) => {
      if (e.key === "Enter") r.enterAt.push(e.timeStamp);
      const start = e.timeStamp;
      requestAnimationFrame(() => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => r.keys.push([start, performance.now() - start]);
        channel.port2.postMessage(0);
      });
    },
    true,
  );
  // message rows mounted (a figure the machine's load does not change: rows rendered and thrown away)
  r.rowsMounted = 0;
  new MutationObserver((records) => {
    for (const m of records) for (const n of m.addedNodes) if (n.nodeType === 1) r.rowsMounted += (n.matches(".cua-row") ? 1 : 0) + n.querySelectorAll(".cua-row").length;
  }).observe(document, { childList: true, subtree: true });
  // a click's time (the thread opened from the list), and the last message shown: the first
  // frame painted with the last answer holding `marker` in the view, watched from the page (a
  // check each frame), not polled from the test, whose round trips wait behind the page's tasks
  // (after a reload, some 100 ms late). Armed by watch(), or across a reload by sessionStorage.
  r.clicks = [];
  addEventListener("click", (e) => r.clicks.push(e.timeStamp), true);
  r.watch = (marker) => {
    r.shownAt = null;
    const inView = () => {
      const all = document.querySelectorAll(".cua-root .cua-msg-assistant");
      const last = all[all.length - 1];
      if (!last?.textContent.includes(marker)) return false;
      const box = last.getBoundingClientRect();
      const view = last.closest(".cua-viewport")?.getBoundingClientRect();
      return box.height > 0 && (!view || (box.bottom > view.top && box.top < view.bottom));
    };
    const frame = () => {
      if (!inView()) return requestAnimationFrame(frame);
      const channel = new MessageChannel(); // (runs once that frame is painted)
      channel.port1.onmessage = () => (r.shownAt = performance.now());
      channel.port2.postMessage(0);
    };
    requestAnimationFrame(frame);
  };
  const armed = sessionStorage.getItem("bench:marker");
  if (armed) {
    sessionStorage.removeItem("bench:marker");
    r.watch(armed);
  }
  r.panelAt = null;
  new MutationObserver((_, observer) => {
    if (!document.querySelector(".cua-root")) return;
    r.panelAt = performance.now();
    observer.disconnect();
  }).observe(document, { childList: true, subtree: true });
  const fetch0 = window.fetch;
  window.fetch = function (input, init) {
    const url = typeof input === "string" ? input : input?.url ?? String(input);
    if (url.includes("/api/assistant/chat")) r.chatAt.push(performance.now());
    return fetch0.call(this, input, init);
  };
  r.watchFrames = () => {
    r.frames = [];
    r.framing = true;
    const tick = (t) => {
      r.frames.push(t);
      if (r.framing) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  };
}

const now = (page) => page.evaluate(() => performance.now());
const tasksSince = (page, t0) => page.evaluate((t) => window.__bench.tasks.filter(([s]) => s >= t), t0);
const longest = (tasks) => Math.max(0, ...tasks.map(([, d]) => d));

async function framesDuring(page, work) {
  await page.evaluate(() => window.__bench.watchFrames());
  const t0 = await now(page);
  await work();
  const frames = await page.evaluate(() => {
    window.__bench.framing = false;
    return window.__bench.frames;
  });
  const gaps = frames.slice(1).map((t, i) => t - frames[i]);
  return { tasks: await tasksSince(page, t0), longestFrame: Math.max(0, ...gaps), meanFrame: gaps.length ? gaps.reduce((a, b) => a + b, 0) / gaps.length : 0 };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const p95 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(s.length * 0.95) - 1)] : NaN;
};

/** Keystroke latencies of typing `text` one key at a time (`delay` ms apart). */
async function typeKeys(page, text, delay) {
  const t0 = await now(page);
  await page.keyboard.type(text, { delay });
  await page.waitForTimeout(100);
  return page.evaluate((t) => window.__bench.keys.filter(([s]) => s >= t), t0);
}

async function clearComposer(page) {
  await page.keyboard.press("Control+a");
  await page.keyboard.press("Backspace");
}

/** The last assistant message's text includes `marker`. */
const lastShows = (page, marker) =>
  page.waitForFunction((m) => {
    const all = document.querySelectorAll(".cua-root .cua-msg-assistant");
    return all.length > 0 && all[all.length - 1].textContent.includes(m);
  }, marker, { timeout: 120_000, polling: "raf" });

/** The page's time when the last message was shown (see recorder), once it is. */
async function shownAt(page) {
  await page.waitForFunction(() => window.__bench.shownAt !== null, null, { timeout: 120_000 });
  return page.evaluate(() => window.__bench.shownAt);
}

/** The time from `t0` until the page settles: the last message shown (at `shownAt`) and every
 * long task begun meanwhile or within a second after it ended. */
async function settledSince(page, t0, shownAt) {
  await page.waitForTimeout(1000);
  const tasks = await tasksSince(page, t0);
  const ends = tasks.filter(([s]) => s <= shownAt + 1000).map(([s, d]) => s + d);
  return { ms: Math.max(shownAt, ...ends) - t0, longestTask: longest(tasks) };
}

/** Show the thread list, open the thread titled `title` and wait for `marker` in its last answer. */
async function openFromList(page, title, marker) {
  const root = panel(page);
  if (!(await root.getByRole("button", { name: "Hide the threads" }).isVisible())) await root.getByRole("button", { name: "Show the threads" }).click();
  const item = root.getByRole("button", { name: title }).or(root.locator(".cua-thread-trigger", { hasText: title })).first();
  await item.waitFor();
  await page.waitForTimeout(300);
  await page.evaluate((m) => window.__bench.watch(m), marker);
  await item.click();
  const shown = await shownAt(page);
  const t0 = await page.evaluate(() => window.__bench.clicks.at(-1));
  await root.getByRole("button", { name: "Hide the threads" }).click();
  return { t0, shownAt: shown };
}

/** Reopen the thread after another one was shown: the click to the page settled. */
async function reopen(page, title, marker) {
  await panel(page).getByRole("button", { name: "New thread" }).first().click();
  await page.waitForTimeout(500);
  const { t0, shownAt } = await openFromList(page, title, marker);
  return settledSince(page, t0, shownAt);
}

/** Reload the page (it reopens the thread shown): from the panel in the page (its root mounted)
 * to the page settled with the last message shown; and from the reload's start. */
async function reload(page, marker) {
  await page.evaluate((m) => sessionStorage.setItem("bench:marker", m), marker);
  await page.reload();
  await waitReady(page);
  await openAssistant(page);
  const shown = await shownAt(page);
  const mounted = await page.evaluate(() => window.__bench.panelAt);
  const settled = await settledSince(page, mounted, shown);
  return { ...settled, fromStart: shown };
}

async function measure(browser, harness, { id, turns, marker }, run) {
  const page = await browser.context.newPage();
  const out = { turns };
  try {
    await page.addInitScript(recorder);
    const uploads = [];
    page.on("request", (req) => {
      if (req.method() === "POST" && req.url().includes(CHAT)) uploads.push(req.postDataBuffer()?.length ?? 0);
    });
    await openTarget(page, harness.app);
    await openAssistant(page);
    const root = panel(page);
    await root.getByRole("button", { name: "New thread" }).first().click();
    const title = `Bench ${turns} turns`;

    // open the thread: click to its last message shown
    const { t0, shownAt } = await profiled(page, browser, `${turns}-open`, run, () => openFromList(page, title, marker));
    out.openMs = shownAt - t0;
    await page.waitForTimeout(500);
    out.openLongestTask = longest(await tasksSince(page, t0));

    const cdp = await browser.context.newCDPSession(page);
    await cdp.send("HeapProfiler.collectGarbage");
    out.heapMB = (await cdp.send("Runtime.getHeapUsage")).usedSize / 2 ** 20;
    out.domNodes = await page.evaluate(() => document.querySelector(".cua-root").querySelectorAll("*").length);

    // keystrokes: 40 keys 80 ms apart, then 20 typed at once
    const box = root.getByRole("textbox", { name: "Message" });
    await box.click();
    const keys = (await typeKeys(page, "the quick brown fox jumps over the lazy", 80)).map(([, d]) => d);
    out.keyMedian = median(keys);
    out.keyP95 = p95(keys);
    await clearComposer(page);
    await page.waitForTimeout(200);
    const burst = await typeKeys(page, "twenty characters!!!", 0);
    out.type20Ms = burst.length ? Math.max(...burst.map(([s, d]) => s + d)) - burst[0][0] : NaN;
    await clearComposer(page);

    // 30 mouse moves over the messages; a scroll from the bottom to the top
    const view = await root.locator(".cua-viewport").boundingBox();
    const hover = await framesDuring(page, async () => {
      for (let i = 0; i < 30; i++) await page.mouse.move(view.x + 40 + ((i * 37) % Math.max(1, view.width - 80)), view.y + 10 + ((i * 53) % Math.max(1, view.height - 20)));
      await page.waitForTimeout(100);
    });
    out.hoverLongestFrame = hover.longestFrame;
    const scroll = await framesDuring(page, () =>
      page.evaluate(async () => {
        const el = document.querySelector(".cua-viewport");
        const steps = 30;
        const from = el.scrollTop;
        for (let i = 1; i <= steps; i++) {
          el.scrollTop = from - (from * i) / steps;
          await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        }
      }),
    );
    out.scrollLongestFrame = scroll.longestFrame;
    await page.evaluate(() => {
      const el = document.querySelector(".cua-viewport");
      el.scrollTop = el.scrollHeight;
    });
    await page.waitForTimeout(300);

    // a streamed answer of WORDS words, a word every 10 ms, keys typed meanwhile
    const end = `Streamed answer ${run} ends here.`;
    const chunks = [];
    for (let i = 0; i < WORDS; i++) chunks.push({ content: `${VOCAB[i % VOCAB.length]}${i % 60 === 59 ? "\n\n" : " "}` }, { pause: 0.01 });
    chunks.push({ content: end }, { finish_reason: "stop" });
    await harness.provider.reset();
    await harness.provider.script(reply.stream(...chunks));
    uploads.length = 0;
    await box.click();
    await box.fill(`one more question, run ${run}`);
    await page.waitForTimeout(200);
    const sent = await now(page);
    const stream = await profiled(page, browser, `${turns}-stream`, run, () => framesDuring(page, async () => {
      await box.press("Enter");
      await stopButton(page).waitFor({ timeout: 30_000 }).catch(() => {});
      await page.waitForTimeout(1000);
      const during = await typeKeys(page, "typing while it streams", 150);
      out.streamKeyMedian = median(during.map(([, d]) => d));
      await sendButton(page).waitFor({ timeout: 300_000 });
      await lastShows(page, end);
    }));
    const enter = await page.evaluate((t) => ({ enter: window.__bench.enterAt.filter((x) => x >= t)[0], chat: window.__bench.chatAt.filter((x) => x >= t)[0] }), sent);
    out.enterToRequestMs = enter.chat - enter.enter;
    out.uploadKB = (uploads[0] ?? NaN) / 1024;
    out.streamLongTasks = stream.tasks.length;
    out.streamBlockedS = stream.tasks.reduce((a, [, d]) => a + d, 0) / 1000;
    out.streamLongestTask = longest(stream.tasks);
    out.streamMeanFrame = stream.meanFrame;
    await clearComposer(page);

    // reopen it after another thread was shown; reload the page, which reopens it
    const rowsMounted = () => page.evaluate(() => window.__bench.rowsMounted);
    const before = await rowsMounted();
    const again = await profiled(page, browser, `${turns}-reopen`, run, () => reopen(page, title, end));
    out.reopenMs = again.ms;
    out.reopenLongestTask = again.longestTask;
    out.reopenRows = (await rowsMounted()) - before;
    const reloaded = await profiled(page, browser, `${turns}-reload`, run, () => reload(page, end));
    out.reloadMs = reloaded.ms;
    out.reloadLongestTask = reloaded.longestTask;
    out.reloadRows = await rowsMounted();
    out.reloadFromStartMs = reloaded.fromStart;
    return { result: out, marker: end };
  } finally {
    await page.close();
  }
}

const FIELDS = [
  ["openMs", "open ms", 0],
  ["openLongestTask", "longest task opening ms", 0],
  ["heapMB", "heap MB", 1],
  ["domNodes", "DOM nodes", 0],
  ["keyMedian", "key median ms", 1],
  ["keyP95", "key p95 ms", 1],
  ["type20Ms", "20 chars ms", 0],
  ["hoverLongestFrame", "hover longest frame ms", 0],
  ["scrollLongestFrame", "scroll longest frame ms", 0],
  ["streamLongTasks", "stream long tasks", 0],
  ["streamBlockedS", "stream blocked s", 1],
  ["streamLongestTask", "stream longest task ms", 0],
  ["streamMeanFrame", "stream mean frame ms", 1],
  ["streamKeyMedian", "key during stream ms", 1],
  ["enterToRequestMs", "enter to request ms", 1],
  ["uploadKB", "upload KB", 1],
  ["reopenMs", "reopen to settled ms", 0],
  ["reopenLongestTask", "longest task reopening ms", 0],
  ["reopenRows", "message rows mounted reopening", 0],
  ["reloadMs", "reload: panel mounted to settled ms", 0],
  ["reloadLongestTask", "longest task reloading ms", 0],
  ["reloadFromStartMs", "reload: from its start to the last message ms", 0],
  ["reloadRows", "message rows mounted reloading", 0],
];

function summary(results) {
  const row = { turns: results[0].turns };
  for (const [key] of FIELDS) row[key] = median(results.map((r) => r[key]));
  return row;
}

async function main() {
  const harness = await startHarness();
  await roomyWindow(harness);
  const browser = await launchBrowser({ width: 1400, height: 900 });
  const rows = [];
  try {
    for (const turns of SIZES) {
      const started = performance.now();
      const id = `bench-${turns}-${Date.now()}`;
      let marker = await buildThread(harness, id, turns);
      const built = (performance.now() - started) / 1000;
      const results = [];
      for (let run = 1; run <= RUNS; run++) {
        const { result, marker: next } = await measure(browser, harness, { id, turns, marker }, run);
        marker = next;
        results.push(result);
        console.error(`  ${turns} turns, run ${run}: ${JSON.stringify(result)}`);
      }
      const row = summary(results);
      rows.push(row);
      console.log(`turns=${turns} (built in ${built.toFixed(1)} s, ${RUNS} run${RUNS > 1 ? "s" : ""}, ${WORDS} streamed words)`);
      for (const [key, label, digits] of FIELDS) console.log(`  ${label}: ${Number(row[key]).toFixed(digits)}`);
    }
  } finally {
    await browser.close();
    await harness.stop();
  }
  const big = rows.at(-1);
  const small = rows[0];
  const verdict = (ok) => (ok ? "ok" : "MISSED");
  const at = `turns=${big.turns}`;
  console.log(`TARGET keystroke ${at} median<=16ms p95<=33ms: ${big.keyMedian.toFixed(1)} / ${big.keyP95.toFixed(1)} ${verdict(big.keyMedian <= 16 && big.keyP95 <= 33)}`);
  console.log(`TARGET open ${at} <=300ms, no task over 100ms: ${big.openMs.toFixed(0)} ms, longest task ${big.openLongestTask.toFixed(0)} ${verdict(big.openMs <= 300 && big.openLongestTask <= 100)}`);
  console.log(`TARGET memory ${at} heap<=60MB dom<=3000: ${big.heapMB.toFixed(1)} MB, ${big.domNodes} nodes ${verdict(big.heapMB <= 60 && big.domNodes <= 3000)}`);
  console.log(`TARGET stream ${at} no task over 50ms: longest ${big.streamLongestTask.toFixed(0)} ms ${verdict(big.streamLongestTask <= 50)}`);
  console.log(`TARGET hover+scroll ${at} no frame over 50ms: ${big.hoverLongestFrame.toFixed(0)} / ${big.scrollLongestFrame.toFixed(0)} ms ${verdict(big.hoverLongestFrame <= 50 && big.scrollLongestFrame <= 50)}`);
  console.log(`TARGET enter_to_request ${at} <=50ms: ${big.enterToRequestMs.toFixed(1)} ms ${verdict(big.enterToRequestMs <= 50)}`);
  console.log(`TARGET reopen ${at} <=300ms to settle: ${big.reopenMs.toFixed(0)} ms, longest task ${big.reopenLongestTask.toFixed(0)} ${verdict(big.reopenMs <= 300)}`);
  console.log(`TARGET reload ${at} <=300ms to settle (from the panel mounted): ${big.reloadMs.toFixed(0)} ms, longest task ${big.reloadLongestTask.toFixed(0)} ${verdict(big.reloadMs <= 300)}`);
  console.log(`TARGET upload ${at} <=64KB and flat: ${big.uploadKB.toFixed(1)} KB (at turns=${small.turns}: ${small.uploadKB.toFixed(1)} KB) ${verdict(big.uploadKB <= 64)}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

// What our bundle logs inside the real ComfyUI frontends: every console message of the page is
// recorded with the stack that logged it (a wrapper installed before the frontend starts, so the
// frontend's own deprecation helpers log through it), while the panel loads and a chat adds and
// connects a node through tool calls. Messages whose stack passes through our bundle
// (comfyui-assistant.js) are printed, deprecation warnings first; any deprecation warning from
// our bundle fails the test (the frontend would break the panel when it removes the API).
import assert from "node:assert/strict";
import { after, before, describe, test } from "./support.mjs"; // node:test's, see support.mjs
import {
  COMFYUI_SKIP,
  COMFYUI_URL,
  RETURNING_USER_SETTINGS,
  frontendVersions,
  launchBrowser,
  openAssistant,
  openTarget,
  panel,
  pointComfyUIAt,
  reply,
  restoreComfyUIProvider,
  send,
  standinSkip,
  startHarness,
  storeSettings,
} from "./support.mjs";

const BUNDLE = "comfyui-assistant.js";

/** Runs in the page before any of its scripts: keep every console call with its stack. */
function recordConsole() {
  window.__consoleRecord = [];
  for (const type of ["log", "info", "warn", "error", "debug"]) {
    const original = console[type].bind(console);
    console[type] = (...args) => {
      const text = args.map((a) => (typeof a === "string" ? a : a instanceof Error ? a.message : safeJson(a))).join(" ");
      if (window.__consoleRecord.length < 5000) window.__consoleRecord.push({ type, text: text.slice(0, 500), stack: new Error().stack ?? "" });
      original(...args);
    };
  }
  function safeJson(value) {
    try {
      return JSON.stringify(value)?.slice(0, 200) ?? String(value);
    } catch {
      return String(value);
    }
  }
}

/** The first frame of a stack that is in our bundle, e.g. "addNode (…/comfyui-assistant.js:1:2345)". */
function bundleFrame(stack) {
  return stack.split("\n").find((line) => line.includes(BUNDLE))?.trim().replace(/^at /, "") ?? null;
}

// Each frontend version the stand-in serves, and a real ComfyUI (with whatever frontend it has)
// when COMFYUI_URL is set.
const TARGETS = [
  ...frontendVersions().map((version) => ({ name: `ComfyUI frontend ${version} (stand-in)`, version, skip: standinSkip(version) })),
  { name: "a real ComfyUI (COMFYUI_URL)", version: "of the real ComfyUI", real: true, skip: COMFYUI_SKIP },
];

for (const target of TARGETS) {
  const { version } = target;
  describe(`console messages of our bundle in ${target.name}`, { skip: target.skip }, () => {
    let harness;
    let browser;
    let page;
    let baseUrl;
    let savedProvider = null;

    before(async () => {
      harness = await startHarness({ providerOnly: Boolean(target.real), comfyFrontend: target.real ? null : version, returningUser: !target.real });
      baseUrl = target.real ? COMFYUI_URL : harness.app;
      if (target.real) savedProvider = await pointComfyUIAt(harness.provider);
      if (!target.real) await storeSettings(baseUrl, RETURNING_USER_SETTINGS); // (a real one's are the user's)
      browser = await launchBrowser();
      page = await browser.context.newPage();
      await page.addInitScript(recordConsole);
    });

    after(async () => {
      if (savedProvider) await restoreComfyUIProvider(savedProvider);
      await browser?.close();
      await harness?.stop();
    });

    test("the panel loads and a chat with tool calls runs with no deprecation warning from our bundle", { timeout: 90_000 }, async (t) => {
      await openTarget(page, baseUrl, { comfyui: true });
      await openAssistant(page);
      // LiteGraph warns once per message and page unless told to repeat: repeat during the chat,
      // so a warning the frontend's own code raised first still shows when our code raises it.
      await page.evaluate(() => {
        if (window.LiteGraph && "alwaysRepeatWarnings" in window.LiteGraph) window.LiteGraph.alwaysRepeatWarnings = true;
      });
      const loaderId = await page.evaluate(
        () => (window.app.rootGraph ?? window.app.graph).nodes.find((n) => n.type === "CheckpointLoaderSimple")?.id ?? null,
      );
      const lastId = await page.evaluate(() => {
        const graph = window.app.rootGraph ?? window.app.graph;
        return graph.last_node_id ?? Math.max(0, ...graph.nodes.map((n) => Number(n.id)));
      });
      const near = loaderId ?? undefined;
      await harness.provider.reset();
      await harness.provider.script(
        reply.toolCalls({ id: "call_add", name: "addNode", arguments: { nodeType: "EmptyLatentImage", ...(near ? { nearNodeId: near } : {}) } }),
        reply.toolCalls({ id: "call_add2", name: "addNode", arguments: { nodeType: "VAEDecode" } }),
        reply.toolCalls({
          id: "call_connect",
          name: "connectNodes",
          arguments: { fromNodeId: lastId + 1, fromOutput: "LATENT", toNodeId: lastId + 2, toInput: "samples" },
        }),
        reply.text("Connected."),
      );
      await send(page, "add an empty latent and a VAE decode, and connect them");
      await panel(page).getByText("Connected.").waitFor({ timeout: 30_000 });
      const { requests } = await harness.provider.state();
      assert.equal(requests.length, 4, "one request, then a resubmission after each tool round");
      const linked = await page.evaluate((id) => {
        const graph = window.app.rootGraph ?? window.app.graph;
        return graph.getNodeById(id)?.inputs?.find((i) => i.name === "samples")?.link != null;
      }, lastId + 2);
      assert.ok(linked, "connectNodes linked the new nodes");

      const record = await page.evaluate(() => window.__consoleRecord);
      assert.ok(record.length > 0, "the console recorder saw the frontend's messages");
      const ours = record
        .map((m) => ({ ...m, frame: bundleFrame(m.stack) }))
        .filter((m) => m.frame !== null);
      // One line per distinct warning and place (repeated warnings repeat).
      const seen = new Set();
      const distinct = ours.filter((m) => !seen.has(m.text + m.frame) && seen.add(m.text + m.frame));
      const deprecations = distinct.filter((m) => /deprecat/i.test(m.text));
      // The frontend warns once per message and page: a warning its own code triggered first
      // (listed here) hides ours.
      const others = [...new Set(record.filter((m) => /deprecat/i.test(m.text) && !bundleFrame(m.stack)).map((m) => m.text.slice(0, 160)))];
      const lines = [
        `frontend ${version}: ${record.length} console messages, ${ours.length} from ${BUNDLE}, ${deprecations.length} distinct deprecation warnings from it`,
        ...others.map((text) => `  (not ours, deprecated: ${text})`),
        ...deprecations.map((m) => `  DEPRECATED (${m.type}) ${m.text}\n      at ${m.frame}`),
        ...distinct.filter((m) => !deprecations.includes(m)).map((m) => `  ${m.type}: ${m.text}\n      at ${m.frame}`),
      ];
      for (const line of lines) t.diagnostic(line);
      console.log(lines.join("\n"));
      // our bundle calls no deprecated frontend API (issue 13: it would break when removed)
      assert.deepEqual(deprecations.map((m) => `${m.text} at ${m.frame}`), [], "deprecated calls from our bundle");
    });
  });
}

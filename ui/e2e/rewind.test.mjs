// "Rewind to here" end to end, in headless Chromium: in the playground and inside the real ComfyUI
// frontends (every version of tests/comfy_standin/frontends.txt, served by the stand-in), and in a
// real ComfyUI when COMFYUI_URL is set (its assistant pointed at the scripted provider). The
// scripted model edits the graph; the answer then offers "Rewind to here": the graph restored as
// one undo step (Ctrl+Z brings the newer one back), across two workflow tabs, inside a subgraph,
// into a closed tab's new tab; the conversation archived as a branch and returned to; both.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "./support.mjs"; // node:test's, see support.mjs
import {
  COMFYUI_SKIP,
  COMFYUI_URL,
  RETURNING_USER_SETTINGS,
  ROOT,
  focusCanvas,
  frontendVersions,
  launchBrowser,
  openAssistant,
  openTarget,
  panel,
  pointComfyUIAt,
  reply,
  restoreComfyUIProvider,
  screenshot,
  send,
  settle,
  standinSkip,
  startHarness,
  storeSettings,
  watchPage,
} from "./support.mjs";

const FLUX = JSON.parse(readFileSync(join(ROOT, "ui", "test", "fixtures", "subgraph-flux-dev.json"), "utf8"));

const TARGETS = [
  { name: "playground", slug: "playground", comfyui: false },
  ...frontendVersions().map((version) => ({ name: `ComfyUI frontend ${version} (stand-in)`, slug: `frontend-${version}`, comfyui: true, frontend: version, skip: standinSkip(version) })),
  { name: "real ComfyUI (COMFYUI_URL)", slug: "comfyui", comfyui: true, real: true, skip: COMFYUI_SKIP },
];

/** The types of the root graph's nodes, sorted. */
function rootTypes(page) {
  return page.evaluate(() => (window.app.rootGraph ?? window.app.graph).nodes.map((n) => n.type).sort());
}

/** The active tab's key and the key a thread started there is bound to (ui/src/host/comfy.ts workflowKey). */
function activeTab(page) {
  return page.evaluate(() => {
    const workflow = window.app.extensionManager.workflow.activeWorkflow;
    const key = (workflow.activeState ?? workflow.initialState)?.extra?.comfyui_assistant_thread_key;
    const bound = workflow.isTemporary ? `unsaved:${key}` : workflow.key;
    return { key: workflow.key, bound };
  });
}

/** A new blank workflow tab holding the nodes `types`, added as a user adds them (one undo step each). */
async function newTabWith(page, types) {
  const before = (await activeTab(page)).key;
  await page.evaluate(() => window.app.extensionManager.command.execute("Comfy.NewBlankWorkflow"));
  await page.waitForFunction((key) => window.app.extensionManager.workflow.activeWorkflow?.key !== key, before);
  await page.evaluate((types) => {
    const graph = window.app.rootGraph ?? window.app.graph;
    const tracker = window.app.extensionManager.workflow.activeWorkflow.changeTracker;
    types.forEach((type, i) => {
      const node = window.LiteGraph.createNode(type);
      node.pos = [100 + 300 * i, 100];
      graph.add(node);
      (tracker.captureCanvasState ?? tracker.checkState).call(tracker);
    });
  }, types);
  return activeTab(page);
}

/** Show the tab whose key is `key` with the frontend's own previous-tab command. */
async function showTab(page, key) {
  for (let i = 0; i < 10 && (await activeTab(page)).key !== key; i++) {
    await page.evaluate(() => window.app.extensionManager.command.execute("Workspace.PreviousOpenedWorkflow"));
  }
  assert.equal((await activeTab(page)).key, key, "the tab is shown");
}

/** A new thread on the active tab where the model makes `calls` (tool calls, one per step), then says `done`. */
async function chatThatEdits(page, harness, ask, calls, done) {
  await openAssistant(page);
  await settle(page);
  await panel(page).getByRole("button", { name: "New thread" }).first().click();
  await harness.provider.reset();
  await harness.provider.script(...calls.map((call) => reply.toolCalls(call)), reply.text(done));
  await send(page, ask);
  for (const call of calls.filter((c) => c.name === "removeNodes")) {
    // a removal asks first (tools/approvals.ts): the user allows it
    const card = panel(page).getByRole("group", { name: "The assistant asks before it acts" });
    await card.waitFor({ timeout: 30_000 });
    await card.getByRole("button", { name: "Allow" }).click();
    await card.waitFor({ state: "detached", timeout: 10_000 }).catch(() => assert.fail(`the card for ${call.id} stayed`));
  }
  await panel(page).getByText(done).waitFor({ timeout: 30_000 });
}

/** The answer that says `text`, its "Rewind to here" opened and `choice` picked. */
async function rewind(page, text, choice) {
  const answer = panel(page).locator(".cua-msg-assistant", { hasText: text });
  await answer.getByRole("button", { name: "Rewind to here" }).click();
  await answer.getByRole("menuitem", { name: new RegExp(`^${choice}`) }).click();
  return answer;
}

async function pressUndo(page) {
  await focusCanvas(page);
  await page.keyboard.press("Control+z");
}

/** Ctrl+Z until the root graph has `count` nodes. ComfyUI ignores a Ctrl+Z that arrives while it
 * is still restoring the previous undo (a loaded machine made that window seconds long), so a
 * press that changed nothing after 15 s is pressed again, once. */
async function undoTo(page, count) {
  const has = () => page.waitForFunction((n) => (window.app.rootGraph ?? window.app.graph).nodes.length === n, count, { timeout: 15_000 });
  await pressUndo(page);
  try {
    await has();
  } catch {
    await pressUndo(page);
    await page.waitForFunction((n) => (window.app.rootGraph ?? window.app.graph).nodes.length === n, count, { timeout: 20_000 });
  }
}

for (const target of TARGETS) {
  describe(`rewind in the ${target.name}`, { skip: target.skip ?? false }, () => {
    let harness;
    let browser;
    let page;
    let problems;
    let baseUrl;
    let savedProvider = null;

    before(async () => {
      harness = await startHarness({ providerOnly: Boolean(target.real), comfyFrontend: target.frontend, returningUser: Boolean(target.frontend) });
      baseUrl = target.real ? COMFYUI_URL : harness.app;
      if (target.real) savedProvider = await pointComfyUIAt(harness.provider);
      if (target.frontend) await storeSettings(baseUrl, RETURNING_USER_SETTINGS);
      browser = await launchBrowser();
      page = await browser.context.newPage();
      problems = watchPage(page);
      await openTarget(page, baseUrl, { comfyui: target.comfyui });
    });

    after(async () => {
      if (savedProvider) await restoreComfyUIProvider(savedProvider);
      await browser?.close();
      await harness?.stop();
      if (problems?.length) console.log(`page errors seen (${target.name}):\n${problems.join("\n")}`);
    });

    const step = (name) => `${target.slug}-rewind-${name}`;
    const checkpointsOf = async (threadId) => (await (await fetch(`${baseUrl}/api/assistant/threads/${threadId}/checkpoints`)).json()).checkpoints;
    const threadIdOf = async (title) => {
      const { threads } = await (await fetch(`${baseUrl}/api/assistant/threads`)).json();
      return threads.find((t) => t.title === title)?.id;
    };

    test("rewind the graph: restored as one undo step, Ctrl+Z brings the newer graph back", { timeout: 120_000 }, async () => {
      await openAssistant(page);
      const tab = await newTabWith(page, ["EmptyImage"]);
      const ask = `invert and preview it ${Date.now()}`;
      await chatThatEdits(
        page,
        harness,
        ask,
        [
          { id: "add1", name: "addNode", arguments: { nodeType: "ImageInvert" } },
          { id: "add2", name: "addNode", arguments: { nodeType: "PreviewImage" } },
        ],
        "Added an invert and a preview.",
      );
      assert.deepEqual(await rootTypes(page), ["EmptyImage", "ImageInvert", "PreviewImage"]);
      const threadId = await threadIdOf(ask);
      const [checkpoint, ...more] = await checkpointsOf(threadId);
      assert.deepEqual([checkpoint?.workflow, checkpoint?.nodes, more.length], [tab.bound, 1, 0], JSON.stringify(checkpoint));

      const answer = panel(page).locator(".cua-msg-assistant", { hasText: "Added an invert and a preview." });
      await answer.getByRole("button", { name: "Rewind to here" }).click();
      await answer.getByRole("menu", { name: "Rewind to here" }).waitFor();
      // the whole menu in sight: inside the thread's viewport and the page
      const inSight = await answer.getByRole("menu", { name: "Rewind to here" }).evaluate((menu) => {
        const box = menu.getBoundingClientRect();
        const view = menu.closest(".cua-viewport").getBoundingClientRect();
        const within = (outer) => box.top >= outer.top - 1 && box.bottom <= outer.bottom + 1 && box.left >= outer.left - 1 && box.right <= outer.right + 1;
        return { viewport: within(view), page: within({ top: 0, left: 0, bottom: window.innerHeight, right: window.innerWidth }) };
      });
      assert.deepEqual(inSight, { viewport: true, page: true });
      await screenshot(page, step("graph"), "1-menu");
      await answer.getByRole("menuitem", { name: /^Graph/ }).click();
      await answer.getByRole("status").getByText(/The graph is as it was before this answer\. .*Ctrl\+Z on the canvas brings the newer graph back\./).waitFor({ timeout: 10_000 });
      assert.deepEqual(await rootTypes(page), ["EmptyImage"]);
      await screenshot(page, step("graph"), "2-restored");

      await undoTo(page, 3);
      assert.deepEqual(await rootTypes(page), ["EmptyImage", "ImageInvert", "PreviewImage"]);
      await undoTo(page, 2); // and the edits before, as before: the assistant's last one
    });

    test("across two tabs: the graph goes back into the tab it belongs to, the other tab stays as it is", { timeout: 120_000 }, async () => {
      const a = await newTabWith(page, ["EmptyImage"]);
      const ask = `on tab A ${Date.now()}`;
      await chatThatEdits(page, harness, ask, [{ id: "addA", name: "addNode", arguments: { nodeType: "ImageInvert" } }], "Inverted on A.");
      const b = await newTabWith(page, ["LoadImage", "PreviewImage"]);
      await panel(page).getByText(/Ask about your workflow/).waitFor({ timeout: 10_000 }); // tab B's own (new) thread
      // The user goes back to A's thread from the list while tab B is shown.
      if (await panel(page).getByRole("button", { name: "Show the threads" }).isVisible()) {
        await panel(page).getByRole("button", { name: "Show the threads" }).click();
      }
      await panel(page).getByRole("group", { name: "Other threads" }).getByText(ask).click();
      await panel(page).getByText("Inverted on A.").waitFor({ timeout: 10_000 });
      const answer = await rewind(page, "Inverted on A.", "Graph");
      await answer.getByRole("status").getByText(/The graph is as it was before this answer\./).waitFor({ timeout: 10_000 });
      assert.equal((await activeTab(page)).key, a.key, "tab A is shown");
      assert.deepEqual(await rootTypes(page), ["EmptyImage"]);
      await screenshot(page, step("tabs"), "restored-in-tab-a");
      await pressUndo(page);
      await page.waitForFunction(() => (window.app.rootGraph ?? window.app.graph).nodes.length === 2, null, { timeout: 5_000 });
      await showTab(page, b.key);
      assert.deepEqual(await rootTypes(page), ["LoadImage", "PreviewImage"]);
    });

    test("inside a subgraph: the subgraph's nodes and values come back", { timeout: 120_000 }, async () => {
      await openAssistant(page);
      await page.evaluate(async (data) => {
        const quiet = { showMissingNodesDialog: false, showMissingModelsDialog: false, deferWarnings: true, silentAssetErrors: true };
        await window.app.loadGraphData(data, true, true, null, quiet);
      }, FLUX);
      await page.waitForFunction(() => Boolean((window.app.rootGraph ?? window.app.graph).getNodeById(56)?.subgraph));
      await page.evaluate(() => {
        const node = (window.app.rootGraph ?? window.app.graph).getNodeById(56);
        window.app.canvas.openSubgraph(node.subgraph, node); // as a double click on the node does
      });
      const inside = () =>
        page.evaluate(() => {
          const inner = (window.app.rootGraph ?? window.app.graph).getNodeById(56).subgraph;
          return { steps: inner.getNodeById(52).widgets.find((w) => w.name === "steps").value, nodes: inner.nodes.length };
        });
      const before = await inside();
      await chatThatEdits(
        page,
        harness,
        `31 steps, no zero-out ${Date.now()}`,
        [
          { id: "steps", name: "setWidgetValues", arguments: { nodeId: 52, values: { steps: 31 } } },
          { id: "drop", name: "removeNodes", arguments: { nodeIds: [54] } },
        ],
        "Set 31 steps inside the subgraph.",
      );
      assert.deepEqual(await inside(), { steps: 31, nodes: before.nodes - 1 });
      const answer = await rewind(page, "Set 31 steps inside the subgraph.", "Graph");
      await answer.getByRole("status").getByText(/The graph is as it was before this answer\./).waitFor({ timeout: 10_000 });
      assert.deepEqual(await inside(), before);
      await screenshot(page, step("subgraph"), "restored");
      await pressUndo(page);
      await page.waitForFunction((n) => (window.app.rootGraph ?? window.app.graph).getNodeById(56).subgraph.nodes.length === n, before.nodes - 1, { timeout: 5_000 });
      assert.deepEqual(await inside(), { steps: 31, nodes: before.nodes - 1 });
      await page.evaluate(() => window.app.canvas.setGraph(window.app.rootGraph ?? window.app.graph));
    });

    test("rewind the conversation: the turn is kept as a branch, the next request goes on from there, the branch comes back", { timeout: 150_000 }, async () => {
      await newTabWith(page, ["EmptyImage"]);
      await openAssistant(page);
      await settle(page);
      await panel(page).getByRole("button", { name: "New thread" }).first().click();
      const first = `what is this graph ${Date.now()}`;
      await harness.provider.reset();
      await harness.provider.script(
        reply.text("An empty image."),
        reply.toolCalls({ id: "inv", name: "addNode", arguments: { nodeType: "ImageInvert" } }),
        reply.text("Inverted it."),
        reply.text("You are welcome."),
      );
      await send(page, first);
      await panel(page).getByText("An empty image.").waitFor({ timeout: 30_000 });
      await send(page, "invert it");
      await panel(page).getByText("Inverted it.").waitFor({ timeout: 30_000 });
      await send(page, "thanks");
      await panel(page).getByText("You are welcome.").waitFor({ timeout: 30_000 });
      const threadId = await threadIdOf(first);
      const stored = async () => (await (await fetch(`${baseUrl}/api/assistant/threads/${threadId}`)).json()).messages;

      await rewind(page, "Inverted it.", "Conversation");
      await panel(page).getByText(/The conversation is back to before that answer\. The 4 messages from “invert it” on are kept as branch 1/).waitFor({ timeout: 10_000 });
      assert.equal(await panel(page).getByText("Inverted it.").count(), 0);
      assert.equal(await panel(page).getByText("You are welcome.").count(), 0);
      await panel(page).getByText("An empty image.").waitFor();
      assert.equal(await panel(page).getByRole("textbox", { name: "Message" }).inputValue(), "invert it", "the question is back in the composer");
      assert.deepEqual(await rootTypes(page), ["EmptyImage", "ImageInvert"], "the graph is left as it is");
      assert.equal((await stored()).length, 2, "the server holds what the panel shows");
      await screenshot(page, step("conversation"), "1-rewound");

      await harness.provider.reset();
      await harness.provider.script(reply.text("Then a preview."));
      await panel(page).getByRole("textbox", { name: "Message" }).fill("");
      await send(page, "preview it instead");
      await panel(page).getByText("Then a preview.").waitFor({ timeout: 30_000 });
      const [request] = await harness.provider.requests();
      const said = request.messages.filter((m) => m.role !== "system").map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
      assert.equal(said.length, 3, said.join(" | "));
      assert.ok(said[0].startsWith(first) && said[1] === "An empty image." && said[2].startsWith("preview it instead"), said.join(" | "));

      await panel(page).getByRole("button", { name: "Branches (1)" }).click();
      await screenshot(page, step("conversation"), "2-branches");
      await panel(page).getByRole("menu", { name: "Branches" }).getByRole("menuitem", { name: /Return to branch 1/ }).click();
      await panel(page).getByText("You are welcome.").waitFor({ timeout: 10_000 });
      await panel(page).getByText("Inverted it.").waitFor();
      assert.equal(await panel(page).getByText("Then a preview.").count(), 0);
      await panel(page).getByText(/What followed there \(2 messages from “preview it instead”\) is kept as branch 2\./).waitFor();
      const now = await stored();
      assert.deepEqual(now.map((m) => m.role), ["user", "assistant", "user", "assistant", "user", "assistant"]);
      await panel(page).getByRole("button", { name: "Branches (1)" }).waitFor();
    });

    test("rewind both: the graph and the conversation from before the answer", { timeout: 120_000 }, async () => {
      await newTabWith(page, ["EmptyImage"]);
      const ask = `invert and preview ${Date.now()}`;
      await chatThatEdits(
        page,
        harness,
        ask,
        [
          { id: "b1", name: "addNode", arguments: { nodeType: "ImageInvert" } },
          { id: "b2", name: "addNode", arguments: { nodeType: "PreviewImage" } },
        ],
        "Both added.",
      );
      await rewind(page, "Both added.", "Both");
      await panel(page).getByText(/The conversation is back to before that answer\..*The graph is as it was then too/).waitFor({ timeout: 10_000 });
      assert.deepEqual(await rootTypes(page), ["EmptyImage"]);
      assert.equal(await panel(page).getByText("Both added.").count(), 0);
      assert.equal(await panel(page).getByRole("textbox", { name: "Message" }).inputValue(), ask);
      const threadId = await threadIdOf(ask);
      assert.deepEqual((await (await fetch(`${baseUrl}/api/assistant/threads/${threadId}`)).json()).messages, []);
      await screenshot(page, step("both"), "rewound");
      await pressUndo(page);
      await page.waitForFunction(() => (window.app.rootGraph ?? window.app.graph).nodes.length === 3, null, { timeout: 5_000 });
      await panel(page).getByRole("textbox", { name: "Message" }).fill("");
    });

    test("/rewind graph, then /rewind: the last answer that changed the graph", { timeout: 120_000 }, async () => {
      await newTabWith(page, ["EmptyImage"]);
      const ask = `add a preview ${Date.now()}`;
      await chatThatEdits(page, harness, ask, [{ id: "p1", name: "addNode", arguments: { nodeType: "PreviewImage" } }], "Preview added.");
      await send(page, "/rewind graph");
      await panel(page).locator(".cua-notice", { hasText: "Graph rewound" }).waitFor({ timeout: 10_000 });
      assert.deepEqual(await rootTypes(page), ["EmptyImage"]);
      await panel(page).getByText("Preview added.").waitFor(); // the conversation as it was
      await pressUndo(page);
      await page.waitForFunction(() => (window.app.rootGraph ?? window.app.graph).nodes.length === 2, null, { timeout: 5_000 });
      await send(page, "/rewind");
      await panel(page).getByText(/The conversation is back to before that answer\..*The graph is as it was then too/).waitFor({ timeout: 10_000 });
      assert.deepEqual(await rootTypes(page), ["EmptyImage"]);
      assert.equal(await panel(page).getByText("Preview added.").count(), 0);
      assert.equal(await panel(page).getByRole("textbox", { name: "Message" }).inputValue(), ask);
      await panel(page).getByRole("textbox", { name: "Message" }).fill("");
    });

    test("a closed tab: the panel says so and opens the graph in a new tab when asked", { timeout: 120_000 }, async () => {
      const c = await newTabWith(page, ["EmptyImage"]);
      await chatThatEdits(page, harness, `on tab C ${Date.now()}`, [{ id: "addC", name: "addNode", arguments: { nodeType: "ImageInvert" } }], "Inverted on C.");
      const d = await newTabWith(page, ["LoadImage"]);
      // Tab C closed as the store closes a tab that is not shown (no unsaved-changes dialog).
      await page.evaluate(async (key) => {
        const store = window.app.extensionManager.workflow;
        await store.closeWorkflow(store.openWorkflows.find((w) => w.key === key));
      }, c.key);
      if (await panel(page).getByRole("button", { name: "Show the threads" }).isVisible()) {
        await panel(page).getByRole("button", { name: "Show the threads" }).click();
      }
      await panel(page).getByText(/^on tab C/).first().click();
      const answer = await rewind(page, "Inverted on C.", "Graph");
      await answer.getByRole("status").getByText(/which is not open\./).waitFor({ timeout: 10_000 });
      assert.equal((await activeTab(page)).key, d.key, "nothing changed yet");
      await answer.getByRole("button", { name: "Open it in a new tab" }).click();
      await answer.getByRole("status").getByText(/is open in a new tab/).waitFor({ timeout: 10_000 });
      assert.deepEqual(await rootTypes(page), ["EmptyImage"]);
      assert.equal((await activeTab(page)).bound, c.bound, "the same workflow (its thread key) as the closed tab's");
    });
  });
}

// The assistant end to end, in headless Chromium: the panel in the playground, in the real
// ComfyUI frontend (every version in tests/comfy_standin/frontends.txt, served by the ComfyUI
// stand-in), and in a real ComfyUI when COMFYUI_URL is set; our server, and the scripted
// provider answering with tool calls. Screenshots of every step go to e2e/screenshots/.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "./support.mjs"; // node:test's, see support.mjs
import {
  COMFYUI_SKIP,
  COMFYUI_URL,
  RETURNING_USER_SETTINGS,
  ROOT,
  SAVED_CHAT,
  SAVED_WORKFLOW,
  SHARED_ID_TEMPLATES,
  assistantTabId,
  bindAsEarlierVersion,
  comfyPng,
  composer,
  focusCanvas,
  focusedId,
  frontendVersions,
  graphState,
  lastUserText,
  launchBrowser,
  newProfile,
  openAssistant,
  openSavedWorkflow,
  openTemplate,
  openTarget,
  panel,
  pointComfyUIAt,
  python,
  previousSession,
  reply,
  restoreComfyUIProvider,
  saveRealWorkflow,
  screenshot,
  send,
  sendButton,
  settle,
  standinSkip,
  startHarness,
  stopButton,
  storeSettings,
  toggleAssistant,
  waitReady,
  watchPage,
} from "./support.mjs";

const ASK = "add a KSampler and connect it to the checkpoint loader";
/** A small workflow in UI format for loadWorkflow: EmptyImage -> ImageInvert -> PreviewImage. */
const INVERT_WORKFLOW = {
  last_node_id: 3,
  last_link_id: 2,
  nodes: [
    { id: 1, type: "EmptyImage", pos: [0, 0], size: [315, 130], flags: {}, order: 0, mode: 0, inputs: [], outputs: [{ name: "IMAGE", type: "IMAGE", links: [1] }], widgets_values: [512, 512, 1, 0] },
    { id: 2, type: "ImageInvert", pos: [400, 0], size: [210, 46], flags: {}, order: 1, mode: 0, inputs: [{ name: "image", type: "IMAGE", link: 1 }], outputs: [{ name: "IMAGE", type: "IMAGE", links: [2] }] },
    { id: 3, type: "PreviewImage", pos: [700, 0], size: [210, 246], flags: {}, order: 2, mode: 0, inputs: [{ name: "images", type: "IMAGE", link: 2 }], outputs: [] },
  ],
  links: [
    [1, 1, 0, 2, 0, "IMAGE"],
    [2, 2, 0, 3, 0, "IMAGE"],
  ],
  groups: [],
  config: {},
  extra: {},
  version: 0.4,
};
/** A real ComfyUI's slow run (addSlowChain) and what the server says of the file it saves. */
const SLOW_SIZE = [512, 512];
const SLOW_BLURS = 4;
const SLOW_MADE = `PNG ${SLOW_SIZE.join("×")}, all black`;
const DONE = "Added a KSampler and connected the checkpoint loader's MODEL to it.";

const TARGETS = [
  { name: "playground", slug: "playground", skip: false, comfyui: false },
  ...frontendVersions().map((version) => ({
    name: `ComfyUI frontend ${version} (stand-in)`,
    slug: `frontend-${version}`,
    skip: standinSkip(version),
    comfyui: true,
    frontend: version,
  })),
  { name: "real ComfyUI (COMFYUI_URL)", slug: "comfyui", skip: COMFYUI_SKIP, comfyui: true, real: true },
];

for (const target of TARGETS) {
  describe(`the assistant in the ${target.name}`, { skip: target.skip }, () => {
    let harness;
    let browser;
    let page;
    let problems;
    let baseUrl;
    let savedProvider = null;
    let profile = null;
    // Shared by the steps of the conversation (each test is one step of the issue's story).
    const story = { before: null, loaderId: null, newId: null, lastSession: null, saved: SAVED_WORKFLOW, removeSaved: null, removeLater: [], removeProjects: [] };

    before(async () => {
      // The real frontends run as a returning user's: a data directory with saved workflows and
      // an older version's threads, and a browser profile an earlier session left. In a real
      // ComfyUI the returning user is the browser profile of an earlier session that opened a
      // saved workflow (saved for this run, deleted after it) and chatted on it and on its first tab.
      harness = await startHarness({ providerOnly: Boolean(target.real), comfyFrontend: target.frontend, returningUser: Boolean(target.frontend) });
      baseUrl = target.real ? COMFYUI_URL : harness.app;
      if (target.real) {
        savedProvider = await pointComfyUIAt(harness.provider);
        const saved = await saveRealWorkflow(baseUrl);
        [story.saved, story.removeSaved] = [saved.key, saved.remove];
      }
      if (target.frontend) await storeSettings(baseUrl, RETURNING_USER_SETTINGS);
      if (target.comfyui) {
        profile = newProfile();
        story.lastSession = await previousSession(baseUrl, harness.provider, profile, { saved: story.saved, savedChat: Boolean(target.real) });
        await bindAsEarlierVersion(baseUrl, story.lastSession);
      }
      browser = await launchBrowser(undefined, { profile });
      page = await browser.context.newPage();
      problems = watchPage(page);
      await openTarget(page, baseUrl, { comfyui: target.comfyui });
    });

    after(async () => {
      if (savedProvider) await restoreComfyUIProvider(savedProvider);
      await story.removeSaved?.();
      for (const file of story.removeLater) await fetch(`${baseUrl}/api/userdata/${encodeURIComponent(file)}`, { method: "DELETE" });
      if (story.removeProjects.length) {
        const { projects } = await (await fetch(`${baseUrl}/api/assistant/projects`)).json();
        for (const p of projects.filter((p) => story.removeProjects.includes(p.name))) await fetch(`${baseUrl}/api/assistant/projects/${p.id}`, { method: "DELETE" });
      }
      await browser?.close();
      if (profile) rmSync(profile, { recursive: true, force: true });
      await harness?.stop();
      if (problems?.length) console.log(`page errors seen (${target.name}):\n${problems.join("\n")}`);
    });

    const step = (name) => `${target.slug}-${name}`;

    test(
      "a returning user: the last session's tab continues its thread, a saved workflow its older one; tabs' old names bind nothing",
      { timeout: 90_000, skip: target.comfyui ? false : "the playground keeps no tabs across sessions" },
      async () => {
        await openAssistant(page);
        // The tab the last session chatted on, restored by the frontend: its graph, so its thread.
        const restored = await page.evaluate((id) => {
          const tabs = window.app.extensionManager.workflow.openWorkflows;
          return tabs.find((w) => (w.activeState ?? w.initialState)?.id === id)?.key ?? tabs.map((w) => w.key).join(", ");
        }, story.lastSession.graphId);
        await showWorkflow(page, restored);
        await panel(page).getByText("Hello again, from the last session.").waitFor({ timeout: 20_000 });
        const listed = async () => (await (await fetch(`${baseUrl}/api/assistant/threads`)).json()).threads;
        const byId = (threads, id) => threads.find((t) => t.id === id);
        // An earlier version bound it to the tab's graph id: moved to the tab's thread key.
        assert.equal(await boundKey(page), `unsaved:${story.lastSession.threadKey}`, "the restored tab keeps its thread key");
        await waitUntil(async () => (await listed()).find((t) => t.title === story.lastSession.question)?.workflow === (await boundKey(page)), "the thread moved to the tab's thread key");
        if (await panel(page).getByRole("button", { name: "Show the threads" }).isVisible()) {
          await panel(page).getByRole("button", { name: "Show the threads" }).click();
        }
        const group = (name) => panel(page).getByRole("group", { name });
        if (target.frontend) {
          // An older version's threads of temporary tabs (the stand-in's data directory holds
          // them; no real ComfyUI has that version's store): names given again, so unbound.
          await waitUntil(async () => byId(await listed(), "th_earlier_fox")?.workflow === null, "the older threads unbound");
          const threads = await listed();
          assert.deepEqual(
            ["th_earlier_fox", "th_earlier_lighthouse", "th_earlier_portrait"].map((id) => byId(threads, id)?.workflow),
            [null, null, SAVED_WORKFLOW],
          );
          await group("Other threads").getByText("Make the fox graph sharper").waitFor();
        }
        // The saved workflow: the same key as before, so its older thread continues there.
        await openSavedWorkflow(page, story.saved);
        await panel(page).getByText(SAVED_CHAT.answer).waitFor({ timeout: 10_000 });
        await group("This workflow").getByText(SAVED_CHAT.question).waitFor();
        await screenshot(page, step("returning"), "saved-workflow-thread");
        await page.evaluate(() => window.app.extensionManager.command.execute("Workspace.PreviousOpenedWorkflow"));
        await panel(page).getByText("Hello again, from the last session.").waitFor({ timeout: 10_000 });
      },
    );

    test("Ctrl+Shift+L on the canvas or in the composer shows and hides the panel", { timeout: 60_000 }, async () => {
      await assistantTabId(page); // the extension is loaded
      if (await panel(page).isVisible()) await toggleAssistant(page); // the playground opens it at start
      await panel(page).waitFor({ state: "hidden" });
      for (const shown of [true, false, true]) {
        // The canvas focused, and still focused 300 ms later: a thread switch still settling
        // from the test before (the returning user's tabs) may move the focus once, under load.
        await waitUntil(async () => {
          await focusCanvas(page);
          await new Promise((resolve) => setTimeout(resolve, 300));
          return (await focusedId(page)) === "graph-canvas";
        }, "the canvas keeps the focus");
        assert.equal(await focusedId(page), "graph-canvas");
        await page.keyboard.press("Control+Shift+L");
        await panel(page).waitFor({ state: shown ? "visible" : "hidden", timeout: 5_000 });
      }
      // Opening the panel puts the cursor in the composer, where the keys hide it again.
      await page.waitForFunction(() => document.activeElement?.classList.contains("cua-input"));
      await screenshot(page, step("keys"), "opened-with-ctrl-shift-l");
      await page.keyboard.press("Control+Shift+L");
      await panel(page).waitFor({ state: "hidden", timeout: 5_000 });
      await focusCanvas(page);
      await page.keyboard.press("Control+Shift+L");
      await panel(page).waitFor({ state: "visible", timeout: 5_000 });
    });

    test("keys typed in the message box do not mark the graph changed (no canvas redraw per key); the page still hears each release", { timeout: 30_000 }, async () => {
      await openAssistant(page);
      // LiteGraph's canvas hears keyup on the whole document and calls graph.change() (a full
      // redraw) unless the key was typed in an <input>.
      const listen = () => {
        const graph = window.app.canvas.graph;
        const change = graph.change;
        const heard = { changes: 0, onWindow: [], onDocument: [] };
        graph.change = function (...args) {
          heard.changes++;
          return change.apply(this, args);
        };
        const onWindow = (event) => heard.onWindow.push(event.key);
        const onDocument = (event) => heard.onDocument.push(event.target.localName);
        window.addEventListener("keyup", onWindow);
        document.addEventListener("keyup", onDocument, true);
        window.__keysHeard = () => {
          graph.change = change;
          window.removeEventListener("keyup", onWindow);
          document.removeEventListener("keyup", onDocument, true);
          return heard;
        };
      };
      await composer(page).click();
      await page.evaluate(listen);
      await page.keyboard.type("hello", { delay: 30 });
      const typed = await page.evaluate(() => window.__keysHeard());
      assert.equal(await composer(page).inputValue(), "hello");
      assert.equal(typed.changes, 0, "no key typed in the message box marked the graph changed");
      assert.deepEqual(typed.onWindow, [..."hello"], "the window heard each key's release once");
      assert.deepEqual(typed.onDocument, Array(5).fill("input"), "the document heard them from an input");
      await composer(page).fill("");
      // Space held on the canvas (LiteGraph's drag mode) and released in the message box still
      // ends the drag mode: keys pressed elsewhere are not the panel's.
      await focusCanvas(page);
      await page.keyboard.down(" ");
      assert.equal(await page.evaluate(() => window.app.canvas.read_only), true, "Space on the canvas: drag mode");
      await page.evaluate(() => document.querySelector(".cua-root .cua-input").focus());
      await page.evaluate(listen);
      await page.keyboard.up(" ");
      const released = await page.evaluate(() => window.__keysHeard());
      assert.equal(await page.evaluate(() => window.app.canvas.read_only), false, "the release ended the drag mode");
      assert.deepEqual(released.onDocument, ["textarea"]);
      await composer(page).fill("");
    });

    test("a request adds a KSampler, connects it, resubmits and shows the final answer", { timeout: 90_000 }, async () => {
      await openAssistant(page);
      story.before = await graphState(page);
      story.loaderId = await ensureCheckpointLoader(page);
      story.before = await graphState(page);
      story.newId = story.before.lastNodeId + 1;
      await screenshot(page, step("edit"), "1-panel-open");

      await harness.provider.reset();
      await harness.provider.script(
        reply.toolCalls({ id: "call_add", name: "addNode", arguments: { nodeType: "KSampler", nearNodeId: story.loaderId } }),
        reply.toolCalls({
          id: "call_connect",
          name: "connectNodes",
          arguments: { fromNodeId: story.loaderId, fromOutput: "MODEL", toNodeId: story.newId, toInput: "model" },
        }),
        reply.text(DONE),
      );
      await send(page, ASK);
      await panel(page).getByText(ASK).first().waitFor();
      await page.waitForFunction((id) => (window.app.rootGraph ?? window.app.graph).getNodeById(id)?.type === "KSampler", story.newId, { timeout: 20_000 });
      await screenshot(page, step("edit"), "2-node-added");
      await page.waitForFunction(
        ([from, to]) => {
          const node = (window.app.rootGraph ?? window.app.graph).getNodeById(to);
          const input = node?.inputs?.find((i) => i.name === "model");
          const link = input?.link != null ? node.graph.getLink?.(input.link) ?? node.graph.links.get?.(input.link) ?? node.graph.links[input.link] : null;
          return link?.origin_id === from && link?.origin_slot === 0;
        },
        [story.loaderId, story.newId],
        { timeout: 20_000 },
      );
      await panel(page).getByText(DONE).waitFor({ timeout: 20_000 });
      await screenshot(page, step("edit"), "3-final-answer");

      const { requests } = await harness.provider.state();
      assert.equal(requests.length, 3, "one request, then one resubmission after each tool round");
      assert.match(lastUserText(requests[0]), new RegExp(ASK));
      const toolResult = (request, id) => request.messages.find((m) => m.role === "tool" && m.tool_call_id === id);
      assert.ok(toolResult(requests[1], "call_add"), "the second request carries addNode's result");
      assert.match(JSON.stringify(toolResult(requests[1], "call_add").content), new RegExp(String(story.newId)));
      assert.ok(toolResult(requests[2], "call_connect"), "the third request carries connectNodes' result");
      const now = await graphState(page);
      assert.equal(now.nodes.length, story.before.nodes.length + 1);
      assert.equal(now.links.length, story.before.links.length + 1);
    });

    test("Ctrl+Z removes the node", { timeout: 30_000 }, async (t) => {
      assert.ok(story.newId, "needs the node the previous test added");
      // One undo step per assistant edit (add, then connect), or one for the whole turn. The
      // focus stays on the canvas: the composer (whose text the chat edited) must not take it.
      await focusCanvas(page);
      let presses = 0;
      while (presses < 2) {
        await page.keyboard.press("Control+z");
        presses++;
        await page.waitForTimeout(300);
        assert.equal(await focusedId(page), "graph-canvas", `the focus after Ctrl+Z number ${presses}`);
        if (!(await page.evaluate((id) => Boolean((window.app.rootGraph ?? window.app.graph).getNodeById(id)), story.newId))) break;
      }
      t.diagnostic(`Ctrl+Z presses to remove the node: ${presses}`);
      const now = await graphState(page);
      assert.equal(now.nodes.find((n) => n.id === story.newId), undefined, "Ctrl+Z removed the added KSampler");
      assert.deepEqual(now.nodes.map((n) => n.id).sort(), story.before.nodes.map((n) => n.id).sort(), "and only it");
      assert.equal(now.links.length, story.before.links.length);
      await screenshot(page, step("undo"), "after-ctrl-z");
    });

    test("two Ctrl+Z on the canvas undo two graph changes and leave the composer alone", { timeout: 30_000 }, async () => {
      // The composer has text history of its own: a draft typed, then cleared.
      await composer(page).fill("a draft");
      await composer(page).fill("");
      const before = await graphState(page);
      const added = await addTrackedNodes(page, ["EmptyImage", "PreviewImage"]);
      assert.equal((await graphState(page)).nodes.length, before.nodes.length + 2);
      await focusCanvas(page);
      for (const [press, gone] of [[1, added.slice(1)], [2, added]]) {
        await page.keyboard.press("Control+z");
        await page.waitForFunction(
          (ids) => ids.every((id) => !(window.app.rootGraph ?? window.app.graph).getNodeById(id)),
          gone,
          { timeout: 5_000 },
        ).catch(() => {});
        assert.equal(await focusedId(page), "graph-canvas", `the focus after Ctrl+Z number ${press}`);
        const ids = (await graphState(page)).nodes.map((n) => n.id);
        assert.deepEqual(gone.filter((id) => ids.includes(id)), [], `Ctrl+Z number ${press} undid a change`);
      }
      assert.deepEqual((await graphState(page)).nodes.map((n) => n.id).sort(), before.nodes.map((n) => n.id).sort());
      assert.equal(await composer(page).inputValue(), "", "the composer's text is untouched");
    });

    test("the /skill autocomplete lists every skill and scrolls to the last", { timeout: 30_000 }, async () => {
      const shipped = readdirSync(join(ROOT, "system_context", "skills")).length;
      await composer(page).fill("/skill ");
      const list = panel(page).getByRole("listbox", { name: "Commands" });
      const options = list.getByRole("option");
      await options.first().waitFor();
      assert.ok((await options.count()) >= shipped, `${await options.count()} options for ${shipped} shipped skills`);
      await composer(page).press("ArrowUp"); // from the first to the last
      const last = options.last();
      assert.equal(await last.getAttribute("aria-selected"), "true");
      await page.waitForTimeout(200);
      const [box, item] = [await list.boundingBox(), await last.boundingBox()];
      assert.ok(item.y >= box.y - 1 && item.y + item.height <= box.y + box.height + 1, `the last skill is in view: ${JSON.stringify({ box, item })}`);
      await screenshot(page, step("skill-list"), "last-skill");
      await composer(page).press("Escape");
      await composer(page).fill("");
    });

    test("closing and reopening the tab keeps the conversation", { timeout: 30_000 }, async () => {
      await toggleAssistant(page);
      await panel(page).waitFor({ state: "hidden" });
      await screenshot(page, step("tab"), "1-closed");
      await toggleAssistant(page);
      await panel(page).getByText(ASK).first().waitFor();
      await panel(page).getByText(DONE).waitFor();
      await screenshot(page, step("tab"), "2-reopened");
    });

    test("a reload keeps the thread", { timeout: 60_000 }, async () => {
      await page.reload();
      await waitReady(page, { comfyui: target.comfyui });
      await openAssistant(page);
      await panel(page).getByText(ASK).first().waitFor({ timeout: 20_000 });
      await panel(page).getByText(DONE).waitFor();
      await screenshot(page, step("reload"), "thread-restored");
    });

    test("after a reload, a new message sends only what is new; the model still gets the whole thread", { timeout: 60_000 }, async () => {
      await settle(page);
      await harness.provider.reset();
      await harness.provider.script(reply.text("It was a KSampler."));
      const chat = page.waitForRequest((r) => r.url().includes("/api/assistant/chat") && r.method() === "POST");
      await send(page, "what did you add?");
      const body = JSON.parse((await chat).postData() ?? "{}");
      await panel(page).getByText("It was a KSampler.").waitFor({ timeout: 30_000 });
      assert.deepEqual(body.messages.map((m) => m.role), ["user"], "only the new message");
      assert.ok(body.messages[0].parts.some((p) => p.type === "text" && p.text === "what did you add?"));
      // it follows the last message the server holds, where the server holds it
      const thread = await page.evaluate(async (id) => (await fetch(`/api/assistant/threads/${encodeURIComponent(id)}`)).json(), body.id);
      const ids = thread.messages.map((m) => m.id);
      assert.equal(ids[body.parentIndex], body.parentId);
      assert.equal(ids[body.parentIndex + 1], body.messages[0].id);
      const sent = JSON.stringify((await harness.provider.requests())[0].messages);
      assert.ok(sent.includes(ASK), "the model got the thread from before the reload");
      assert.ok(lastUserText((await harness.provider.requests())[0]).includes("what did you add?"));
    });

    test("stop aborts a slow answer", { timeout: 60_000 }, async () => {
      await settle(page);
      await harness.provider.reset();
      await harness.provider.script(
        reply.stream({ content: "Let me think about this slowly" }, { pause: 30 }, { content: " and this never arrives." }, { finish_reason: "stop" }),
      );
      await send(page, "take your time");
      await panel(page).getByText("Let me think about this slowly").waitFor({ timeout: 20_000 });
      await screenshot(page, step("stop"), "1-streaming");
      await stopButton(page).click();
      await harness.provider.waitFor((s) => s.disconnects >= 1, "the slow request aborted");
      await sendButton(page).waitFor();
      assert.equal(await panel(page).getByText("this never arrives").count(), 0);
      await screenshot(page, step("stop"), "2-stopped");
    });

    test("a delegated task shows its card, its result and its trace", { timeout: 60_000 }, async () => {
      await openAssistant(page);
      await settle(page);
      await harness.provider.reset();
      const answer = { answer: "ImageUpscaleWithModel upscales with a model.", facts: ["ImageUpscaleWithModel: image, upscale_model"] };
      await harness.provider.script(
        reply.toolCalls({ id: "call_delegate", name: "delegate", arguments: { task: "Which upscale nodes are installed?" } }),
        reply.toolCalls({ id: "call_search", name: "searchInstalledNodes", arguments: { query: "upscale" } }),
        reply.text(JSON.stringify(answer)),
        reply.text("The helper found ImageUpscaleWithModel."),
      );
      await send(page, "which upscale nodes do I have?");
      await panel(page).getByText("The helper found ImageUpscaleWithModel.").waitFor({ timeout: 20_000 });
      const card = panel(page).getByLabel("Delegated task: done");
      await card.click(); // open the card
      await panel(page).getByText(answer.answer).waitFor();
      await panel(page).getByText("searchInstalledNodes: upscale").waitFor();
      await screenshot(page, step("delegate"), "1-result");
      await panel(page).getByRole("button", { name: "Show the full trace" }).click();
      const trace = panel(page).getByLabel("Full trace");
      await trace.waitFor();
      assert.match(await trace.textContent(), /You are a research helper[\s\S]*searchInstalledNodes\(\{"query":"upscale"\}\)/);
      await screenshot(page, step("delegate"), "2-trace");
      const requests = await harness.provider.requests();
      assert.equal(requests.length, 4, "the parent, the helper's two steps, the parent again");
      assert.match(requests[1].messages[0].content, /^You are a research helper/);
      assert.ok(!JSON.stringify(requests[1].messages).includes("which upscale nodes do I have?"), "the helper starts afresh");
    });

    test("stop during a delegated task stops the helper too", { timeout: 60_000 }, async () => {
      await openAssistant(page);
      await settle(page);
      await harness.provider.reset();
      await harness.provider.script(
        reply.toolCalls({ id: "call_slow", name: "delegate", arguments: { task: "Look everything up slowly" } }),
        reply.stream({ content: "Checking" }, { pause: 30 }, { content: " never sent" }, { finish_reason: "stop" }),
      );
      await send(page, "research this slowly");
      await panel(page).getByLabel("Delegated task: running").waitFor({ timeout: 20_000 });
      await harness.provider.waitFor((s) => s.requests.length >= 2, "the helper is asking the model");
      await screenshot(page, step("delegate-stop"), "1-running");
      await stopButton(page).click();
      await harness.provider.waitFor((s) => s.disconnects >= 1, "the helper's request aborted");
      await sendButton(page).waitFor();
      await panel(page).getByLabel("Delegated task: cancelled").waitFor({ timeout: 10_000 });
      await screenshot(page, step("delegate-stop"), "2-stopped");
      assert.equal((await harness.provider.requests()).length, 2, "nothing was asked after the stop");
    });

    test("a cited documentation lookup: the chip [1] opens its source", { timeout: 60_000 }, async () => {
      await openAssistant(page);
      await settle(page);
      await harness.provider.reset();
      await harness.provider.script(
        reply.toolCalls({ id: "call_docs", name: "readDocumentation", arguments: { nodeType: "KSampler" } }),
        reply.text("KSampler denoises the latent image [1]; see also [9]."),
      );
      await send(page, "what does KSampler do?");
      const chip = panel(page).getByRole("button", { name: /^Source 1: KSampler/ });
      await chip.waitFor({ timeout: 20_000 });
      // an id no document has stays text; the chip is the only citation button
      await panel(page).getByText("; see also [9].").waitFor();
      assert.equal(await panel(page).locator("button.cua-cite").count(), 1);
      const requests = await harness.provider.requests();
      const result = JSON.parse(requests[1].messages.at(-1).content);
      assert.equal(result.documents[0].citation_id, 1);
      assert.match(result.cite, /by citation_id, like \[1\]/);
      await chip.click();
      const source = panel(page).getByRole("dialog", { name: /^Source 1: KSampler/ });
      await source.waitFor();
      assert.match(await source.textContent(), /Node documentation · KSampler/);
      assert.ok((await source.textContent()).includes(result.documents[0].contents.slice(0, 40)));
      await screenshot(page, step("citation"), "1-source");
      await page.keyboard.press("Escape");
      await source.waitFor({ state: "hidden" });
    });

    test("attached files: a ComfyUI PNG and a photo picked, a text pasted, reach the model; a refused file says why", { timeout: 90_000 }, async () => {
      await openAssistant(page);
      await settle(page);
      await harness.provider.reset();
      await harness.provider.script(reply.text("A KSampler at 20 steps, from a lighthouse prompt."));
      const prompt = {
        3: { class_type: "KSampler", inputs: { seed: 42, steps: 20, model: ["4", 0] } },
        4: { class_type: "CheckpointLoaderSimple", inputs: { ckpt_name: "v1-5-pruned-emaonly.safetensors" } },
        6: { class_type: "CLIPTextEncode", inputs: { text: "a lighthouse at dusk", clip: ["4", 1] } },
      };
      const workflow = { nodes: [{ id: 3, type: "KSampler", widgets_values: [42, "fixed", 20] }], links: [] };
      // picked with the attach button
      const chooser = page.waitForEvent("filechooser");
      await panel(page).getByRole("button", { name: "Attach files" }).click();
      await (
        await chooser
      ).setFiles([
        { name: "ComfyUI_00001_.png", mimeType: "image/png", buffer: comfyPng({ prompt, workflow }) },
        { name: "photo.png", mimeType: "image/png", buffer: comfyPng({ width: 20, height: 10 }) },
      ]);
      const chips = panel(page).getByLabel("Attached files");
      await chips.getByText(/PNG 32×24, ComfyUI workflow, 3 nodes · [\d,]+ tokens/).waitFor({ timeout: 20_000 });
      await chips.getByText("no ComfyUI workflow in it: attached as a plain image").waitFor();
      // dropped: a PDF is refused at once, with the reason; Send waits until it is removed
      await page.evaluate(() => {
        const zone = document.querySelector(".cua-dropzone");
        const data = new DataTransfer();
        data.items.add(new File(["%PDF-1.7 not really"], "paper.pdf", { type: "application/pdf" }));
        for (const type of ["dragenter", "dragover", "drop"]) {
          zone.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
        }
      });
      await chips.getByRole("alert").filter({ hasText: "paper.pdf is a PDF, which cannot be attached" }).waitFor({ timeout: 20_000 });
      assert.equal(await sendButton(page).isDisabled(), true);
      await screenshot(page, step("attachments"), "1-attached");
      await chips.getByRole("button", { name: "Remove paper.pdf" }).click();
      await chips.getByRole("alert").waitFor({ state: "detached" });
      // pasted into the message box: a text file
      await composer(page).evaluate((box) => {
        const data = new DataTransfer();
        data.items.add(new File(["# Shots\n1. Wide\n2. Close"], "shots.md", { type: "text/markdown" }));
        box.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
      });
      await chips.getByText(/^text, 3 lines · \d+ tokens$/).waitFor({ timeout: 20_000 });
      await send(page, "what made this image?");
      await panel(page).getByText("A KSampler at 20 steps, from a lighthouse prompt.").waitFor({ timeout: 30_000 });
      // the model got both images and the workflow's lines, after the typed text
      const [request] = await harness.provider.requests();
      const content = request.messages.filter((m) => m.role === "user").at(-1).content;
      assert.deepEqual(
        content.slice(0, 6).map((part) => part.type),
        ["text", "image_url", "text", "image_url", "text", "text"],
      );
      assert.match(content[5].text, /^\[attached file shots\.md\]\n# Shots/);
      assert.match(content[0].text, /^what made this image\?/);
      assert.match(content[1].image_url.url, /^data:image\/png;base64,iVBORw0KGgo/);
      assert.match(content[2].text, /ComfyUI made it[\s\S]*3 KSampler: seed=42, steps=20, model←4/);
      // the sent message shows both images, served back by id (the browser keeps no bytes)
      const shown = panel(page).locator(".cua-msg-user").last().locator("img.cua-chip-thumb");
      await shown.nth(1).waitFor();
      const images = await shown.evaluateAll((imgs) => imgs.map((img) => ({ src: img.getAttribute("src"), width: img.naturalWidth })));
      assert.equal(images.length, 2);
      for (const image of images) {
        assert.match(image.src, /^\/api\/assistant\/attachments\/att_/);
        assert.ok(image.width > 0, `${image.src} did not load`);
      }
      const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }));
      assert.ok(!stored.includes("iVBORw0KGgo"), "no file bytes in the browser's storage");
      await screenshot(page, step("attachments"), "2-answered");
    });

    test("a workflow pasted as JSON attaches as a file: its chip says so, the message holds attachment:<id>, findMissing scans it", { timeout: 90_000 }, async () => {
      await openAssistant(page);
      await settle(page);
      await harness.provider.reset();
      // an API-format workflow as copied from a post: one node type no ComfyUI has
      const pasted = {
        3: { class_type: "KSampler", inputs: { seed: 42, steps: 20, model: ["4", 0] } },
        4: { class_type: "CheckpointLoaderSimple", inputs: { ckpt_name: "v1-5-pruned-emaonly.safetensors" } },
        9: { class_type: "PastedNodeNobodyHas", inputs: { image: ["3", 0] } },
      };
      const stored = page.waitForResponse((r) => r.url().endsWith("/api/assistant/attachments") && r.request().method() === "POST");
      const kept = await composer(page).evaluate((box, text) => {
        const data = new DataTransfer();
        data.setData("text/plain", text);
        const event = new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true });
        box.dispatchEvent(event);
        return event.defaultPrevented;
      }, JSON.stringify(pasted, null, 2));
      assert.equal(kept, true, "the workflow's text is not typed into the box");
      const { id } = await (await stored).json();
      const chips = panel(page).getByLabel("Attached files");
      await chips.getByText("pasted-workflow.json").waitFor({ timeout: 20_000 });
      await chips.getByText("pasted workflow: attached as a file, not as text").waitFor();
      await chips.getByText(/^API workflow, 3 nodes · [\d,]+ tokens$/).waitFor({ timeout: 20_000 });
      assert.equal(await composer(page).inputValue(), "");
      await screenshot(page, step("pasted-workflow"), "1-attached");
      // the model reads the note with the id, and passes it to findMissing
      await harness.provider.script(
        reply.toolCalls({ id: "call_paste", name: "findMissing", arguments: { attachmentId: id } }),
        reply.text("It needs PastedNodeNobodyHas."),
      );
      const chat = page.waitForRequest((r) => r.url().includes("/api/assistant/chat") && r.method() === "POST");
      await send(page, "what does this workflow lack?");
      const body = (await chat).postData() ?? "";
      assert.ok(body.includes(`"attachment:${id}"`), "the message holds the attachment, not the workflow's text");
      assert.ok(!body.includes("PastedNodeNobodyHas"), "the workflow's JSON is not in the message");
      await panel(page).getByText("It needs PastedNodeNobodyHas.").waitFor({ timeout: 30_000 });
      const [first, second] = await harness.provider.requests();
      const note = lastUserText(first);
      assert.ok(
        note.includes(`[attached ComfyUI workflow pasted-workflow.json (API workflow, 3 nodes); load it with loadWorkflow {"attachment":"${id}"}]`),
        note,
      );
      assert.match(note, /9 PastedNodeNobodyHas: image←3/);
      const result = JSON.parse(second.messages.find((m) => m.role === "tool" && m.tool_call_id === "call_paste").content);
      assert.equal(result.ok, true, JSON.stringify(result));
      assert.ok(result.missingNodeTypes.some((n) => n.type === "PastedNodeNobodyHas"), JSON.stringify(result));
      await screenshot(page, step("pasted-workflow"), "2-scanned");
    });

    test("a document pinned to the chat's project reaches the model whole", { timeout: 90_000 }, async () => {
      await openAssistant(page);
      await settle(page);
      await harness.provider.reset();
      await harness.provider.script(reply.text("Hello."), reply.text("Muted teal and amber, per the style guide."));
      await send(page, "hello");
      await panel(page).getByText("Hello.", { exact: true }).waitFor({ timeout: 30_000 });
      await panel(page).getByRole("button", { name: "Open the settings" }).click();
      const projects = panel(page).getByRole("region", { name: "Projects" });
      // (a real ComfyUI's store outlives the run: a project of this run, deleted at the end of the suite)
      const name = target.real ? `Short film ${Date.now()}` : `Short film ${target.slug}`;
      if (target.real) story.removeProjects.push(name);
      await projects.getByLabel("New project name").fill(name);
      await projects.getByRole("button", { name: "Create" }).click();
      await projects.getByRole("button", { name: new RegExp(name) }).click();
      await projects.getByLabel("Document title").fill("Style guide");
      await projects.getByLabel("Document text").fill("Palette: muted teal and amber. Film grain 0.3. No lens flares.");
      await projects.getByRole("button", { name: "Add document" }).click();
      await projects.getByRole("button", { name: "Remove Style guide" }).waitFor();
      await projects.getByRole("button", { name: "Use in this chat" }).click();
      await projects.getByText(`This chat is in ${name}.`).waitFor();
      await screenshot(page, step("project"), "1-pinned");
      await panel(page).getByRole("button", { name: "Back to the chat" }).click();
      await send(page, "which palette do we use?");
      await panel(page).getByText("Muted teal and amber, per the style guide.").waitFor({ timeout: 30_000 });
      const requests = await harness.provider.requests();
      const messages = requests.at(-1).messages;
      const pinned = messages.findIndex((m) => JSON.stringify(m.content).includes("muted teal and amber"));
      assert.ok(pinned > 0, "the pinned document was sent");
      assert.match(lastUserText(requests.at(-1)), /which palette do we use\?/);
      // whole, in a user turn near the end (it moves up every few turns, so the prefix stays cached)
      assert.equal(messages[pinned].role, "user");
      assert.match(JSON.stringify(messages[pinned].content), /<project-documents>.*Style guide.*No lens flares/);
    });

    test("a provider error shows its message", { timeout: 60_000 }, async () => {
      await settle(page);
      await harness.provider.reset();
      // Three times: a client that retries a 500 meets the same error again.
      const error = reply.status(500, "the GPU is on fire");
      await harness.provider.script(error, error, error);
      await send(page, "are you there?");
      await panel(page).getByText(/the GPU is on fire/).first().waitFor({ timeout: 30_000 });
      await screenshot(page, step("error"), "message-shown");
      await composer(page).waitFor();
    });

    test("/skill reaches the provider as the skill text", { timeout: 60_000 }, async () => {
      await settle(page);
      await harness.provider.reset();
      await harness.provider.script(reply.text("Following the text-to-image skill."));
      await send(page, "/skill txt2img a cat in a hat");
      await panel(page).getByText("Following the text-to-image skill.").waitFor({ timeout: 20_000 });
      await screenshot(page, step("skill"), "answered");
      const [request] = await harness.provider.requests();
      const text = lastUserText(request);
      const skill = readFileSync(join(ROOT, "system_context", "skills", "txt2img", "SKILL.md"), "utf8");
      const body = skill.split("---").slice(2).join("---").trim();
      assert.ok(text.includes('<skill name="txt2img">'), text.slice(0, 300));
      assert.ok(text.includes(body), "the whole skill body reaches the model");
      assert.ok(text.includes("a cat in a hat"));
    });

    test("one chat requests nothing outside the app's origin; a picture an answer links elsewhere is not loaded", { timeout: 60_000 }, async () => {
      await openAssistant(page);
      await settle(page);
      await harness.provider.reset();
      await harness.provider.script(
        reply.toolCalls({ id: "call_search", name: "searchInstalledNodes", arguments: { query: "upscale" } }),
        reply.text("Upscaled: ![the result](https://collect.example/p.png?d=the%20conversation)"),
      );
      const origin = new URL(baseUrl).origin;
      const requested = [];
      const record = (request) => requested.push(request.url());
      page.on("request", record);
      try {
        await send(page, "show me an upscaled picture");
        await panel(page).getByRole("link", { name: /the result \(collect\.example, not loaded\)/ }).waitFor({ timeout: 20_000 });
        await screenshot(page, step("egress"), "picture-not-loaded");
        await settle(page);
      } finally {
        page.off("request", record);
      }
      const outside = requested.filter((url) => /^(https?|wss?):/.test(url) && new URL(url).origin !== origin);
      assert.deepEqual(outside, [], `the page requested other origins during the chat: ${outside.join(", ")}`);
      assert.ok(requested.some((url) => url.startsWith(`${origin}/api/assistant/chat`)), "the chat went to the app's own origin");
    });

    test("the /context card stays where it was asked: the next question and answer come below it, in view", { timeout: 90_000 }, async () => {
      await openAssistant(page);
      await settle(page);
      await panel(page).getByRole("button", { name: "New thread" }).first().click();
      await harness.provider.reset();
      await harness.provider.script(reply.text("The first answer."), reply.text("The second answer, after the card."));
      await send(page, "first question");
      await panel(page).getByText("The first answer.").waitFor({ timeout: 20_000 });
      await composer(page).fill("/context");
      await composer(page).press("Enter");
      const card = panel(page).getByRole("status").filter({ hasText: "Context of the last answer" });
      await card.waitFor();
      await send(page, "second question");
      const answer = panel(page).getByText("The second answer, after the card.");
      await answer.waitFor({ timeout: 20_000 });
      await page.waitForTimeout(300); // the viewport's scroll settles
      await screenshot(page, step("context-card"), "next-answer");
      const layout = await page.evaluate(() => {
        const viewport = document.querySelector(".cua-root .cua-viewport").getBoundingClientRect();
        const find = (text) => [...document.querySelectorAll(".cua-root .cua-viewport *")].find((e) => e.children.length === 0 && e.textContent === text);
        const card = [...document.querySelectorAll(".cua-root .cua-notice")].find((e) => e.textContent.includes("Context of the last answer"));
        const question = find("second question");
        const answer = find("The second answer, after the card.");
        const box = answer.getBoundingClientRect();
        return {
          cardBeforeQuestion: Boolean(card.compareDocumentPosition(question) & Node.DOCUMENT_POSITION_FOLLOWING),
          answerInView: box.top >= viewport.top - 1 && box.bottom <= viewport.bottom + 1,
          answer: [box.top, box.bottom],
          viewport: [viewport.top, viewport.bottom],
        };
      });
      assert.ok(layout.cardBeforeQuestion, `the card stays above the next question: ${JSON.stringify(layout)}`);
      assert.ok(layout.answerInView, `the next answer is in view: ${JSON.stringify(layout)}`);
    });

    test("threads follow the workflow tabs: a new tab starts afresh, the first continues its thread", { timeout: 120_000 }, async () => {
      await openAssistant(page);
      await settle(page);
      const keyA = await activeWorkflowKey(page);
      assert.ok(keyA, "the frontend names its active workflow");
      const boundA = await boundKey(page);
      const [askA, askB] = [`hello from A ${Date.now()}`, `hello from B ${Date.now()}`];
      await harness.provider.reset();
      await harness.provider.script(reply.text("Answer on A."), reply.text("Answer on B."), reply.text("Still on A."));
      await panel(page).getByRole("button", { name: "New thread" }).first().click();
      await send(page, askA);
      await panel(page).getByText("Answer on A.").waitFor({ timeout: 20_000 });
      if (await panel(page).getByRole("button", { name: "Show the threads" }).isVisible()) {
        await panel(page).getByRole("button", { name: "Show the threads" }).click();
      }
      const group = (name) => panel(page).getByRole("group", { name });
      await group("This workflow").getByText(askA).waitFor();

      // Tab B: a new blank workflow (the + of ComfyUI's tab bar runs this command).
      await page.evaluate(() => window.app.extensionManager.command.execute("Comfy.NewBlankWorkflow"));
      await page.waitForFunction((a) => {
        const key = window.app.extensionManager.workflow.activeWorkflow?.key;
        return key && key !== a;
      }, keyA);
      await panel(page).getByText(/Ask about your workflow/).waitFor({ timeout: 10_000 }); // a fresh thread
      assert.equal(await panel(page).getByText("Answer on A.").count(), 0);
      await group("This workflow").getByText(/No threads yet/).waitFor();
      await group("Other threads").getByText(askA).waitFor();
      await screenshot(page, step("workflows"), "1-tab-b-fresh");
      await send(page, askB);
      await panel(page).getByText("Answer on B.").waitFor({ timeout: 20_000 });
      await group("This workflow").getByText(askB).waitFor();

      const listedThreads = async () => (await (await fetch(`${baseUrl}/api/assistant/threads`)).json()).threads;
      const byTitle = (threads, title) => threads.find((t) => t.title === title);
      let threads = await listedThreads();
      assert.equal(byTitle(threads, askA)?.workflow, boundA);
      assert.equal(byTitle(threads, askB)?.workflow, await boundKey(page));
      assert.notEqual(boundA, await boundKey(page));

      // Back to tab A: its thread, continued.
      await showWorkflow(page, keyA);
      await panel(page).getByText("Answer on A.").waitFor({ timeout: 10_000 });
      assert.equal(await panel(page).getByText("Answer on B.").count(), 0);
      await group("This workflow").getByText(askA).waitFor();
      await group("Other threads").getByText(askB).waitFor();
      await screenshot(page, step("workflows"), "2-tab-a-continued");
      await send(page, "more on A");
      await panel(page).getByText("Still on A.").waitFor({ timeout: 20_000 });
      const requests = await harness.provider.requests();
      const sent = JSON.stringify(requests.at(-1).messages);
      assert.ok(sent.includes(askA) && sent.includes("Answer on A."), "the third request continues thread A");
      assert.ok(!sent.includes(askB), "and carries nothing of thread B");
      threads = await listedThreads();
      assert.equal(byTitle(threads, askA)?.messageCount, 4);
    });

    test("two templates that share a workflow id keep threads of their own, also after a reload", { timeout: 150_000 }, async () => {
      const { dalle, kling, id } = SHARED_ID_TEMPLATES;
      await openAssistant(page);
      await settle(page);
      const group = (name) => panel(page).getByRole("group", { name });
      const showThreads = async () => {
        if (await panel(page).getByRole("button", { name: "Show the threads" }).isVisible()) {
          await panel(page).getByRole("button", { name: "Show the threads" }).click();
        }
      };
      const listed = async () => (await (await fetch(`${baseUrl}/api/assistant/threads`)).json()).threads;
      await openTemplate(page, dalle, target);
      const dalleTab = await tabFacts(page);
      // The key is ours, written without an edit: no undo step, the tab not marked modified.
      assert.deepEqual([dalleTab.graphId, dalleTab.undoSteps, dalleTab.modified], [id, 0, false]);
      assert.match(dalleTab.bound, /^unsaved:[0-9a-f-]{36}$/);
      assert.notEqual(dalleTab.bound, `unsaved:${id}`);
      await panel(page).getByText(/Ask about your workflow/).waitFor({ timeout: 10_000 });
      await harness.provider.reset();
      await harness.provider.script(reply.text("Dall-E 2 makes the image."));
      const ask = `what does this template do ${Date.now()}`;
      await send(page, ask);
      await panel(page).getByText("Dall-E 2 makes the image.").waitFor({ timeout: 20_000 });
      await waitUntil(async () => (await listed()).find((t) => t.title === ask)?.workflow === dalleTab.bound, "the thread bound to the DALL·E tab");

      // The Kling template: the same workflow id, another workflow. Its own (empty) thread.
      await openTemplate(page, kling, target);
      const klingTab = await tabFacts(page);
      assert.deepEqual([klingTab.graphId, klingTab.undoSteps, klingTab.modified], [id, 0, false]);
      assert.notEqual(klingTab.bound, dalleTab.bound);
      await panel(page).getByText(/Ask about your workflow/).waitFor({ timeout: 10_000 });
      assert.equal(await panel(page).getByText("Dall-E 2 makes the image.").count(), 0);
      await showThreads();
      await panel(page).getByText(`This workflow · ${kling}`).waitFor();
      await group("This workflow").getByText(/No threads yet/).waitFor();
      await group("Other threads").getByText(ask).waitFor();
      await screenshot(page, step("templates"), "1-kling-its-own");
      assert.equal((await listed()).find((t) => t.title === ask)?.workflow, dalleTab.bound);

      // Back on the DALL·E tab: its thread; and so after a reload (the frontend restores that tab).
      await showWorkflow(page, dalleTab.key);
      await panel(page).getByText("Dall-E 2 makes the image.").waitFor({ timeout: 10_000 });
      await group("This workflow").getByText(ask).waitFor();
      if (!target.comfyui) return; // the playground keeps nothing across a reload
      await page.waitForTimeout(1_000); // the frontend writes its tabs to storage as they change
      await page.reload();
      await waitReady(page, { comfyui: true });
      await openAssistant(page);
      await page.waitForFunction((key) => window.app.extensionManager.workflow.activeWorkflow?.key === key, dalleTab.key);
      assert.equal((await tabFacts(page)).bound, dalleTab.bound, "the restored tab has its key");
      await panel(page).getByText("Dall-E 2 makes the image.").waitFor({ timeout: 20_000 });
      await showThreads();
      await panel(page).getByText(`This workflow · ${dalle}`).waitFor();
      await group("This workflow").getByText(ask).waitFor();
      await screenshot(page, step("templates"), "2-dalle-after-reload");
      // The Kling tab, where the frontend restores it too (1.58 keeps unsaved tabs; 1.27 does not).
      const restored = await page.evaluate((key) => window.app.extensionManager.workflow.openWorkflows.some((w) => w.key === key), klingTab.key);
      assert.equal(restored, target.frontend ? target.frontend !== "1.27.10" : restored);
      if (restored) {
        await showWorkflow(page, klingTab.key);
        assert.equal((await tabFacts(page)).bound, klingTab.bound);
        await panel(page).getByText(/Ask about your workflow/).waitFor({ timeout: 10_000 });
        await group("This workflow").getByText(/No threads yet/).waitFor();
      }
      assert.equal((await listed()).find((t) => t.title === ask)?.workflow, dalleTab.bound);
    });

    test("loadWorkflow opens a new tab: the user's tab is unchanged, the chat goes on there, also after a reload", { timeout: 120_000 }, async () => {
      await openAssistant(page);
      await settle(page);
      // From an unsaved tab with a node of the user's: whether a reload keeps it is the frontend's
      // (1.27.10 restores only the active unsaved tab; 1.58.1 keeps a draft of each), and the
      // note the model gets must say which; the reload below checks that it is true.
      await page.evaluate(() => window.app.extensionManager.command.execute("Comfy.NewBlankWorkflow"));
      await panel(page).getByText(/Ask about your workflow/).waitFor({ timeout: 10_000 });
      await addTrackedNodes(page, ["EmptyImage"]);
      await page.waitForTimeout(1_000); // as a user's pause: a frontend that keeps drafts writes one
      const from = await tabFacts(page);
      const fromNodes = (await graphState(page)).nodes.map((n) => n.type).sort();
      await harness.provider.reset();
      await harness.provider.script(
        reply.toolCalls({ id: "call_load", name: "loadWorkflow", arguments: { workflow: INVERT_WORKFLOW } }),
        reply.text("Loaded it in a new tab."),
      );
      const ask = `load an invert workflow ${Date.now()}`;
      await send(page, ask);
      await panel(page).getByText("Loaded it in a new tab.").waitFor({ timeout: 30_000 });
      const [, second] = await harness.provider.requests();
      const result = JSON.parse(second.messages.find((m) => m.tool_call_id === "call_load").content);
      const opened = await page.evaluate(() => window.app.extensionManager.workflow.activeWorkflow.filename);
      assert.notEqual(await page.evaluate(() => window.app.extensionManager.workflow.activeWorkflow.key), from.key, "a new tab is active");
      assert.deepEqual([result.ok, result.tab, result.nodeCount], [true, opened, 3], JSON.stringify(result));
      const esc = (text) => text.replace(/\.json$/, "").replace(/[()]/g, "\\$&");
      const head = `ComfyUI opened it in a new tab, “${esc(opened)}”, which the user now sees; their tab “${esc(from.key)}” is unchanged`;
      const tail = " This chat moved to the new tab: the graph tools now work on it\\.$";
      const keptNote = new RegExp(`^${head}\\.${tail}`);
      const lostNote = new RegExp(
        `^${head} for now, but it is not saved and this ComfyUI keeps no copy of it for a page reload \\(it restores only the tab that is active then\\): ` +
          `a reload would close it unless the user saves it, or goes back to it, first\\.${tail}`,
      );
      assert.ok(keptNote.test(result.note) || lostNote.test(result.note), result.note);
      const kept = keptNote.test(result.note);
      // The frontends the stand-in serves, as a real ComfyUI showed them (0.3.64 + 1.27.10: the
      // unsaved tab is gone after a reload; 1.58.1 restores it from its draft).
      if (target.frontend) assert.equal(kept, target.frontend !== "1.27.10", result.note);
      assert.deepEqual((await graphState(page)).nodes.map((n) => n.type).sort(), ["EmptyImage", "ImageInvert", "PreviewImage"]);
      const listed = async () => (await (await fetch(`${baseUrl}/api/assistant/threads`)).json()).threads;
      const bound = await boundKey(page);
      await waitUntil(async () => (await listed()).find((t) => t.title === ask)?.workflow === bound, "the chat bound to the new tab");
      if (await panel(page).getByRole("button", { name: "Show the threads" }).isVisible()) {
        await panel(page).getByRole("button", { name: "Show the threads" }).click();
      }
      const group = (name) => panel(page).getByRole("group", { name });
      await group("This workflow").getByText(ask).waitFor();
      await screenshot(page, step("load"), "1-new-tab");
      if (target.comfyui) {
        await page.reload();
        await waitReady(page, { comfyui: true });
        await openAssistant(page);
        await page.waitForFunction((key) => window.app.extensionManager.workflow.activeWorkflow?.key !== key, from.key);
        await panel(page).getByText("Loaded it in a new tab.").waitFor({ timeout: 20_000 });
        if (await panel(page).getByRole("button", { name: "Show the threads" }).isVisible()) {
          await panel(page).getByRole("button", { name: "Show the threads" }).click();
        }
        // What the note said: the user's tab is back (its graph, its key), or it is gone.
        const open = await page.evaluate(() =>
          window.app.extensionManager.workflow.openWorkflows.map((w) => {
            const state = w.activeState ?? w.initialState ?? (w.content ? JSON.parse(w.content) : null);
            return w.isTemporary ? `unsaved:${state?.extra?.comfyui_assistant_thread_key}` : w.key;
          }),
        );
        assert.equal(open.includes(from.bound), kept, `${result.note} — open after the reload: ${open.join(", ")}`);
        if (!kept) return;
      }
      // Back on the user's tab: its graph as it was, and the thread shown is one of its own.
      await showWorkflow(page, from.key);
      assert.equal((await tabFacts(page)).bound, from.bound, "the same tab (its thread key)");
      assert.deepEqual((await graphState(page)).nodes.map((n) => n.type).sort(), fromNodes);
      await group("Other threads").getByText(ask).waitFor({ timeout: 10_000 });
      assert.equal(await panel(page).getByText("Loaded it in a new tab.").count(), 0);
      const active = panel(page).locator(".cua-thread.cua-active .cua-thread-title");
      const own = await group("This workflow").locator(".cua-thread-title").allTextContents();
      if (await active.count()) {
        const shown = await active.first().textContent();
        assert.ok(own.includes(shown), `the shown thread (${shown}) is one of this workflow's (${own.join(", ") || "none"})`);
      } else {
        await panel(page).getByText(/Ask about your workflow/).waitFor(); // a new chat: it has none
        await group("This workflow").getByText(/No threads yet/).waitFor();
      }
      await screenshot(page, step("load"), "2-back-on-the-users-tab");
    });

    // loadTemplate (issue 40): the frontend's own template, fetched and opened as its template
    // browser does, in a new tab named by the template's title, bound to a thread key of ours;
    // the model reads each missing model in one line. (The playground serves no templates.)
    test("loadTemplate opens a template in a new tab named by its title; the chat follows; missing models in one line each", { timeout: 120_000, skip: !target.comfyui && "the playground serves no /templates" }, async () => {
      await openAssistant(page);
      await settle(page);
      await page.evaluate(() => window.app.extensionManager.command.execute("Comfy.NewBlankWorkflow"));
      await panel(page).getByText(/Ask about your workflow/).waitFor({ timeout: 10_000 });
      const from = await tabFacts(page);
      // (0.33.0's templates package has no "default": a real ComfyUI opens one it has)
      const name = target.real ? "flux_dev_checkpoint_example" : "default";
      await harness.provider.reset();
      await harness.provider.script(
        reply.toolCalls({ id: "call_template", name: "loadTemplate", arguments: { name } }),
        reply.text("Opened the template."),
      );
      const ask = `open the ${name} template ${Date.now()}`;
      await send(page, ask);
      await panel(page).getByText("Opened the template.").waitFor({ timeout: 30_000 });
      const [, second] = await harness.provider.requests();
      const result = JSON.parse(second.messages.find((m) => m.tool_call_id === "call_template").content);
      const tab = await tabFacts(page);
      const title = await page.evaluate(() => window.app.extensionManager.workflow.activeWorkflow.filename);
      const indexTitle = await page.evaluate(async (name) => {
        const index = await (await fetch("templates/index.json")).json();
        return index.flatMap((g) => g.templates).find((t) => t.name === name)?.title ?? name;
      }, name);
      if (!target.real) assert.equal(indexTitle, "Image Generation");
      assert.notEqual(tab.key, from.key, "a new tab is active");
      // (a tab's name is a file's: what a path cannot hold becomes a space, "Flux.1 Dev fp8: Text to Image")
      assert.equal(title, indexTitle.replace(/[\\/:*?"<>|]+/g, " ").replace(/\s+/g, " ").trim());
      assert.deepEqual([result.ok, result.template, result.tab], [true, name, title], JSON.stringify(result));
      assert.match(result.note, new RegExp(`^ComfyUI opened it in a new tab, “${title}”, which the user now sees`));
      // its own thread key, not the template's workflow id (templates share theirs)
      assert.match(tab.bound, /^unsaved:[0-9a-f-]{36}$/);
      assert.notEqual(tab.bound, `unsaved:${tab.graphId}`);
      assert.ok(Array.isArray(result.missing), JSON.stringify(result));
      for (const line of result.missing) assert.match(line, /^missing (model \S+ \(models\/|node type )/);
      const checkpoint = result.missing.find((l) => l.startsWith("missing model v1-5-pruned-emaonly-fp16.safetensors"));
      if (!target.real) {
        assert.equal(checkpoint, "missing model v1-5-pruned-emaonly-fp16.safetensors (models/checkpoints, huggingface.co)");
        assert.match(result.next, new RegExp(`^downloadModels \\{"scan": "${result.scan}", "models": \\["v1-5-pruned-emaonly-fp16.safetensors"\\]\\}`));
      }
      const listed = async () => (await (await fetch(`${baseUrl}/api/assistant/threads`)).json()).threads;
      await waitUntil(async () => (await listed()).find((t) => t.title === ask)?.workflow === tab.bound, "the chat bound to the template's tab");
      await screenshot(page, step("template"), "1-template-tab");
      // ComfyUI checks the template's models as its own template browser does, and 1.27.10 shows
      // its missing-models dialog over the page (1.58.1 does not); the user closes it (the answer
      // listed them too).
      const dialog = page.locator(".p-dialog-mask").first();
      const shown = await dialog.waitFor({ timeout: 5_000 }).then(() => true, () => false);
      if (shown) {
        await page.keyboard.press("Escape");
        await dialog.waitFor({ state: "detached", timeout: 10_000 });
      }
      await showWorkflow(page, from.key);
    });

    test("saving an unsaved tab under a name keeps its thread with it", { timeout: 90_000 }, async () => {
      await openAssistant(page);
      await settle(page);
      await page.evaluate(() => window.app.extensionManager.command.execute("Comfy.NewBlankWorkflow"));
      await panel(page).getByText(/Ask about your workflow/).waitFor({ timeout: 10_000 });
      await harness.provider.reset();
      await harness.provider.script(reply.text("Noted for the one to save."));
      const ask = `before saving ${Date.now()}`;
      await send(page, ask);
      await panel(page).getByText("Noted for the one to save.").waitFor({ timeout: 20_000 });
      const unsaved = await boundKey(page);
      assert.match(unsaved, /^unsaved:/);
      // (a real ComfyUI's file has a name of this run, deleted at the end of the suite)
      const name = target.real ? `e2e-saved-by-test-${Date.now()}` : `saved-by-test-${target.slug}`;
      if (target.real) story.removeLater.push(`workflows/${name}.json`);
      if (target.comfyui) {
        // ComfyUI asks for the name in its prompt dialog.
        void page.evaluate(() => window.app.extensionManager.command.execute("Comfy.SaveWorkflow"));
        const box = page.getByRole("dialog").locator("input").first();
        await box.fill(name);
        await box.press("Enter");
      } else {
        await page.evaluate((n) => {
          const store = window.app.extensionManager.workflow;
          return store.renameWorkflow(store.activeWorkflow, `workflows/${n}.json`);
        }, name);
      }
      await page.waitForFunction((key) => window.app.extensionManager.workflow.activeWorkflow?.key === key && !window.app.extensionManager.workflow.activeWorkflow.isTemporary, `${name}.json`);
      const listed = async () => (await (await fetch(`${baseUrl}/api/assistant/threads`)).json()).threads;
      await waitUntil(async () => (await listed()).find((t) => t.title === ask)?.workflow === `${name}.json`, "the thread moved with its workflow");
      assert.equal(await panel(page).getByText("Noted for the one to save.").count(), 1, "the same thread stays in view");
      assert.deepEqual((await listed()).filter((t) => t.workflow === unsaved), [], "nothing is left on the unsaved key");
    });

    test("a long conversation scrolls inside the panel; the composer stays in view", async () => {
      // ComfyUI mounts the tab into a div of automatic height: a panel that grows with its
      // content pushes the composer out of the bottom panel (seen on a real ComfyUI 1.27).
      const layout = await page.evaluate(() => {
        const root = document.querySelector(".cua-root");
        const viewport = root.querySelector(".cua-viewport");
        const filler = document.createElement("div");
        filler.style.height = "2000px";
        viewport.appendChild(filler);
        const frame = root.parentElement.parentElement.getBoundingClientRect();
        const composer = root.querySelector("textarea, [role=textbox]").getBoundingClientRect();
        const out = {
          frameBottom: frame.bottom,
          composerBottom: composer.bottom,
          rootHeight: root.getBoundingClientRect().height,
          windowHeight: window.innerHeight,
        };
        filler.remove();
        return out;
      });
      await screenshot(page, step("layout"), "long-chat");
      assert.ok(layout.composerBottom <= layout.frameBottom + 1, JSON.stringify(layout));
      assert.ok(layout.composerBottom <= layout.windowHeight, JSON.stringify(layout));
    });

    test(
      "a partial run: only the chosen output runs, and the model hears how the file it made looks (all black, and no decode named: none is upstream)",
      { timeout: 90_000, skip: target.comfyui ? false : "needs ComfyUI's queue (the stand-in's or a real one), which saves the files it reports" },
      async () => {
        await openAssistant(page);
        const saveId = await buildInGraph(page, 1200, (add) => {
          const empty = add("EmptyImage", 100, { width: 96, height: 80 });
          const save = add("SaveImage", 420);
          empty.connect(0, save, 0);
          return save.id;
        });
        const ANSWER = "It came out black, as an EmptyImage of colour 0 is.";
        await askToRun(page, harness, "call_run", saveId, "Run just the new SaveImage and tell me how it looks", ANSWER);
        await panel(page).getByText(ANSWER).waitFor({ timeout: 30_000 });
        const text = await toolResultText(harness, "call_run");
        assert.match(text, /"ok":\s*true/, text);
        assert.match(text, /ComfyUI_\d+_\.png \[output\]: PNG 96×80, all black"/, text);
        assert.ok(!text.includes("VAE decode"), `no VAE upstream of it, so no failed decode named: ${text}`);
        // only the chosen output ran: the one file saved is its own
        assert.equal((text.match(/\[output\]:/g) ?? []).length, 1, text);
      },
    );

    // A run that lasts: the stand-in's txt2img chain, its sampler reporting 20 steps of 50 ms; in a
    // real ComfyUI (no checkpoint to sample with) a chain of blurs of a large empty image, each a
    // node that takes a while on the CPU, so the card names the node and a click lands mid-run.
    // Run again: ComfyUI runs nothing of a graph it ran before unchanged (its cache, which the
    // stand-in has too): a real ComfyUI gets a new chain (another blur sigma), the stand-in's
    // sampler a new seed.
    const slow = target.real
      ? { add: addSlowChain, again: addSlowChain, running: /Running: node \d+/, made: SLOW_MADE, stoppedAt: /Execution was interrupted at (ImageBlur|SaveImage)#\d+/ }
      : { add: addSamplerChain, again: lastSamplerChain, running: /Running: node \d+ · step \d+\/20/, made: "PNG 512×512, all black", stoppedAt: /Execution was interrupted at KSampler#\d+/ };
    /** Open the panel, build what `make` builds (the output node to run), and have the model run
     * it (call `id`, asked `question`) and then say `answer`; resolves once `running` is shown. */
    const startRun = async (make, id, question, answer, running = slow.running) => {
      await openAssistant(page);
      await askToRun(page, harness, id, await make(page), question, answer);
      await panel(page).getByText(running).waitFor({ timeout: 20_000 });
    };

    test(
      "a run's card says where it is while it runs: the running node (and a sampler's step)",
      { timeout: 90_000, skip: target.comfyui ? false : "needs ComfyUI's queue (the stand-in's or a real one); the playground's is simulated at once" },
      async () => {
        const ANSWER = "Done: it is black.";
        await startRun(slow.add, "call_sample", "Run the new chain", ANSWER);
        await screenshot(page, step("run"), "progress");
        await panel(page).getByText(ANSWER).waitFor({ timeout: 60_000 });
        assert.equal(await panel(page).getByText(/Running: node/).count(), 0, "the progress goes with the run");
        const text = await toolResultText(harness, "call_sample");
        assert.ok(text.includes(slow.made), text);
      },
    );

    test(
      "the run's card interrupts the run: ComfyUI stops it, and the model hears it was interrupted",
      { timeout: 90_000, skip: target.comfyui ? false : "needs ComfyUI's queue (the stand-in's or a real one); the playground's is simulated at once" },
      async () => {
        const ANSWER = "Stopped, as you asked.";
        await startRun(slow.again, "call_stop", "Run it again", ANSWER);
        // the button says at once that it was heard (ComfyUI stops only between two steps or nodes)
        await page.evaluate(() => {
          window.__heard = [];
          const seen = () => {
            for (const b of document.querySelectorAll(".cua-tool-actions button")) if (b.textContent === "Interrupting…") window.__heard.push(b.disabled);
          };
          new MutationObserver(seen).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
        });
        // (a click in the page: the card is drawn again at each step, faster than a pointer's click settles)
        await page.evaluate(() => [...document.querySelectorAll(".cua-tool-actions button")].find((b) => b.textContent === "Interrupt the run").click());
        await panel(page).getByText(ANSWER).waitFor({ timeout: 60_000 });
        const heard = await page.evaluate(() => window.__heard);
        assert.ok(heard.length > 0 && heard.every((disabled) => disabled), `"Interrupting…", disabled, until the run ended: ${JSON.stringify(heard)}`);
        assert.equal(await panel(page).getByRole("button", { name: /Interrupt/ }).count(), 0, "gone with the run");
        const text = await toolResultText(harness, "call_stop");
        assert.match(text, slow.stoppedAt, text);
      },
    );

    test(
      "a run outlasting the wait: 'Stop waiting', then the next message carries how it ended, once",
      { timeout: 90_000, skip: target.comfyui ? false : "needs ComfyUI's queue and history (the stand-in's or a real one)" },
      async () => {
        const GOES_ON = "It goes on in ComfyUI; I'll tell you how it ended.";
        const fifty = (page) => slow.again(page, 50); // the stand-in's sampler: 50 steps, 2.5 s
        await startRun(fifty, "call_later", "Run it with 50 steps", GOES_ON, target.real ? slow.running : /Running: node \d+ · step \d+\/50/);
        await panel(page).getByRole("button", { name: "Stop waiting" }).click();
        await panel(page).getByText(GOES_ON).waitFor({ timeout: 30_000 });
        const result = JSON.parse(await toolResultText(harness, "call_later"));
        assert.equal(result.running, true, JSON.stringify(result));
        const history = async () => (await (await fetch(`${baseUrl}/api/history/${result.promptId}`)).json())[result.promptId];
        await waitUntil(async () => (await history())?.status?.completed === true, "the run to finish in ComfyUI", 60_000);

        await harness.provider.script(reply.text("It finished, and it is black."), reply.text("You're welcome."));
        await send(page, "Is it done?");
        await panel(page).getByText("It finished, and it is black.").waitFor({ timeout: 30_000 });
        const NOTE = `[Run ${result.promptId} finished after you stopped waiting: success in `;
        await panel(page).getByRole("note").filter({ hasText: NOTE }).waitFor();
        await screenshot(page, step("run"), "ended-later");
        await send(page, "Thanks");
        await panel(page).getByText("You're welcome.").waitFor({ timeout: 30_000 });
        const requests = await harness.provider.requests();
        assert.equal(requests.length, 4, "the run, its tool result, then one request per message");
        const times = (request) => JSON.stringify(request.messages).split(NOTE).length - 1;
        const asked = lastUserText(requests[2]);
        assert.ok(asked.startsWith("Is it done?"), asked);
        // (a real ComfyUI caches what an earlier run made: "N nodes cached", and only this run's output)
        assert.match(asked, /finished after you stopped waiting: success in [\d.]+ s; (\d+ nodes cached; )?outputs: \d+: 1 image; looked: ComfyUI_\d+_\.png \[output\]: /);
        assert.ok(asked.includes(`[output]: ${slow.made}`), asked);
        assert.equal(times(requests[2]), 1, "the note comes with the next message");
        assert.ok(lastUserText(requests[3]).startsWith("Thanks"), lastUserText(requests[3]));
        assert.ok(!lastUserText(requests[3]).includes("stopped waiting"), "a later message does not repeat it");
        assert.equal(times(requests[3]), 1, "it stays in the thread once, with the message it came with");
      },
    );

    test(
      "a run's result card shows what it made: thumbnails that load, each with what the server saw",
      { timeout: 90_000, skip: target.comfyui ? false : "needs ComfyUI's queue and /view (the stand-in's or a real one)" },
      async () => {
        await openAssistant(page);
        const outputIds = await buildInGraph(page, 2000, (add) => {
          const empty = add("EmptyImage", 100, { width: 160, height: 120 });
          const save = add("SaveImage", 420);
          const preview = add("PreviewImage", 420);
          empty.connect(0, save, 0);
          empty.connect(0, preview, 0);
          return [save.id, preview.id];
        });
        const ANSWER = "Both came out black.";
        await askToRun(page, harness, "call_look", outputIds, "Run the new image and show me", ANSWER);
        await panel(page).getByText(ANSWER).waitFor({ timeout: 30_000 });
        const { looked } = JSON.parse(await toolResultText(harness, "call_look"));
        assert.equal(looked.length, 2, JSON.stringify(looked));
        const grid = panel(page).getByRole("group", { name: "What the run made: 2 files" }).last();
        await grid.waitFor();
        const images = grid.locator("img");
        await page.waitForFunction((el) => [...el.querySelectorAll("img")].every((img) => img.complete && img.naturalWidth > 0), await grid.elementHandle(), { timeout: 10_000 });
        const shown = await images.evaluateAll((imgs) =>
          imgs.map((img) => ({ width: img.naturalWidth, height: img.naturalHeight, title: img.closest("a").title, href: img.closest("a").getAttribute("href"), finding: img.closest("a").dataset.finding })),
        );
        assert.deepEqual(shown.map((s) => [s.width, s.height, s.finding]), [[160, 120, "black"], [160, 120, "black"]]);
        assert.deepEqual(shown.map((s) => s.title), looked, "each thumbnail carries the server's line about its file");
        assert.match(shown[0].href, /\/api\/view\?filename=ComfyUI_\d+_\.png&subfolder=&type=output$/);
        // (a real PreviewImage names its file ComfyUI_temp_<5 letters>_00001_.png)
        assert.match(shown[1].href, /\/api\/view\?filename=ComfyUI_(temp_[a-z]+_)?\d+_\.png&subfolder=&type=temp$/);
        // the model, which may see, got one picture of both: a contact sheet after the result,
        // sized as the server counts it for this model and window
        const { requests } = await harness.provider.state();
        const messages = requests[1].messages;
        const at = messages.findIndex((m) => m.role === "tool" && m.tool_call_id === "call_look");
        const [label, image] = messages[at + 1].content;
        assert.match(label.text, /^\[What run \S+ made, as you see it: a 2×1 contact sheet of 2 images, numbered in order, at 322×120\. Files: /);
        const sent = jpegSize(Buffer.from(image.image_url.url.split(",")[1], "base64"));
        assert.deepEqual(sent, counted("scripted-model", 32768, 322, 120), "the picture is the size the server counted");
        await screenshot(page, step("run"), "result");
      },
    );

    // The approval card, and the model's calls and answers around it.
    const card = () => panel(page).getByRole("group", { name: "The assistant asks before it acts" });
    const removal = (id, nodeId) => reply.toolCalls({ id, name: "removeNodes", arguments: { nodeIds: [nodeId] } });
    const nodeExists = (id) => page.evaluate((id) => !!(window.app.rootGraph ?? window.app.graph).getNodeById(id), id);
    const answered = async (count) => {
      await harness.provider.waitFor((s) => s.requests.length >= count, `request ${count}`, 20_000);
      await sendButton(page).waitFor({ timeout: 20_000 }); // (the answer has ended)
    };

    test(
      "a removal and a paid run wait for the user: Deny leaves the graph alone and the model hears it, Allow goes ahead",
      { timeout: 90_000, skip: target.comfyui ? false : "needs ComfyUI's queue and its paid API nodes (the stand-in's or a real one)" },
      async () => {
        await openAssistant(page);
        const [emptyId, paidId, saveId] = await addTrackedNodes(page, ["EmptyImage", "OpenAIDalle3", "SaveImage"]);
        await page.evaluate(([paid, save]) => {
          const graph = window.app.rootGraph ?? window.app.graph;
          graph.getNodeById(paid).connect(0, graph.getNodeById(save), 0);
        }, [paidId, saveId]);
        const ask = async (call, question) => {
          await harness.provider.reset();
          await harness.provider.script(call, reply.text("Understood."));
          await send(page, question);
          await card().waitFor({ timeout: 20_000 });
        };
        const toolResult = async (id) => {
          const { requests } = await harness.provider.state();
          assert.equal(requests.length, 2, "the answer went on once the user answered");
          return requests[1].messages.find((m) => m.role === "tool" && m.tool_call_id === id)?.content;
        };

        // a removal, denied: the node stays and the model is told
        await ask(removal("call_rm1", emptyId), "remove the empty image");
        assert.match(await card().textContent(), new RegExp(`Remove a node from the workflow.*EmptyImage#${emptyId}`));
        await screenshot(page, step("approvals"), "removal-asked");
        await card().getByRole("button", { name: "Deny" }).click();
        await answered(2);
        assert.equal(await toolResult("call_rm1"), "The user denied this tool call; it did not run.");
        assert.equal(await nodeExists(emptyId), true, "the denied removal changed nothing");

        // ... and allowed: the node goes
        await ask(removal("call_rm2", emptyId), "remove it after all");
        await card().getByRole("button", { name: "Allow" }).click();
        await answered(2);
        assert.match(await toolResult("call_rm2"), /"ok":\s*true/);
        assert.equal(await nodeExists(emptyId), false);

        // a run with a paid API node asks whatever the thread allows, and Deny queues nothing
        await ask(reply.toolCalls({ id: "call_paid", name: "queueWorkflow", arguments: { outputNodeIds: [saveId] } }), "run the DALL-E node");
        assert.match(await card().textContent(), new RegExp(`paid API node.*OpenAIDalle3#${paidId}.*ComfyUI credits`));
        await screenshot(page, step("approvals"), "paid-run-asked");
        await card().getByRole("button", { name: "Deny" }).click();
        await answered(2);
        assert.equal(await toolResult("call_paid"), "The user denied this tool call; it did not run.");
      },
    );

    test("the user's own edits: a widget changed and a link made by hand come with the next message, once", { timeout: 90_000 }, async () => {
      await openAssistant(page);
      await settle(page);
      const [latentId, decodeId] = await buildInGraph(page, 2400, (add) => [add("EmptyLatentImage", 100).id, add("VAEDecode", 420).id]);
      await harness.provider.reset();
      await harness.provider.script(reply.text("Ready for your edits."), reply.text("I'll keep your changes."), reply.text("Glad the edits help."));
      await send(page, "hello");
      await panel(page).getByText("Ready for your edits.").waitFor({ timeout: 30_000 });
      await sendButton(page).waitFor(); // the answer has ended: the graph as it left it is kept
      // by hand, as the canvas does it: a widget's new value (and its callback), a link dragged
      await page.evaluate(
        ([latentId, decodeId]) => {
          const graph = window.app.rootGraph ?? window.app.graph;
          const latent = graph.getNodeById(latentId);
          const width = latent.widgets.find((w) => w.name === "width");
          width.value = 768;
          width.callback?.(768, window.app.canvas, latent);
          latent.connect(0, graph.getNodeById(decodeId), 0);
          const tracker = window.app.extensionManager.workflow.activeWorkflow.changeTracker;
          (tracker.captureCanvasState ?? tracker.checkState).call(tracker);
        },
        [latentId, decodeId],
      );
      const ASKED = "I made it wider and wired the latent";
      await send(page, ASKED);
      await panel(page).getByText("I'll keep your changes.").waitFor({ timeout: 30_000 });
      const NOTE =
        "[Since your last answer the user changed the workflow by hand (keep these changes unless asked): " +
        `link ${latentId}.LATENT → ${decodeId}.samples; ${latentId} EmptyLatentImage: width 512 → 768]`;
      const name = "What you changed in the workflow by hand (added by the panel)";
      await panel(page).getByRole("note", { name }).filter({ hasText: NOTE }).waitFor();
      await screenshot(page, step("edits"), "noted");
      await send(page, "thanks");
      await panel(page).getByText("Glad the edits help.").waitFor({ timeout: 30_000 });

      const requests = await harness.provider.requests();
      assert.equal(requests.length, 3, "one request per message");
      const times = (request) => JSON.stringify(request.messages).split(NOTE).length - 1;
      const told = lastUserText(requests[1]);
      assert.ok(told.startsWith(`${ASKED}\n\n${NOTE}`), told);
      assert.equal(times(requests[1]), 1, "the note comes with the next message, both changes in it");
      assert.ok(lastUserText(requests[2]).startsWith("thanks"), lastUserText(requests[2]));
      assert.ok(!lastUserText(requests[2]).includes("changed the workflow by hand"), "a later message does not repeat it");
      assert.equal(times(requests[2]), 1, "it stays in the thread once, with the message it came with");
    });

    test("ComfyUI's language: the panel follows Comfy.Locale to zh and to ar without a reload; ar is right to left, nothing overlapping", { timeout: 60_000 }, async () => {
      await openAssistant(page);
      await panel(page).getByRole("button", { name: "New thread" }).first().click(); // the welcome screen
      await page.evaluate(() => (window.__cuaSamePage = true)); // gone if the page reloads
      // The frontend's own settings API: the same call its settings dialog makes.
      const setLocale = (value) => page.evaluate((v) => window.app.extensionManager.setting.set("Comfy.Locale", v), value);
      const root = panel(page);
      // ComfyUI re-translates its node definitions a moment after a language change and the
      // canvas shows them at its next redraw: let it, so a screenshot shows one language
      // The gallery's pictures: the panel and ComfyUI's tab strip above it. (ComfyUI's canvas
      // keeps the node titles of the language it loaded them in until a reload.)
      const panelShot = async (name) => {
        const clip = await page.evaluate(() => {
          const top = Math.max(0, document.querySelector(".cua-root").getBoundingClientRect().top - 52);
          return { x: 0, y: top, width: window.innerWidth, height: window.innerHeight - top };
        });
        await screenshot(page, step("locale"), name, clip);
      };
      // the composer by its class: its accessible name is translated too
      const talk = async (question, id, answer) => {
        await harness.provider.reset();
        await harness.provider.script(reply.toolCalls({ id, name: "getWorkflow", arguments: { detail: "summary" } }), reply.text(answer));
        const box = root.locator(".cua-input");
        await box.click();
        await box.fill(question);
        await box.press("Enter");
        await root.getByText(answer).waitFor({ timeout: 20_000 });
      };
      try {
        await setLocale("zh");
        await root.getByPlaceholder("询问关于工作流的问题 — 输入 / 查看命令").waitFor({ timeout: 15_000 });
        await root.getByText("关于工作流的问题都可以问我：搭建、修复、讲解、运行。").waitFor();
        await root.getByRole("button", { name: "新建对话" }).first().waitFor(); // (the thread list may show a second)
        assert.deepEqual([await root.getAttribute("lang"), await root.getAttribute("dir")], ["zh", "ltr"]);
        // ComfyUI titles its bottom-panel tab itself: t(titleKey), from our locales/ (GET /i18n)
        if (target.comfyui) await page.getByRole("tab", { name: "助手", exact: true }).waitFor({ timeout: 5_000 });
        // A conversation in Chinese: the user's question, a tool card, the reply (scripted here;
        // every prompt profile tells a real model to answer in the user's language).
        await talk("这个工作流是做什么的？", "call_zh", "这个工作流根据提示词生成图片：加载模型，编码正向和负向提示词，用 K采样器采样，解码后保存。");
        await root.getByText("getWorkflow").first().waitFor();
        await panelShot("1-zh");

        await setLocale("ar");
        await root.getByPlaceholder("اسأل عن سير العمل — اكتب / للأوامر").waitFor({ timeout: 15_000 });
        await root.getByRole("button", { name: "محادثة جديدة" }).first().click(); // back to the welcome screen
        await root.locator(".cua-welcome").waitFor();
        await root.getByRole("button", { name: "إرسال" }).first().waitFor();
        assert.deepEqual([await root.getAttribute("lang"), await root.getAttribute("dir")], ["ar", "rtl"]);
        if (target.comfyui) await page.getByRole("tab", { name: "المساعد", exact: true }).waitFor({ timeout: 5_000 });
        const layout = await page.evaluate(() => {
          const boxes = (selector) =>
            [...document.querySelectorAll(selector)].map((el) => el.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0);
          const overlapping = (rects) =>
            rects.flatMap((a, i) => rects.slice(i + 1).filter((b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1)).length;
          const input = document.querySelector(".cua-root .cua-input").getBoundingClientRect();
          const send = document.querySelector(".cua-root .cua-send").getBoundingClientRect();
          return {
            header: overlapping(boxes(".cua-root .cua-header > *")),
            composer: overlapping(boxes(".cua-root .cua-composer > *")),
            sendLeftOfInput: send.right <= input.left + 1,
            // a command reads "/skill" in Arabic text too, not "skill/"
            slashFirst: (() => {
              const code = [...document.querySelectorAll(".cua-root .cua-welcome code")].find((c) => c.textContent === "/skill");
              const at = (i) => {
                const range = document.createRange();
                range.setStart(code.firstChild, i);
                range.setEnd(code.firstChild, i + 1);
                return range.getBoundingClientRect().left;
              };
              return at(0) < at(1);
            })(),
          };
        });
        assert.deepEqual(layout, { header: 0, composer: 0, sendLeftOfInput: true, slashFirst: true }, "the RTL header and composer mirror without overlapping");
        await talk("ماذا يفعل سير العمل هذا؟", "call_ar", "يُنشئ سير العمل هذا صورة من النص الموجِّه: يحمّل النموذج، ويرمّز النص الإيجابي والسلبي، ويأخذ العينات بـ KSampler، ثم يفك الترميز ويحفظ الصورة.");
        const bubbles = await page.evaluate(() => {
          const box = (selector) => [...document.querySelectorAll(selector)].at(-1)?.getBoundingClientRect();
          const chat = document.querySelector(".cua-root .cua-main").getBoundingClientRect();
          const user = box(".cua-root .cua-msg-user");
          // the user's messages sit on the end side, mirrored: the left in RTL, inside the chat
          return { userOnLeft: Boolean(user) && user.left - chat.left < chat.right - user.right, inside: Boolean(user) && user.left >= chat.left - 1 && user.right <= chat.right + 1 };
        });
        assert.deepEqual(bubbles, { userOnLeft: true, inside: true });
        await panelShot("2-ar");
        // The thread list opens on the right (the start side), beside the chat, not over it.
        const show = root.getByRole("button", { name: "إظهار المحادثات" });
        const wasClosed = (await show.count()) > 0;
        if (wasClosed) await show.click();
        await root.locator(".cua-threads").getByText("+ محادثة جديدة").waitFor();
        const sides = await page.evaluate(() => {
          const list = document.querySelector(".cua-root .cua-threads").getBoundingClientRect();
          const main = document.querySelector(".cua-root .cua-main").getBoundingClientRect();
          return { listRightOfChat: list.left >= main.right - 1 };
        });
        assert.deepEqual(sides, { listRightOfChat: true });
        await screenshot(page, step("locale"), "3-ar-threads");
        if (wasClosed) await root.getByRole("button", { name: "إخفاء المحادثات" }).click();
        assert.equal(await page.evaluate(() => window.__cuaSamePage), true, "no reload");
      } finally {
        await setLocale("en");
        await composer(page).waitFor({ timeout: 15_000 });
      }
    });

    test("right to left (ar): a Latin thread title and an English answer run in their own direction; the title is cut at its end", { timeout: 60_000 }, async () => {
      await openAssistant(page);
      const setLocale = (value) => page.evaluate((v) => window.app.extensionManager.setting.set("Comfy.Locale", v), value);
      const root = panel(page);
      const question = `Explain every node of this workflow and how each link feeds the next, step by step ${Date.now()}`;
      const answer = "This workflow makes an image from a prompt.";
      try {
        await setLocale("ar");
        await root.getByPlaceholder("اسأل عن سير العمل — اكتب / للأوامر").waitFor({ timeout: 15_000 });
        await root.getByRole("button", { name: "محادثة جديدة" }).first().click();
        await harness.provider.reset();
        await harness.provider.script(reply.text(answer));
        const box = root.locator(".cua-input");
        await box.click();
        await box.fill(question);
        await box.press("Enter");
        await root.getByText(answer).waitFor({ timeout: 20_000 });
        const show = root.getByRole("button", { name: "إظهار المحادثات" });
        const wasClosed = (await show.count()) > 0;
        if (wasClosed) await show.click();
        const title = root.locator(".cua-threads .cua-thread-title", { hasText: question.slice(0, 20) }).first();
        await title.waitFor({ timeout: 15_000 });
        const seen = await title.evaluate((el, start) => {
          const text = el.firstChild;
          const range = document.createRange();
          range.setStart(text, 0);
          range.setEnd(text, start.length);
          const first = range.getBoundingClientRect();
          const own = el.getBoundingClientRect();
          const md = [...document.querySelectorAll(".cua-root .cua-msg-assistant .cua-md")].at(-1);
          const user = [...document.querySelectorAll(".cua-root .cua-user-text")].at(-1);
          return {
            dir: el.getAttribute("dir"),
            direction: getComputedStyle(el).direction,
            cut: el.scrollWidth > el.clientWidth, // (long enough to be cut)
            startVisible: first.left >= own.left - 1 && first.right <= own.right + 1,
            messages: [md?.getAttribute("dir"), md && getComputedStyle(md).direction, user?.getAttribute("dir"), user && getComputedStyle(user).direction],
          };
        }, "Explain");
        assert.deepEqual(seen, { dir: "auto", direction: "ltr", cut: true, startVisible: true, messages: ["auto", "ltr", "auto", "ltr"] });
        await screenshot(page, step("locale"), "4-ar-latin-title");
        if (wasClosed) await root.getByRole("button", { name: "إخفاء المحادثات" }).click();
      } finally {
        await setLocale("en");
        await composer(page).waitFor({ timeout: 15_000 });
      }
    });

    // (last: these remove a node of the graph the user has, and reload the page)

    test("a denied removal stays denied: the next message's request is the one before plus new messages, byte for byte", { timeout: 90_000 }, async () => {
      await openAssistant(page);
      await settle(page);
      const [emptyId] = await addTrackedNodes(page, ["EmptyImage"]);
      await harness.provider.reset();
      await harness.provider.script(removal("call_deny_words", emptyId), reply.text("Understood, I left it."), reply.text("Hello!"));
      await send(page, "remove the new empty image");
      await card().waitFor({ timeout: 20_000 });
      await card().getByRole("textbox", { name: "Why not? (optional, sent with Deny)" }).fill("I still need it for the mask");
      await screenshot(page, step("denied"), "1-why-not");
      await card().getByRole("button", { name: "Deny" }).click();
      await answered(2);
      await panel(page).getByText("Understood, I left it.").waitFor();
      await send(page, "hi");
      await panel(page).getByText("Hello!").waitFor({ timeout: 20_000 });
      const [first, second, third] = (await harness.provider.requests()).map((r) => r.messages);
      assert.equal(JSON.stringify(second.slice(0, first.length)), JSON.stringify(first));
      assert.equal(JSON.stringify(third.slice(0, second.length)), JSON.stringify(second), "the request after 'hi' begins with the one before, byte for byte");
      assert.deepEqual(third.slice(second.length).map((m) => m.role), ["assistant", "user"]);
      const result = (messages) => messages.find((m) => m.role === "tool" && m.tool_call_id === "call_deny_words")?.content;
      const DENIED = 'The user denied this tool call; it did not run. The user said: "I still need it for the mask"';
      assert.equal(result(second), DENIED);
      assert.equal(result(third), DENIED);
      assert.equal(await nodeExists(emptyId), true, "the denied removal changed nothing");
      // the stored thread holds the decision as it was made
      const thread = await page.evaluate(() => localStorage.getItem("comfyui-assistant.thread"));
      const stored = await (await fetch(`${baseUrl}/api/assistant/threads/${encodeURIComponent(thread)}`)).json();
      const part = stored.messages.flatMap((m) => m.parts).find((p) => p.toolCallId === "call_deny_words");
      assert.deepEqual([part.state, part.approval.approved, part.approval.reason], ["output-denied", false, "I still need it for the mask"]);
      await panel(page).locator('.cua-tool[data-state="denied"]').last().waitFor();
      await screenshot(page, step("denied"), "2-still-denied");
    });

    test("a reload while a card waits brings the card back: Deny, then Allow, each works and the model gets the right result", { timeout: 120_000 }, async () => {
      // A node that is there after a reload: the frontends keep the graph, the playground loads its default one.
      const reloadPanel = async () => {
        await page.reload();
        await waitReady(page, { comfyui: target.comfyui });
        await openAssistant(page);
      };
      await reloadPanel();
      const node = await page.evaluate(() => {
        const last = (window.app.rootGraph ?? window.app.graph).nodes.at(-1);
        return { id: last.id, type: last.type };
      });
      const askAndReload = async (id, answer) => {
        await harness.provider.reset();
        await harness.provider.script(removal(id, node.id), reply.text(answer));
        await send(page, `remove node ${node.id}`);
        await card().waitFor({ timeout: 20_000 });
        await reloadPanel();
        await card().waitFor({ timeout: 20_000 });
        assert.match(await card().textContent(), new RegExp(`Remove a node from the workflow.*${node.type}#${node.id}`));
        assert.equal((await harness.provider.requests()).length, 1, "nothing sent while the card waits");
        await panel(page).getByRole("status").getByText("Waiting for your answer above…").waitFor();
      };
      const result = async (id) => {
        const [, second] = (await harness.provider.requests()).map((r) => r.messages);
        return second.find((m) => m.role === "tool" && m.tool_call_id === id)?.content;
      };

      await askAndReload("call_reload_deny", "Kept it.");
      await screenshot(page, step("reload-card"), "1-card-back");
      await card().getByRole("button", { name: "Deny" }).click();
      await answered(2);
      await panel(page).getByText("Kept it.").waitFor();
      assert.equal(await result("call_reload_deny"), "The user denied this tool call; it did not run.");
      assert.equal(await nodeExists(node.id), true);

      await askAndReload("call_reload_allow", "Removed it.");
      await card().getByRole("button", { name: "Allow" }).click();
      await answered(2);
      await panel(page).getByText("Removed it.").waitFor();
      const allowed = JSON.parse(await result("call_reload_allow"));
      assert.equal(allowed.ok, true, JSON.stringify(allowed));
      assert.equal(await nodeExists(node.id), false, "the allowed removal ran after the reload");
      assert.equal(await card().count(), 0);
      await screenshot(page, step("reload-card"), "2-allowed");
    });
  });
}

/** The stand-in's txt2img chain (its KSampler reports 20 steps of 50 ms); the SaveImage's id. */
function addSamplerChain(page) {
  return buildInGraph(page, 1600, (add) => {
    const ckpt = add("CheckpointLoaderSimple", 100);
    const name = ckpt.widgets.find((w) => w.name === "ckpt_name");
    name.value = name.options?.values?.[0] ?? "any.safetensors"; // (the stand-in lists none)
    const positive = add("CLIPTextEncode", 400);
    const negative = add("CLIPTextEncode", 400);
    const latent = add("EmptyLatentImage", 400);
    const sampler = add("KSampler", 700);
    const decode = add("VAEDecode", 1000);
    const save = add("SaveImage", 1300);
    ckpt.connect(0, sampler, 0);
    ckpt.connect(1, positive, 0);
    ckpt.connect(1, negative, 0);
    positive.connect(0, sampler, 1);
    negative.connect(0, sampler, 2);
    latent.connect(0, sampler, 3);
    sampler.connect(0, decode, 0);
    ckpt.connect(2, decode, 1);
    decode.connect(0, save, 0);
    return save.id;
  });
}

/** The SaveImage of the last sampler chain, its sampler given a new seed (and `steps` if given):
 * unchanged, ComfyUI (and the stand-in) would not run it again. */
function lastSamplerChain(page, steps = null) {
  return page.evaluate((steps) => {
    const graph = window.app.rootGraph ?? window.app.graph;
    const samplers = graph.nodes.filter((n) => n.type === "KSampler");
    const widget = (name) => samplers[samplers.length - 1].widgets.find((w) => w.name === name);
    widget("seed").value += 1;
    if (steps) widget("steps").value = steps;
    const saves = graph.nodes.filter((n) => n.type === "SaveImage");
    return saves[saves.length - 1].id;
  }, steps);
}

/** A real ComfyUI's slow run without a model: an empty SLOW_SIZE image blurred SLOW_BLURS times
 * at the widest radius (each blur a node of its own, a sigma of this run: nothing cached), then
 * saved; the SaveImage's id. */
function addSlowChain(page) {
  return buildInGraph(
    page,
    1600,
    (add, [[width, height], blurs, sigma]) => {
      let last = add("EmptyImage", 100, { width, height });
      for (let i = 0; i < blurs; i++) {
        const blur = add("ImageBlur", 400 + 300 * i, { blur_radius: 31, sigma });
        last.connect(0, blur, 0);
        last = blur;
      }
      const save = add("SaveImage", 400 + 300 * blurs);
      last.connect(0, save, 0);
      return save.id;
    },
    [SLOW_SIZE, SLOW_BLURS, 1 + ((Date.now() / 100) % 90) / 10],
  );
}

/** Run `build(add, arg)` in the page and return what it returns: `add(type, x, widgets)` puts a
 * new node of `type` at (x, `y`) in the graph, with those widget values, and returns it. */
function buildInGraph(page, y, build, arg = null) {
  return page.evaluate(`(() => {
    const graph = window.app.rootGraph ?? window.app.graph;
    const add = (type, x, widgets = {}) => {
      const node = window.LiteGraph.createNode(type);
      node.pos = [x, ${y}];
      graph.add(node);
      for (const [name, value] of Object.entries(widgets)) node.widgets.find((w) => w.name === name).value = value;
      return node;
    };
    return (${build})(add, ${JSON.stringify(arg)});
  })()`);
}

/** The model asks for a run of what output node `saveId` (or nodes) needs (call `id`), then answers `answer`. */
async function askToRun(page, harness, id, saveId, question, answer) {
  await harness.provider.reset();
  await harness.provider.script(
    reply.toolCalls({ id, name: "queueWorkflow", arguments: { outputNodeIds: [saveId].flat() } }),
    reply.text(answer),
  );
  await send(page, question);
}

/** The width and height in a JPEG's frame header. */
function jpegSize(data) {
  for (let i = 2; i + 9 < data.length; ) {
    const marker = data[i + 1];
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) return [data.readUInt16BE(i + 7), data.readUInt16BE(i + 5)];
    i += 2 + data.readUInt16BE(i + 2);
  }
  return null;
}

/** The size the server fits a `width`×`height` picture to for `model` in a `window`-token window
 * (core/tokens/image_costs.py, asked of the project's Python). */
function counted(model, window, width, height) {
  const code =
    "import json,sys; from comfyui_assistant.core.tokens.image_costs import fit, image_budget, image_cost_for as c; " +
    "m, n, w, h = sys.argv[1], *map(int, sys.argv[2:]); print(json.dumps(fit(c(m), w, h, image_budget(n))[:2]))";
  return JSON.parse(execFileSync(python(), ["-c", code, model, String(window), String(width), String(height)]).toString());
}

/** What the tool call `id` returned, as the provider received it in the second request. */
async function toolResultText(harness, id) {
  const { requests } = await harness.provider.state();
  const result = requests[1].messages.find((m) => m.role === "tool" && m.tool_call_id === id);
  return typeof result?.content === "string" ? result.content : JSON.stringify(result?.content);
}

/** The key of the workflow tab the user is on (ComfyUI's workflow store, or the playground's). */
async function activeWorkflowKey(page) {
  return page.evaluate(() => window.app.extensionManager.workflow.activeWorkflow?.key ?? null);
}

/** What a thread started on the active tab is bound to (ui/src/host/comfy.ts workflowKey): a saved
 * workflow's path, an unsaved one's thread key (ui/src/host/threadKeys.ts) — never the tab's name,
 * which ComfyUI gives again, nor its graph id, which templates share. */
async function boundKey(page) {
  return page.evaluate(() => {
    const workflow = window.app.extensionManager.workflow.activeWorkflow;
    const key = (workflow.activeState ?? workflow.initialState)?.extra?.comfyui_assistant_thread_key;
    return workflow.isTemporary ? `unsaved:${key}` : workflow.key;
  });
}

/** The active tab: its key, the key its threads are bound to, its graph id, its undo steps and
 * whether the frontend marks it modified. */
async function tabFacts(page) {
  const bound = await boundKey(page);
  return page.evaluate((bound) => {
    const workflow = window.app.extensionManager.workflow.activeWorkflow;
    const state = workflow.activeState ?? workflow.initialState;
    return { key: workflow.key, bound, graphId: state.id, undoSteps: workflow.changeTracker.undoQueue.length, modified: Boolean(workflow.isModified) };
  }, bound);
}

/** Poll `check` (async) until it is true, or fail after 10 s saying `what`. */
async function waitUntil(check, what, timeout = 10_000) {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((done) => setTimeout(done, 200));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** Go to the workflow tab `key` with the frontend's own next/previous tab commands. */
async function showWorkflow(page, key) {
  for (let i = 0; i < 10 && (await activeWorkflowKey(page)) !== key; i++) {
    await page.evaluate(() => window.app.extensionManager.command.execute("Workspace.PreviousOpenedWorkflow"));
  }
  assert.equal(await activeWorkflowKey(page), key, "the tab is shown");
}

/** Add nodes by script, each its own undo step (as a user's edits on the canvas are); their ids. */
async function addTrackedNodes(page, types) {
  return page.evaluate((types) => {
    const graph = window.app.rootGraph ?? window.app.graph;
    const tracker = window.app.extensionManager.workflow.activeWorkflow.changeTracker;
    return types.map((type, i) => {
      const node = window.LiteGraph.createNode(type);
      node.pos = [100 + 250 * i, 700];
      graph.add(node);
      (tracker.captureCanvasState ?? tracker.checkState).call(tracker);
      return node.id;
    });
  }, types);
}

/** Make sure a checkpoint loader is in the graph (a real ComfyUI may show an empty one). */
async function ensureCheckpointLoader(page) {
  return page.evaluate(() => {
    const graph = window.app.rootGraph ?? window.app.graph;
    const found = graph.nodes.find((n) => n.type === "CheckpointLoaderSimple");
    if (found) return found.id;
    const node = window.LiteGraph.createNode("CheckpointLoaderSimple");
    node.pos = [100, 100];
    graph.add(node);
    const tracker = window.app.extensionManager.workflow?.activeWorkflow?.changeTracker;
    (tracker?.captureCanvasState ?? tracker?.checkState)?.call(tracker); // captureCanvasState: newer
    return node.id;
  });
}

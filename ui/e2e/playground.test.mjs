// The playground itself, in headless Chromium: the page, the LiteGraph canvas with the
// environment's node types, window.app's ComfyUI surface, the simulated queue, undo, and the
// bottom panel's ComfyUI lifecycle. No model is involved.
import assert from "node:assert/strict";
import { after, before, describe, test } from "./support.mjs"; // node:test's, see support.mjs
import { focusCanvas, graphState, launchBrowser, openAssistant, openTarget, panel, screenshot, startHarness, watchPage } from "./support.mjs";

describe("the playground", () => {
  let harness;
  let browser;
  let page;
  let problems;

  before(async () => {
    harness = await startHarness();
    browser = await launchBrowser();
    page = await browser.context.newPage();
    problems = watchPage(page);
    await openTarget(page, harness.app);
  });

  after(async () => {
    await browser?.close();
    await harness?.stop();
  });

  test("shows the canvas, the default workflow and says the queue is simulated", async () => {
    await screenshot(page, "playground", "1-loaded");
    await page.getByRole("heading", { name: /ComfyUI Assistant — playground \(simulated queue\)/ }).waitFor();
    const box = await page.locator("#graph-canvas").boundingBox();
    assert.ok(box && box.width > 600 && box.height > 300, `the canvas fills the page: ${JSON.stringify(box)}`);
    const { nodes, links } = await graphState(page);
    assert.deepEqual(nodes.map((n) => n.type).sort(), [
      "CLIPTextEncode",
      "CLIPTextEncode",
      "CheckpointLoaderSimple",
      "EmptyLatentImage",
      "KSampler",
      "SaveImage",
      "VAEDecode",
    ]);
    assert.equal(links.length, 9);
    const defs = await (await fetch(`${harness.app}/api/object_info`)).json();
    const registered = await page.evaluate(() => Object.keys(window.LiteGraph.registered_node_types));
    for (const type of Object.keys(defs)) assert.ok(registered.includes(type), `${type} is registered`);
    assert.deepEqual(problems, []);
  });

  test("/scripts/app.js gives extensions the page's app, with ComfyUI's calls", async () => {
    const surface = await page.evaluate(async () => {
      const { app } = await import("/scripts/app.js");
      const manager = app.extensionManager;
      return {
        same: app === window.app,
        functions: [
          app.registerExtension,
          app.graphToPrompt,
          app.loadGraphData,
          app.queuePrompt,
          app.api.fetchApi,
          app.api.addEventListener,
          app.api.removeEventListener,
          manager.toast.add,
          manager.dialog.confirm,
          manager.setting.get,
          manager.setting.set,
          manager.command.execute,
          manager.workflow.activeWorkflow.changeTracker.checkState,
          manager.workflow.activeWorkflow.changeTracker.undo,
        ].every((f) => typeof f === "function"),
        clientId: typeof app.api.clientId,
        graph: app.graph === app.canvas.graph,
        tutorial: manager.setting.get("Comfy.TutorialCompleted"),
      };
    });
    assert.deepEqual(surface, { same: true, functions: true, clientId: "string", graph: true, tutorial: true });
  });

  test("graphToPrompt gives ComfyUI's API format", async () => {
    const { output, workflow } = await page.evaluate(() => window.app.graphToPrompt());
    const byType = (type) => Object.entries(output).find(([, n]) => n.class_type === type);
    const [loaderId] = byType("CheckpointLoaderSimple");
    const [, sampler] = byType("KSampler");
    assert.deepEqual(sampler.inputs.model, [loaderId, 0]);
    assert.equal(sampler.inputs.steps, 20);
    assert.equal(sampler.inputs.sampler_name, "euler");
    assert.equal("control_after_generate" in sampler.inputs, false, "frontend-only widgets are not sent");
    assert.equal(Object.keys(output).length, 7);
    assert.equal(workflow.nodes.length, 7);
  });

  test("the simulated queue validates like ComfyUI and sends ComfyUI's events", async () => {
    const result = await page.evaluate(async () => {
      const app = window.app;
      const post = async (prompt) => {
        const res = await app.api.fetchApi("/prompt", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ client_id: app.api.clientId, prompt }) });
        return { status: res.status, body: await res.json() };
      };
      const { output } = await app.graphToPrompt();
      const samplerId = Object.keys(output).find((id) => output[id].class_type === "KSampler");
      const broken = structuredClone(output);
      delete broken[samplerId].inputs.model;
      broken[samplerId].inputs.sampler_name = "no-such-sampler";
      broken[samplerId].inputs.steps = 0;
      const refused = await post(broken);
      const events = [];
      const types = ["execution_start", "executing", "executed", "execution_success"];
      const listeners = types.map((type) => {
        const listener = (e) => events.push([type, e.detail]);
        app.api.addEventListener(type, listener);
        return [type, listener];
      });
      const accepted = await post(output);
      const deadline = Date.now() + 10_000;
      while (!events.some(([t, d]) => t === "executing" && d === null) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      for (const [type, listener] of listeners) app.api.removeEventListener(type, listener);
      const history = await (await app.api.fetchApi(`/history/${accepted.body.prompt_id}`)).json();
      return { samplerId, refused, accepted, events, history };
    });
    const { samplerId, refused, accepted, events, history } = result;
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.type, "prompt_outputs_failed_validation");
    assert.equal(refused.body.error.message, "Prompt outputs failed validation");
    const errors = refused.body.node_errors[samplerId];
    assert.equal(errors.class_type, "KSampler");
    assert.deepEqual(errors.errors.map((e) => [e.type, e.extra_info.input_name]), [
      ["required_input_missing", "model"],
      ["value_smaller_than_min", "steps"],
      ["value_not_in_list", "sampler_name"],
    ]);
    assert.equal(errors.errors[2].extra_info.received_value, "no-such-sampler");
    assert.equal(errors.dependent_outputs.length, 1);

    assert.equal(accepted.status, 200);
    const id = accepted.body.prompt_id;
    assert.match(id, /^[0-9a-f-]{36}$/);
    // As ComfyUI's frontend dispatches them: `executing` carries the node id alone.
    assert.ok(events.every(([t, d]) => t === "executing" || d.prompt_id === id));
    const kinds = events.map(([t]) => t);
    assert.equal(kinds[0], "execution_start");
    assert.deepEqual(kinds.slice(-2), ["execution_success", "executing"]);
    const executing = events.filter(([t]) => t === "executing").map(([, d]) => d);
    assert.equal(executing.length, 8, "one per node, then null: the prompt is done");
    assert.ok(executing.slice(0, 7).every((d) => typeof d === "string"));
    assert.equal(executing[7], null);
    const executed = events.find(([t]) => t === "executed")[1];
    assert.match(executed.output.images[0].filename, /^ComfyUI_\d{5}_\.png$/);
    assert.equal(executed.output.images[0].type, "output");
    assert.equal(history[id].status.status_str, "success");
    assert.deepEqual(history[id].outputs[executed.node], executed.output);
  });

  test("the Run button validates, simulates and says it was a simulation", async () => {
    await page.getByRole("button", { name: "Run (simulated)" }).click();
    await page.getByText("Simulated run: finished").waitFor();
    await page.getByRole("status").filter({ hasText: "Simulated run finished" }).first().waitFor();
    await screenshot(page, "playground", "2-simulated-run");
    // A broken graph is refused with ComfyUI's message, shown as a toast.
    await page.evaluate(() => {
      const sampler = window.app.graph.nodes.find((n) => n.type === "KSampler");
      sampler.disconnectInput(sampler.findInputSlot("model"));
    });
    await page.getByRole("button", { name: "Run (simulated)" }).click();
    await page.getByRole("alert").filter({ hasText: "Prompt outputs failed validation" }).waitFor();
    await page.getByText("Simulated run: refused by validation").waitFor();
    await screenshot(page, "playground", "3-refused-run");
    await page.evaluate(() => window.app.extensionManager.workflow.activeWorkflow.changeTracker.checkState());
  });

  test("Ctrl+Z undoes a recorded edit and Ctrl+Y redoes it; typing keeps its own Ctrl+Z", async () => {
    const before = await graphState(page);
    const added = await page.evaluate(() => {
      const node = window.LiteGraph.createNode("VAEEncode");
      node.pos = [200, 700];
      window.app.graph.add(node);
      window.app.extensionManager.workflow.activeWorkflow.changeTracker.checkState();
      return node.id;
    });
    await focusCanvas(page);
    await page.keyboard.press("Control+z");
    await page.waitForFunction((id) => !window.app.graph.getNodeById(id), added);
    assert.deepEqual((await graphState(page)).nodes.map((n) => n.id), before.nodes.map((n) => n.id));
    await page.keyboard.press("Control+y");
    await page.waitForFunction((id) => window.app.graph.getNodeById(id)?.type === "VAEEncode", added);
    // Ctrl+Z in a text field is the field's own undo, not the graph's.
    await page.evaluate(() => {
      const input = document.createElement("textarea");
      input.id = "e2e-text";
      document.body.appendChild(input);
    });
    await page.locator("#e2e-text").fill("typed");
    await page.locator("#e2e-text").press("Control+z");
    assert.ok(await page.evaluate((id) => Boolean(window.app.graph.getNodeById(id)), added));
    await page.evaluate(() => document.getElementById("e2e-text").remove());
  });

  test("loading a workflow opens it in a new tab, as ComfyUI does; the first tab keeps its graph", async () => {
    const before = await graphState(page);
    const first = await page.evaluate(() => window.app.extensionManager.workflow.activeWorkflow.key);
    await page.evaluate(() =>
      window.app.loadGraphData({ last_node_id: 0, last_link_id: 0, nodes: [], links: [], groups: [], config: {}, extra: {}, version: 0.4 }),
    );
    assert.equal((await graphState(page)).nodes.length, 0);
    const tabs = await page.evaluate(() => window.app.extensionManager.workflow.openWorkflows.map((w) => w.key));
    assert.deepEqual(tabs, [first, "Unsaved Workflow (2).json"]);
    assert.equal(await page.evaluate(() => window.app.extensionManager.workflow.activeWorkflow.key), "Unsaved Workflow (2).json");
    await page.evaluate(() => window.app.extensionManager.command.execute("Workspace.PreviousOpenedWorkflow"));
    assert.deepEqual(await graphState(page), before);
  });

  test("bottom panel tabs follow ComfyUI's lifecycle: destroy on close, render again on open", async () => {
    await page.evaluate(() => {
      window.e2eLife = [];
      window.app.registerExtension({
        name: "e2e.probe",
        bottomPanelTabs: [
          {
            id: "e2e-probe",
            title: "Probe",
            type: "custom",
            render(el) {
              window.e2eLife.push("render");
              el.innerHTML = '<p class="e2e-probe">probe content</p>';
            },
            destroy() {
              window.e2eLife.push("destroy");
            },
          },
        ],
      });
    });
    const tab = page.getByRole("tab", { name: "Probe" });
    await tab.click();
    await page.locator(".e2e-probe").waitFor();
    assert.equal(await tab.getAttribute("aria-selected"), "true");
    await tab.click();
    await page.locator(".e2e-probe").waitFor({ state: "detached" });
    await page.evaluate(() => window.app.extensionManager.command.execute("Workspace.ToggleBottomPanelTab.e2e-probe"));
    await page.locator(".e2e-probe").waitFor();
    await page.getByRole("button", { name: "Close panel" }).click();
    await page.locator(".e2e-probe").waitFor({ state: "detached" });
    assert.deepEqual(await page.evaluate(() => window.e2eLife), ["render", "destroy", "render", "destroy"]);
  });

  test("Settings lists where the server sends requests, as the server has it", async () => {
    await openAssistant(page);
    await panel(page).getByRole("button", { name: "Open the settings" }).click();
    const region = panel(page).getByRole("region", { name: "Where your requests go" });
    await region.getByText(/COMFY_ASSISTANT_OFFLINE is set: what it turns off is not asked/).waitFor({ timeout: 10_000 });
    const items = await region.locator(".cua-egress-destinations > li").evaluateAll((lis) => lis.map((li) => [li.dataset.kind, li.querySelector("code")?.textContent ?? null, li.querySelector("strong")?.textContent?.trim() ?? null]));
    const { origin } = await (await fetch(`${harness.app}/api/assistant/provider`)).json();
    // the harness: standalone without COMFYUI_URL, offline, a model host of its own
    assert.deepEqual(items, [
      ["provider", origin, null],
      ["comfyui", "COMFYUI_URL", "Not used: COMFYUI_URL is not set."],
      ["manager", "COMFYUI_URL", "Not used: COMFYUI_URL is not set."],
      ["registry", "https://api.comfy.org:443", "Off now: COMFY_ASSISTANT_OFFLINE is set."],
      ["modelSizes", "https://huggingface.co:443", "Off now: COMFY_ASSISTANT_OFFLINE is set."],
      ["downloads", "https://huggingface.co:443", null],
    ]);
    await screenshot(page, "playground", "egress");
    await panel(page).getByRole("button", { name: "Back to the chat" }).click();
    assert.deepEqual(problems, []);
  });

  test("toasts, the confirm dialog and in-memory settings", async () => {
    await page.evaluate(() => window.app.extensionManager.toast.add({ severity: "success", summary: "Saved", detail: "all good", life: 60_000 }));
    await page.getByRole("status").filter({ hasText: "all good" }).waitFor();
    const answer = page.evaluate(() => window.app.extensionManager.dialog.confirm({ title: "Replace the graph?", message: "It has 7 nodes." }));
    await page.getByRole("dialog", { name: "Replace the graph?" }).waitFor();
    await screenshot(page, "playground", "4-confirm-dialog");
    await page.getByRole("dialog").getByRole("button", { name: "Confirm" }).click();
    assert.equal(await answer, true);
    const cancelled = page.evaluate(() => window.app.extensionManager.dialog.confirm({ title: "Delete?", message: "Sure?", type: "delete" }));
    await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();
    assert.equal(await cancelled, false);
    const stored = await page.evaluate(() => {
      const setting = window.app.extensionManager.setting;
      setting.set("Assistant.e2e.secret", "sk-e2e-never-stored");
      return {
        value: setting.get("Assistant.e2e.secret"),
        persisted: JSON.stringify({ ...localStorage }).includes("sk-e2e-never-stored"),
      };
    });
    assert.deepEqual(stored, { value: "sk-e2e-never-stored", persisted: false });
  });
});

// The graph tools inside subgraphs, in headless Chromium: in the playground (LiteGraph 0.17.2,
// numeric node ids) and inside the real ComfyUI frontends (1.27.10: numeric ids; 1.58.1: string
// ids, "-10"/"-20" for a subgraph's boundary), served by the stand-in. A real template with a
// subgraph (ui/test/fixtures/subgraph-flux-dev.json: SaveImage 9 and subgraph node 56 "Text
// to Image (Flux.1 Dev)", 8 nodes inside) is loaded; the scripted model calls the tools and the
// test reads what each returned and what changed in the graph.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "./support.mjs"; // node:test's, see support.mjs
import {
  COMFYUI_SKIP,
  COMFYUI_URL,
  RETURNING_USER_SETTINGS,
  ROOT,
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
  { name: "real ComfyUI (COMFYUI_URL)", slug: "comfyui", skip: COMFYUI_SKIP, comfyui: true, real: true },
];

/** Every tool result the model received, by call id, as first sent (later requests may send a digest). */
function toolResults(requests) {
  const results = {};
  for (const request of requests) {
    for (const m of request.messages) if (m.role === "tool" && !(m.tool_call_id in results)) results[m.tool_call_id] = JSON.parse(m.content);
  }
  return results;
}

/** Load a workflow as the user would open a file (ComfyUI: in a new tab), without its missing-model dialogs. */
async function openWorkflow(page, workflow) {
  await page.evaluate(async (data) => {
    const quiet = { showMissingNodesDialog: false, showMissingModelsDialog: false, deferWarnings: true, silentAssetErrors: true };
    await window.app.loadGraphData(data, true, true, null, quiet);
  }, workflow);
  await page.waitForFunction(() => {
    const node = (window.app.rootGraph ?? window.app.graph).getNodeById(56);
    return Boolean(node?.subgraph);
  });
}

/** Facts about the subgraph of node 56, from the page (ids as the frontend keeps them). */
function insideFlux(page) {
  return page.evaluate(() => {
    const inner = (window.app.rootGraph ?? window.app.graph).getNodeById(56).subgraph;
    const links = [...inner.links.values()];
    const steps = inner.getNodeById(52).widgets.find((w) => w.name === "steps").value;
    return {
      idKind: typeof inner.nodes[0].id,
      boundaryKind: typeof links.find((l) => String(l.origin_id) === "-10")?.origin_id,
      nodes: inner.nodes.map((n) => Number(n.id)).sort((a, b) => a - b),
      steps,
      intoHeight: links
        .filter((l) => String(l.target_id) === "50" && inner.getNodeById(50).inputs[l.target_slot]?.name === "height")
        .map((l) => [String(l.origin_id), inner.inputs[l.origin_slot]?.name ?? l.origin_slot]),
    };
  });
}

for (const target of TARGETS) {
  describe(`subgraphs in the ${target.name}`, { skip: target.skip ?? false }, () => {
    let harness;
    let browser;
    let page;
    let problems;
    let savedProvider = null;

    before(async () => {
      harness = await startHarness({ providerOnly: Boolean(target.real), comfyFrontend: target.frontend, returningUser: Boolean(target.frontend) });
      const baseUrl = target.real ? COMFYUI_URL : harness.app;
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

    test("the tools read and edit inside a subgraph by path ids; its boundary shows as 56:in / 56:out with slot names", { timeout: 120_000 }, async () => {
      await openWorkflow(page, FLUX);
      await openAssistant(page);
      await settle(page);
      await panel(page).getByRole("button", { name: "New thread" }).first().click();
      const before = await insideFlux(page);
      const textId = await page.evaluate(() => {
        const node = window.LiteGraph.createNode("PrimitiveString");
        node.pos = [0, 600];
        (window.app.rootGraph ?? window.app.graph).add(node);
        return Number(node.id);
      });
      await harness.provider.reset();
      await harness.provider.script(
        reply.toolCalls({ id: "read", name: "getWorkflow", arguments: { subgraph: "56" } }),
        reply.toolCalls({ id: "steps", name: "setWidgetValues", arguments: { nodeId: "56:52", values: { steps: 25 } } }),
        reply.toolCalls({ id: "wire", name: "connectNodes", arguments: { fromNodeId: "56:in", fromOutput: "width", toNodeId: "56:50", toInput: "height" } }),
        reply.toolCalls({ id: "again", name: "connectNodes", arguments: { fromNodeId: "56:in", fromOutput: "width", toNodeId: "56:50", toInput: "height" } }),
        reply.toolCalls({ id: "into", name: "connectNodes", arguments: { fromNodeId: textId, fromOutput: 0, toNodeId: "56:51", toInput: "text" } }),
        reply.toolCalls({ id: "remove", name: "removeNodes", arguments: { nodeIds: ["56:54"] } }),
        reply.toolCalls({ id: "after", name: "getWorkflow", arguments: { nodeIds: ["56:52", "56:50"] } }),
        reply.text("Edited the subgraph."),
      );
      await send(page, "square the image and use 25 steps");
      // the removal asks first, naming the node inside the subgraph by its path
      const asks = panel(page).getByRole("group", { name: "The assistant asks before it acts" });
      await asks.waitFor({ timeout: 60_000 });
      assert.match(await asks.textContent(), /Remove a node from the workflow.*#56:54/);
      await asks.getByRole("button", { name: "Allow" }).click();
      await panel(page).getByText("Edited the subgraph.").waitFor({ timeout: 60_000 });
      await screenshot(page, `${target.slug}-subgraph`, "edited");

      const requests = await harness.provider.requests();
      const results = toolResults(requests);
      const read = results.read;
      assert.equal(read.ok, true, JSON.stringify(read));
      assert.equal(read.graph, "56");
      assert.equal(read.name, "Text to Image (Flux.1 Dev)");
      const boundary = read.links.filter((l) => !/^56:\d/.test(String(l[0])) || !/^56:\d/.test(String(l[2])));
      console.log(`${target.name}: getWorkflow shows the boundary's links as ${JSON.stringify(boundary)}`);
      assert.deepEqual(
        read.nodes.map((n) => n.id),
        ["56:47", "56:48", "56:49", "56:50", "56:51", "56:52", "56:53", "56:54"],
      );
      // The boundary by its ids and slot names, never LiteGraph's -10/-20 and slot numbers (1.58
      // also promotes the sampler's seed to a subgraph input of its own: one row more there).
      for (const [from, output, to, input] of boundary) {
        assert.ok((from === "56:in" || to === "56:out") && typeof output === "string" && typeof input === "string", JSON.stringify(boundary));
      }
      for (const row of [
        ["56:53", "IMAGE", "56:out", "IMAGE"],
        ["56:in", "clip_name1", "56:49", "clip_name1"],
        ["56:in", "height", "56:50", "height"],
        ["56:in", "text", "56:51", "text"],
        ["56:in", "width", "56:50", "width"],
      ]) {
        assert.ok(boundary.some((l) => JSON.stringify(l) === JSON.stringify(row)), `${JSON.stringify(row)} in ${JSON.stringify(boundary)}`);
      }
      const ends = read.links.flatMap((l) => [String(l[0]), String(l[2])]);
      assert.deepEqual(ends.filter((id) => !id.startsWith("56:")), [], "every end is a path id");
      assert.deepEqual(read.nodes.find((n) => n.id === "56:52").inputs.model, ["56:48", "MODEL"]);
      const { ok, nodeId, graph, values } = results.steps;
      assert.deepEqual({ ok, nodeId, graph, values }, { ok: true, nodeId: "56:52", graph: "56", values: { steps: 25 } });
      assert.deepEqual(results.wire.replaced, ["56:in", "height"], JSON.stringify(results.wire));
      assert.equal(results.again.unchanged, true, "the same link again changes nothing");
      // Into the subgraph through the input that already feeds the encoder's text: no new input.
      assert.equal(results.into.via, "Text to Image (Flux.1 Dev)#56 input 'text' (existing)", JSON.stringify(results.into));
      assert.deepEqual([results.remove.removed, results.remove.linksRemoved], [["56:54"], 2]);
      assert.deepEqual(results.after.nodes.find((n) => n.id === "56:50").inputs, { width: ["56:in", "width"], height: ["56:in", "width"] });

      const now = await insideFlux(page);
      assert.equal(now.steps, 25);
      assert.deepEqual(now.intoHeight, [["-10", "width"]]);
      assert.deepEqual(now.nodes, before.nodes.filter((id) => id !== 54));
      console.log(`${target.name}: node ids are ${before.idKind}s, the boundary's ${before.boundaryKind}s`);
    });

    test("while the user views a subgraph every tool works in it: an id without a path is its node, a root node is root:N", { timeout: 120_000 }, async () => {
      const loaded = await page.evaluate(() => Boolean((window.app.rootGraph ?? window.app.graph).getNodeById(56)?.subgraph));
      if (!loaded) await openWorkflow(page, FLUX);
      await openAssistant(page);
      await page.evaluate(() => {
        const node = (window.app.rootGraph ?? window.app.graph).getNodeById(56);
        window.app.canvas.openSubgraph(node.subgraph, node); // as a double click on the node does
      });
      await page.waitForFunction(() => window.app.canvas.graph !== (window.app.rootGraph ?? window.app.graph));
      await settle(page);
      await panel(page).getByRole("button", { name: "New thread" }).first().click();
      await harness.provider.reset();
      await harness.provider.script(
        reply.toolCalls({ id: "read", name: "getWorkflow", arguments: { detail: "summary" } }),
        reply.toolCalls({ id: "steps", name: "setWidgetValues", arguments: { nodeId: 52, values: { steps: 30 } } }),
        reply.toolCalls({ id: "add", name: "addNode", arguments: { nodeType: "PreviewImage", nearNodeId: 53 } }),
        reply.toolCalls({ id: "root", name: "setWidgetValues", arguments: { nodeId: "root:9", values: { filename_prefix: "from-inside" } } }),
        reply.toolCalls({ id: "bare9", name: "setWidgetValues", arguments: { nodeId: 9, values: { filename_prefix: "never" } } }),
        reply.text("Done inside the subgraph."),
      );
      await send(page, "30 steps here, and preview the image");
      await panel(page).getByText("Done inside the subgraph.").waitFor({ timeout: 60_000 });
      await screenshot(page, `${target.slug}-subgraph`, "viewed");
      const results = toolResults(await harness.provider.requests());
      assert.equal(results.read.graph, "56", JSON.stringify(results.read));
      assert.deepEqual([results.steps.ok, results.steps.nodeId, results.steps.graph], [true, "56:52", "56"], JSON.stringify(results.steps));
      assert.deepEqual([results.add.ok, results.add.graph], [true, "56"], JSON.stringify(results.add));
      assert.match(String(results.add.nodeId), /^56:\d+$/);
      assert.deepEqual([results.root.ok, results.root.nodeId, results.root.graph], [true, "root:9", "root"], JSON.stringify(results.root));
      assert.equal(results.bare9.ok, false);
      assert.match(results.bare9.error, /An id without a path names a node of the graph the user is viewing, subgraph "Text to Image \(Flux\.1 Dev\)" \(node 56\)\. The root graph's node 9 \(SaveImage\) is "root:9"/);
      const graph = await page.evaluate(() => {
        const root = window.app.rootGraph ?? window.app.graph;
        const inner = root.getNodeById(56).subgraph;
        return {
          steps: inner.getNodeById(52).widgets.find((w) => w.name === "steps").value,
          previews: inner.nodes.filter((n) => n.type === "PreviewImage").length,
          prefix: root.getNodeById(9).widgets.find((w) => w.name === "filename_prefix").value,
        };
      });
      assert.deepEqual(graph, { steps: 30, previews: 1, prefix: "from-inside" });
    });
  });
}

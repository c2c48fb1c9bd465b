// Retake the README's screenshot, docs/panel.png: the panel docked under the default workflow in
// the real ComfyUI frontend (served by the ComfyUI stand-in, tests/comfy_standin), after a chat in
// which the scripted provider adds and connects a node through tool calls.
//
//   node e2e/screenshot.mjs [--frontend 1.58.1] [--out ../docs/panel.png]     (from ui/)
//
// Needs what the e2e suite needs (README.md in this folder): Chromium, ../.venv, the built ui/dist.
import { statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  RETURNING_USER_SETTINGS,
  ROOT,
  launchBrowser,
  openAssistant,
  openTarget,
  panel,
  reply,
  send,
  startHarness,
  storeSettings,
} from "./support.mjs";

const { values: options } = parseArgs({
  options: {
    frontend: { type: "string", default: "1.58.1" },
    out: { type: "string", default: join(ROOT, "docs", "panel.png") },
  },
});

const ASK = "Add a KSampler and wire it into the workflow";
const DONE =
  "Added a **KSampler** and connected it: the checkpoint's `MODEL`, both prompts as `positive` and `negative`, the empty latent, and its `LATENT` into the VAE Decode. The workflow is complete; queue it when you are ready.";

/** ComfyUI's text-to-image graph without its sampler (a new 1.5x user gets a template instead). */
function buildGraph() {
  const graph = window.app.rootGraph ?? window.app.graph;
  graph.clear();
  const add = (type, x, y, values = {}) => {
    const node = window.LiteGraph.createNode(type);
    node.pos = [x, y];
    for (const [name, value] of Object.entries(values)) node.widgets.find((w) => w.name === name).value = value;
    graph.add(node);
    return node;
  };
  const ckpt = add("CheckpointLoaderSimple", 40, 160); // no model name: the stand-in has no models
  const pos = add("CLIPTextEncode", 420, 40, { text: "a watercolor fox in a snowy forest, soft morning light" });
  const neg = add("CLIPTextEncode", 420, 280, { text: "blurry, low quality, watermark" });
  const latent = add("EmptyLatentImage", 420, 520);
  const decode = add("VAEDecode", 1180, 60);
  const save = add("SaveImage", 1400, 60);
  ckpt.connect(1, pos, 0);
  ckpt.connect(1, neg, 0);
  ckpt.connect(2, decode, 1);
  decode.connect(0, save, 0);
  window.app.canvas.ds.offset = [110, 120];
  window.app.canvas.ds.scale = 0.58;
  window.app.canvas.setDirty(true, true);
  const id = (node) => Number(node.id);
  return { ckpt: id(ckpt), pos: id(pos), neg: id(neg), latent: id(latent), decode: id(decode), next: graph.last_node_id + 1 };
}

const harness = await startHarness({ comfyFrontend: options.frontend });
const browser = await launchBrowser({ width: 1280, height: 800 });
try {
  await storeSettings(harness.app, { ...RETURNING_USER_SETTINGS, "Comfy.Minimap.Visible": false });
  const page = await browser.context.newPage();
  await openTarget(page, harness.app, { comfyui: true });
  const ids = await page.evaluate(buildGraph);
  await openAssistant(page);
  const link = (id, fromNodeId, fromOutput, toNodeId, toInput) => ({ id, name: "connectNodes", arguments: { fromNodeId, fromOutput, toNodeId, toInput } });
  const sampler = ids.next;
  await harness.provider.script(
    reply.toolCalls({ id: "call_add", name: "addNode", arguments: { nodeType: "KSampler", nearNodeId: ids.pos } }),
    reply.toolCalls(
      link("call_model", ids.ckpt, "MODEL", sampler, "model"),
      link("call_pos", ids.pos, "CONDITIONING", sampler, "positive"),
      link("call_neg", ids.neg, "CONDITIONING", sampler, "negative"),
      link("call_latent", ids.latent, "LATENT", sampler, "latent_image"),
      link("call_decode", sampler, "LATENT", ids.decode, "samples"),
    ),
    reply.stream({ content: DONE }, { finish_reason: "stop" }, { usage: [5200, 60] }),
  );
  await send(page, ASK);
  await panel(page).getByText(/The workflow is complete/).waitFor({ timeout: 30_000 });
  await panel(page).locator(".cua-gauge").first().waitFor();
  await page.keyboard.press("Escape"); // a toast or popup of the frontend's
  await page.evaluate(() => document.activeElement?.blur?.()); // no focus ring in the picture
  await page.mouse.move(640, 120);
  await page.waitForTimeout(500);
  await page.screenshot({ path: options.out });
  console.log(`${options.out}: ${Math.round(statSync(options.out).size / 1024)} KB`);
} finally {
  await browser.close();
  await harness.stop();
}

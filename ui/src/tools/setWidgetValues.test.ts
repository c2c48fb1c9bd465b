import { describe, expect, it } from "vitest";
import { buildTxt2Img, createTestApp, link, place } from "../../test/testing";

const EDIT = ["beforeChange", "afterChange"];

describe("setWidgetValues", () => {
  it("sets values of every widget kind, as one undo step", async () => {
    const t = createTestApp();
    const { sampler, positive } = buildTxt2Img(t);
    expect(
      await t.tools.setWidgetValues({
        nodeId: 5,
        values: { steps: 30, cfg: "6.5", sampler_name: "dpmpp_2m", scheduler: "karras", control_after_generate: "increment", seed: 7 },
      }),
    ).toEqual({
      ok: true, graph: "root",
      nodeId: 5,
      values: { steps: 30, cfg: 6.5, sampler_name: "dpmpp_2m", scheduler: "karras", control_after_generate: "increment", seed: 7 },
    });
    expect(sampler.widgets!.map((w) => w.value)).toEqual([7, "increment", 30, 6.5, "dpmpp_2m", "karras", 1]);
    expect(await t.tools.setWidgetValues({ nodeId: 2, values: { text: "a dog" } })).toEqual({ ok: true, graph: "root", nodeId: 2, values: { text: "a dog" } });
    expect(positive.widgets![0]!.value).toBe("a dog");
    const grow = place(t, "GrowMask", [0, 900]);
    expect(await t.tools.setWidgetValues({ nodeId: 8, values: { tapered_corners: "false", expand: -3 } })).toEqual({
      ok: true, graph: "root",
      nodeId: 8,
      values: { tapered_corners: false, expand: -3 },
    });
    expect(grow.widgets!.map((w) => w.value)).toEqual([-3, false]);
    expect(t.tracker.calls).toEqual([...EDIT, ...EDIT, ...EDIT]);
    t.tracker.undo();
    t.tracker.undo();
    expect(t.graph.getNodeById(2)!.widgets![0]!.value).toBe("a photo of a cat");
    expect(t.graph.getNodeById(5)!.widgets![2]!.value).toBe(30);
    t.tracker.undo();
    expect(t.graph.getNodeById(5)!.widgets!.map((w) => w.value)).toEqual([42, "fixed", 20, 8, "euler", "simple", 1]);
  });

  it("rounds INT values to their step and FLOAT values to their precision, and says so", async () => {
    const t = createTestApp();
    place(t, "EmptySD3LatentImage", [0, 0]);
    place(t, "KSampler", [400, 0]);
    expect(await t.tools.setWidgetValues({ nodeId: 1, values: { width: 1000, height: 16384 } })).toEqual({
      ok: true, graph: "root",
      nodeId: 1,
      values: { width: 1008, height: 16384 },
      notes: ["'width': 1000 rounded to 1008 (integer, step 16)"],
    });
    expect(await t.tools.setWidgetValues({ nodeId: 2, values: { steps: 20.4, cfg: 7.123 } })).toEqual({
      ok: true, graph: "root",
      nodeId: 2,
      values: { steps: 20, cfg: 7.12 },
      notes: ["'steps': 20.4 rounded to 20 (integer, step 1)", "'cfg': 7.123 rounded to 7.12"],
    });
  });

  it("calls the widget's callback and node.onWidgetChanged, as the canvas does", async () => {
    const t = createTestApp();
    const { sampler } = buildTxt2Img(t);
    const seen: unknown[] = [];
    sampler.widgets![2]!.callback = (value: unknown) => seen.push(["callback", value]);
    sampler.onWidgetChanged = (name, value, old) => seen.push([name, value, old]);
    await t.tools.setWidgetValues({ nodeId: 5, values: { steps: 25 } });
    expect(seen).toEqual([["callback", 25], ["steps", 25, 20]]);
    sampler.widgets![2]!.callback = () => {
      throw new Error("preview failed");
    };
    expect(await t.tools.setWidgetValues({ nodeId: 5, values: { steps: 26 } })).toEqual({
      ok: true, graph: "root",
      nodeId: 5,
      values: { steps: 26 },
      notes: ["'steps' was set, but its change handler failed: preview failed"],
    });
  });

  it("uses the widget's live choices (a refreshed model list)", async () => {
    const t = createTestApp();
    const { ckpt } = buildTxt2Img(t);
    ckpt.widgets![0]!.options.values = ["sd15.safetensors", "sdxl_base.safetensors"];
    expect(await t.tools.setWidgetValues({ nodeId: 1, values: { ckpt_name: "sdxl_base.safetensors" } })).toEqual({
      ok: true, graph: "root",
      nodeId: 1,
      values: { ckpt_name: "sdxl_base.safetensors" },
    });
    expect(await t.tools.setWidgetValues({ nodeId: 1, values: { ckpt_name: "sdxl.safetensors" } })).toEqual({
      ok: false,
      error:
        `Nothing was changed on CheckpointLoaderSimple#1: 'ckpt_name' can't be "sdxl.safetensors": it must be one of 2 choices ` +
        `(closest: "sd15.safetensors", "sdxl_base.safetensors"): sd15.safetensors, sdxl_base.safetensors.`,
    });
  });

  it("sets a combo that lists no choices unchecked, and says so", async () => {
    const t = createTestApp();
    const { ckpt } = buildTxt2Img(t);
    expect(await t.tools.setWidgetValues({ nodeId: 1, values: { ckpt_name: "model.safetensors" } })).toEqual({
      ok: true, graph: "root",
      nodeId: 1,
      values: { ckpt_name: "model.safetensors" },
      notes: [
        `'ckpt_name' lists no choices (nothing installed, or not loaded yet), so "model.safetensors" was set unchecked; ComfyUI checks it when the workflow is queued`,
      ],
    });
    expect(ckpt.widgets![0]!.value).toBe("model.safetensors");
  });

  it("notes that a linked widget's value is not the one used", async () => {
    const t = createTestApp();
    const primitive = place(t, "PrimitiveInt", [0, 0]);
    const sampler = place(t, "KSampler", [300, 0]);
    sampler.addInput("seed", "INT", { widget: { name: "seed" } });
    link(primitive, 0, sampler, 4);
    expect(await t.tools.setWidgetValues({ nodeId: 2, values: { seed: 5 } })).toEqual({
      ok: true, graph: "root",
      nodeId: 2,
      values: { seed: 5 },
      notes: ["'seed' is linked, so the linked value is used when the workflow runs, not this one"],
    });
  });

  it("changes nothing when any value is invalid, and lists every problem", async () => {
    const t = createTestApp();
    const { sampler } = buildTxt2Img(t);
    const result = await t.tools.setWidgetValues({
      nodeId: 5,
      values: { steps: 30, sampler_name: "eulr", cfg: "high", denoise: 2, model: 1, stepz: 3, control_after_generate: "sometimes" },
    });
    expect(result).toEqual({
      ok: false,
      error:
        "Nothing was changed on KSampler#5: 'sampler_name' can't be \"eulr\": it must be one of 42 choices (closest: \"euler\", \"euler_cfg_pp\"): " +
        "euler, euler_cfg_pp, euler_ancestral, euler_ancestral_cfg_pp, heun, heunpp2, dpm_2, dpm_2_ancestral, lms, dpm_fast, " +
        "dpm_adaptive, dpmpp_2s_ancestral, dpmpp_2s_ancestral_cfg_pp, dpmpp_sde, dpmpp_sde_gpu, dpmpp_2m, dpmpp_2m_cfg_pp, " +
        "dpmpp_2m_sde, dpmpp_2m_sde_gpu, dpmpp_2m_sde_heun, dpmpp_2m_sde_heun_gpu, dpmpp_3m_sde, dpmpp_3m_sde_gpu, ddpm, lcm, " +
        "ipndm, ipndm_v, deis, res_multistep, res_multistep_cfg_pp … and 12 more. " +
        "'cfg' must be a number between 0 and 100, got \"high\". " +
        "'denoise' must be between 0 and 1, got 2. " +
        "'model' is an input of KSampler#5 (MODEL), not a widget: link it with connectNodes. " +
        "KSampler#5 has no widget 'stepz' (did you mean steps?). Its widgets: seed, control_after_generate, steps, cfg, sampler_name, scheduler, denoise. " +
        "'control_after_generate' can't be \"sometimes\": it must be one of 4 choices: fixed, increment, decrement, randomize.",
    });
    expect(sampler.widgets!.map((w) => w.value)).toEqual([42, "fixed", 20, 8, "euler", "simple", 1]);
    expect(t.tracker.calls).toEqual([]);
  });

  it("rejects wrong kinds: booleans, text, names, nodes without widgets", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    place(t, "GrowMask", [0, 900]);
    expect(await t.tools.setWidgetValues({ nodeId: 8, values: { tapered_corners: "yes" } })).toEqual({
      ok: false,
      error: `Nothing was changed on GrowMask#8: 'tapered_corners' must be true or false, got "yes".`,
    });
    expect(await t.tools.setWidgetValues({ nodeId: 2, values: { text: true } })).toEqual({
      ok: false,
      error: "Nothing was changed on CLIPTextEncode#2: 'text' must be text, got true.",
    });
    expect(await t.tools.setWidgetValues({ nodeId: 1, values: { ckpt_name: true } })).toEqual({
      ok: false,
      error: "Nothing was changed on CheckpointLoaderSimple#1: 'ckpt_name' must be a name, got true.",
    });
    expect(await t.tools.setWidgetValues({ nodeId: 6, values: { strength: 1 } })).toEqual({
      ok: false,
      error: "Nothing was changed on VAEDecode#6: VAEDecode#6 has no widgets, so it has no 'strength'.",
    });
    expect(t.tracker.calls).toEqual([]);
  });

  it("fails on an unknown node and on invalid arguments", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    expect(await t.tools.setWidgetValues({ nodeId: 9, values: { steps: 1 } })).toEqual({
      ok: false,
      error: "No node has id 9; nothing was changed. Node ids in the graph: 1, 2, 3, 4, 5, 6, 7.",
    });
    expect(await t.tools.setWidgetValues({ nodeId: 5, values: { steps: null } })).toEqual({
      ok: false,
      error: "Invalid arguments for setWidgetValues: 'values.steps' must be string or number or boolean, got null null.",
    });
    expect(await t.tools.setWidgetValues({ nodeId: 5 })).toEqual({
      ok: false,
      error: "Invalid arguments for setWidgetValues: 'values' is required.",
    });
  });
});

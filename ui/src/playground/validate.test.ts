import { describe, expect, it } from "vitest";
import { loadObjectInfo } from "../../test/testing";
import { validatePrompt, type ApiPrompt } from "./validate";

const defs = loadObjectInfo();

function txt2img(): ApiPrompt {
  return {
    "1": { class_type: "CheckpointLoaderSimple", inputs: { ckpt_name: "sd15.safetensors" } },
    "2": { class_type: "CLIPTextEncode", inputs: { text: "a fox", clip: ["1", 1] } },
    "3": { class_type: "CLIPTextEncode", inputs: { text: "", clip: ["1", 1] } },
    "4": { class_type: "EmptyLatentImage", inputs: { width: 512, height: 512, batch_size: 1 } },
    "5": {
      class_type: "KSampler",
      inputs: {
        model: ["1", 0], seed: 1, steps: 20, cfg: 8, sampler_name: "euler", scheduler: "normal",
        positive: ["2", 0], negative: ["3", 0], latent_image: ["4", 0], denoise: 1,
      },
    },
    "6": { class_type: "VAEDecode", inputs: { samples: ["5", 0], vae: ["1", 2] } },
    "7": { class_type: "SaveImage", inputs: { images: ["6", 0], filename_prefix: "ComfyUI" } },
  };
}

describe("validatePrompt (ComfyUI's rules, for the simulated queue)", () => {
  it("accepts a complete txt2img prompt (an empty model list accepts any file name)", () => {
    expect(validatePrompt(txt2img(), defs)).toEqual({ ok: true, outputs: ["7"], nodeErrors: {} });
  });

  it("reports each bad input of a node the way ComfyUI does", () => {
    const prompt = txt2img();
    const sampler = prompt["5"]!.inputs!;
    delete sampler.model;
    sampler.steps = 0;
    sampler.cfg = 101;
    sampler.sampler_name = "nope";
    const result = validatePrompt(prompt, defs);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ type: "prompt_outputs_failed_validation", message: "Prompt outputs failed validation" });
    const errors = result.nodeErrors["5"]!;
    expect(errors.class_type).toBe("KSampler");
    expect(errors.dependent_outputs).toEqual(["7"]);
    expect(errors.errors.map((e) => [e.type, e.message, e.details])).toEqual([
      ["required_input_missing", "Required input is missing", "model"],
      ["value_smaller_than_min", "Value 0 smaller than min of 1", "steps"],
      ["value_bigger_than_max", "Value 101 bigger than max of 100", "cfg"],
      ["value_not_in_list", "Value not in list", expect.stringMatching(/^sampler_name: 'nope' not in \(list of length \d+\)$/)],
    ]);
    expect(errors.errors[3]!.extra_info).toMatchObject({ input_name: "sampler_name", received_value: "nope", input_config: null });
  });

  it("checks the types of links", () => {
    const prompt = txt2img();
    prompt["6"]!.inputs!.vae = ["1", 0]; // MODEL into a VAE input
    const result = validatePrompt(prompt, defs);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.nodeErrors["6"]!.errors[0]).toMatchObject({
      type: "return_type_mismatch",
      details: "vae, received_type(MODEL) mismatch input_type(VAE)",
    });
  });

  it("refuses unknown node types and prompts without outputs", () => {
    const unknown = validatePrompt({ "1": { class_type: "NoSuchNode", inputs: {} } }, defs);
    expect(unknown).toMatchObject({ ok: false, error: { type: "missing_node_type" }, nodeErrors: {} });
    const noOutputs = validatePrompt({ "1": { class_type: "EmptyLatentImage", inputs: { width: 512, height: 512, batch_size: 1 } } }, defs);
    expect(noOutputs).toMatchObject({ ok: false, error: { type: "prompt_no_outputs", message: "Prompt has no outputs" } });
  });

  it("runs the outputs that are valid and reports the others (as ComfyUI does)", () => {
    const prompt = txt2img();
    prompt["8"] = { class_type: "PreviewImage", inputs: {} };
    const result = validatePrompt(prompt, defs);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.outputs).toEqual(["7"]);
    expect(result.nodeErrors["8"]!.errors[0]!.type).toBe("required_input_missing");
  });
});

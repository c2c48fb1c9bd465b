import { describe, expect, it } from "vitest";
import { afterDecode, decodedFiles, decodesLatents, historyPrompt } from "./latentDecodes";
import { realLiteGraph } from "../../test/testing";

describe("which outputs a latent decode made", () => {
  const lg = realLiteGraph();

  it("knows a decoder by its definition (a LATENT in, an IMAGE out), else by a VAEDecode name", () => {
    expect(["VAEDecode", "VAEDecodeTiled"].map((type) => decodesLatents(type, lg))).toEqual([true, true]);
    expect(["KSampler", "EmptyImage", "VAEEncode", "SaveImage", "EmptyLatentImage"].map((type) => decodesLatents(type, lg))).toEqual([false, false, false, false, false]);
    expect([decodesLatents("VAEDecodeSomePack", undefined), decodesLatents("ImageInvert", undefined)]).toEqual([true, false]);
  });

  it("walks the prompt's links upstream from each output node, through any node, once each", () => {
    const prompt = {
      "1": { class_type: "EmptyImage", inputs: { width: 64, height: 64, batch_size: 1, color: 0 } },
      "2": { class_type: "SaveImage", inputs: { images: ["1", 0] } },
      "3": { class_type: "KSampler", inputs: { latent_image: ["4", 0], model: ["5", 0] } },
      "4": { class_type: "EmptyLatentImage", inputs: { width: 64, height: 64, batch_size: 1 } },
      "6": { class_type: "VAEDecode", inputs: { samples: ["3", 0], vae: ["5", 2] } },
      "7": { class_type: "ImageInvert", inputs: { image: ["6", 0] } },
      "8": { class_type: "ImageBlend", inputs: { image1: ["1", 0], image2: ["7", 0] } },
      "9": { class_type: "PreviewImage", inputs: { images: ["9", 0] } }, // (a loop ends)
    };
    expect(["2", "7", "8", "9", "404"].map((id) => afterDecode(prompt, id, lg))).toEqual([false, true, true, false, false]);
    const outputs = { 2: { images: ["a.png [output]"] }, 8: { images: ["b.png [output]", "c.png [temp]"] } };
    expect(decodedFiles(outputs, prompt, lg)).toEqual(["b.png [output]", "c.png [temp]"]);
    expect(decodedFiles(outputs, undefined, lg)).toEqual([]);
    expect([historyPrompt({ prompt: [1, "p", prompt, {}, []] }), historyPrompt({ prompt: [] }), historyPrompt({})]).toEqual([prompt, undefined, undefined]);
  });
});

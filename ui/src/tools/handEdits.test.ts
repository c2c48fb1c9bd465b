// The user's own edits, told as one note: two shots of a real LiteGraph graph (the txt2img
// graph of testing.ts: 1 checkpoint loader, 2/3 prompts, 4 latent, 5 KSampler, 6 VAEDecode,
// 7 SaveImage) around edits made the way the canvas makes them; with the numeric node ids of
// frontends up to 1.48 and the string ids of later ones.
import { describe, expect, it } from "vitest";
import type { LGraphNode } from "../host/comfy";
import { graphShot, type GraphShot } from "./graphSnapshot";
import { handEditsNote, isEditNote, NOTE_CHARS } from "./handEdits";
import { buildTxt2Img, createTestApp, link, openSubgraph, place, useStringIds, type TestSetup } from "../../test/testing";

const HEAD = "[Since your last answer the user changed the workflow by hand (keep these changes unless asked): ";

const ID_KINDS = [
  { kind: "numeric node ids (frontends up to 1.48)", stringIds: false },
  { kind: 'string node ids (frontends from 1.49: "5")', stringIds: true },
];

describe.each(ID_KINDS)("$kind", ({ stringIds }) => {
  function txt2img() {
    const t = createTestApp({ stringIds });
    const nodes = buildTxt2Img(t);
    if (stringIds) useStringIds(t.graph);
    return { t, ...nodes };
  }

  function shot(t: TestSetup): GraphShot {
    const taken = graphShot(t.app);
    if (!taken) throw new Error("no shot");
    return taken;
  }

  /** The note for what `edit` does to the graph. */
  function noteAfter(t: TestSetup, edit: () => void): string | null {
    const before = shot(t);
    edit();
    return handEditsNote(before, shot(t));
  }

  const setWidget = (node: LGraphNode, name: string, value: unknown) => {
    const widget = node.widgets!.find((w) => w.name === name)!;
    widget.value = value as typeof widget.value;
  };

  it("tells a widget change, with old and new values", () => {
    const { t, sampler, positive } = txt2img();
    const note = noteAfter(t, () => {
      setWidget(sampler, "steps", 28);
      setWidget(sampler, "cfg", 5.5);
      setWidget(sampler, "sampler_name", "dpmpp_2m");
      setWidget(positive, "text", "a photo of a cat");
    });
    expect(note).toBe(`${HEAD}5 KSampler: steps 20 → 28, cfg 8 → 5.5, sampler_name "euler" → "dpmpp_2m"]`);
    expect(isEditNote(note!)).toBe(true);
  });

  it("shows long text as the part that changed", () => {
    const { t, positive } = txt2img();
    const long = "a photo of a cat sitting on a windowsill in the morning light, soft focus, 35mm film";
    setWidget(positive, "text", long);
    const note = noteAfter(t, () => setWidget(positive, "text", long.replace("cat", "dog")));
    expect(note).toBe(`${HEAD}2 CLIPTextEncode: text "… photo of a cat sitting on …" → "… photo of a dog sitting on …"]`);
  });

  it("tells a link added and the link it replaced, and a new node with them", () => {
    const { t, ckpt, sampler } = txt2img();
    const note = noteAfter(t, () => {
      const lora = place(t, "LoraLoader", [500, 700]);
      link(ckpt, 0, lora, 0);
      link(lora, 0, sampler, 0); // replaces 1.MODEL → 5.model
    });
    expect(note).toBe(`${HEAD}added node 8 LoraLoader; link 1.MODEL → 8.model; link 8.MODEL → 5.model; removed link 1.MODEL → 5.model]`);
  });

  it("tells a removed node without the links that went with it", () => {
    const { t, decode, latent } = txt2img();
    const note = noteAfter(t, () => {
      t.graph.remove(decode);
      latent.disconnectOutput(0);
    });
    expect(note).toBe(`${HEAD}removed node 6 (VAEDecode); removed link 4.LATENT → 5.latent_image]`);
  });

  it("tells bypass, mute and back on", () => {
    const { t, save, negative, decode } = txt2img();
    decode.mode = 4;
    const note = noteAfter(t, () => {
      save.mode = 4;
      negative.mode = 2;
      decode.mode = 0;
    });
    expect(note).toBe(`${HEAD}3 CLIPTextEncode muted; 6 VAEDecode no longer bypassed; 7 SaveImage bypassed]`);
  });

  it("tells nothing for moved or resized nodes, or an unchanged graph", () => {
    const { t, sampler } = txt2img();
    expect(
      noteAfter(t, () => {
        sampler.pos = [1200, 900];
        sampler.size = [400, 500];
      }),
    ).toBeNull();
  });

  it("leaves out a seed ComfyUI rewrites after each run; tells one the user set and fixed", () => {
    const { t, sampler } = txt2img();
    setWidget(sampler, "control_after_generate", "randomize");
    expect(noteAfter(t, () => setWidget(sampler, "seed", 912_345_678))).toBeNull();
    expect(
      noteAfter(t, () => {
        setWidget(sampler, "seed", 42);
        setWidget(sampler, "control_after_generate", "fixed");
      }),
    ).toBe(`${HEAD}5 KSampler: seed 912345678 → 42, control_after_generate "randomize" → "fixed"]`);
  });

  it("tells nodes moved into a subgraph once, by their new ids, without the links the move rewired", () => {
    const { t, positive, negative } = txt2img();
    const note = noteAfter(t, () => {
      t.graph.convertToSubgraph(new Set([positive, negative]) as never);
    });
    const subgraph = t.graph.nodes.find((n) => n.type !== undefined && !["CheckpointLoaderSimple", "EmptyLatentImage", "KSampler", "VAEDecode", "SaveImage"].includes(n.type))!;
    const id = String(subgraph.id);
    expect(note).toBe(`${HEAD}added node ${id} subgraph "New Subgraph"; nodes 2, 3 moved into subgraph ${id} (now ${id}:2, ${id}:3)]`);
    // then an edit inside it is named by the path; root ids read "root:5" while the user is in it
    const inner = (subgraph as unknown as { subgraph: { getNodeById(id: unknown): LGraphNode } }).subgraph.getNodeById(stringIds ? "2" : 2);
    const before = shot(t);
    setWidget(inner, "text", "a dog");
    t.graph.getNodeById(stringIds ? ("5" as unknown as number) : 5)!.mode = 4;
    openSubgraph(t, id);
    expect(handEditsNote(before, shot(t))).toBe(`${HEAD}${id}:2 CLIPTextEncode: text "a photo of a cat" → "a dog"; root:5 KSampler bypassed]`);
  });

  it("caps a large change: a count of each kind, the first changes, and 'call getWorkflow'", () => {
    const { t, sampler } = txt2img();
    const note = noteAfter(t, () => {
      for (let i = 0; i < 60; i++) place(t, "LoraLoader", [0, 1000 + 100 * i]);
      setWidget(sampler, "steps", 30);
    })!;
    expect(note.length).toBeLessThanOrEqual(NOTE_CHARS);
    expect(note.startsWith(`${HEAD}61 changes (60 nodes added, 1 widget value): added node 8 LoraLoader; added node 9 LoraLoader;`)).toBe(true);
    const rest = /; … and (\d+) more changes: call getWorkflow to see the graph\]$/.exec(note);
    expect(rest).not.toBeNull();
    const told = note.split("; ").filter((s) => s.includes("added node")).length;
    expect(told + Number(rest![1])).toBe(61);
  });
});

describe("the note's bound", () => {
  it("is about what a compact getWorkflow of the text-to-image graph costs", async () => {
    const t = createTestApp();
    buildTxt2Img(t);
    const compact = JSON.stringify(await t.tools.getWorkflow({ detail: "compact" }));
    console.log(`compact getWorkflow of the 7-node txt2img graph: ${compact.length} characters; the note's bound: ${NOTE_CHARS}`);
    expect(compact.length).toBeGreaterThan(NOTE_CHARS / 2);
    expect(compact.length).toBeLessThan(NOTE_CHARS);
  });
});

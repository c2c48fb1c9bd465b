// A scan as the server answers it (routes/installs.py), for the install tools' and cards' tests.
import type { DownloadJob, Scan } from "../src/tools/installScans";

export function sampleScan(id = "scan_abc"): Scan {
  return {
    scan: id,
    format: "ui",
    missingNodes: [
      { type: "AddMask", nodes: [{ id: 30, type: "AddMask" }], packs: ["comfyui-impact-pack"] },
      { type: "Mystery", nodes: [{ id: 31, type: "Mystery" }], packs: [], provider: "unknown", note: "no pack in ComfyUI-Manager's node map provides it" },
    ],
    packs: [
      {
        id: "comfyui-impact-pack",
        title: "ComfyUI Impact Pack",
        author: "Dr.Lt.Data",
        description: "This extension offers various detector nodes and detailer nodes.",
        repository: "https://github.com/ltdrdata/ComfyUI-Impact-Pack",
        registryId: "comfyui-impact-pack",
        state: "disabled",
        note: "installed but disabled",
        version: "8.22.2",
        nodeTypes: ["AddMask"],
      },
    ],
    missingModels: [
      {
        name: "v1-5-pruned-emaonly-fp16.safetensors",
        directory: "checkpoints",
        url: "https://huggingface.co/Comfy-Org/x/resolve/main/v1-5-pruned-emaonly-fp16.safetensors",
        host: "huggingface.co",
        hash: "a".repeat(64),
        size: 2_130_000_000,
        sizeFrom: "host",
        pickle: false,
        downloadable: true,
        problem: null,
      },
      {
        name: "old.ckpt",
        directory: "vae",
        url: "http://example.com/old.ckpt",
        host: "example.com",
        hash: null,
        size: null,
        pickle: true,
        downloadable: false,
        problem: "the download address is not an https URL (http://example.com/old.ckpt)",
      },
    ],
    presentModels: [{ name: "vae.safetensors", directory: "vae" }],
    sources: { nodeMap: "ComfyUI-Manager", installedPacks: true, modelList: true, notes: [] },
  };
}

export function sampleJob(overrides: Partial<DownloadJob> = {}): DownloadJob {
  return {
    id: "job1",
    state: "downloading",
    host: "huggingface.co",
    folder: "checkpoints",
    name: "v1-5-pruned-emaonly-fp16.safetensors",
    pickle: false,
    sha256: "a".repeat(64),
    size: null,
    bytesDone: 500_000_000,
    bytesTotal: 2_000_000_000,
    bytesPerSecond: 25_000_000,
    etaSeconds: 60,
    alreadyPresent: false,
    error: null,
    ...overrides,
  };
}

// A run's files by the names ComfyUI annotates them with: "sub/dir/x.png [output]" is
// x.png in the subfolder sub/dir of ComfyUI's output folder. The tools write them that way (for
// the model, and for the assistant's server to look at: routes/outputs.py reads the same form);
// the panel reads them back to show each file through ComfyUI's /view.

type Detail = Record<string, unknown>;

/** One file as ComfyUI's /view takes it. */
export interface OutputFile {
  filename: string;
  subfolder: string;
  type: string;
}

const ANNOTATED = /^(?<path>.+?) \[(?<type>[a-z]+)\]$/; // as core/files/run_outputs.py reads it
const VIDEO = /\.(mp4|webm|mov|mkv|m4v)$/i;
const IMAGE = /\.(png|jpe?g|webp|gif|bmp|avif|tiff?)$/i;

/** "ComfyUI_00001_.png [output]", "sub/x.png [temp]": ComfyUI's item `{filename, subfolder, type}`. */
export function annotatedName(item: Detail): string {
  const folder = typeof item.subfolder === "string" && item.subfolder ? `${item.subfolder}/` : "";
  return `${folder}${String(item.filename)} [${typeof item.type === "string" ? item.type : "output"}]`;
}

/** The file an annotated name stands for (no annotation: the output folder, as ComfyUI reads it). */
export function parseOutputName(name: string): OutputFile {
  const found = ANNOTATED.exec(name.trim());
  const path = (found?.groups?.path ?? name.trim()).replace(/\\/g, "/");
  const cut = path.lastIndexOf("/");
  return { filename: path.slice(cut + 1), subfolder: cut < 0 ? "" : path.slice(0, cut), type: found?.groups?.type ?? "output" };
}

/** The files among a run's outputs ({nodeId: {images: ["x.png [output]", …]}}), in order. */
export function outputFiles(outputs: Record<string, Record<string, unknown>>): string[] {
  const names = Object.values(outputs).flatMap((output) => Object.values(output).flat());
  return names.filter((name): name is string => typeof name === "string" && / \[(output|temp)\]$/.test(name));
}

/** How the panel can show a file: as a picture, as a video, or only by its name. */
export function mediaKind(filename: string): "image" | "video" | "other" {
  if (IMAGE.test(filename)) return "image";
  return VIDEO.test(filename) ? "video" : "other";
}

/** ComfyUI's route that serves the file (the frontend's api.apiURL adds its base path). */
export function viewRoute(file: OutputFile): string {
  return `/view?${new URLSearchParams({ filename: file.filename, subfolder: file.subfolder, type: file.type }).toString()}`;
}

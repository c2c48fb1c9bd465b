// What a run made, under its queueWorkflow card without opening it: a small grid of the files
// (ComfyUI's /view, loaded lazily; a video as a video), each with the line the assistant's
// server said about it (format, size, what looks wrong), a finding marked on the picture, a
// click opening the file in a new tab.
import type { FC } from "react";
import { useI18n } from "../i18n";
import { mediaKind, outputFiles, parseOutputName, type OutputFile } from "../tools/outputFiles";
import { useStore } from "./context";
import type { ToolCardSpec } from "./toolCard";

/** Thumbnails shown at most; the rest are counted. */
export const MAX_SHOWN = 8;

export interface RunFile {
  /** ComfyUI's annotated name, "sub/x.png [output]". */
  name: string;
  file: OutputFile;
  /** The server's line about it ("x.png [output]: PNG 512×512, all black (…)"), if it looked. */
  looked: string | null;
  /** What looks wrong, in a word or two, if anything does. */
  finding: Finding | null;
}

/** What a look found wrong (also the thumbnail's `data-finding`), and its words in the panel. */
export type Finding = "black" | "blank" | "wrong-size";
const FINDING_LABEL = { black: "run.finding.black", blank: "run.finding.blank", "wrong-size": "run.finding.size" } as const;

/** A look's finding ("black", "blank", "wrong-size": all black, blank, the wrong size); null when none.
 * The words are core/files/output_checks.py's. */
export function findingOf(line: string | null): Finding | null {
  if (!line) return null;
  if (/, all black\b/.test(line)) return "black";
  if (/, blank: /.test(line)) return "blank";
  if (/, it is \d+×\d+, not the \d+×\d+ asked for/.test(line)) return "wrong-size";
  return null;
}

/** The files of a successful run's result (`{ok: true, outputs, looked}`), each with its
 * line; none for any other result. */
export function runFiles(result: unknown): RunFile[] {
  if (!result || typeof result !== "object") return [];
  const { ok, outputs, looked } = result as { ok?: unknown; outputs?: unknown; looked?: unknown };
  if (ok !== true || !outputs || typeof outputs !== "object") return [];
  const lines = Array.isArray(looked) ? looked.filter((line): line is string => typeof line === "string") : [];
  return outputFiles(outputs as Record<string, Record<string, unknown>>).map((name) => {
    const line = lines.find((l) => l.startsWith(`${name}: `)) ?? null;
    return { name, file: parseOutputName(name), looked: line, finding: findingOf(line) };
  });
}

const Preview: FC<{ file: RunFile; src: string; caption: string }> = ({ file, src, caption }) => {
  switch (mediaKind(file.file.filename)) {
    case "image":
      return <img src={src} alt={caption} loading="lazy" decoding="async" />;
    case "video":
      return <video src={src} preload="metadata" muted playsInline aria-label={caption} />;
    default:
      return <span className="cua-run-file-name">{file.file.filename}</span>;
  }
};

const Thumbnail: FC<{ file: RunFile; src: string | null }> = ({ file, src }) => {
  const { t } = useI18n();
  const caption = file.looked ?? file.name;
  // "PNG 512×512": the finding is marked on the picture, the whole line is the title
  const facts = file.looked ? (file.looked.slice(file.name.length + 2).split(", ")[0] ?? "") : file.file.filename;
  const body = (
    <>
      {src ? <Preview file={file} src={src} caption={caption} /> : <span className="cua-run-file-name">{file.file.filename}</span>}
      {file.finding ? <span className="cua-run-finding">{t(FINDING_LABEL[file.finding])}</span> : null}
      <span className="cua-run-caption">{facts}</span>
    </>
  );
  const finding = file.finding ?? undefined;
  return src ? (
    <a className="cua-run-file" href={src} target="_blank" rel="noopener noreferrer" title={caption} data-finding={finding}>
      {body}
    </a>
  ) : (
    <span className="cua-run-file" title={caption} data-finding={finding}>
      {body}
    </span>
  );
};

/** The grid; `url` gives a file's /view URL (null where ComfyUI is not at hand: names only). */
export const RunOutputs: FC<{ files: readonly RunFile[]; url: (file: OutputFile) => string | null }> = ({ files, url }) => {
  const { t } = useI18n();
  const shown = files.slice(0, MAX_SHOWN);
  const rest = files.slice(MAX_SHOWN);
  return (
    <div className="cua-run-files" role="group" aria-label={t("runOutputs.label", { count: files.length })}>
      {shown.map((file) => (
        <Thumbnail key={file.name} file={file} src={url(file.file)} />
      ))}
      {rest.length ? (
        <span className="cua-run-more" title={rest.map((file) => file.looked ?? file.name).join("\n")}>
          {t("runOutputs.more", { count: rest.length })}
        </span>
      ) : null}
    </div>
  );
};

/** Under a `queueWorkflow` call that is done (tools/queueWorkflow.ts): what the run made. */
export const queueWorkflowCard: ToolCardSpec = {
  tool: "queueWorkflow",
  Below: function RunFilesBelow({ part, state }) {
    const store = useStore();
    const files = state === "done" ? runFiles(part.result) : [];
    return files.length ? <RunOutputs files={files} url={(file) => store.fileUrl(file)} /> : null;
  },
};

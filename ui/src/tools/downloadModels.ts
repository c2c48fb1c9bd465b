// downloadModels: downloads models a findMissing scan found, by name, after the user allowed it
// on the approval card (each model's name, folder, host, size, and a warning for pickle files).
// The server resolves the names in its stored scan (routes/downloads.py): the addresses are the
// scan's, never the model's. While the files come, the tool's card shows each one's progress
// with a Cancel (panel/InstallCards.tsx); the result says per model: done, already present,
// failed (with the server's reason), cancelled.
import { formatNumber, t } from "../i18n";
import { Denied, type ApprovalRequest } from "./approvals";
import { listText, ToolError, type ToolContext, type ToolResult } from "./context";
import { downloadJob, startDownloads, storedScan, type DownloadJob, type JobState, type ScanModel } from "./installScans";

export interface DownloadModelsArgs {
  scan: string;
  models: string[];
}

/** How often a running download's state is read. */
export const POLL_MS = 400;
const RUNNING: readonly JobState[] = ["queued", "downloading", "verifying"];

export function isRunning(job: DownloadJob): boolean {
  return RUNNING.includes(job.state);
}

/** Bytes for people: "1.5 GB", "640 KB". */
export function byteText(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${formatNumber(Number(value.toFixed(unit ? 1 : 0)))} ${units[unit]}`;
}

/** One line of the approval card. */
function modelLine(model: ScanModel): string {
  const line = t("installs.download.line", {
    name: model.name,
    folder: model.directory ?? "?",
    host: model.host ?? "?",
    size: model.size == null ? t("installs.find.unknown") : byteText(model.size),
  });
  return model.pickle ? `${line} — ${t("installs.find.pickle")}` : line;
}

/** What the model reads of a finished job. */
function outcome(job: DownloadJob): Record<string, unknown> {
  if (job.state === "done") return { name: job.name, folder: job.folder, status: job.alreadyPresent ? "already-present" : "done" };
  if (job.state === "failed") return { name: job.name, status: "failed", error: job.error?.error ?? "failed", ...(job.error ? { code: job.error.code, params: job.error.params } : {}) };
  if (job.state === "cancelled") return { name: job.name, status: "cancelled", note: "cancelled by the user; the part is kept, a new download resumes it" };
  return { name: job.name, status: "downloading", note: "still downloading on the server (the user stopped waiting)" };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

export async function downloadModels(ctx: ToolContext, args: DownloadModelsArgs): Promise<ToolResult> {
  const names = [...new Set(args.models.map((m) => m.trim()).filter(Boolean))];
  const scan = await storedScan(args.scan);
  if (!scan) throw new ToolError(`Scan ${args.scan} is not known (the server keeps its last 32 scans until it restarts): call findMissing again. Nothing was downloaded.`);
  const byName = new Map(scan.missingModels.map((m) => [m.name, m]));
  const unknown = names.filter((n) => !byName.has(n));
  if (unknown.length) {
    throw new ToolError(`Not among the scan's missing models: ${listText(unknown)}. Its missing models: ${listText([...byName.keys()]) || "none"}. Nothing was downloaded.`);
  }
  const refused = names.map((n) => byName.get(n)!).filter((m) => !m.downloadable);
  if (refused.length) {
    throw new ToolError(`Cannot be downloaded: ${refused.map((m) => `${m.name} (${m.problem})`).join("; ")}. Nothing was downloaded.`);
  }
  const request: ApprovalRequest = {
    kind: "download",
    action: t("installs.approve.download", { count: names.length }),
    nodes: names.map((n) => modelLine(byName.get(n)!)),
  };
  if (ctx.approve && !(await ctx.approve(request))) throw new Denied(`Download ${listText(names)}.`);
  let jobs = (await startDownloads(scan.scan, names)).jobs;
  const report = () => {
    const done = jobs.reduce((sum, j) => sum + j.bytesDone, 0);
    const total = jobs.reduce((sum, j) => sum + (j.bytesTotal ?? 0), 0);
    ctx.progress?.({ status: t("installs.download.progress", { done: byteText(done), total: total ? byteText(total) : "?" }), downloads: jobs });
  };
  report();
  while (jobs.some(isRunning) && !ctx.detach?.aborted) {
    await sleep(POLL_MS, ctx.detach);
    jobs = await Promise.all(jobs.map((j) => (isRunning(j) ? downloadJob(j.id) : j)));
    report();
  }
  const models = jobs.map(outcome);
  const fine = models.filter((m) => m.status === "done" || m.status === "already-present").length;
  if (fine || jobs.some(isRunning)) return { ok: true, models, ...(fine ? { note: "Model files need no restart: a run finds them." } : {}) };
  return { ok: false, error: `Nothing was downloaded: ${models.map((m) => `${String(m.name)} ${String(m.status)}${m.error ? ` (${String(m.error)})` : ""}`).join("; ")}.`, models };
}

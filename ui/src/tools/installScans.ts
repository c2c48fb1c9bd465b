// Our backend's install routes as the install tools call them (routes/installs.py,
// routes/downloads.py): a scan of a workflow, a stored scan by id, downloads started by a scan's
// model names, a download's state and its cancel. Failures throw ToolError with the server's
// English text (it goes to the model) and its code (the cards translate it).
import { apiFetch, apiUrl, parseServerError } from "../server/api";
import { ToolError } from "./context";

export type PackState = "not-installed" | "disabled" | "not-loaded" | "loaded";

export interface ScanPack {
  id: string;
  title: string | null;
  author: string | null;
  description: string | null;
  repository: string | null;
  registryId: string | null;
  state: PackState;
  note: string | null;
  version: string | null;
  nodeTypes: string[];
  /** Only the Comfy Registry knows these; Manager's map does not. */
  license?: string | null;
  size?: string | number | null;
}

export interface ScanNodeType {
  type: string;
  nodes: { id: number | string; type: string }[];
  packs: string[];
  note?: string;
  provider?: string;
}

export interface ScanModel {
  name: string;
  directory: string | null;
  url: string | null;
  host: string | null;
  hash: string | null;
  /** Bytes: its host's answer to a HEAD (exact), else Manager's list (rounded). */
  size: number | null;
  sizeFrom?: "host" | "manager" | null;
  pickle: boolean;
  downloadable: boolean;
  problem: string | null;
}

export interface Scan {
  scan: string;
  format: string;
  missingNodes: ScanNodeType[];
  packs: ScanPack[];
  missingModels: ScanModel[];
  presentModels: { name: string; directory: string | null }[];
  /** modelListLegacyUiOnly: Manager serves its model list only with its legacy UI, not used here. */
  sources: { nodeMap: string | null; installedPacks: boolean; modelList: boolean; modelListLegacyUiOnly?: boolean; notes: string[] };
}

export interface CodedError {
  error: string;
  code: string;
  params: Record<string, string | number>;
}

export type JobState = "queued" | "downloading" | "verifying" | "done" | "failed" | "cancelled";

export interface DownloadJob {
  id: string;
  state: JobState;
  host: string;
  folder: string;
  name: string;
  pickle: boolean;
  sha256: string | null;
  size: number | null;
  bytesDone: number;
  bytesTotal: number | null;
  bytesPerSecond: number;
  etaSeconds: number | null;
  alreadyPresent: boolean;
  error: CodedError | null;
}

export const SCAN_ROUTE = "/api/assistant/installs/scan";
export const DOWNLOADS_ROUTE = "/api/assistant/installs/downloads";

async function call<T>(path: string, method = "GET", body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: { accept: "application/json" }, cache: "no-store" };
  if (body !== undefined) {
    init.headers = { ...init.headers, "content-type": "application/json" };
    init.body = JSON.stringify(body);
  }
  let response: Response;
  try {
    response = await apiFetch(apiUrl(path), init);
  } catch (error) {
    throw new ToolError(`The assistant's server is not reachable (${String(error)}); try again.`);
  }
  const text = await response.text();
  if (!response.ok) {
    const { text: english, coded } = parseServerError(text, `HTTP ${response.status}`);
    throw new ToolError(english, coded ? { code: coded.code } : {});
  }
  return JSON.parse(text) as T;
}

/** The scans this page made, in full, by id: the find cards show them (the model reads less). */
const scans = new Map<string, Scan>();

export async function scanWorkflow(body: { workflow: unknown } | { attachment: string }): Promise<Scan> {
  const scan = await call<Scan>(SCAN_ROUTE, "POST", body);
  scans.set(scan.scan, scan);
  return scan;
}

/** A scan in full: this page's, else the server's stored one (null when it is gone). */
export async function storedScan(id: string): Promise<Scan | null> {
  const known = scans.get(id);
  if (known) return known;
  try {
    const scan = await call<Scan>(`${SCAN_ROUTE}/${encodeURIComponent(id)}`);
    scans.set(id, scan);
    return scan;
  } catch {
    return null;
  }
}

/** This page's copy of a scan, if it has one (synchronous, for a card's first render). */
export function knownScan(id: string): Scan | undefined {
  return scans.get(id);
}

export function startDownloads(scan: string, models: string[]): Promise<{ jobs: DownloadJob[] }> {
  return call(DOWNLOADS_ROUTE, "POST", { scan, models });
}

export function downloadJob(id: string): Promise<DownloadJob> {
  return call(`${DOWNLOADS_ROUTE}/${encodeURIComponent(id)}`);
}

export function cancelDownload(id: string): Promise<DownloadJob> {
  return call(`${DOWNLOADS_ROUTE}/${encodeURIComponent(id)}`, "DELETE");
}

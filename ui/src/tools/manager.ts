// The browser's client of ComfyUI-Manager's own API, called as Manager's UI calls it (the ComfyUI
// frontend 1.58.1's useComfyManagerService): same origin, through ComfyUI's `/api` prefix
// (`app.api.fetchApi("/v2/...")`), tasks queued for the frontend's websocket client id, whose
// `cm-task-started` / `cm-task-completed` events ComfyUI's socket dispatches to listeners
// registered with `api.addEventListener` (1.27.10 and 1.58.1 dispatch any registered type).
// Research and recordings: /work/notes/manager_api.md §2a (endpoints), §3 (queue and events),
// §4 (security level), §5 (reboot); the stand-in tests/manager_standin.py answers alike.
//
// Only the new API (Manager 4.x with --enable-manager) installs from its queue here; the legacy
// handlers (3.x custom node, 4.x --enable-manager-legacy-ui) are detected, and the caller gives
// the user instructions instead, but for a git URL, which 4.x's legacy UI installs through its
// git-URL route (managerGitUrl.ts).

export interface ManagerApi {
  clientId?: string;
  /** 1.58: the id the socket was opened with before the server's first `status` (may be unset on 1.27). */
  initialClientId?: string;
  fetchApi(route: string, init?: RequestInit): Promise<Response>;
  addEventListener(type: string, listener: (event: CustomEvent) => void): void;
  removeEventListener(type: string, listener: (event: CustomEvent) => void): void;
}

/** Which Manager answers: the new API, the legacy handlers, or none. */
export type ManagerKind = "v4" | "legacy" | "none";

export interface ManagerInfo {
  kind: ManagerKind;
  /** "V4.3", "V3.41": what manager/version says. */
  version?: string;
  /** The reboot route under the `/api` prefix, where there is one. */
  rebootPath?: string;
  /** The git-URL install route (Manager 4.x's legacy UI; managerGitUrl.ts). */
  gitUrlPath?: string;
}

/** How long a task may take before the caller stops waiting (a git clone + pip install is minutes). */
export const INSTALL_TIMEOUT_MS = 15 * 60_000;
/** How often the queue is polled besides the events (a crashed worker sends none). */
export const POLL_MS = 2000;

async function text(response: Response): Promise<string> {
  try {
    return (await response.text()).trim();
  } catch {
    return "";
  }
}

/** GET `route`; null when it fails or answers anything but 200. */
async function getText(api: ManagerApi, route: string): Promise<string | null> {
  try {
    const response = await api.fetchApi(route, { cache: "no-store" });
    return response.status === 200 ? await text(response) : null;
  } catch {
    return null;
  }
}

async function getJson<T>(api: ManagerApi, route: string): Promise<T | null> {
  const body = await getText(api, route);
  if (body === null) return null;
  try {
    return JSON.parse(body) as T;
  } catch {
    return null;
  }
}

/** Which Manager this ComfyUI has: v2/manager/version (4.x), else manager/version (3.x). */
export async function detectManager(api: ManagerApi): Promise<ManagerInfo> {
  const v4 = await getText(api, "/v2/manager/version");
  if (v4 !== null) {
    const legacy = await getJson<{ is_legacy_manager_ui?: boolean }>(api, "/v2/manager/is_legacy_manager_ui");
    const info: ManagerInfo = { kind: "v4", version: v4, rebootPath: "/v2/manager/reboot" };
    return legacy?.is_legacy_manager_ui ? { ...info, kind: "legacy", gitUrlPath: "/v2/customnode/install/git_url" } : info;
  }
  const v3 = await getText(api, "/manager/version");
  if (v3 !== null) return { kind: "legacy", version: v3, rebootPath: "/manager/reboot" };
  return { kind: "none" };
}

/** The client id Manager sends a task's events to: the frontend's socket id (sid = clientId). */
export function clientIdOf(api: ManagerApi): string {
  return api.clientId ?? api.initialClientId ?? "unknown";
}

// ---- what Manager knows about a pack ----------------------------------------------------------

export interface PackInfo {
  /** As the model named it: a cnr id ("comfyui-impact-pack") or a repository URL. */
  id: string;
  title?: string;
  author?: string;
  repository?: string;
}

type MapEntry = [string[], { title?: string; title_aux?: string; author?: string; reference?: string }];

export const isUrl = (id: string) => /^https?:\/\//i.test(id);

/** Title, author and repository of each pack, from Manager's node map (getmappings; its keys are
 * repository URLs, or cnr ids where the Registry was reachable). Unknown packs keep their id only. */
export async function describePacks(api: ManagerApi, ids: string[]): Promise<PackInfo[]> {
  const map = (await getJson<Record<string, MapEntry>>(api, "/v2/customnode/getmappings?mode=cache")) ?? {};
  return ids.map((id) => {
    const meta = map[id]?.[1];
    const repository = isUrl(id) ? id : meta?.reference;
    return {
      id,
      ...(meta?.title || meta?.title_aux ? { title: (meta.title || meta.title_aux)!.trim() } : {}),
      ...(meta?.author ? { author: meta.author } : {}),
      ...(repository ? { repository } : {}),
    };
  });
}

interface InstalledEntry {
  ver?: string;
  cnr_id?: string;
  aux_id?: string | null;
  enabled?: boolean;
}

/** The packs of `ids` installed and enabled now (customnode/installed: by cnr id, folder, or a
 * repository URL's author/name). */
export async function installedNow(api: ManagerApi, ids: string[]): Promise<Set<string>> {
  const installed = (await getJson<Record<string, InstalledEntry>>(api, "/v2/customnode/installed")) ?? {};
  const found = new Set<string>();
  for (const id of ids) {
    const repo = isUrl(id) ? id.replace(/^https?:\/\/[^/]+\//i, "").replace(/\.git$|\/$/g, "").toLowerCase() : undefined;
    const name = (repo ?? id).split("/").pop()!.toLowerCase();
    for (const [dir, entry] of Object.entries(installed)) {
      if (entry.enabled === false) continue;
      const same = entry.cnr_id?.toLowerCase() === id.toLowerCase() || dir.toLowerCase() === name || (!!repo && entry.aux_id?.toLowerCase() === repo);
      if (same) found.add(id);
    }
  }
  return found;
}

// ---- installing -------------------------------------------------------------------------------

/** The params of an `install` task as Manager's UI sends them: a Registry pack by its cnr id at
 * its latest version; a pack known by its repository only as nightly (a git clone). */
export function installParams(id: string): Record<string, unknown> {
  if (isUrl(id)) {
    const name = id.replace(/\.git$|\/$/g, "").split("/").pop() ?? id;
    return { id: name, version: "nightly", selected_version: "nightly", repository: id, mode: "cache", channel: "default" };
  }
  return { id, version: "latest", selected_version: "latest", mode: "cache", channel: "default" };
}

/** How one pack's task ended. `refused`: Manager's security level forbade it. `not-listed`:
 * Manager's node lists do not have it (managerGitUrl.ts). `lost`: the worker stopped without
 * recording it (it crashed on an earlier task). `timeout`: still not done. */
export type TaskStatus = "installed" | "already-installed" | "refused" | "not-listed" | "failed" | "lost" | "timeout";

export interface TaskOutcome {
  id: string;
  status: TaskStatus;
  /** Manager's own words (its result, or the HTTP answer). */
  message?: string;
}

interface Completed {
  ui_id?: string;
  result?: string;
  status?: { status_str?: string; messages?: string[] };
}

/** A finished task's outcome from Manager's record (the cm-task-completed event, or its history). */
export function outcomeOf(id: string, done: Completed): TaskOutcome {
  const result = done.result ?? "";
  const state = done.status?.status_str;
  if (state === "success" || result === "success") return { id, status: "installed" };
  if (state === "skip" || result === "skip") return { id, status: "already-installed" };
  // The security check's only trace in the new API: result "failed" (the log says why).
  if (result === "failed") return { id, status: "refused", message: "failed" };
  const message = done.status?.messages?.filter(Boolean).join("; ") || result || "failed";
  return { id, status: "failed", message };
}

export interface InstallOptions {
  timeoutMs?: number;
  pollMs?: number;
  /** Hears each task start and end (for the tool card). */
  onTask?: (id: string, state: "started" | TaskStatus) => void;
  /** A fresh ui_id per task (tests give fixed ones). */
  uiId?: (id: string) => string;
}

interface Queued {
  id: string;
  uiId: string;
}

/**
 * Queues one install task per pack, starts Manager's worker and follows the tasks to their end:
 * by their `cm-task-*` events, and by polling the queue's history (events to a socket that
 * reconnected are lost; a crashed worker sends no all-done). Never rejects.
 */
export async function installPacks(api: ManagerApi, ids: string[], options: InstallOptions = {}): Promise<TaskOutcome[]> {
  const { timeoutMs = INSTALL_TIMEOUT_MS, pollMs = POLL_MS, onTask } = options;
  const newId = options.uiId ?? (() => `cua-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`);
  const outcomes = new Map<string, TaskOutcome>();
  const queued: Queued[] = [];
  const byUi = new Map<string, string>();
  let wake: () => void = () => {};
  const settle = (outcome: TaskOutcome) => {
    if (outcomes.has(outcome.id)) return;
    outcomes.set(outcome.id, outcome);
    onTask?.(outcome.id, outcome.status);
    if (queued.every((q) => outcomes.has(q.id))) wake();
  };
  const listeners: [string, (event: CustomEvent) => void][] = [
    [
      "cm-task-started",
      (event) => {
        const id = byUi.get(String((event.detail as Completed | undefined)?.ui_id));
        if (id) onTask?.(id, "started");
      },
    ],
    [
      "cm-task-completed",
      (event) => {
        const detail = (event.detail ?? {}) as Completed;
        const id = byUi.get(String(detail.ui_id));
        if (id) settle(outcomeOf(id, detail));
      },
    ],
    ["cm-queue-status", () => wake()], // all-done: look at the history now
  ];
  for (const [type, listener] of listeners) api.addEventListener(type, listener);
  try {
    const clientId = clientIdOf(api);
    for (const id of ids) {
      const uiId = newId(id);
      const refused = await queueTask(api, { ui_id: uiId, client_id: clientId, kind: "install", params: installParams(id) });
      if (refused) outcomes.set(id, { id, ...refused });
      else {
        queued.push({ id, uiId });
        byUi.set(uiId, id);
      }
    }
    if (!queued.length) return ids.map((id) => outcomes.get(id)!);
    const start = await post(api, "/v2/manager/queue/start");
    if (start.status !== 200 && start.status !== 201) {
      const why = start.status === 403 ? ({ status: "refused", message: `HTTP 403 ${start.text}`.trim() } as const) : ({ status: "failed", message: startFailure(start) } as const);
      for (const q of queued) outcomes.set(q.id, { id: q.id, ...why });
      return ids.map((id) => outcomes.get(id)!);
    }
    const deadline = Date.now() + timeoutMs;
    while (queued.some((q) => !outcomes.has(q.id)) && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.min(pollMs, Math.max(0, deadline - Date.now())));
      });
      await poll(api, queued, outcomes, settle);
    }
    for (const q of queued) if (!outcomes.has(q.id)) settle({ id: q.id, status: "timeout" });
    return ids.map((id) => outcomes.get(id)!);
  } finally {
    for (const [type, listener] of listeners) api.removeEventListener(type, listener);
  }
}

interface Posted {
  status: number;
  text: string;
}

async function post(api: ManagerApi, route: string, body?: unknown): Promise<Posted> {
  try {
    const init: RequestInit = body === undefined ? { method: "POST" } : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
    const response = await api.fetchApi(route, init);
    return { status: response.status, text: await text(response) };
  } catch (error) {
    return { status: 0, text: error instanceof Error ? error.message : String(error) };
  }
}

function startFailure(answer: Posted): string {
  return answer.status ? `queue/start answered HTTP ${answer.status} ${answer.text}`.trim() : `ComfyUI-Manager could not be reached (${answer.text})`;
}

/** POST queue/task; what went wrong when it was not queued (403: the security level, legacy style). */
async function queueTask(api: ManagerApi, task: Record<string, unknown>): Promise<Omit<TaskOutcome, "id"> | null> {
  const answer = await post(api, "/v2/manager/queue/task", task);
  if (answer.status === 200) return null;
  if (answer.status === 403) return { status: "refused", message: `HTTP 403 ${answer.text}`.trim() };
  return { status: "failed", message: answer.status ? `HTTP ${answer.status} ${answer.text}`.trim() : `ComfyUI-Manager could not be reached (${answer.text})` };
}

type Settle = (outcome: TaskOutcome) => void;

/** Each unfinished task's record in the history; once the worker is idle, a task it never
 * recorded is lost (it crashed before reaching it: Manager's worker exits on an exception). */
async function poll(api: ManagerApi, queued: Queued[], outcomes: Map<string, TaskOutcome>, settle: Settle): Promise<void> {
  const open = queued.filter((q) => !outcomes.has(q.id));
  if (!open.length) return;
  for (const q of open) {
    const record = await getJson<{ history?: Completed & { ui_id?: string } }>(api, `/v2/manager/queue/history?ui_id=${encodeURIComponent(q.uiId)}`);
    if (record?.history?.ui_id === q.uiId) settle(outcomeOf(q.id, record.history));
  }
  const still = open.filter((q) => !outcomes.has(q.id));
  if (!still.length) return;
  const status = await getJson<{ is_processing?: boolean; pending_count?: number; in_progress_count?: number }>(api, "/v2/manager/queue/status");
  if (status && status.is_processing === false && !status.pending_count && !status.in_progress_count) {
    // Read the history once more: the last task may have finished between the two requests.
    for (const q of still) {
      const record = await getJson<{ history?: Completed & { ui_id?: string } }>(api, `/v2/manager/queue/history?ui_id=${encodeURIComponent(q.uiId)}`);
      if (record?.history?.ui_id === q.uiId) settle(outcomeOf(q.id, record.history));
      else settle({ id: q.id, status: "lost", message: "ComfyUI-Manager's worker stopped before this task (see ComfyUI's log)" });
    }
  }
}

// ---- restarting -------------------------------------------------------------------------------

export type RebootAnswer = { accepted: true } | { accepted: false; refused: boolean; message: string };

/** POSTs Manager's reboot. Manager replaces its process (os.execv) without answering: a dropped
 * connection is the success; 403 is the security level. */
export async function reboot(api: ManagerApi, path = "/v2/manager/reboot"): Promise<RebootAnswer> {
  const answer = await post(api, path);
  if (answer.status === 0 || (answer.status >= 200 && answer.status < 300)) return { accepted: true };
  if (answer.status === 403) return { accepted: false, refused: true, message: `HTTP 403 ${answer.text}`.trim() };
  return { accepted: false, refused: false, message: `HTTP ${answer.status} ${answer.text}`.trim() };
}

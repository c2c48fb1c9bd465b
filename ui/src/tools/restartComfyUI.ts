// restartComfyUI: restarts ComfyUI through ComfyUI-Manager's reboot, after the user allowed it,
// waits until ComfyUI's websocket is back and our backend answers, reloads the node definitions
// (as Manager's own "apply changes" does) and reports which of the asked node types are now
// registered. The tool result reaches the model in the next request, to the restarted server:
// the turn goes on (the answer with this call was saved when its stream ended, before the
// approval card asked).
import { showToast, type ComfyApp, type LGraphNode, type LiteGraphGlobal } from "../host/comfy";
import { serializeWorkflow } from "./checkpointGraph";
import { allGraphs, nodesOf, rootRef } from "./graphs";
import { t } from "../i18n";
import { apiFetch } from "../server/api";
import { Denied, type ApprovalRequest } from "./approvals";
import { type ToolContext, type ToolResult } from "./context";
import { detectManager, reboot, type ManagerApi } from "./manager";

export interface RestartComfyUIArgs {
  nodeTypes?: string[];
}

/** Longest wait for ComfyUI to come back (a start with many packs takes minutes). */
export const RESTART_TIMEOUT_MS = 180_000;
/** A cheap GET of ours: it answers once the restarted server has loaded this extension. */
export const BACKEND_PROBE = "/api/assistant/tools";

export const RESTART_REFUSED_NOTE =
  "ComfyUI-Manager's security level refused the restart. The user can restart ComfyUI by hand " +
  "(stop and start it), or allow it: stop ComfyUI, set `security_level = normal` in " +
  "ComfyUI-Manager's config.ini (user/__manager/config.ini), start ComfyUI again.";

export interface WaitOptions {
  timeoutMs?: number;
  /** Without any sign from ComfyUI's socket, the first ask of our backend after this long (then
   * doubled, up to 4× it): a fallback, as a request to a server that is down logs an error. */
  probeMs?: number;
  /** How often the socket's signs are looked at (no request). */
  tickMs?: number;
  /** After the backend answers, how long to wait for the websocket's `reconnected` too. */
  socketGraceMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function backendUp(): Promise<boolean> {
  try {
    const response = await apiFetch(BACKEND_PROBE, { cache: "no-store" });
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Waits for the restarted ComfyUI, quietly: a request to a server that is down logs an error in
 * the browser's console whatever catches it (issue 35: about 29 while ComfyUI restarted, one per
 * second). ComfyUI's own socket shows the way — it reconnects by itself and says so
 * (`reconnecting`, then `reconnected`) — and our backend is asked once it is back (the restarted
 * server has loaded this extension when it answers); without any sign, rarely (`probeMs`, then
 * doubled). The old process may answer for a moment after the reboot request, so an answer
 * before any sign of the restart does not count. Resolves with the seconds it took, or null on
 * timeout.
 */
export async function waitForRestart(api: ManagerApi, options: WaitOptions = {}, watch: SocketWatch = watchSocket(api)): Promise<{ seconds: number; socket: boolean } | null> {
  const { timeoutMs = RESTART_TIMEOUT_MS, probeMs = 30_000, tickMs = 200, socketGraceMs = 15_000 } = options;
  const started = Date.now();
  const signs = watch.signs;
  let delay = probeMs;
  let nextAsk = started + probeMs;
  try {
    while (Date.now() - started < timeoutMs) {
      if ((signs.reconnected && !signs.asked) || Date.now() >= nextAsk) {
        signs.asked = true;
        const up = await backendUp();
        if (!up) signs.dropped = true;
        else if (signs.dropped || signs.reconnected) {
          const upAt = Date.now();
          while (!signs.reconnected && Date.now() - upAt < socketGraceMs && Date.now() - started < timeoutMs) await sleep(tickMs);
          return { seconds: Math.round((Date.now() - started) / 100) / 10, socket: signs.reconnected };
        }
        nextAsk = Date.now() + delay;
        delay = Math.min(delay * 2, probeMs * 4);
      }
      await sleep(tickMs);
    }
    return null;
  } finally {
    watch.stop();
  }
}

export interface SocketWatch {
  signs: { dropped: boolean; reconnected: boolean; asked: boolean };
  stop(): void;
}

/** What ComfyUI's socket says from now on (started before the reboot request: the socket may
 * drop before that request settles). */
export function watchSocket(api: ManagerApi): SocketWatch {
  const signs = { dropped: false, reconnected: false, asked: false };
  const onDrop = () => {
    signs.dropped = true;
  };
  const onReconnect = () => {
    signs.reconnected = true;
    signs.asked = false; // ask our backend once now
  };
  api.addEventListener("reconnecting", onDrop);
  api.addEventListener("reconnected", onReconnect);
  return {
    signs,
    stop: () => {
      api.removeEventListener("reconnecting", onDrop);
      api.removeEventListener("reconnected", onReconnect);
    },
  };
}

/** Whether ComfyUI's server registers a node type now (GET /object_info/<type>, as ComfyUI serves it). */
async function registeredOnServer(api: ManagerApi, type: string): Promise<boolean> {
  try {
    const response = await api.fetchApi(`/object_info/${encodeURIComponent(type)}`, { cache: "no-store" });
    if (!response.ok) return false;
    const body = (await response.json()) as Record<string, unknown>;
    return !!body && typeof body === "object" && type in body;
  } catch {
    return false;
  }
}

const QUIET = { showMissingNodesDialog: false, showMissingModelsDialog: false, checkForRerouteMigration: false };

/**
 * Nodes of the open workflow that were loaded while their type was missing stay placeholders
 * once the type is registered: reload the workflow into its own tab (its current state, unsaved
 * edits included), as Manager's own "apply changes" does after its reboot. How many came back.
 */
async function reloadPlaceholders(app: ComfyApp, lg: LiteGraphGlobal): Promise<number> {
  const count = placeholdersOfKnownTypes(app, lg).length;
  if (!count) return 0;
  const workflow = app.extensionManager?.workflow?.activeWorkflow ?? null;
  await app.loadGraphData(serializeWorkflow(app), true, true, workflow, QUIET);
  return count;
}

/** LiteGraph's placeholders (a plain node holding its JSON in `last_serialization`; 1.27.10 and
 * 1.58.1 also set `has_errors`, 1.49.6 does not) whose type is registered now, at any depth of
 * the workflow: no instance of the type's class. */
export function placeholdersOfKnownTypes(app: ComfyApp, lg: LiteGraphGlobal): LGraphNode[] {
  return [rootRef(app), ...allGraphs(app)] // (allGraphs: the subgraph levels)
    .flatMap(nodesOf)
    .filter((node) => {
      const placeholder = node as LGraphNode & { has_errors?: boolean; last_serialization?: { type?: string } };
      const registered = lg.registered_node_types[placeholder.last_serialization?.type ?? placeholder.type];
      return !!placeholder.last_serialization && !!registered && (placeholder.has_errors === true || !(node instanceof registered));
    });
}

export async function restartComfyUI(ctx: ToolContext, args: RestartComfyUIArgs): Promise<ToolResult> {
  const api = ctx.app.api as ManagerApi;
  const types = [...new Set((args.nodeTypes ?? []).map((n) => n.trim()).filter(Boolean))];
  const manager = await detectManager(api);
  if (manager.kind === "none" || !manager.rebootPath) {
    return {
      ok: false,
      error: "ComfyUI-Manager is not available, so the assistant cannot restart ComfyUI: ask the user to stop and start ComfyUI, then reload this page.",
    };
  }
  const request: ApprovalRequest = { kind: "restart", action: t("installs.approve.restart"), nodes: types };
  if (ctx.approve && !(await ctx.approve(request))) throw new Denied("Restart ComfyUI.");
  const watch = watchSocket(api);
  const answer = await reboot(api, manager.rebootPath);
  if (!answer.accepted) watch.stop();
  if (!answer.accepted) {
    if (answer.refused) {
      showToast(ctx.app, "error", t("installs.refused.title"), t("installs.refused.restart"), 15000);
      return { ok: false, error: RESTART_REFUSED_NOTE, refused: true };
    }
    return { ok: false, error: `ComfyUI-Manager did not restart ComfyUI: ${answer.message}.` };
  }
  ctx.progress?.({ status: t("installs.progress.restarting") });
  const back = await waitForRestart(api, {}, watch);
  if (!back) {
    return {
      ok: false,
      error: `ComfyUI did not come back within ${RESTART_TIMEOUT_MS / 1000} s of the restart; ask the user to look at ComfyUI's console (a pack may fail to import) and reload this page.`,
    };
  }
  // Manager's own UI does this after its reboot: the frontend learns the new node types.
  let refreshed = true;
  try {
    await ctx.app.extensionManager.command.execute("Comfy.RefreshNodeDefinitions");
  } catch {
    refreshed = false;
  }
  const registered: string[] = [];
  const missing: string[] = [];
  for (const type of types) ((await registeredOnServer(api, type)) ? registered : missing).push(type);
  const notInEditor = refreshed ? registered.filter((type) => !ctx.lg.registered_node_types[type]) : [];
  let reloaded = 0;
  try {
    reloaded = refreshed ? await reloadPlaceholders(ctx.app, ctx.lg) : 0;
  } catch {
    // (the note below asks for a reload of the page)
  }
  showToast(ctx.app, "success", t("installs.restarted"), undefined, 4000);
  return {
    ok: true,
    restarted: true,
    seconds: back.seconds,
    ...(types.length ? { registered, missing } : {}),
    ...(missing.length ? { note: `Not registered after the restart: ${missing.join(", ")} (the pack may have failed to import; ComfyUI's console says why).` } : {}),
    ...(reloaded ? { workflow: `The open workflow was reloaded: ${reloaded} node(s) of the new types work now.` } : {}),
    ...(notInEditor.length || !refreshed ? { editor: "The page has not loaded every new node type yet: the user should reload the page." } : {}),
    ...(back.socket ? {} : { socket: "ComfyUI's websocket has not reconnected yet: the user may need to reload the page." }),
  };
}

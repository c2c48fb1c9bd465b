// installNodePacks: installs node packs through ComfyUI-Manager's own API (tools/manager.ts),
// after the user allowed it on the approval card, and reports per pack. Git URLs (in any form
// people paste) become https URLs; Manager 4.x's legacy UI installs them through its git-URL
// route (managerGitUrl.ts). Without a Manager that installs (none, or the legacy handlers for a
// Registry id), nothing is installed and the result says how to do it by hand. A pack Manager
// does not list is explained with what the user can do. The packs load at ComfyUI's next start:
// restartComfyUI.
import { showToast } from "../host/comfy";
import { t } from "../i18n";
import { Denied, type ApprovalRequest } from "./approvals";
import { listText, type ToolContext, type ToolResult } from "./context";
import { describePacks, detectManager, installedNow, installPacks, isUrl, type ManagerApi, type ManagerInfo, type PackInfo, type TaskOutcome } from "./manager";
import { asGitUrl, GIT_URL_REFUSED_NOTE, installGitUrl, notListedNote, withNotListed } from "./managerGitUrl";

export interface InstallNodePacksArgs {
  packs: string[];
}

/** What the model reads when Manager refuses at its security level (English: it goes to the model). */
export const REFUSED_NOTE =
  "ComfyUI-Manager's security level refused the install. The user can allow it: stop ComfyUI, set " +
  "`security_level = normal` in ComfyUI-Manager's config.ini (user/__manager/config.ini; older " +
  "versions: user/default/ComfyUI-Manager/config.ini), start ComfyUI again, then retry. A pack installed from its " +
  "repository (a git URL) also needs ComfyUI listening on this computer only (127.0.0.1, the default) or " +
  "`network_mode = personal_cloud` there.";


/** How to install a pack without Manager: comfy-cli for a Registry id, git + pip for a repository. */
export function manualSteps(pack: PackInfo): string {
  const repository = pack.repository ?? (isUrl(pack.id) ? pack.id : undefined);
  const cli = isUrl(pack.id) ? undefined : `comfy node install ${pack.id}`;
  const git = repository
    ? `cd ComfyUI/custom_nodes && git clone ${repository} && pip install -r ${repository.replace(/\.git$|\/$/g, "").split("/").pop()}/requirements.txt ` +
      "(with the python that runs ComfyUI), then restart ComfyUI"
    : undefined;
  return [cli, git].filter(Boolean).join("; or: ") || `install ${pack.id} from its repository into ComfyUI/custom_nodes`;
}

/** One line of the approval card: the pack's title, author and repository where Manager knows them. */
function packLine(pack: PackInfo): string {
  let line = pack.title ? t("installs.pack.titled", { title: pack.title, id: pack.id }) : pack.id;
  if (pack.author) line = t("installs.pack.by", { pack: line, author: pack.author });
  if (pack.repository && pack.repository !== pack.id) line = t("installs.pack.from", { pack: line, repository: pack.repository });
  return line;
}

const STATUS_NOTE: Record<TaskOutcome["status"], string> = {
  installed: "installed; it loads when ComfyUI restarts",
  "already-installed": "already installed and enabled",
  refused: "refused by ComfyUI-Manager's settings",
  "not-listed": "not installed: ComfyUI-Manager does not list it",
  failed: "failed",
  lost: "not done: ComfyUI-Manager's worker stopped before it",
  timeout: "still not done after the time allowed; ComfyUI-Manager may still be working on it",
};

export async function installNodePacks(ctx: ToolContext, args: InstallNodePacksArgs): Promise<ToolResult> {
  const api = ctx.app.api as ManagerApi;
  const ids = [...new Set(args.packs.map((p) => asGitUrl(p) ?? p.trim()).filter(Boolean))];
  if (!ids.length) return { ok: false, error: "packs is empty: name the packs to install (the ids the scan gave)." };
  const manager = await detectManager(api);
  // Manager 4.x's legacy UI installs git URLs through its own route; the rest by hand.
  const todo = manager.kind === "v4" ? ids : manager.gitUrlPath ? ids.filter(isUrl) : [];
  const packs = await describePacks(api, ids);
  const byHand = packs.filter((p) => !todo.includes(p.id));
  if (!todo.length) return withoutManager(ctx, manager, packs);
  const request: ApprovalRequest = {
    kind: "install",
    action: t("installs.approve.packs", { count: todo.length }),
    nodes: packs.filter((p) => todo.includes(p.id)).map(packLine),
  };
  if (ctx.approve && !(await ctx.approve(request))) throw new Denied(`Install ${listText(todo)} through ComfyUI-Manager.`);
  const already = await installedNow(api, todo);
  const progress = ctx.progress;
  const onTask = (id: string, state: string) => progress?.({ status: t(state === "started" ? "installs.progress.installing" : "installs.progress.done", { pack: id }) });
  const outcomes = await installAll(api, manager, todo.filter((id) => !already.has(id)), onTask);
  const byId = new Map<string, TaskOutcome>(outcomes.map((o) => [o.id, withNotListed(o)]));
  for (const id of already) byId.set(id, { id, status: "already-installed" });
  const results = todo.map((id) => byId.get(id)!);
  const report = reportOf(manager, results, byHand);
  toast(ctx, manager, results);
  const failed = results.filter((r) => r.status !== "installed" && r.status !== "already-installed");
  if (failed.length < results.length) return { ok: true, ...report };
  const why = failed.map((r) => `${r.id} ${STATUS_NOTE[r.status]}${shownMessage(r) ? ` (${shownMessage(r)})` : ""}`);
  return { ok: false, error: `Nothing was installed: ${why.join("; ")}.`, ...report };
}

/** No Manager that installs these: nothing is installed; the steps to do it by hand. */
function withoutManager(ctx: ToolContext, manager: ManagerInfo, packs: PackInfo[]): ToolResult {
  showToast(ctx.app, "warning", t("installs.noManager.title"), t(manager.kind === "none" ? "installs.noManager" : "installs.legacyManager"), 10000);
  return {
    ok: false,
    error:
      manager.kind === "none"
        ? "ComfyUI-Manager is not available in this ComfyUI (start it with --enable-manager, or install it): nothing was installed."
        : `This ComfyUI-Manager (${manager.version ?? "legacy UI"}) installs only from its own window (Manager > Custom Nodes Manager)${manager.gitUrlPath ? ", or from a git URL" : ""}: nothing was installed.`,
    installed: [],
    instructions: Object.fromEntries(packs.map((p) => [p.id, manualSteps(p)])),
    note: "Give the user these steps, or ask them to install the packs in ComfyUI-Manager's window; then ComfyUI must restart.",
  };
}

/** The new UI's queue, or the legacy UI's git-URL route one URL at a time (each clones before it answers). */
async function installAll(api: ManagerApi, manager: ManagerInfo, ids: string[], onTask: (id: string, state: string) => void): Promise<TaskOutcome[]> {
  if (manager.kind === "v4") return installPacks(api, ids, { onTask });
  const outcomes: TaskOutcome[] = [];
  for (const id of ids) {
    onTask(id, "started");
    outcomes.push(await installGitUrl(api, manager.gitUrlPath!, id));
    onTask(id, outcomes.at(-1)!.status);
  }
  return outcomes;
}

function reportOf(manager: ManagerInfo, results: TaskOutcome[], byHand: PackInfo[]): Record<string, unknown> {
  const legacy = manager.kind === "legacy";
  const packNote = (r: TaskOutcome) => (r.status === "not-listed" ? notListedNote(r.id, isUrl(r.id) ? r.id : undefined, legacy) : STATUS_NOTE[r.status]);
  const notListed = results.filter((r) => r.status === "not-listed");
  const instructions = [...byHand, ...notListed.map((r) => ({ id: r.id }))];
  return {
    packs: results.map((r) => ({ id: r.id, status: r.status, note: packNote(r), ...(shownMessage(r) ? { message: shownMessage(r) } : {}) })),
    ...(results.some((r) => r.status === "installed") ? { restartNeeded: true, note: "ComfyUI loads the new packs only after a restart: offer restartComfyUI (it asks the user)." } : {}),
    ...(results.some((r) => r.status === "refused") ? { refused: legacy ? GIT_URL_REFUSED_NOTE : REFUSED_NOTE } : {}),
    ...(instructions.length ? { instructions: Object.fromEntries(instructions.map((p) => [p.id, manualSteps(p)])) } : {}),
    ...(byHand.length ? { byHand: `Not installed here (this ComfyUI-Manager installs only git URLs from the assistant): ${listText(byHand.map((p) => p.id))}; give the user the instructions.` } : {}),
  };
}

/** One toast for what the user must know: a refusal and what to change, packs Manager does not list, or success. */
function toast(ctx: ToolContext, manager: ManagerInfo, results: TaskOutcome[]): void {
  const installed = results.filter((r) => r.status === "installed").length;
  const notListed = results.filter((r) => r.status === "not-listed").map((r) => r.id);
  if (results.some((r) => r.status === "refused")) {
    showToast(ctx.app, "error", t("installs.refused.title"), t(manager.kind === "legacy" ? "installs.refused.gitUrl" : "installs.refused.install"), 15000);
  } else if (notListed.length) {
    showToast(ctx.app, "warning", t("installs.notListed.title"), t(notListed.some(isUrl) ? "installs.notListed.url" : "installs.notListed.id", { packs: notListed.join(", ") }), 15000);
  } else if (installed) showToast(ctx.app, "success", t("installs.installed", { count: installed }), t("installs.restartNeeded"));
}

/** Manager's own words for a pack, where they say more than its status. */
function shownMessage(outcome: TaskOutcome): string | undefined {
  return outcome.message && outcome.message !== "failed" ? outcome.message : undefined;
}

// installNodePacks: installs node packs through ComfyUI-Manager's own API (tools/manager.ts),
// after the user allowed it on the approval card, and reports per pack. Without a Manager that
// installs (none, or its legacy handlers), nothing is installed and the result says how to do it
// by hand. The packs load at ComfyUI's next start: restartComfyUI.
import { showToast } from "../comfy";
import { t } from "../i18n";
import { Denied, type ApprovalRequest } from "./approvals";
import { listText, type ToolContext, type ToolResult } from "./context";
import { describePacks, detectManager, installedNow, installPacks, isUrl, type ManagerApi, type PackInfo, type TaskOutcome } from "./manager";

export interface InstallNodePacksArgs {
  packs: string[];
}

/** What the model reads when Manager refuses at its security level (English: it goes to the model). */
export const REFUSED_NOTE =
  "ComfyUI-Manager's security level refused the install. The user can allow it: stop ComfyUI, set " +
  "`security_level = normal` in ComfyUI-Manager's config.ini (user/__manager/config.ini; older " +
  "versions: user/default/ComfyUI-Manager/config.ini), start ComfyUI again, then retry.";


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
  refused: "refused by ComfyUI-Manager's security level",
  failed: "failed",
  lost: "not done: ComfyUI-Manager's worker stopped before it",
  timeout: "still not done after the time allowed; ComfyUI-Manager may still be working on it",
};

export async function installNodePacks(ctx: ToolContext, args: InstallNodePacksArgs): Promise<ToolResult> {
  const api = ctx.app.api as ManagerApi;
  const ids = [...new Set(args.packs.map((p) => p.trim()).filter(Boolean))];
  if (!ids.length) return { ok: false, error: "packs is empty: name the packs to install (the ids the scan gave)." };
  const manager = await detectManager(api);
  if (manager.kind !== "v4") {
    const packs = await describePacks(api, ids);
    showToast(ctx.app, "warning", t("installs.noManager.title"), t(manager.kind === "none" ? "installs.noManager" : "installs.legacyManager"), 10000);
    return {
      ok: false,
      error:
        manager.kind === "none"
          ? "ComfyUI-Manager is not available in this ComfyUI (start it with --enable-manager, or install it): nothing was installed."
          : `This ComfyUI-Manager (${manager.version ?? "legacy UI"}) installs only from its own window (Manager > Custom Nodes Manager): nothing was installed.`,
      installed: [],
      instructions: Object.fromEntries(packs.map((p) => [p.id, manualSteps(p)])),
      note: "Give the user these steps, or ask them to install the packs in ComfyUI-Manager's window; then ComfyUI must restart.",
    };
  }
  const packs = await describePacks(api, ids);
  const request: ApprovalRequest = {
    kind: "install",
    action: t("installs.approve.packs", { count: ids.length }),
    nodes: packs.map(packLine),
  };
  if (ctx.approve && !(await ctx.approve(request))) throw new Denied(`Install ${listText(ids)} through ComfyUI-Manager.`);
  const already = await installedNow(api, ids);
  const todo = ids.filter((id) => !already.has(id));
  const progress = ctx.progress;
  const outcomes = await installPacks(api, todo, {
    onTask: (id, state) => progress?.({ status: t(state === "started" ? "installs.progress.installing" : "installs.progress.done", { pack: id }) }),
  });
  const byId = new Map<string, TaskOutcome>(outcomes.map((o) => [o.id, o]));
  for (const id of already) byId.set(id, { id, status: "already-installed" });
  const results = ids.map((id) => byId.get(id)!);
  const refused = results.some((r) => r.status === "refused");
  const installed = results.filter((r) => r.status === "installed").map((r) => r.id);
  if (refused) showToast(ctx.app, "error", t("installs.refused.title"), t("installs.refused.install"), 15000);
  else if (installed.length) showToast(ctx.app, "success", t("installs.installed", { count: installed.length }), t("installs.restartNeeded"));
  const failed = results.filter((r) => r.status !== "installed" && r.status !== "already-installed");
  const report = {
    packs: results.map((r) => ({ id: r.id, status: r.status, note: STATUS_NOTE[r.status], ...(shownMessage(r) ? { message: shownMessage(r) } : {}) })),
    ...(installed.length ? { restartNeeded: true, note: "ComfyUI loads the new packs only after a restart: offer restartComfyUI (it asks the user)." } : {}),
    ...(refused ? { refused: REFUSED_NOTE } : {}),
  };
  if (failed.length < results.length) return { ok: true, ...report };
  const why = failed.map((r) => `${r.id} ${STATUS_NOTE[r.status]}${shownMessage(r) ? ` (${shownMessage(r)})` : ""}`);
  return { ok: false, error: `Nothing was installed: ${why.join("; ")}.`, ...report };
}

/** Manager's own words for a pack, where they say more than its status. */
function shownMessage(outcome: TaskOutcome): string | undefined {
  return outcome.message && outcome.message !== "failed" ? outcome.message : undefined;
}

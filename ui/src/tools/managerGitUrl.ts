// Installing by git URL, and what ComfyUI-Manager's "not listed" answers mean, as Manager 4.3's
// source has them (comfyui_manager 4.3 from PyPI):
// - its new UI (glob/manager_server.py) has no git-URL route: an `install` task resolves the
//   pack by name in the channel's node list or the Registry's and ignores `repository`; a pack in
//   neither ends with "Node 'name@nightly' not found in [ManagerChannel.default,
//   ManagerDatabaseSource.cache]", an id the Registry list lacks with "Cannot resolve install
//   target: 'id@latest'" (the log says "is not a CNR node");
// - its legacy UI (--enable-manager-legacy-ui, legacy/manager_server.py) has
//   POST /v2/customnode/install/git_url (the URL as the body; it clones at once: 200 installed
//   or already there, 400 failed), allowed only with `allow_git_url_install = true` in the
//   [default] section of config.ini AND ComfyUI listening on loopback only or
//   `network_mode = personal_cloud`, whatever security_level says (403 {"reason":
//   "allow_git_url_install"} otherwise). The pip package reads its bundled node list (it never
//   downloads one), so a newer list comes with a newer ComfyUI-Manager.
import type { ManagerApi, TaskOutcome } from "./manager";

/** Manager 4.x's config file (older versions: user/default/ComfyUI-Manager/config.ini). */
const CONFIG = "user/__manager/config.ini";

/** A git URL in the forms people paste (https, ssh, git@host:owner/name, host/owner/name, with or
 * without .git) as the https URL Manager clones; undefined for a Registry id. */
export function asGitUrl(id: string): string | undefined {
  const text = id.trim();
  const ssh = /^git@([\w.-]+):([\w.-]+\/[\w.-]+?)(?:\.git)?\/?$/i.exec(text);
  if (ssh) return `https://${ssh[1]}/${ssh[2]}`;
  const url = /^(?:([a-z+]+):\/\/(?:[\w.-]+@)?)?([\w-]+(?:\.[\w-]+)+)\/([\w.-]+\/[\w.-]+?)(?:\.git)?\/?$/i.exec(text);
  if (!url) return /^https?:\/\//i.test(text) ? text : undefined; // another https address: as given
  const [, scheme, host = "", path = ""] = url;
  if (!scheme && !/\.[a-z]{2,}$/i.test(host)) return undefined; // "owner/name" alone names no host
  return `https://${host}/${path}`;
}

/** What the model reads when the legacy UI refuses a git URL (English: it goes to the model). */
export const GIT_URL_REFUSED_NOTE =
  "ComfyUI-Manager installs from a git URL only when allowed in its config.ini, whatever its security_level: " +
  `the user can stop ComfyUI, add \`allow_git_url_install = true\` to the [default] section of ${CONFIG}, ` +
  "start ComfyUI again (listening on this computer only, 127.0.0.1, the default; on a network address " +
  "`network_mode = personal_cloud` is needed there too), then retry.";

/** Why a pack Manager does not list was not installed, and what the user can do (for the model). */
export function notListedNote(id: string, url: string | undefined, legacyUi: boolean): string {
  if (!url) {
    return (
      `ComfyUI-Manager does not know a pack called '${id}': it is not in Manager's copy of the Comfy Registry's list. ` +
      "Check the id (as the findMissing scan gave it, or on registry.comfy.org), or install it by its git URL instead."
    );
  }
  const byUrl = legacyUi
    ? "install it by its git URL, which Manager allows only after a config change (see refused)"
    : "install it by its git URL through Manager's legacy interface: stop ComfyUI, add `allow_git_url_install = true` " +
      `to the [default] section of ${CONFIG}, start ComfyUI with --enable-manager --enable-manager-legacy-ui, then ` +
      "ask again (in that interface the assistant installs only by git URL; Registry packs install from Manager's own window)";
  return (
    `ComfyUI-Manager does not list ${url}: it installs from its node list (channel "default") or the Comfy Registry, ` +
    `and neither has it. The user can: ${byUrl}; or get a newer node list by updating ComfyUI-Manager ` +
    "(`pip install -U comfyui-manager` with the Python that runs ComfyUI, then restart); or install it by hand (instructions)."
  );
}

const NOT_LISTED = [/^Node '.*' not found in \[/, /^Cannot resolve install target: /];

/** Manager's outcome, with a pack it does not list marked `not-listed` (its own words kept). */
export function withNotListed(outcome: TaskOutcome): TaskOutcome {
  const listed = outcome.status !== "failed" || !NOT_LISTED.some((re) => re.test(outcome.message ?? ""));
  return listed ? outcome : { ...outcome, status: "not-listed" };
}

/** Installs `url` through the legacy UI's git-URL route; Manager clones before it answers. */
export async function installGitUrl(api: ManagerApi, path: string, url: string): Promise<TaskOutcome> {
  let response: Response;
  try {
    response = await api.fetchApi(path, { method: "POST", body: url });
  } catch (error) {
    return { id: url, status: "failed", message: `ComfyUI-Manager could not be reached (${error instanceof Error ? error.message : String(error)})` };
  }
  const body = (await response.text().catch(() => "")).trim();
  if (response.status === 200) return { id: url, status: "installed" };
  if (response.status === 403) return { id: url, status: "refused", message: `HTTP 403 ${body}`.trim() };
  if (response.status === 400) return { id: url, status: "failed", message: "ComfyUI-Manager could not clone it (ComfyUI's log says why)" };
  return { id: url, status: "failed", message: `HTTP ${response.status} ${body}`.trim() };
}

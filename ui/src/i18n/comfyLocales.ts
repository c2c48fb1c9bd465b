// The two strings the extension registers WITH ComfyUI (extension.ts) are translated by
// ComfyUI's frontend, not by the panel: ComfyUI's GET /i18n merges every custom node's
// locales/<lang>/main.json (and commands.json, under `commands`) into the frontend's vue-i18n
// messages. A bottom-panel tab with `titleKey` is shown as t(titleKey) (frontends 1.27.10 and
// 1.58.1; an older one shows `title`), a command's label is `commands.<id with "." → "_">.label`.
// A key missing in the user's language falls back to "en", so locales/en ships too. The
// repository's locales/ folder is generated from the panel's tables by comfyLocales.test.ts.
import type { Translation } from ".";

export const OPEN_COMMAND = "ComfyUIAssistant.Open";
/** The toggle command ComfyUI itself registers for every bottom-panel tab (label "Toggle
 * Assistant Bottom Panel"): the same action as ours, so the same words. */
const TOGGLE_TAB_COMMAND = "Workspace.ToggleBottomPanelTab.comfyui-assistant";
/** Under a top-level key of our own: ComfyUI merges every node's main.json into one table. */
export const TAB_TITLE_KEY = "comfyuiAssistant.tab";

export type ComfyLocaleFiles = { "main.json": object; "commands.json": object };

function text(table: Translation, key: "extension.tab" | "extension.toggleCommand"): string {
  const message = table[key];
  if (typeof message !== "string") throw new Error(`${key} must be a plain string`);
  return message;
}

/** The files of locales/<lang>/ for one of the panel's tables. */
export function comfyLocaleFiles(table: Translation): ComfyLocaleFiles {
  const [scope, name] = TAB_TITLE_KEY.split(".") as [string, string];
  return {
    "main.json": { [scope]: { [name]: text(table, "extension.tab") } },
    "commands.json": Object.fromEntries(
      [OPEN_COMMAND, TOGGLE_TAB_COMMAND].map((id) => [id.replaceAll(".", "_"), { label: text(table, "extension.toggleCommand") }]),
    ),
  };
}

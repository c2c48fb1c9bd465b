// ComfyUI loads this file (ui/dist/comfyui-assistant.js) as an extension script: the Assistant
// tab in the bottom panel, a command that shows or hides it and a keybinding for the command.
import { app } from "./app";
import { keyGraphToLoad } from "./host/comfy";
import { OPEN_COMMAND, TAB_TITLE_KEY } from "./i18n/comfyLocales";
import { en } from "./i18n/messages";
import { mountPanel, panelStore } from "./panel";

export { OPEN_COMMAND };
export const TAB_ID = "comfyui-assistant";
/**
 * Ctrl+Shift+L (Cmd+Shift+L on a Mac) runs the command, through the frontend's keybinding store
 * (an extension's `keybindings`, in 1.27.10 and 1.58.1 alike; users can rebind it in ComfyUI's
 * keybinding settings). Not Ctrl+Shift+A: LiteGraph's canvas in 1.27 takes every Ctrl+A, with or
 * without Shift, as "select all" and stops the event, and browsers use it (Chrome's tab search,
 * Firefox's add-ons). Ctrl+Shift+L is taken by neither frontend nor LiteGraph (the e2e suite
 * presses it on the canvas of both) and, as far as we know, by no browser's defaults.
 */
export const OPEN_KEYS = { key: "l", ctrl: true, shift: true };

let unmount: (() => void) | null = null;

function render(element: HTMLElement): void {
  unmount?.();
  unmount = mountPanel(element, app);
}

/** ComfyUI drops the tab's DOM when the panel closes; the chats live on in the store. */
function destroy(): void {
  const done = unmount;
  unmount = null;
  done?.();
}

app.registerExtension({
  name: "comfyui-assistant",
  // ComfyUI translates both itself, from our locales/ folder (i18n/comfyLocales.ts): the tab's
  // title by `titleKey`, the command's label by its id. The English `title` and `label` stand
  // where a frontend does not look them up (one without titleKey, a missing translation).
  bottomPanelTabs: [{ id: TAB_ID, title: en["extension.tab"], titleKey: TAB_TITLE_KEY, type: "custom", render, destroy }],
  commands: [
    {
      id: OPEN_COMMAND,
      label: en["extension.toggleCommand"],
      icon: "pi pi-comments",
      // ComfyUI gives every bottom tab this toggle command.
      function: () => app.extensionManager.command.execute(`Workspace.ToggleBottomPanelTab.${TAB_ID}`),
    },
  ],
  keybindings: [{ combo: OPEN_KEYS, commandId: OPEN_COMMAND }],
  // Follow the workflow tabs from the start, so a tab saved or closed before the panel is
  // first opened takes its threads along.
  setup: () => void panelStore(app),
  // A workflow opened in a new tab (a template, a file) gets its thread key before ComfyUI
  // configures it, so the tab starts with it (threadKeys.ts).
  beforeConfigureGraph: (graphData: unknown) => {
    try {
      keyGraphToLoad(app, graphData);
    } catch (error) {
      console.warn("[comfyui-assistant] could not key the workflow being loaded", error);
    }
  },
});

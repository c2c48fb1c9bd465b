// ComfyUI loads this file (ui/dist/comfyui-assistant.js) as an extension script: the Assistant
// tab in the bottom panel, a command that opens it and a keybinding for the command.
import { app } from "./app";
import { mountPanel } from "./panel";

export const TAB_ID = "comfyui-assistant";
export const OPEN_COMMAND = "ComfyUIAssistant.Open";

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
  bottomPanelTabs: [{ id: TAB_ID, title: "Assistant", type: "custom", render, destroy }],
  commands: [
    {
      id: OPEN_COMMAND,
      label: "Assistant: show or hide the chat",
      icon: "pi pi-comments",
      // ComfyUI gives every bottom tab this toggle command.
      function: () => app.extensionManager.command.execute(`Workspace.ToggleBottomPanelTab.${TAB_ID}`),
    },
  ],
  keybindings: [{ combo: { key: "a", ctrl: true, shift: true }, commandId: OPEN_COMMAND }],
});

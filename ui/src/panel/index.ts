// The panel's entry: mount it into an element (ComfyUI's bottom-panel tab, or the playground).
// The chat state is the module-level store, so unmounting and mounting again loses nothing.
import { createElement } from "react";
import { createRoot } from "react-dom/client";
import { changeTracker, showToast, type ComfyApp } from "../host/comfy";
import { t, warmFormats } from "../i18n";
import { followComfyLocale } from "../i18n/comfyLocale";
import { followUser } from "../server/api";
import { serverPresence, type ServerPresence } from "../runtime/serverPresence";
import { ChatStore } from "../runtime/chatStore";
import { graphTools } from "../tools";
import { graphShot } from "../tools/graphSnapshot";
import { workflowAccess } from "../tools/checkpointGraph";
import { comfyRuns } from "../tools/runHistory";
import { Panel } from "./Panel";
import panelCss from "../styles/panel.css?inline";

const STYLE_ID = "comfyui-assistant-panel-css";

/**
 * Add the panel's stylesheet once. It is injected here rather than by the build's CSS plugin:
 * that plugin's single <style id> is shared with the playground's bundle, and whichever loads
 * first would keep the other's styles out. Every rule is scoped under .cua-root.
 */
export function ensureStyles(doc: Document = document): void {
  if (doc.getElementById(STYLE_ID)) return;
  const style = doc.createElement("style");
  style.id = STYLE_ID;
  style.textContent = panelCss;
  doc.head.appendChild(style);
}

let shared: ChatStore | null = null;
let server: ServerPresence = serverPresence(); // (ComfyUI's, once panelStore is built)

/** The one store of this page, bound to ComfyUI's app (its graph tools, its runs, its dialogs
 * and its workflow tabs). */
export function panelStore(app: ComfyApp): ChatStore {
  if (!shared) {
    const store = new ChatStore({ tools: () => graphTools(app), runs: comfyRuns(app), graph: workflowAccess(app), snapshot: () => graphShot(app) });
    const dialog = app.extensionManager?.dialog;
    if (dialog?.confirm) {
      store.confirm = async (title, message) => (await dialog.confirm({ title, message, type: "delete" })) === true;
    }
    store.workflows.follow(app); // for the page's life, panel open or not
    followComfyLocale(app); // likewise: the panel opens in ComfyUI's language
    followUser(() => app.api?.user); // every request names ComfyUI's user, as fetchApi does
    server = serverPresence(app.api); // (once: it listens to ComfyUI's socket for the page's life)
    takeMcpCalls(store, server, app);
    shared = store;
  }
  return shared;
}

/** How many panels are shown now (the Assistant tab is open). */
let shown = 0;

/** The page takes MCP clients' calls for its life (runtime/mcpRelay.ts), and tells the server
 * when the user comes to it (a call without a panel named goes to the page used last) and when
 * its graph changed (the change tracker's state is a new one after each change, or another
 * workflow's). */
function takeMcpCalls(store: ChatStore, server: ServerPresence, app: ComfyApp): void {
  void store.mcp.start(server); // (not while ComfyUI restarts)
  // a question while the Assistant tab is closed: a toast says where to answer it
  store.mcp.onAsking = (call) => {
    if (shown > 0) return;
    const client = call.client.name || t("mcp.unnamed");
    showToast(app, "info", t("mcp.toast", { client }), call.asking?.action, 15000);
  };
  if (typeof document === "undefined") return;
  const visible = () => document.visibilityState === "visible";
  store.mcp.watchGraph(() => changeTracker(app)?.activeState, visible);
  const here = () => void store.mcp.reportState(visible());
  document.addEventListener("visibilitychange", here);
  globalThis.addEventListener?.("focus", here);
}

/** Render the panel into `el`; the returned function unmounts it (the chats keep running). */
export function mountPanel(el: HTMLElement, app: ComfyApp, store: ChatStore = panelStore(app)): () => void {
  ensureStyles(el.ownerDocument);
  // ComfyUI mounts a tab into a plain div of automatic height: without this the panel grows
  // with the chat and the composer slides out of the bottom panel (seen on ComfyUI 1.27).
  el.style.height = "100%";
  el.style.minHeight = "0";
  const root = createRoot(el);
  root.render(createElement(Panel, { store }));
  warmFormats(); // (not in the task that shows the thread)
  shown++;
  // the same thread in another tab (threadSync.ts); not while ComfyUI restarts
  const stopFollowing = store.followOtherTabs(4000, server);
  return () => {
    shown--;
    stopFollowing();
    root.unmount();
  };
}

export { ChatStore, Panel };

// The playground: a LiteGraph canvas, ComfyUI's app surface and the real panel extension, served
// by the standalone server at `/`. `window.app` exists as soon as this module has evaluated; the
// extensions are imported afterwards, the way ComfyUI loads them (GET /api/extensions, then
// import() of each URL), once the node types and the default workflow are in place.
import "@comfyorg/litegraph/style.css";
import "./playground.css";
import { LGraph, LGraphCanvas, LGraphNode, LiteGraph } from "@comfyorg/litegraph";
import { PlaygroundApp } from "./app";
import { addDefaultWorkflow } from "./defaultWorkflow";
import { registerNodeDefs } from "../litegraph/register";
import { fetchNodeDefs } from "./nodeDefs";
import { bindKeys, showSimulation } from "./page";

declare global {
  interface Window {
    app?: PlaygroundApp;
    LiteGraph?: typeof LiteGraph;
    LGraph?: typeof LGraph;
    LGraphCanvas?: typeof LGraphCanvas;
    LGraphNode?: typeof LGraphNode;
    /** Resolves once the playground has loaded its extensions (tests wait on it). */
    playgroundReady?: Promise<void>;
  }
}

function element<T extends HTMLElement>(selector: string): T {
  const found = document.querySelector<T>(selector);
  if (!found) throw new Error(`the playground page has no ${selector}`);
  return found;
}

const app = new PlaygroundApp({
  canvas: element<HTMLCanvasElement>("#graph-canvas"),
  bottom: element(".pg-bottom"),
  toasts: element(".pg-toasts"),
  tabs: document.querySelector<HTMLElement>(".pg-tabs"),
});
Object.assign(window, { app, LiteGraph, LGraph, LGraphCanvas, LGraphNode });

async function loadExtensions(): Promise<void> {
  const response = await app.api.fetchApi("/extensions");
  const urls = response.ok ? ((await response.json()) as string[]) : [];
  for (const url of urls) {
    try {
      await import(/* @vite-ignore */ url);
    } catch (error) {
      console.error(`loading the extension ${url} failed`, error);
      app.extensionManager.toast.add({ severity: "error", summary: "An extension failed to load", detail: `${url}: ${String(error)}` });
    }
  }
}

async function boot(): Promise<void> {
  app.resizeCanvas();
  bindKeys(app);
  showSimulation(app, element(".pg-status"), element<HTMLButtonElement>(".pg-run"));
  try {
    app.nodeDefs = await fetchNodeDefs((route) => app.api.fetchApi(route));
    registerNodeDefs(LiteGraph, app.nodeDefs);
    addDefaultWorkflow(LiteGraph, app.graph);
  } catch (error) {
    console.error(error);
    app.extensionManager.toast.add({ severity: "error", summary: "Loading the node definitions failed", detail: String(error) });
  }
  app.changeTracker.reset();
  app.fitView();
  await loadExtensions();
  app.ready = true;
  for (const extension of app.extensions) await app.runSetup(extension);
  // A new user should see the assistant at once: open the first tab (ComfyUI starts closed),
  // then fit the graph into the canvas that is left.
  app.bottomPanel.openFirst();
  await new Promise((done) => requestAnimationFrame(done));
  app.resizeCanvas();
  app.fitView();
}

window.playgroundReady = boot();

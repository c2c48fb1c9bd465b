// Page wiring: keyboard shortcuts (as ComfyUI binds them), undo recording after canvas edits, and
// the header's simulated-run button and status line.
import type { ComfyKeybinding } from "../host/comfy";
import type { PlaygroundApp } from "./app";

const BUILTIN_KEYS: ComfyKeybinding[] = [
  { combo: { key: "z", ctrl: true }, commandId: "Comfy.Undo" },
  { combo: { key: "y", ctrl: true }, commandId: "Comfy.Redo" },
  { combo: { key: "z", ctrl: true, shift: true }, commandId: "Comfy.Redo" },
  { combo: { key: "Enter", ctrl: true }, commandId: "Comfy.QueuePrompt" },
];

/** Text fields keep their own Ctrl+Z, Ctrl+A and plain keys (ComfyUI's rule too). */
function typingIn(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.tagName === "TEXTAREA" || target.tagName === "INPUT" || target.isContentEditable;
}

/** The keys a text field owns (ComfyUI's RESERVED_BY_TEXT_INPUT, in short): others still run. */
function ownedByTextField(event: KeyboardEvent): boolean {
  const ctrl = event.ctrlKey || event.metaKey;
  if (!ctrl && !event.altKey) return true; // plain keys, Shift+key
  return ctrl && !event.altKey && (/^[acvxzyp]$/i.test(event.key) || /^(Backspace|Delete|Home|End|Arrow\w+)$/.test(event.key));
}

function matches(binding: ComfyKeybinding, event: KeyboardEvent): boolean {
  const { key, ctrl = false, alt = false, shift = false } = binding.combo;
  return (
    event.key.toLowerCase() === key.toLowerCase() &&
    (event.ctrlKey || event.metaKey) === ctrl &&
    event.altKey === alt &&
    event.shiftKey === shift
  );
}

export function bindKeys(app: PlaygroundApp): void {
  window.addEventListener("keydown", (event) => {
    if (typingIn(event.composedPath()[0] ?? event.target) && ownedByTextField(event)) return;
    const bindings = [...app.extensions.flatMap((e) => e.keybindings ?? []), ...BUILTIN_KEYS];
    const binding = bindings.find((b) => matches(b, event));
    if (!binding) return;
    event.preventDefault();
    event.stopPropagation();
    Promise.resolve(app.extensionManager.command.execute(binding.commandId)).catch((error: unknown) => {
      app.extensionManager.toast.add({ severity: "error", summary: "Command failed", detail: String(error), life: 5000 });
    });
  }, true);
  // ComfyUI records an undo state after each pointer or key action on the canvas.
  const canvas = app.canvas.canvas;
  canvas.addEventListener("pointerup", () => setTimeout(() => app.changeTracker.checkState()));
  window.addEventListener("keyup", (event) => {
    if (!typingIn(event.target)) app.changeTracker.checkState();
  });
  window.addEventListener("resize", () => app.resizeCanvas());
}

/** The header: a Run button for the simulated queue and what the simulation is doing. */
export function showSimulation(app: PlaygroundApp, status: HTMLElement, run: HTMLButtonElement): void {
  const titleOf = (id: unknown) => {
    const node = id == null ? null : app.graph.getNodeById(id as number);
    return node ? `${node.title} #${String(id)}` : `#${String(id)}`;
  };
  const say = (text: string) => (status.textContent = text);
  run.addEventListener("click", async () => {
    say("Simulated run: queued");
    if (!(await app.queuePrompt(0))) say("Simulated run: refused by validation");
  });
  const on = (type: string, handler: (detail: Record<string, unknown>) => void) =>
    app.api.addEventListener(type, (event: Event) => handler(((event as CustomEvent).detail ?? {}) as Record<string, unknown>));
  on("execution_start", () => say("Simulated run: started"));
  app.api.addEventListener("executing", (event: Event) => {
    const node = (event as CustomEvent).detail as string | null;
    if (node != null) say(`Simulated run: executing ${titleOf(node)}`);
  });
  on("execution_success", () => {
    say("Simulated run: finished (no image is generated in the playground)");
    app.extensionManager.toast.add({
      severity: "info",
      summary: "Simulated run finished",
      detail: "The playground has no ComfyUI executor: the workflow was validated and its run simulated.",
      life: 4000,
    });
  });
  on("execution_interrupted", () => say("Simulated run: interrupted"));
}

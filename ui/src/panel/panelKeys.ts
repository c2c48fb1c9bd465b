// Keys typed in the panel do not redraw ComfyUI's graph. LiteGraph's canvas listens to keyup on
// the whole document (LGraphCanvas.processKey, in the playground's litegraph and in frontends
// 1.27.10 and 1.58.1) and calls graph.change() for every keyup whose target is not an <input>:
// each key released in the message box marked the canvas dirty, and the next frame redrew the
// whole graph before it painted the typed character (about 10 ms a key with the default
// workflow on a 2-core machine, more with a big one).
//
// A keyup of a key pressed in one of the panel's text fields is handed on from a hidden <input>
// in the panel instead: the same event (key, code, modifiers), dispatched there, so every
// listener on the document and the window still hears it (ComfyUI's change tracker, its
// held-keys and Shift trackers), and the canvas, which ignores keys typed in inputs, skips it.
// Keys pressed elsewhere pass untouched, e.g. Space held on the canvas and released over the
// panel still ends the canvas's drag mode.
import { useEffect, type RefObject } from "react";

/** Whether LiteGraph already ignores keys from `target` (it skips <input> elements only). */
function canvasIgnores(target: EventTarget | null): boolean {
  return target instanceof Element && target.localName === "input";
}

/** A copy of `event` that can be dispatched again (bubbling and composed, as a real keyup). */
function copyOf(event: KeyboardEvent): KeyboardEvent {
  return new KeyboardEvent(event.type, {
    key: event.key,
    code: event.code,
    location: event.location,
    repeat: event.repeat,
    isComposing: event.isComposing,
    ctrlKey: event.ctrlKey,
    shiftKey: event.shiftKey,
    altKey: event.altKey,
    metaKey: event.metaKey,
    keyCode: event.keyCode,
    which: event.which,
    bubbles: true,
    cancelable: true,
    composed: true,
  });
}

/** Hands on keyups of keys pressed in `root`'s text fields from a hidden input (see above). */
export function keepKeysInPanel(root: HTMLElement): () => void {
  const view = root.ownerDocument.defaultView;
  if (!view) return () => {};
  const relay = root.ownerDocument.createElement("input");
  relay.hidden = true;
  relay.style.display = "none"; // (whatever the host page's style for inputs)
  relay.tabIndex = -1;
  relay.setAttribute("aria-hidden", "true");
  root.append(relay);
  const pressed = new Set<string>(); // the codes of keys pressed in the panel, not yet released
  const onKeyDown = (event: KeyboardEvent) => {
    const { target } = event;
    if (target instanceof Node && root.contains(target) && !canvasIgnores(target)) pressed.add(event.code);
  };
  const onKeyUp = (event: KeyboardEvent) => {
    if (event.target === relay || !pressed.delete(event.code) || canvasIgnores(event.target)) return;
    event.stopImmediatePropagation();
    relay.dispatchEvent(copyOf(event));
  };
  const forget = () => pressed.clear(); // a key released while the page had no focus
  view.addEventListener("keydown", onKeyDown, true);
  view.addEventListener("keyup", onKeyUp, true);
  view.addEventListener("blur", forget);
  return () => {
    view.removeEventListener("keydown", onKeyDown, true);
    view.removeEventListener("keyup", onKeyUp, true);
    view.removeEventListener("blur", forget);
    relay.remove();
  };
}

/** keepKeysInPanel on the element at `ref` while it is mounted. */
export function useKeysKeptInPanel(ref: RefObject<HTMLElement | null>): void {
  useEffect(() => {
    const root = ref.current;
    return root ? keepKeysInPanel(root) : undefined;
  }, [ref]);
}

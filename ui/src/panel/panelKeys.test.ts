import { afterEach, describe, expect, it } from "vitest";
import { keepKeysInPanel } from "./panelKeys";

const stops: (() => void)[] = [];
afterEach(() => {
  stops.splice(0).forEach((stop) => stop());
  document.body.innerHTML = "";
});

/** A page with a canvas, and the panel with a text box and a one-line field. */
function page() {
  document.body.innerHTML = `<canvas id="graph-canvas" tabindex="0"></canvas>
    <div class="cua-root"><textarea id="composer"></textarea><input id="search"></div>`;
  const byId = (id: string) => document.getElementById(id) as HTMLElement;
  const root = document.querySelector(".cua-root") as HTMLElement;
  stops.push(keepKeysInPanel(root));
  // What LiteGraph's canvas and ComfyUI's change tracker hear: keyup on the document, on the window.
  const onDocument: KeyboardEvent[] = [];
  const onWindow: string[] = [];
  const hearDocument = (event: KeyboardEvent) => onDocument.push(event);
  const hearWindow = (event: KeyboardEvent) => onWindow.push(event.key);
  document.addEventListener("keyup", hearDocument, true);
  window.addEventListener("keyup", hearWindow);
  stops.push(() => {
    document.removeEventListener("keyup", hearDocument, true);
    window.removeEventListener("keyup", hearWindow);
  });
  return { canvas: byId("graph-canvas"), textarea: byId("composer"), search: byId("search"), root, onDocument, onWindow };
}

const key = (target: HTMLElement, type: "keydown" | "keyup", init: KeyboardEventInit) =>
  target.dispatchEvent(new KeyboardEvent(type, { bubbles: true, cancelable: true, composed: true, ...init }));

describe("keepKeysInPanel", () => {
  it("hands on the release of a key typed in the panel's text box from an input, with its key, code and modifiers", () => {
    const { textarea, onDocument, onWindow } = page();
    key(textarea, "keydown", { key: "A", code: "KeyA", shiftKey: true });
    key(textarea, "keyup", { key: "A", code: "KeyA", shiftKey: true });
    expect(onDocument).toHaveLength(1);
    const heard = onDocument[0]!;
    expect((heard.target as Element).localName).toBe("input"); // LiteGraph skips keys typed in inputs
    expect((heard.target as Element).closest(".cua-root")).not.toBeNull();
    expect([heard.key, heard.code, heard.shiftKey, heard.ctrlKey]).toEqual(["A", "KeyA", true, false]);
    expect(onWindow).toEqual(["A"]); // the window's listeners still hear it, once
  });

  it("leaves alone keys pressed elsewhere, even when released over the panel (Space held on the canvas)", () => {
    const { canvas, textarea, onDocument } = page();
    key(canvas, "keydown", { key: " ", code: "Space" });
    key(textarea, "keyup", { key: " ", code: "Space" });
    expect(onDocument.map((event) => event.target)).toEqual([textarea]);
  });

  it("leaves alone keys in the panel's inputs, which the canvas already skips, and keys outside it", () => {
    const { canvas, search, onDocument } = page();
    key(search, "keydown", { key: "x", code: "KeyX" });
    key(search, "keyup", { key: "x", code: "KeyX" });
    key(canvas, "keydown", { key: "y", code: "KeyY" });
    key(canvas, "keyup", { key: "y", code: "KeyY" });
    expect(onDocument.map((event) => event.target)).toEqual([search, canvas]);
  });

  it("forgets keys held when the page lost the focus", () => {
    const { canvas, textarea, onDocument } = page();
    key(textarea, "keydown", { key: "z", code: "KeyZ" });
    window.dispatchEvent(new Event("blur"));
    key(canvas, "keyup", { key: "z", code: "KeyZ" });
    expect(onDocument.map((event) => event.target)).toEqual([canvas]);
  });

  it("takes its input away when stopped, and then hands nothing on", () => {
    const { textarea, root, onDocument } = page();
    expect(root.querySelectorAll("input[aria-hidden=true]")).toHaveLength(1);
    stops.shift()?.(); // keepKeysInPanel's stop
    expect(root.querySelectorAll("input[aria-hidden=true]")).toHaveLength(0);
    key(textarea, "keydown", { key: "b", code: "KeyB" });
    key(textarea, "keyup", { key: "b", code: "KeyB" });
    expect(onDocument.map((event) => event.target)).toEqual([textarea]);
  });
});

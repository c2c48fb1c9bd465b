import { afterEach, describe, expect, it } from "vitest";
import { focusIsInPanel, refuseForeignHistory } from "./composerFocus";

afterEach(() => {
  document.body.innerHTML = "";
});

function page() {
  document.body.innerHTML = `<canvas id="graph-canvas" tabindex="0"></canvas>
    <div class="cua-root"><button id="send">Send</button><textarea id="composer"></textarea></div>`;
  const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  return { canvas: byId("graph-canvas"), send: byId("send"), textarea: byId<HTMLTextAreaElement>("composer") };
}

const history = (inputType: string) => new InputEvent("beforeinput", { inputType, cancelable: true, bubbles: true });

describe("refuseForeignHistory", () => {
  it("cancels the browser's undo and redo of the composer while the focus is elsewhere", () => {
    const { canvas, textarea } = page();
    const stop = refuseForeignHistory(textarea);
    canvas.focus();
    const undo = history("historyUndo");
    textarea.dispatchEvent(undo);
    expect(undo.defaultPrevented).toBe(true);
    const redo = history("historyRedo");
    textarea.dispatchEvent(redo);
    expect(redo.defaultPrevented).toBe(true);
    const typing = history("insertText");
    textarea.dispatchEvent(typing);
    expect(typing.defaultPrevented).toBe(false);
    stop();
    const after = history("historyUndo");
    textarea.dispatchEvent(after);
    expect(after.defaultPrevented).toBe(false);
  });

  it("lets the composer undo its own text when it has the focus", () => {
    const { textarea } = page();
    refuseForeignHistory(textarea);
    textarea.focus();
    const undo = history("historyUndo");
    textarea.dispatchEvent(undo);
    expect(undo.defaultPrevented).toBe(false);
  });
});

describe("focusIsInPanel", () => {
  it("is true in the panel or nowhere, false on the canvas", () => {
    const { canvas, send, textarea } = page();
    expect(focusIsInPanel(textarea)).toBe(true); // the body
    send.focus();
    expect(focusIsInPanel(textarea)).toBe(true);
    canvas.focus();
    expect(focusIsInPanel(textarea)).toBe(false);
  });
});

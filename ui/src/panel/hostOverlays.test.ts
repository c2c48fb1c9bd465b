// The message box is lifted above a ComfyUI dialog that covers it (1.27.10's Manager progress
// dialog after an install), and only then (the browser check: ui/e2e/installs.test.mjs).
import { describe, expect, it } from "vitest";
import { liftFor } from "./hostOverlays";

const box = { left: 0, right: 800, top: 500, bottom: 560 }; // the message box at the page's bottom
const dialog = (left: number, right: number, top: number, bottom: number) => ({ left, right, top, bottom });

describe("liftFor", () => {
  it("lifts the box above a dialog over it, with a gap, and keeps that lift while lifted", () => {
    const bottomDialog = dialog(160, 640, 470, 580);
    expect(liftFor(box, 0, [bottomDialog], 400)).toBe(560 - 470 + 8);
    const lifted = { ...box, top: box.top - 98, bottom: box.bottom - 98 };
    expect(liftFor(lifted, 98, [bottomDialog], 400)).toBe(98); // stable: no flicker
  });

  it("does not move for dialogs beside it, above it, empty, or none; and never past the cap", () => {
    expect(liftFor(box, 0, [], 400)).toBe(0);
    expect(liftFor(box, 0, [dialog(800, 1000, 400, 600)], 400)).toBe(0); // beside
    expect(liftFor(box, 0, [dialog(100, 700, 100, 480)], 400)).toBe(0); // above
    expect(liftFor(box, 0, [dialog(100, 700, 520, 520)], 400)).toBe(0); // no height
    expect(liftFor(box, 0, [dialog(100, 700, 100, 600)], 200)).toBe(200); // a tall one: the cap
  });
});

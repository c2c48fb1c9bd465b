import { vi } from "vitest";

// React's act exists only in its development build (vite.config.ts defines NODE_ENV production).
const nodeEnv = vi.hoisted(() => {
  const before = process.env["NODE_ENV"];
  process.env["NODE_ENV"] = "test";
  return before;
});

import { act, waitFor } from "@testing-library/react";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComfyExtension } from "../host/comfy";
import { fakeServer, sseResponse, textAnswer } from "../../test/fakeServer";

const registered: ComfyExtension[] = [];
const execute = vi.fn();
vi.mock("../app", () => ({
  app: {
    registerExtension: (extension: ComfyExtension) => registered.push(extension),
    extensionManager: {
      command: { execute },
      dialog: { confirm: async () => true },
      toast: { add: () => {} },
      setting: { get: () => undefined, set: () => {} },
    },
    api: {},
  },
}));

// Importing the extension loads the whole panel (React, assistant-ui): seconds on a busy
// machine, so it happens here, with its own time limit, not inside the test's 5 s.
beforeAll(async () => {
  vi.stubGlobal("fetch", fakeServer(() => sseResponse(textAnswer("hi"))).fetch);
  await import("../extension");
}, 60_000);

afterAll(() => {
  vi.unstubAllGlobals();
  process.env["NODE_ENV"] = nodeEnv;
});

describe("the extension", () => {
  it("registers the Assistant tab, its command and keybinding, and survives destroy", async () => {
    expect(registered).toHaveLength(1);
    const extension = registered[0]!;
    expect(extension.name).toBe("comfyui-assistant");
    const tab = extension.bottomPanelTabs?.[0];
    // ComfyUI shows t(titleKey) in the user's language, from our locales/ (comfyLocales.test.ts)
    expect(tab).toMatchObject({ id: "comfyui-assistant", title: "Assistant", titleKey: "comfyuiAssistant.tab", type: "custom" });
    expect(extension.commands?.[0]).toMatchObject({ id: "ComfyUIAssistant.Open", label: "Assistant: show or hide the chat" });
    expect(extension.keybindings?.[0]).toEqual({ combo: { key: "l", ctrl: true, shift: true }, commandId: "ComfyUIAssistant.Open" });

    await extension.commands?.[0]?.function();
    expect(execute).toHaveBeenCalledWith("Workspace.ToggleBottomPanelTab.comfyui-assistant");

    const el = document.createElement("div");
    document.body.appendChild(el);
    act(() => tab!.render(el));
    await waitFor(() => expect(el.querySelector(".cua-root textarea")).toBeTruthy(), { timeout: 10_000 });
    act(() => tab!.destroy!());
    expect(el.querySelector(".cua-root")).toBeNull();
    const again = document.createElement("div");
    act(() => tab!.render(again));
    await waitFor(() => expect(again.querySelector(".cua-root")).toBeTruthy(), { timeout: 10_000 });
    act(() => tab!.destroy!());
  });
});

import "./reactTestEnv";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatStore } from "../runtime/chatStore";
import { fakeServer, sseResponse, textAnswer, toolCallAnswer } from "../runtime/fakeServer";
import { comfyRuns } from "../tools/runHistory";
import { buildTxt2Img, createTestApp, jsonResponse } from "../tools/testing";
import { PlainText } from "./Messages";
import { Panel } from "./Panel";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const BLACK = "a.png [output]: PNG 512×512, all black (the usual sign of a failed VAE decode: NaN values)";

describe("a run's end, noted on the user's next message", () => {
  it("is shown as the panel's note, not as the user's words", () => {
    const note = "[Run p1 finished after you stopped waiting: success in 2 s; outputs: 9: 1 image]";
    render(<PlainText text={note} />);
    expect(screen.getByRole("note").textContent).toBe(note);
    cleanup();
    render(<PlainText text="[Run it again] please" />);
    expect(screen.queryByRole("note")).toBeNull();
  });
});

/** The panel over a ComfyUI whose queue runs p1; the model queues the workflow first, then
 * answers every message with "ok". */
function panelOverComfyUI() {
  const t = createTestApp();
  buildTxt2Img(t);
  const comfy = { t, history: {} as Record<string, unknown> };
  t.api.handler = (route) => {
    if (route === "/prompt") return jsonResponse(200, { prompt_id: "p1", number: 1, node_errors: {} });
    if (route === "/history/p1") return jsonResponse(200, comfy.history);
    if (route === "/assistant/outputs/look") return jsonResponse(200, { outputs: [{ name: "ComfyUI_00001_.png [output]", line: BLACK.replace("a.png", "ComfyUI_00001_.png") }] });
    return jsonResponse(404, {});
  };
  const server = fakeServer((body) => sseResponse(body.messages.length === 1 ? toolCallAnswer("queueWorkflow", {}, "call_run") : textAnswer(`ok ${body.messages.length}`)));
  vi.stubGlobal("fetch", server.fetch);
  const store = new ChatStore({ settings: { maxSteps: 25, debugContext: false }, tools: () => t.tools, runs: comfyRuns(t.app) });
  render(<Panel store={store} />);
  return { comfy, server };
}

async function send(text: string) {
  const box = await screen.findByLabelText<HTMLTextAreaElement>("Message");
  fireEvent.change(box, { target: { value: text } });
  await waitFor(() => expect(box.value).toBe(text));
  fireEvent.click(screen.getByRole("button", { name: "Send" }));
}

/** ComfyUI's events of p1 once it is queued. */
async function runs(comfy: ReturnType<typeof panelOverComfyUI>["comfy"], events: [string, unknown][]) {
  await waitFor(() => expect(comfy.t.api.requests.some((r) => r.route === "/prompt")).toBe(true));
  for (const [type, detail] of events) comfy.t.api.emit(type, detail);
}

describe("the panel", () => {
  it("sends how a run it stopped waiting for ended with the next message, and shows it as a note", async () => {
    const { comfy, server } = panelOverComfyUI();
    await send("run it");
    await runs(comfy, [["execution_start", { prompt_id: "p1" }], ["executing", { node: "5", prompt_id: "p1" }]]);
    fireEvent.click(await screen.findByRole("button", { name: "Stop waiting" }));
    await screen.findByText("ok 2");
    comfy.history = { p1: { outputs: {}, status: { status_str: "success", completed: true, messages: [] } } };
    await send("and now?");
    await screen.findByText("ok 3");
    const note = "[Run p1 finished after you stopped waiting: success; The workflow finished but no node reported an output (nothing new was computed, or it has no output nodes).]";
    expect(server.chatRequests[2]!.messages.at(-1)!.parts).toEqual([{ type: "text", text: "and now?" }, { type: "text", text: note }]);
    expect(screen.getByRole("note").textContent).toBe(note);
    expect(screen.getByText("and now?").className).toBe("cua-user-text");
  });
});

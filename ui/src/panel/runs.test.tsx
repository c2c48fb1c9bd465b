import "../../test/reactTestEnv";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatStore } from "../runtime/chatStore";
import { fakeServer, sseResponse, textAnswer, toolCallAnswer } from "../../test/fakeServer";
import type { OutputFile } from "../tools/outputFiles";
import { comfyRuns } from "../tools/runHistory";
import { comfyUIRunningP1, jsonResponse } from "../../test/testing";
import { PlainText } from "./Messages";
import { Panel } from "./Panel";
import { findingOf, RunOutputs, runFiles } from "./RunOutputs";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const BLACK = "a.png [output]: PNG 512×512, all black (the usual sign of a failed VAE decode: NaN values)";
const FINE = "sub/dir/b.png [output]: PNG 512×512, looks fine";
const BLANK = "c.png [temp]: PNG 64×64, blank: one flat colour (RGB 128,128,128), no picture";
const SMALL = "d.png [output]: PNG 256×256, it is 256×256, not the 512×512 asked for";
const url = (file: OutputFile) => `/base/api/view?${file.subfolder}|${file.filename}|${file.type}`;

describe("the files of a run's result", () => {
  it("are read from its outputs with the line the server said about each", () => {
    const result = {
      ok: true,
      outputs: { 9: { images: ["a.png [output]", "sub/dir/b.png [output]"] }, 12: { gifs: ["v.mp4 [output]"], text: ["hi"] } },
      looked: [BLACK, FINE],
    };
    expect(runFiles(result)).toEqual([
      { name: "a.png [output]", file: { filename: "a.png", subfolder: "", type: "output" }, looked: BLACK, finding: "black" },
      { name: "sub/dir/b.png [output]", file: { filename: "b.png", subfolder: "sub/dir", type: "output" }, looked: FINE, finding: null },
      { name: "v.mp4 [output]", file: { filename: "v.mp4", subfolder: "", type: "output" }, looked: null, finding: null },
    ]);
    expect(runFiles({ ok: false, error: "x", outputs: { 9: { images: ["a.png [output]"] } } })).toEqual([]);
    expect(runFiles({ ok: true, running: true })).toEqual([]);
  });

  it("mark what looks wrong in a word or two", () => {
    expect([BLACK, FINE, BLANK, SMALL, null, "e.png [output]: not looked at (gone)"].map(findingOf)).toEqual([
      "black", null, "blank", "wrong-size", null, null,
    ]);
  });

  it("show as lazy thumbnails opening the file in a new tab, a video as a video, at most 8", () => {
    const names = ["a.png", ...Array.from({ length: 9 }, (_, i) => `n${i}.png`), "v.webm"];
    const result = { ok: true, outputs: { 9: { images: names.map((n) => `${n} [output]`) } }, looked: [BLACK] };
    render(<RunOutputs files={runFiles(result)} url={url} />);
    const grid = screen.getByRole("group", { name: "What the run made: 11 files" });
    const links = within(grid).getAllByRole("link");
    expect(links).toHaveLength(8);
    expect(links[0]!.getAttribute("href")).toBe("/base/api/view?|a.png|output");
    expect(links[0]!.getAttribute("target")).toBe("_blank");
    expect(links[0]!.getAttribute("title")).toBe(BLACK);
    expect(links[0]!.dataset.finding).toBe("black");
    expect(within(links[0]!).getByText("all black").className).toBe("cua-run-finding");
    expect(within(links[0]!).getByText("PNG 512×512").className).toBe("cua-run-caption");
    const image = within(links[0]!).getByRole("img");
    expect([image.getAttribute("src"), image.getAttribute("alt"), image.getAttribute("loading")]).toEqual([
      "/base/api/view?|a.png|output", BLACK, "lazy",
    ]);
    expect(links[1]!.getAttribute("title")).toBe("n0.png [output]");
    expect(links[1]!.dataset.finding).toBeUndefined();
    expect(within(grid).getByText("+3 more").getAttribute("title")).toBe("n7.png [output]\nn8.png [output]\nv.webm [output]");
    cleanup();
    render(<RunOutputs files={runFiles({ ok: true, outputs: { 3: { gifs: ["v.webm [output]"] } } })} url={url} />);
    expect(screen.queryByRole("img")).toBeNull();
    expect(document.querySelector("video")?.getAttribute("src")).toBe("/base/api/view?|v.webm|output");
  });

  it("are listed by name where ComfyUI is not at hand", () => {
    render(<RunOutputs files={runFiles({ ok: true, outputs: { 9: { images: ["a.png [output]"] } }, looked: [BLACK] })} url={() => null} />);
    expect(screen.queryByRole("link")).toBeNull();
    expect(screen.getByTitle(BLACK).textContent).toContain("a.png");
  });
});

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
  const comfy = comfyUIRunningP1(BLACK.replace("a.png", "ComfyUI_00001_.png"));
  const { t } = comfy;
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
  it("shows a run's files under its card, without opening it", async () => {
    const { comfy } = panelOverComfyUI();
    await send("run it");
    await runs(comfy, [
      ["execution_start", { prompt_id: "p1" }],
      ["executed", { node: "7", output: { images: [{ filename: "ComfyUI_00001_.png", subfolder: "", type: "output" }] }, prompt_id: "p1" }],
      ["execution_success", { prompt_id: "p1" }],
    ]);
    await screen.findByText("ok 2");
    const card = screen.getByText("queueWorkflow").closest("details")!;
    expect(card.open).toBe(false);
    const thumbnail = within(screen.getByRole("group", { name: "What the run made: 1 file" })).getByRole("img");
    expect(thumbnail.getAttribute("src")).toBe("/comfy/api/view?filename=ComfyUI_00001_.png&subfolder=&type=output");
    expect(thumbnail.closest("a")?.dataset.finding).toBe("black");
  });

  it("says it heard 'Interrupt the run' until the run ends, and lets it be pressed again when ComfyUI refused", async () => {
    const { comfy } = panelOverComfyUI();
    const route = comfy.t.api.handler;
    let answer = 500;
    comfy.t.api.handler = (path, init) => (path === "/interrupt" ? jsonResponse(answer, {}) : route(path, init));
    await send("run it");
    await runs(comfy, [["execution_start", { prompt_id: "p1" }], ["executing", { node: "5", prompt_id: "p1" }]]);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    fireEvent.click(await screen.findByRole("button", { name: "Interrupt the run" }));
    // refused: nothing was heard, so the button is as it was
    await waitFor(() => expect(warn).toHaveBeenCalledWith("[comfyui-assistant] ComfyUI did not take the interrupt", expect.any(Error)));
    const button = screen.getByRole("button", { name: "Interrupt the run" });
    expect(button).toHaveProperty("disabled", false);
    answer = 200;
    fireEvent.click(button);
    const heard = await screen.findByRole("button", { name: "Interrupting…" });
    expect(heard).toHaveProperty("disabled", true);
    expect(comfy.t.api.requests.filter((r) => r.route === "/interrupt")).toHaveLength(2);
    comfy.t.api.emit("executing", { node: "6", prompt_id: "p1" }); // (ComfyUI stops between two nodes)
    expect(screen.getByRole("button", { name: "Interrupting…" })).toHaveProperty("disabled", true);
    comfy.t.api.emit("execution_interrupted", { prompt_id: "p1", node_id: "6", node_type: "KSampler", executed: [] });
    await screen.findByText("ok 2");
    expect(screen.queryByRole("button", { name: /Interrupt/ })).toBeNull();
    warn.mockRestore();
  });

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

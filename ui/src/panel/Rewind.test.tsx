import "../../test/reactTestEnv";
import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { setLocale } from "../i18n";
import { ChatStore } from "../runtime/chatStore";
import type { RestoreOutcome } from "../runtime/checkpoints";
import { fakeServer, sseResponse, textAnswer, toolCallAnswer } from "../../test/fakeServer";
import { Panel } from "./Panel";
import { keepInView } from "./Rewind";
import { rewoundNote } from "../runtime/rewindNotes";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const settings = { maxSteps: 25, debugContext: false };

/** A panel whose model adds a node on "add …" (answer msg_<n>) and answers anything else; the
 * node is added to the graph unless `adds` is false (the call fails and changes nothing). */
function setup(outcome: RestoreOutcome = { ok: true, tab: "flux", switched: false }, adds = true) {
  let answers = 0;
  const server = fakeServer((body) => {
    const last = body.messages.at(-1);
    if (last?.role === "user") {
      answers++;
      const text = last.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
      if (text.startsWith("add")) return sseResponse(toolCallAnswer("addNode", { nodeType: "KSampler" }, `call_${answers}`, `msg_${answers}`));
      return sseResponse(textAnswer(`Answer ${answers}.`, `msg_${answers}`));
    }
    return sseResponse(textAnswer(`Added node ${answers}.`, `msg_${answers}`));
  });
  vi.stubGlobal("fetch", server.fetch);
  const nodes = [{ id: 1, type: "EmptyImage" }];
  const graph = {
    serialize: () => ({ nodes: structuredClone(nodes) }),
    restore: vi.fn(async () => outcome),
    openInNewTab: vi.fn(async () => "Unsaved Workflow (2)"),
  };
  const addNode = async () => {
    if (!adds) return { ok: false, error: "Unknown node type 'KSamplr'." };
    nodes.push({ id: nodes.length + 1, type: "KSampler" });
    return { ok: true };
  };
  const store = new ChatStore({ settings, tools: () => ({ addNode }), graph });
  return { server, store, graph };
}

async function send(text: string) {
  const box = await screen.findByLabelText<HTMLTextAreaElement>("Message");
  fireEvent.change(box, { target: { value: text } });
  await waitFor(() => expect(box.value).toBe(text));
  fireEvent.click(screen.getByRole("button", { name: "Send" }));
}

/** The panel of `setup(...)`, shown. */
function shown(...args: Parameters<typeof setup>) {
  const made = setup(...args);
  render(<Panel store={made.store} />);
  return made;
}

/** Each message sent, and its answer (the text given with it) awaited. */
async function talk(...exchanges: [message: string, answer: string][]) {
  for (const [message, answer] of exchanges) {
    await send(message);
    await screen.findByText(answer);
  }
}

/** The answer saying `text`, its "Rewind to here" opened and `choice` clicked. */
async function rewind(text: string, choice: RegExp) {
  const answer = (await screen.findByText(text)).closest(".cua-msg-assistant") as HTMLElement;
  fireEvent.click(await within(answer).findByRole("button", { name: "Rewind to here" }));
  fireEvent.click(within(within(answer).getByRole("menu")).getByRole("menuitem", { name: choice }));
}

describe("Rewind to here", () => {
  it("is offered under the answers that changed the graph only", async () => {
    shown();
    await talk(["add a sampler", "Added node 1."], ["thanks", "Answer 2."]);
    expect(screen.getAllByRole("button", { name: "Rewind to here" })).toHaveLength(1);
    const answer = screen.getByText("Added node 1.").closest(".cua-msg-assistant") as HTMLElement;
    fireEvent.click(within(answer).getByRole("button", { name: "Rewind to here" }));
    const items = within(within(answer).getByRole("menu")).getAllByRole("menuitem");
    expect(items.map((i) => i.textContent)).toEqual([
      "Graphthe workflow as it was before this answer; Ctrl+Z brings the newer one back",
      "Conversationback to before this answer; what follows is kept as a branch",
      "Boththe graph and the conversation",
    ]);
    act(() => setLocale("zh"));
    try {
      expect(within(answer).getByRole("menu", { name: "回退到此处" }).textContent).toContain("对话回到这条回答之前；之后的内容保留为一个分支");
    } finally {
      act(() => setLocale("en"));
    }
  });

  it("is not offered under an answer whose edits changed nothing (a failed call)", async () => {
    const { server } = shown(undefined, false);
    await talk(["add a sampler", "Added node 1."], ["thanks", "Answer 2."]);
    expect(screen.queryAllByRole("button", { name: "Rewind to here" })).toHaveLength(0);
    expect(server.calls.filter((c) => c.includes("/checkpoints") && c.startsWith("POST"))).toEqual([]);
  });

  it("rewinds both: the graph, then the conversation, whose turn is kept as a branch to return to", async () => {
    const { server, graph } = shown();
    await talk(["say hello", "Answer 1."], ["add a sampler", "Added node 2."], ["thanks", "Answer 3."]);

    await rewind("Added node 2.", /^Both/);
    // (the fake server stores the answers it streams, as ours does)
    await screen.findByText(/The conversation is back to before that answer\. The 4 messages from “add a sampler” on are kept as branch 1 \(the branches in the header return to it\)\. The graph is as it was then too/);
    expect(screen.getAllByText(/The conversation is back to before that answer/)).toHaveLength(1);
    expect(graph.restore).toHaveBeenCalledWith(null, { nodes: [{ id: 1, type: "EmptyImage" }] });
    expect(screen.queryByText("Added node 2.")).toBeNull();
    expect(screen.queryByText("Answer 3.")).toBeNull();
    expect(screen.getByText("Answer 1.")).toBeTruthy();
    await waitFor(() => expect(screen.getByLabelText<HTMLTextAreaElement>("Message").value).toBe("add a sampler"));
    const thread = [...server.threads.values()][0]!;
    expect(thread.messages.map((m) => m.id)).toEqual([expect.any(String), "msg_1"]);

    // The next message goes on from there; the branch is in the header.
    await talk(["add a sampler, but green", "Added node 4."]);
    const last = server.chatRequests.at(-1)!;
    expect(last.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    fireEvent.click(screen.getByRole("button", { name: "Branches (1)" }));
    fireEvent.click(within(screen.getByRole("menu", { name: "Branches" })).getByRole("menuitem", { name: /Return to branch 1/ }));
    await screen.findByText("thanks"); // (the branch as the fake server kept it)
    expect(screen.getByText("Added node 2.")).toBeTruthy();
    expect(screen.queryByText("Added node 4.")).toBeNull();
    await screen.findByText(/The conversation goes on from branch 1\. What followed there \(2 messages from “add a sampler, but green”\) is kept as branch 2\./);
    await waitFor(() => expect(screen.getByRole("button", { name: "Branches (1)" })).toBeTruthy());
  }, 15_000); // (five turns through the panel: near vitest's 5 s on a busy machine)

  it("after a conversation-only rewind, the next message tells the model the graph was not rewound, once, stored with it", async () => {
    const { server, graph } = shown();
    await talk(["add a sampler", "Added node 1."]);
    await rewind("Added node 1.", /^Conversation/);
    await screen.findByText(/The conversation is back to before that answer/);
    expect(graph.restore).not.toHaveBeenCalled();
    await talk(["what is in the graph?", "Answer 2."]);
    const note = rewoundNote(true)!;
    expect(note).toBe(
      "[The conversation was rewound to here; the workflow was not rewound with it: it differs from the workflow at this point of the " +
        "conversation (changes made in the part set aside, or by hand since), and the messages above do not show those changes. " +
        "Read it (getWorkflow) before relying on it.]",
    );
    const asked = server.chatRequests.at(-1)!.messages;
    expect(asked.at(-1)!.parts).toEqual([{ type: "text", text: "what is in the graph?" }, { type: "text", text: note }]);
    expect(screen.getByRole("note", { name: "That the workflow did not move with the conversation (added by the panel)" }).textContent).toBe(note);
    await talk(["thanks", "Answer 3."]);
    const next = server.chatRequests.at(-1)!.messages;
    expect(JSON.stringify(next.slice(0, asked.length).map((m) => m.parts))).toBe(JSON.stringify(asked.map((m) => m.parts))); // append-only
    expect(next.at(-1)!.parts).toEqual([{ type: "text", text: "thanks" }]); // told once
  }, 15_000);

  it("changes nothing when the graph of 'both' cannot be restored, and offers its closed tab", async () => {
    const { server, graph } = shown({ ok: false, closed: true });
    await talk(["add a sampler", "Added node 1."]);
    await rewind("Added node 1.", /^Both/);
    const answer = (await screen.findByText("Added node 1.")).closest(".cua-msg-assistant") as HTMLElement;
    await within(answer).findByText("The graph belongs to its workflow, which is not open.");
    expect(server.calls.some((c) => c.includes("/rewind"))).toBe(false);
    fireEvent.click(within(answer).getByRole("button", { name: "Open it in a new tab" }));
    await within(answer).findByText("The graph from before this answer is open in a new tab, “Unsaved Workflow (2)”.");
    expect(graph.openInNewTab).toHaveBeenCalledOnce();
  });
});

describe("the Rewind menu", () => {
  /** A thread viewport from y=100 to y=500 (scrolled to 1000) holding a menu at `top`..`bottom`. */
  function laidOut(top: number, bottom: number) {
    const viewport = document.createElement("div");
    viewport.className = "cua-viewport";
    const menu = document.createElement("div");
    viewport.append(menu);
    document.body.append(viewport);
    viewport.scrollTop = 1000;
    const rect = (t: number, b: number) => ({ top: t, bottom: b, left: 0, right: 300, width: 300, height: b - t, x: 0, y: t, toJSON: () => ({}) });
    viewport.getBoundingClientRect = () => rect(100, 500);
    menu.getBoundingClientRect = () => rect(top, bottom);
    return { viewport, menu };
  }

  it("scrolls the thread so that a menu opened at its bottom edge is wholly in sight", () => {
    vi.stubGlobal("innerHeight", 800);
    const low = laidOut(440, 530); // 30 px below the thread's bottom edge
    keepInView(low.menu);
    expect(low.viewport.scrollTop).toBe(1034);
    const high = laidOut(80, 170); // 20 px above its top edge
    keepInView(high.menu);
    expect(high.viewport.scrollTop).toBe(976);
    const inside = laidOut(200, 290);
    keepInView(inside.menu);
    expect(inside.viewport.scrollTop).toBe(1000);
    vi.stubGlobal("innerHeight", 480); // the page ends above the thread's edge: the page's edge counts
    const cut = laidOut(400, 490);
    keepInView(cut.menu);
    expect(cut.viewport.scrollTop).toBe(1014);
  });
});

// A thread's tool approvals, in the AI SDK's own parts: a panel tool about to destroy work or
// spend money (tools/approvals.ts) puts its call in state "approval-requested" once the stream
// that carried it has ended, and waits; the card's Allow or Deny answers with the SDK's
// `addToolApprovalResponse` ("approval-responded"). Allowed, the tool goes on and its output
// follows as usual; denied, the SDK resubmits at once (steps.ts counts a denied call as done)
// and the server ends the call "output-denied", telling the model the user denied it (with
// the user's words, when they wrote any on the card).
// A waiting card survives a page reload: what it asked is remembered in the browser
// (approvalMemory.ts) and `restore` shows it again on the call the stored thread holds; Allow
// then runs the tool afresh, which goes ahead if it asks the same, and asks again if not.
import type { Chat } from "@ai-sdk/react";
import { getToolName, isToolUIPart, type UIMessage } from "ai";
import type { ApprovalRequest } from "../tools/approvals";
import { forgetWaiting, rememberWaiting, waitingIn } from "./approvalMemory";

interface Pending {
  id: string;
  request: ApprovalRequest;
  resolve: (approved: boolean) => void;
  /** Shown again after a reload: Allow runs the call afresh. */
  restored?: boolean;
}

type ToolPart = { state: string; toolCallId: string; approval?: { approved?: boolean } };

/** A call whose output is still to come: running, or allowed by the user and running. */
export function awaitsOutput(part: { state: string; approval?: { approved?: boolean } }): boolean {
  return part.state === "input-available" || (part.state === "approval-responded" && part.approval?.approved === true);
}

/** Runs a call of the thread again (after a reload, once the user allowed it). */
export type Rerun = (toolName: string, toolCallId: string, input: unknown) => void;

export class Approvals {
  /** Graph edits (removing nodes) go ahead without asking, in this thread. */
  allowEdits: boolean;
  private readonly pending = new Map<string, Pending>();
  /** What the user allowed on a restored card, by call: its run afresh goes ahead if it asks the same. */
  private readonly granted = new Map<string, ApprovalRequest>();
  private waiters: (() => void)[] = [];

  constructor(
    private readonly chat: () => Chat<UIMessage>,
    private readonly changed: () => void,
    askBeforeEdits: boolean,
  ) {
    this.allowEdits = !askBeforeEdits;
  }

  /** Whether a call waits for the user's answer. */
  waiting(): boolean {
    return this.pending.size > 0;
  }

  /** What the call waits for the user's answer on, or undefined. */
  of(toolCallId: string): ApprovalRequest | undefined {
    return this.pending.get(toolCallId)?.request;
  }

  /** Asks about `request` for the call, and says whether the user allowed it. */
  async ask(toolCallId: string, request: ApprovalRequest): Promise<boolean> {
    const granted = this.granted.get(toolCallId);
    this.granted.delete(toolCallId);
    if (granted && sameRequest(granted, request)) return true;
    if (request.kind === "graph-edit" && this.allowEdits) return true;
    await this.streamEnded();
    const id = granted ? `approval_${toolCallId}_again` : `approval_${toolCallId}`;
    if (!this.markRequested(toolCallId, id, request)) return false; // (the call is gone: a new message)
    rememberWaiting(toolCallId, this.chat().id, request);
    return new Promise<boolean>((resolve) => {
      this.pending.set(toolCallId, { id, request, resolve });
      this.changed();
    });
  }

  /** The user's answer, with their words on a denial (if any); `always`: graph edits of this
   * thread go ahead from now on. */
  async respond(toolCallId: string, approved: boolean, always = false, words = ""): Promise<void> {
    const pending = this.pending.get(toolCallId);
    if (!pending) return;
    this.pending.delete(toolCallId);
    forgetWaiting(toolCallId);
    if (approved && always && pending.request.kind === "graph-edit") this.allowEdits = true;
    if (approved && pending.restored) this.granted.set(toolCallId, pending.request);
    const reason = !approved && words.trim() ? { reason: words.trim() } : {};
    try {
      await this.chat().addToolApprovalResponse({ id: pending.id, approved, ...reason });
    } finally {
      pending.resolve(approved);
      this.changed();
    }
  }

  /** A new message ends every waiting call (runtime/pendingCalls.ts marks them cancelled). */
  supersede(): void {
    if (!this.pending.size) return;
    for (const [toolCallId, pending] of [...this.pending]) {
      this.pending.delete(toolCallId);
      forgetWaiting(toolCallId);
      pending.resolve(false);
    }
    this.changed();
  }

  /**
   * A thread's stored messages as loaded after a page reload, with each call that was waiting
   * for the user shown waiting again (the server stored it as "input-available": the question
   * was the panel's). Allow runs it afresh through `rerun`; Deny answers as on the first card.
   */
  restore(messages: UIMessage[], rerun: Rerun): UIMessage[] {
    const remembered = waitingIn(this.chat().id);
    if (!remembered.size) return messages;
    const last = messages.at(-1);
    const open = new Set<string>();
    const parts = last?.role !== "assistant" ? [] : last.parts.map((part) => {
      if (!isToolUIPart(part) || part.state !== "input-available") return part;
      const request = remembered.get(part.toolCallId);
      if (!request) return part;
      open.add(part.toolCallId);
      const id = `approval_${part.toolCallId}`;
      if (!this.pending.has(part.toolCallId)) {
        const name = getToolName(part);
        const input = part.input;
        const resolve = (approved: boolean) => approved && rerun(name, part.toolCallId, input);
        this.pending.set(part.toolCallId, { id, request, resolve, restored: true });
      }
      return { ...part, state: "approval-requested", approval: { id, requestReason: request.action } };
    });
    for (const id of remembered.keys()) if (!open.has(id)) forgetWaiting(id); // (ended since)
    if (!open.size || !last) return messages;
    this.changed();
    return [...messages.slice(0, -1), { ...last, parts: parts as UIMessage["parts"] }];
  }

  /** The chat's response stream ended (its onFinish). */
  finished(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private streamEnded(): Promise<void> {
    const status = this.chat().status;
    if (status !== "streaming" && status !== "submitted") return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The call's part in state "approval-requested", saying what it asks; false: no such call. */
  private markRequested(toolCallId: string, id: string, request: ApprovalRequest): boolean {
    const chat = this.chat();
    const messages = chat.messages;
    const waits = (p: UIMessage["parts"][number]) => isToolUIPart(p) && p.toolCallId === toolCallId && awaitsOutput(p as ToolPart);
    const at = messages.findIndex((m) => m.parts.some(waits));
    if (at < 0) return false;
    const message = messages[at]!;
    const parts = message.parts.map((p) =>
      waits(p) ? { ...p, state: "approval-requested", approval: { id, requestReason: request.action } } : p,
    ) as UIMessage["parts"];
    chat.messages = [...messages.slice(0, at), { ...message, parts }, ...messages.slice(at + 1)];
    return true;
  }
}

function sameRequest(a: ApprovalRequest, b: ApprovalRequest): boolean {
  return a.kind === b.kind && a.action === b.action && a.cost === b.cost && a.nodes.join("\n") === b.nodes.join("\n");
}

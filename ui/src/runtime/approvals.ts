// A thread's tool approvals, in the AI SDK's own parts: a panel tool about to destroy work or
// spend money (tools/approvals.ts) puts its call in state "approval-requested" once the stream
// that carried it has ended, and waits; the card's Allow or Deny answers with the SDK's
// `addToolApprovalResponse` ("approval-responded"). Allowed, the tool goes on and its output
// follows as usual; denied, the SDK resubmits at once (steps.ts counts a denied call as done)
// and the server tells the model the user denied it.
import type { Chat } from "@ai-sdk/react";
import { isToolUIPart, type UIMessage } from "ai";
import type { ApprovalRequest } from "../tools/approvals";

interface Pending {
  id: string;
  request: ApprovalRequest;
  resolve: (approved: boolean) => void;
}

export class Approvals {
  /** Graph edits (removing nodes) go ahead without asking, in this thread. */
  allowEdits: boolean;
  private readonly pending = new Map<string, Pending>();
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
    if (request.kind === "graph-edit" && this.allowEdits) return true;
    await this.streamEnded();
    const id = `approval_${toolCallId}`;
    if (!this.markRequested(toolCallId, id, request)) return false; // (the call is gone: a new message)
    return new Promise<boolean>((resolve) => {
      this.pending.set(toolCallId, { id, request, resolve });
      this.changed();
    });
  }

  /** The user's answer; `always`: graph edits of this thread go ahead from now on. */
  async respond(toolCallId: string, approved: boolean, always = false): Promise<void> {
    const pending = this.pending.get(toolCallId);
    if (!pending) return;
    this.pending.delete(toolCallId);
    if (approved && always && pending.request.kind === "graph-edit") this.allowEdits = true;
    const reason = approved ? {} : { reason: "The user denied it." };
    try {
      await this.chat().addToolApprovalResponse({ id: pending.id, approved, ...reason });
    } finally {
      pending.resolve(approved);
      this.changed();
    }
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
    const at = messages.findIndex((m) => m.parts.some((p) => isToolUIPart(p) && p.toolCallId === toolCallId && p.state === "input-available"));
    if (at < 0) return false;
    const message = messages[at]!;
    const parts = message.parts.map((p) =>
      isToolUIPart(p) && p.toolCallId === toolCallId ? { ...p, state: "approval-requested", approval: { id, requestReason: request.action } } : p,
    ) as UIMessage["parts"];
    chat.messages = [...messages.slice(0, at), { ...message, parts }, ...messages.slice(at + 1)];
    return true;
  }
}

// What the server has of a thread's messages, so that a turn sends only what is new (the server
// keeps the thread and rebuilds the rest: core/chat/thread_delta.py). The panel sends the
// messages after the last one the server has as the panel has it (the new user message with its
// notes; the last answer with the tool results and approvals the panel added to it) and
// `parentId`/`parentIndex`: the message they follow and where it is. The server has a message as
// the panel has it when the panel loaded it (GET the thread), sent it (an accepted request), or
// received it whole (an answer that finished; unless the panel added to it meanwhile). A request
// the server refuses as stale (409: a message the server lost) is sent again whole, once: the
// server then stores what the panel shows, as for an older panel. Not when the thread has another
// tab's messages after it (409 `chat.thread_moved_on`): the chat loads them (threadSync.ts).
//
// Only messages after the last one the server has are compared: the panel changes only its last
// answer (tool results, approvals, calls settled by a new message) and adds new messages; a
// rewind takes the thread from the server. So a long thread costs nothing per message here.
import { isToolUIPart, type UIMessage } from "ai";
import { apiFetch, parseServerError } from "../server/api";

type Part = UIMessage["parts"][number];

/** A tool part's states the stream sets; any other state of a panel call was set by the panel. */
const STREAMED = new Set(["input-streaming", "input-available"]);

/** A message for comparing: its role and parts, a tool part's input and output left out (the
 * AI SDK sets those once, with the part's state, which stays in), as the server's `stored_key`. */
export function messageKey(message: UIMessage): string {
  const parts = message.parts.map((part) => {
    if (!isToolUIPart(part)) return part;
    const { input: _input, output: _output, ...rest } = part as Part & { input?: unknown; output?: unknown };
    return rest;
  });
  return JSON.stringify([message.role, parts]);
}

/** The panel's own results in a message: its calls' states that the stream did not set. */
function panelStates(message: UIMessage): string[] {
  const out: string[] = [];
  for (const part of message.parts) {
    if (!isToolUIPart(part) || part.providerExecuted || STREAMED.has(part.state)) continue;
    out.push(`${part.toolCallId}:${part.state}`);
  }
  return out;
}

export interface NewPart {
  messages: UIMessage[];
  /** The message they follow, and its index in the thread. */
  parentId: string;
  parentIndex: number;
}

/** Messages as they were when sent: what the server has once it accepted them. */
export type Recorded = readonly (readonly [id: string, key: string, states: string[]])[];

export function recorded(messages: readonly UIMessage[]): Recorded {
  return messages.map((m) => [m.id, messageKey(m), panelStates(m)] as const);
}

export class SentMessages {
  /** What the server has, by message id: the message's key as the panel had it. */
  private readonly keys = new Map<string, string>();
  /** The panel's results each message carried when it was sent. */
  private readonly sentStates = new Map<string, Set<string>>();

  /** The messages of the last request the server accepted. */
  private last: Recorded = [];

  /** The server has these messages as they were (loaded from it, or sent and accepted). */
  have(messages: Recorded): void {
    for (const [id, key, states] of messages) {
      this.keys.set(id, key);
      this.sentStates.set(id, new Set(states));
    }
  }

  /** A request the server answered (2xx): it has its messages, unless it refuses the turn in
   * its stream (another answer in the thread: threadSync.ts), which `forgetLast` undoes. */
  accepted(messages: Recorded): void {
    this.have(messages);
    this.last = messages;
  }

  /** The last accepted request's turn was refused after all: the server did not store it. */
  forgetLast(): void {
    for (const [id] of this.last) {
      this.keys.delete(id);
      this.sentStates.delete(id);
    }
    this.last = [];
  }

  /** An answer streamed to its end: the server stored it, but not what the panel added to it
   * meanwhile (a tool result, an approval), which goes with the next request. */
  finished(message: UIMessage): void {
    const sent = this.sentStates.get(message.id);
    if (panelStates(message).every((state) => sent?.has(state))) this.keys.set(message.id, messageKey(message));
  }

  /** What the server does not have of `messages` (a thread's whole list, as the SDK sends it),
   * or null when it has none of them: the whole thread is sent. */
  newPart(messages: readonly UIMessage[]): NewPart | null {
    let start = messages.length;
    while (start > 0 && !this.hasAsIs(messages[start - 1]!)) start--;
    if (start === 0) return null;
    return { messages: messages.slice(start), parentId: messages[start - 1]!.id, parentIndex: start - 1 };
  }

  private hasAsIs(message: UIMessage): boolean {
    const key = this.keys.get(message.id);
    return key !== undefined && key === messageKey(message);
  }
}

/** A request on its way: what the server has once it accepts it, and the whole thread to send
 * instead if it refuses it as stale. */
interface Sending {
  sent: Recorded;
  whole: (() => Promise<readonly UIMessage[]>) | null;
}

/** Where the chat's messages start in the thread, when it holds only its last pages. */
export interface LoadedPart {
  offset: (messages: readonly UIMessage[]) => number;
  /** The thread's messages before the chat's first one. */
  allBefore: (messages: readonly UIMessage[]) => Promise<UIMessage[]>;
}

type Body = { messages: readonly UIMessage[]; parentId?: string; parentIndex?: number };

/** The chat request's body fields for `messages` (the chat's, as the SDK sends them): what is new
 * and the message it follows, or the whole thread; and the fetch that sends it (the AI SDK
 * transport's `fetch`), which records what the server accepted and sends a stale request again
 * whole. One request at a time per chat (the SDK's), so one `Sending` at a time. */
export function newOnlyTransport(sent: SentMessages, loaded: LoadedPart): {
  body: (messages: readonly UIMessage[]) => Promise<Body>;
  fetch: typeof globalThis.fetch;
} {
  let sending: Sending | null = null;
  const whole = async (messages: readonly UIMessage[]) => [...(await loaded.allBefore(messages)), ...messages];
  return {
    body: async (messages) => {
      const part = sent.newPart(messages);
      if (!part) {
        const all = await whole(messages);
        sending = { sent: recorded(all), whole: null };
        return { messages: all };
      }
      sending = { sent: recorded(part.messages), whole: () => whole(messages) };
      return { messages: part.messages, parentId: part.parentId, parentIndex: part.parentIndex + loaded.offset(messages) };
    },
    fetch: async (input, init) => {
      const now = sending;
      sending = null;
      let response = await apiFetch(input, init);
      let accepted = now?.sent ?? [];
      // (not over another tab's turn: the chat loads the thread instead, threadSync.ts)
      if (response.status === 409 && now?.whole && typeof init?.body === "string" && !(await movedOn(response))) {
        const { parentId: _p, parentIndex: _i, ...body } = JSON.parse(init.body) as Record<string, unknown>;
        const all = await now.whole();
        response = await apiFetch(input, { ...init, body: JSON.stringify({ ...body, messages: all }) });
        accepted = recorded(all);
      }
      if (response.ok) sent.accepted(accepted);
      return response;
    },
  };
}

/** A 409 that says the thread has another tab's messages after the request's parent (and, for an
 * answer continued with its tool results, that the results were kept in it). */
async function movedOn(response: Response): Promise<boolean> {
  const code = parseServerError(await response.clone().text()).coded?.code;
  return code === "chat.thread_moved_on" || code === "chat.thread_moved_on_kept";
}

// The approval cards waiting for an answer, kept in the browser's storage so a page reload can
// show them again (runtime/approvals.ts restores them from the stored thread). The server
// stores the call itself ("input-available": it never sees the panel's question); this keeps
// what the card asked, by tool call id, until the user answers or the call ends otherwise.
// What it holds is what the card shows (an action, node labels, a cost): never a secret.
import type { ApprovalRequest } from "../tools/approvals";

const KEY = "comfyui-assistant.waiting-approvals";
/** The most cards remembered (the oldest go first): a card waits in one thread at a time. */
const MOST = 50;

export interface Remembered {
  thread: string;
  request: ApprovalRequest;
}

type Table = Record<string, Remembered>;

function read(): Table {
  try {
    const raw = globalThis.localStorage?.getItem(KEY);
    const table: unknown = raw ? JSON.parse(raw) : {};
    return table && typeof table === "object" && !Array.isArray(table) ? (table as Table) : {};
  } catch {
    return {};
  }
}

function write(table: Table): void {
  try {
    const ids = Object.keys(table);
    for (const id of ids.slice(0, Math.max(0, ids.length - MOST))) delete table[id];
    if (Object.keys(table).length) globalThis.localStorage?.setItem(KEY, JSON.stringify(table));
    else globalThis.localStorage?.removeItem(KEY);
  } catch {
    // storage may be unavailable (private mode): after a reload the card is then not shown
    // again, and the call ends as cancelled with the next message (runtime/pendingCalls.ts)
  }
}

/** Keeps the question a call waits on. */
export function rememberWaiting(toolCallId: string, thread: string, request: ApprovalRequest): void {
  const table = read();
  delete table[toolCallId]; // (to the end: the newest last)
  table[toolCallId] = { thread, request };
  write(table);
}

/** The call no longer waits (answered, or ended otherwise). */
export function forgetWaiting(toolCallId: string): void {
  const table = read();
  if (!(toolCallId in table)) return;
  delete table[toolCallId];
  write(table);
}

/** The questions remembered for a thread's calls, by tool call id. */
export function waitingIn(thread: string): Map<string, ApprovalRequest> {
  const found = new Map<string, ApprovalRequest>();
  for (const [id, entry] of Object.entries(read())) {
    if (entry?.thread === thread && isRequest(entry.request)) found.set(id, entry.request);
  }
  return found;
}

function isRequest(value: unknown): value is ApprovalRequest {
  const request = value as ApprovalRequest | null;
  return !!request && typeof request.kind === "string" && typeof request.action === "string" && Array.isArray(request.nodes);
}

// The calls of MCP clients the panel lists (runtime/mcpRelay.ts), the clients connected to the
// server, and the call groups with the graph kept before their first edit.
import type { ApprovalRequest } from "../tools/approvals";

export interface McpClient {
  /** As the client gave it in `initialize` ("" when it gave none). */
  name: string;
  version: string;
}

/** An MCP client connected to the server (mcp_server/clients.py): its session, its name and
 * version from `initialize`, since when (ISO 8601). */
export interface ConnectedClient extends McpClient {
  id: string;
  since: string;
}

/** (`allowed`: a server tool's question the user allowed; the tool runs on the server.) */
export type McpCallState = "running" | "asking" | "done" | "failed" | "denied" | "cancelled" | "allowed";

export interface McpCall {
  callId: string;
  name: string;
  input: unknown;
  client: McpClient;
  state: McpCallState;
  /** The output or error the client got. */
  result?: unknown;
  /** What the call asks the user, while it asks. */
  asking?: ApprovalRequest;
  /** The call group it belongs to (one checkpoint each). */
  group: number;
}

export interface McpGroup {
  id: number;
  /** The workflow before the group's first edit (restorable as one undo step). */
  before?: { workflow: string | null; graph: unknown };
  /** Whether an edit of the group changed the graph (a denied or failed one may not have). */
  changed?: boolean;
}

// The panel's half of the MCP relay (mcp_server/panel_relay.py has the design): this page takes
// the calls an MCP client makes of panel tools, runs each as a chat's tool call runs (the same
// tool code through runPanelTool, so each edit is one undo step; the graph kept before the first
// edit of a call group; the approval card for whatever asks first, marked with the client's
// name) and posts the outcome, which the server turns into the text the model would read.
// Its calls are listed here (the "external agent" line), never in the user's chat threads.
import { apiFetch, requestJson } from "../server/api";
import type { ApprovalRequest } from "../tools/approvals";
import { Changes } from "./changes";
import { editsGraph, sameGraph, type RestoreOutcome, type WorkflowAccess } from "./checkpoints";
import type { ConnectedClient, McpCall, McpCallState, McpClient, McpGroup } from "./mcpCalls";
import { keeper, loadKept, type KeptStorage } from "./mcpKept";
import { keepStreaming, type StreamEvent } from "./mcpStream";
import { watchGraph } from "./graphWatch";
import type { ServerPresence } from "./serverPresence";
import type { PanelTools } from "./panelTools";
import { runPanelTool, type ToolOutcome } from "./toolRunner";

export type { ConnectedClient, McpCall, McpCallState, McpClient, McpGroup } from "./mcpCalls";

export const RELAY_PATH = "/api/assistant/mcp/panel";
/** Calls with no pause longer than this are one group: one checkpoint before its first edit. */
export const GROUP_PAUSE_MS = 60_000;
/** The calls the panel lists (the oldest go first). */
export const LISTED_CALLS = 50;
const PANEL_KEY = "comfyui-assistant.mcpPanel";

export interface McpRelayDeps {
  tools: PanelTools;
  graph: WorkflowAccess | undefined;
  /** The active workflow's key, and its name (what the server lists the panel with). */
  workflow: () => { key: string | null; name: string };
  /** Whether a graph edit asks first (the panel's setting, as in a chat). */
  askBeforeEdits: () => boolean;
  fetch?: typeof globalThis.fetch;
  request?: <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<T>;
  now?: () => number;
  panelId?: string;
  /** Where the relay keeps its calls, groups and trusted clients across a reload (mcpKept.ts). */
  storage?: KeptStorage;
}

interface Running {
  stop: AbortController;
  answer?: (allowed: boolean) => void;
  denied?: string;
  cancelled?: boolean;
}

function panelId(): string {
  const fresh = `p${Math.random().toString(36).slice(2, 12)}`;
  try {
    const kept = globalThis.sessionStorage?.getItem(PANEL_KEY);
    if (kept) return kept;
    globalThis.sessionStorage?.setItem(PANEL_KEY, fresh); // (a reload is the same panel)
  } catch {
    // (storage refused: a new id each load)
  }
  return fresh;
}

export class McpRelay extends Changes {
  readonly panelId: string;
  calls: McpCall[] = [];
  readonly groups = new Map<number, McpGroup>();
  /** What the last "put the graph back" came to. */
  restored: RestoreOutcome | null = null;
  /** Whether the relay's stream is open (MCP calls reach this page). */
  connected = false;
  /** Told when a call starts to wait for the user (the page toasts it while the panel is closed). */
  onAsking?: (call: McpCall) => void;
  /** The user's MCP clients connected to the server now (the stream's `clients` events). */
  connectedClients: ConnectedClient[] = [];
  /** The client names the user disconnected (refused until allowed again). */
  disconnected: string[] = [];
  /** Graph edits of these clients go ahead without asking ("always" on their card). */
  private readonly trusted = new Set<string>();
  private readonly running = new Map<string, Running>();
  private lastCallAt = -Infinity;
  private groupCount = 0;
  private stopper: AbortController | null = null;
  private readonly fetch: typeof globalThis.fetch;
  private readonly request: <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<T>;
  private readonly now: () => number;

  constructor(private readonly deps: McpRelayDeps) {
    super();
    this.panelId = deps.panelId ?? panelId();
    this.fetch = deps.fetch ?? apiFetch;
    this.request = deps.request ?? requestJson;
    this.now = deps.now ?? Date.now;
    const kept = deps.storage ? loadKept(deps.storage) : null;
    if (kept) {
      for (const name of kept.trusted) this.trusted.add(name);
      for (const group of kept.groups) this.groups.set(group.id, group);
      this.groupCount = kept.groupCount;
      this.calls = kept.calls;
    }
    if (deps.storage) {
      const keepSoon = keeper(deps.storage, () => ({ trusted: [...this.trusted], groups: [...this.groups.values()], groupCount: this.groupCount, calls: this.calls }));
      this.keepSoon = keepSoon;
    }
  }

  private readonly keepSoon?: () => void;

  protected override emit(): void {
    super.emit();
    this.keepSoon?.();
  }

  /** Opens the stream (once per page: a second start does nothing) until stop(). */
  start(server?: ServerPresence): Promise<void> {
    if (this.stopper) return Promise.resolve();
    const stopper = new AbortController();
    this.stopper = stopper;
    const url = () => `${RELAY_PATH}?panel=${encodeURIComponent(this.panelId)}&workflow=${encodeURIComponent(this.deps.workflow().name)}`;
    return keepStreaming(
      { url, fetch: this.fetch, onEvent: (event) => this.onEvent(event), onOpen: (open) => this.setConnected(open), whenHere: server?.whenHere },
      stopper.signal,
    );
  }

  /** Closes the stream: MCP calls no longer reach this page (its running calls end). */
  stop(): void {
    this.stopper?.abort();
    this.stopper = null;
    for (const callId of [...this.running.keys()]) this.cancel(callId);
    this.setConnected(false);
  }

  get started(): boolean {
    return this.stopper !== null;
  }

  /** Ends `client`'s connection: the server closes its session, ends its waiting calls, and
   * refuses its name until allow(); its graph edits ask first again after that. */
  async disconnect(client: ConnectedClient): Promise<void> {
    this.trusted.delete(client.name);
    await this.post("disconnect", { session: client.id });
  }

  /** Lets a client the user disconnected connect again. */
  async allow(name: string): Promise<void> {
    await this.post("allow", { name });
  }

  private async post(route: string, body: Record<string, unknown>): Promise<void> {
    try {
      await this.request(`${RELAY_PATH}/${route}`, { method: "POST", body });
    } catch (error) {
      console.warn(`[comfyui-assistant] the MCP relay did not take ${route}`, error);
    }
  }

  /** Reports a change of the graph to the server (graphWatch.ts) for as long as the page lives;
   * returns the function that stops it. */
  watchGraph(version: () => unknown, visible: () => boolean = () => true): () => void {
    return watchGraph(version, () => void this.reportState(visible(), true));
  }

  /** Tells the server which workflow this page shows and whether the user is here (and that
   * its graph changed). */
  async reportState(active: boolean, changed = false): Promise<void> {
    if (!this.connected) return;
    try {
      const body = { panel: this.panelId, workflow: this.deps.workflow().name, active, ...(changed ? { changed } : {}) };
      await this.request(`${RELAY_PATH}/state`, { method: "POST", body });
    } catch (error) {
      console.warn("[comfyui-assistant] the MCP relay did not take the panel's state", error);
    }
  }

  /** The user's Allow or Deny on a call's card; `always`: this client's graph edits go ahead. */
  respond(callId: string, approved: boolean, always: boolean, words: string): void {
    const run = this.running.get(callId);
    const call = this.calls.find((c) => c.callId === callId);
    if (!run?.answer || !call) return;
    if (approved && always && call.asking?.kind === "graph-edit") this.trusted.add(call.client.name);
    if (!approved) run.denied = words.trim();
    const answer = run.answer;
    run.answer = undefined;
    this.update(call, { state: "running", asking: undefined });
    answer(approved);
  }

  /** Forgets the calls listed (the groups' checkpoints too). */
  clear(): void {
    this.calls = this.calls.filter((c) => this.running.has(c.callId));
    for (const id of [...this.groups.keys()]) if (!this.calls.some((c) => c.group === id)) this.groups.delete(id);
    this.emit();
  }

  /** The latest call group that kept the graph before its first edit. */
  lastCheckpoint(): McpGroup | undefined {
    return [...this.groups.values()].reverse().find((g) => g.before && g.changed);
  }

  /** Puts the workflow back as it was before group `id`'s first edit, as one undo step (null:
   * the group kept no graph). */
  async restoreBefore(id: number): Promise<RestoreOutcome | null> {
    const before = this.groups.get(id)?.before;
    if (!before || !this.deps.graph) return null;
    let outcome: RestoreOutcome;
    try {
      outcome = await this.deps.graph.restore(before.workflow, before.graph);
    } catch (error) {
      outcome = { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    this.restored = outcome;
    this.emit();
    return outcome;
  }

  private setConnected(open: boolean): void {
    if (this.connected === open) return;
    this.connected = open;
    if (!open) this.connectedClients = []; // (unknown until the stream is open again)
    this.emit();
  }

  private onEvent({ event, data }: StreamEvent): void {
    const body = (data ?? {}) as Record<string, unknown>;
    if (event === "clients") return this.setClients(body);
    if (typeof body.callId !== "string") return;
    if (event === "cancel") this.cancel(body.callId);
    else if (event === "call" && typeof body.name === "string") void this.run(body.callId, body.name, body.input, clientOf(body.client));
    else if (event === "ask" && typeof body.name === "string") void this.ask(body.callId, body.name, body.input, clientOf(body.client), String(body.action ?? ""));
  }

  private setClients(body: Record<string, unknown>): void {
    const listed = Array.isArray(body.clients) ? body.clients : [];
    this.connectedClients = listed.map((c: unknown) => {
      const info = (c ?? {}) as Record<string, unknown>;
      return { ...clientOf(info), id: String(info.id ?? ""), since: String(info.since ?? "") };
    });
    this.disconnected = Array.isArray(body.disconnected) ? body.disconnected.filter((n): n is string => typeof n === "string") : [];
    this.emit();
  }

  private cancel(callId: string): void {
    const run = this.running.get(callId);
    if (!run) return;
    run.cancelled = true;
    run.stop.abort();
    const answer = run.answer;
    run.answer = undefined;
    answer?.(false); // (the tool stops before it acts)
    const call = this.calls.find((c) => c.callId === callId);
    if (call) this.update(call, { state: "cancelled", asking: undefined });
  }

  private groupFor(name: string): number {
    const now = this.now();
    if (now - this.lastCallAt > GROUP_PAUSE_MS || !this.groups.size) {
      this.groups.set(++this.groupCount, { id: this.groupCount });
    }
    this.lastCallAt = now;
    const group = this.groups.get(this.groupCount)!;
    if (editsGraph(name) && !group.before && this.deps.graph) {
      try {
        group.before = { workflow: this.deps.workflow().key, graph: this.deps.graph.serialize() };
      } catch (error) {
        console.warn("[comfyui-assistant] the graph could not be kept before an MCP edit", error);
      }
    }
    return group.id;
  }

  /** Lists a call that came in; null when it is listed already. */
  private begin(callId: string, name: string, input: unknown, client: McpClient): { run: Running; call: McpCall } | null {
    if (this.running.has(callId)) return null;
    const run: Running = { stop: new AbortController() };
    this.running.set(callId, run);
    const call: McpCall = { callId, name, input, client, state: "running", group: this.groupFor(name) };
    this.calls = [...this.calls, call].slice(-LISTED_CALLS);
    this.emit();
    return { run, call };
  }

  /** Shows the card and waits for the user's Allow or Deny (or the server's cancel: false). */
  private asked(run: Running, call: McpCall, request: ApprovalRequest): Promise<boolean> {
    if (run.cancelled) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      run.answer = resolve;
      this.update(call, { state: "asking", asking: request });
      this.onAsking?.({ ...call, state: "asking", asking: request });
    });
  }

  /** A server tool that asks first: the card, then the user's answer to the server, which runs
   * the tool on Allow. */
  private async ask(callId: string, name: string, input: unknown, client: McpClient, action: string): Promise<void> {
    const started = this.begin(callId, name, input, client);
    if (!started) return;
    const { run, call } = started;
    const allowed = await this.asked(run, call, { kind: "server", action, nodes: [] });
    this.running.delete(callId);
    if (run.cancelled) return;
    const sent = allowed ? { output: { approved: true } } : { denied: run.denied ?? "" };
    this.update(call, { state: allowed ? "allowed" : "denied" });
    await this.post("results", { panel: this.panelId, callId, ...sent });
  }

  private async run(callId: string, name: string, input: unknown, client: McpClient): Promise<void> {
    const started = this.begin(callId, name, input, client);
    if (!started) return;
    const { run, call } = started;
    const approve = (request: ApprovalRequest): Promise<boolean> => {
      if (request.kind === "graph-edit" && !run.cancelled && (!this.deps.askBeforeEdits() || this.trusted.has(client.name))) return Promise.resolve(true);
      return this.asked(run, call, request);
    };
    let outcome: ToolOutcome;
    try {
      const kinds = await this.deps.tools.loadKinds();
      outcome = await runPanelTool(name, input, this.deps.tools.functions(), kinds, { detach: run.stop.signal, approve });
    } finally {
      this.running.delete(callId);
      this.noteChange(name, call.group);
    }
    if (run.cancelled) return; // (the server ended the call: nobody waits for its answer)
    await this.answer(call, run.denied, outcome);
  }

  /** After an edit: whether its group's graph is no longer the one kept before it. */
  private noteChange(name: string, id: number): void {
    const group = this.groups.get(id);
    if (!group?.before || group.changed || !editsGraph(name) || !this.deps.graph) return;
    try {
      group.changed = !sameGraph(this.deps.graph.serialize(), group.before.graph);
    } catch {
      group.changed = true; // (the graph cannot be read now: a change may have been made)
    }
  }

  private async answer(call: McpCall, denied: string | undefined, outcome: ToolOutcome): Promise<void> {
    const sent = denied !== undefined ? { denied } : "errorText" in outcome ? { errorText: outcome.errorText } : { output: outcome.output };
    const state: McpCallState = denied !== undefined ? "denied" : "errorText" in outcome || failed(outcome.output) ? "failed" : "done";
    this.update(call, { state, result: "errorText" in outcome ? outcome.errorText : outcome.output });
    try {
      await this.request(`${RELAY_PATH}/results`, { method: "POST", body: { panel: this.panelId, callId: call.callId, ...sent } });
    } catch (error) {
      console.warn(`[comfyui-assistant] the MCP relay did not take the result of ${call.name}`, error);
    }
  }

  private update(call: McpCall, changes: Partial<McpCall>): void {
    this.calls = this.calls.map((c) => (c.callId === call.callId ? { ...c, ...changes } : c));
    this.emit();
  }
}

function failed(output: unknown): boolean {
  return !!output && typeof output === "object" && (output as { ok?: unknown }).ok === false;
}

function clientOf(value: unknown): McpClient {
  const info = (value ?? {}) as Record<string, unknown>;
  return { name: typeof info.name === "string" ? info.name.slice(0, 100) : "", version: typeof info.version === "string" ? info.version.slice(0, 40) : "" };
}

// The chat state that outlives the panel's React tree. ComfyUI destroys the tab's DOM whenever
// the bottom panel closes; everything that must survive lives here, in one module-level store:
// one AI SDK `Chat` per thread (chatEntry.ts: its messages, its running stream, its automatic
// resubmits), the panel tool calls (toolCalls.ts), the notes (notices.ts), the composer drafts,
// the panel settings and the current thread. The React tree (panel/) is rebuilt on every
// render(el) and reads this.
import type { ThreadHistoryAdapter } from "@assistant-ui/react";
import { generateId } from "ai";
import { startTransition } from "react";
import { requestJson, type SkillInfo } from "../server/api";
import type { ApprovalRequest } from "../tools/approvals";
import type { OutputFile } from "../tools/outputFiles";
import { Changes } from "./changes";
import { newChatEntry } from "./chatEntry";
import { Checkpoints, type WorkflowAccess } from "./checkpoints";
import { editsSince, keepShot } from "./editNotes";
import { McpRelay } from "./mcpRelay";
import { ThreadNotices } from "./notices";
import { clampSteps, loadSettings, saveSettings, type PanelSettings } from "./panelSettings";
import { PanelTools } from "./panelTools";
import { settledForNewMessage } from "./pendingCalls";
import { rememberedThread, rememberThread } from "./rememberedThread";
import { ReadAhead } from "./readAhead";
import { Rewinds } from "./rewind";
import { recorded } from "./sentMessages";
import { canCarryNote, endedRunsNote, withNote, type Outgoing, type SendOptions } from "./runNotes";
import { fetchSkills } from "./skills";
import { lastUserId } from "./steps";
import { threadHistory } from "./threadHistory";
import { serverPresence, type ServerPresence } from "./serverPresence";
import { catchUp, refusedTurn, withdrawUnsent } from "./threadSync";
import { ToolCalls } from "./toolCalls";
import type { ToolKinds } from "./toolRunner";
import { WorkflowThreads } from "./workflowThreads";

export type { ChatEntry, ChatStoreOptions, ComfyRuns, GraphReader, NewNotice, Notice, PanelView } from "./chatTypes";
import type { ChatEntry, ChatStoreOptions, ComfyRuns, GraphReader, NewNotice, Notice, PanelView, ToolsFactory } from "./chatTypes";
export { CHAT_PATH } from "./chatEntry";

/** The key of the thread the panel shows: its server id, or NEW before its first message. */
export const NEW_THREAD = "new";

export class ChatStore extends Changes {
  settings: PanelSettings;
  /** The thread shown last (its server id), restored when the tab opens again. */
  currentThreadId: string | undefined = undefined;
  view: PanelView = "chat";
  threadsOpen = false;
  skills: SkillInfo[] = [];
  /** Asks before something destructive (ComfyUI's dialog when the panel runs there). */
  confirm: (title: string, message: string) => Promise<boolean> = async (title, message) =>
    typeof window !== "undefined" && typeof window.confirm === "function" ? window.confirm(`${title}\n\n${message}`) : true;
  private readonly runs: ComfyRuns | undefined;
  private readonly readGraph: GraphReader | undefined;
  /** The workflow tabs and the threads that belong to them. */
  readonly workflows: WorkflowThreads;
  /** The graph before each graph-changing turn, per thread ("Rewind to here"). */
  readonly checkpoints: Checkpoints;
  readonly graph: WorkflowAccess | undefined;
  /** "Rewind to here": what each rewind came to. */
  readonly rewinds: Rewinds;
  /** The MCP clients' calls of panel tools (started by the page: panel/index.ts). */
  readonly mcp: McpRelay;

  /** The last page of the thread the panel reopens, read at its start (readAhead.ts). */
  readonly ahead = new ReadAhead(requestJson);
  private readonly entries = new Map<string, ChatEntry>();
  private readonly drafts = new Map<string, string>();
  private readonly notices: ThreadNotices;
  private readonly tools: PanelTools;
  private readonly calls: ToolCalls;
  private readonly rememberThread: boolean;

  constructor(options: ChatStoreOptions = {}) {
    super();
    this.settings = options.settings ?? loadSettings();
    this.runs = options.runs;
    this.readGraph = options.snapshot;
    this.graph = options.graph;
    this.tools = new PanelTools(options.tools, () => this.emit());
    this.notices = new ThreadNotices(() => this.emit(), (key) => this.entries.get(key)?.chat.messages.at(-1)?.id ?? null);
    this.checkpoints = new Checkpoints({ request: requestJson, changed: () => this.emit() });
    this.rewinds = new Rewinds({
      request: requestJson,
      note: (threadId, notice) => void this.addNotice(threadId, notice),
      unnote: (threadId, group) => this.dropNotices(threadId, group),
      checkpoints: this.checkpoints,
      graph: this.graph,
      workflowName: (key) => this.workflows.nameOf(key),
      changed: () => this.emit(),
      hold: (threadId) => this.holdThread(threadId),
    });
    this.currentThreadId = options.rememberThread === false ? undefined : rememberedThread();
    this.rememberThread = options.rememberThread !== false;
    this.workflows = new WorkflowThreads({
      request: requestJson,
      changed: () => this.emit(),
      current: () => this.currentThreadId,
      // A tab that opens while the shown thread loads a workflow was opened by it.
      busy: () => (this.currentThreadId ? this.entries.get(this.currentThreadId)?.openingTabs ?? 0 : 0) > 0,
    });
    this.calls = new ToolCalls({
      entries: () => new Set(this.entries.values()),
      tools: this.tools,
      runs: this.runs,
      graph: this.graph,
      checkpoints: this.checkpoints,
      workflows: this.workflows,
      changed: () => this.emit(),
      keepGraph: (entry) => this.keepGraph(entry),
    });
    this.mcp = new McpRelay({
      tools: this.tools,
      graph: this.graph,
      workflow: () => {
        const key = this.workflows.active ?? null;
        return { key, name: key ? this.workflows.nameOf(key) : "" };
      },
      askBeforeEdits: () => this.settings.askBeforeEdits !== false,
      // (kept across a reload of the page, as the thread shown is)
      ...(options.rememberThread !== false && globalThis.sessionStorage ? { storage: globalThis.sessionStorage } : {}),
    });
    this.mcp.subscribe(() => this.emit());
  }

  // ---- panel tools and their calls ----

  /** Where each tool runs, once GET /api/assistant/tools answered. */
  get toolKinds(): ToolKinds | null {
    return this.tools.kinds;
  }

  setTools(factory: ToolsFactory): void {
    this.tools.setFactory(factory);
  }

  /** Which tools run in the panel and which on the server (GET /api/assistant/tools). */
  loadToolKinds(): Promise<ToolKinds | null> {
    return this.tools.loadKinds();
  }

  stopWaiting(toolCallId: string): void {
    this.calls.stopWaiting(toolCallId);
  }

  canInterrupt(toolCallId: string): boolean {
    return this.calls.canInterrupt(toolCallId);
  }

  interrupt(toolCallId: string): Promise<void> {
    return this.calls.interrupt(toolCallId);
  }

  isInterrupting(toolCallId: string): boolean {
    return this.calls.isInterrupting(toolCallId);
  }

  progressOf(toolCallId: string): Record<string, unknown> | undefined {
    return this.calls.progressOf(toolCallId);
  }

  approvalOf(toolCallId: string): ApprovalRequest | undefined {
    return this.calls.approvalOf(toolCallId);
  }

  respondToApproval(toolCallId: string, approved: boolean, always = false, words = ""): Promise<void> {
    return this.calls.respondToApproval(toolCallId, approved, always, words);
  }

  /** Where one of a run's files is shown; null where ComfyUI's runs are not at hand. */
  fileUrl(file: OutputFile): string | null {
    return this.runs?.fileUrl(file) ?? null;
  }

  // ---- chats ----

  /** Sends the user's message with the panel's notes, each one text part (stored with the
   * message: the server just sees user text): that the graph was not rewound with the
   * conversation, how the runs this thread stopped waiting for have ended since, and what the
   * user changed in the workflow by hand since the last answer. */
  async sendMessage(entry: ChatEntry, message: Outgoing, options?: SendOptions): Promise<void> {
    const carries = canCarryNote(message);
    const rewound = carries ? entry.graphNote : null;
    if (carries) entry.graphNote = null;
    const edits = carries ? editsSince(entry, this.readGraph?.() ?? null) : null;
    const ended = this.runs && carries ? await endedRunsNote(entry.unfinishedRuns, this.runs) : null;
    let outgoing = message;
    for (const note of [rewound, ended, edits]) if (note && outgoing) outgoing = withNote(outgoing, note);
    // The last answer's calls still open end here: a denied one as denied, others cancelled.
    const settled = settledForNewMessage(entry.chat.messages);
    if (settled !== entry.chat.messages) entry.chat.messages = settled;
    entry.approvals.supersede();
    // The request leaves first: what the send changes in the chat's state (the message, the
    // "submitted" status) renders as a React transition, in a later task. Updated in the Enter
    // key's own microtasks, it rendered there, synchronously, before the AI SDK's fetch.
    let sending: Promise<void> = Promise.resolve();
    startTransition(() => {
      sending = entry.chat.sendMessage(outgoing, options);
    });
    await sending;
  }

  /** Keeps the graph as the assistant's turn left it, for the user's next message. */
  private keepGraph(entry: ChatEntry): void {
    keepShot(entry, this.readGraph?.() ?? null, this.workflows.workflowOf(entry.serverId));
  }

  /**
   * The chat of a thread-list item: by its remote id when it has one, else by its local id.
   * A new thread's chat gets its server id here, before the thread list initializes it.
   */
  entryFor(listId: string, remoteId: string | undefined): ChatEntry {
    const known = (remoteId && this.entries.get(remoteId)) || this.entries.get(listId);
    if (known) {
      if (remoteId && !this.entries.has(remoteId)) this.entries.set(remoteId, known);
      return known;
    }
    if (!remoteId) this.dropUnusedNewChats();
    const entry = newChatEntry(remoteId ?? `th_${generateId()}`, remoteId !== undefined, {
      settings: () => this.settings,
      workflows: this.workflows,
      changed: () => this.emit(),
      runTool: (entry, name, toolCallId, input) => void this.calls.run(entry, name, toolCallId, input),
      keepGraph: (entry) => this.keepGraph(entry),
      failed: (entry, error) => this.failed(entry, error),
      request: this.ahead.take,
    });
    this.entries.set(listId, entry);
    if (remoteId) this.entries.set(remoteId, entry);
    return entry;
  }

  /** The thread list initializes a new thread: its server id is its chat's id. */
  serverIdFor = (listId: string): string => {
    const entry = this.entryFor(listId, undefined);
    entry.known = true;
    this.entries.set(entry.serverId, entry);
    // What was noted on the unsent thread (a /help answer) stays with it.
    this.notices.carry(NEW_THREAD, entry.serverId);
    return entry.serverId;
  };

  /** A thread was deleted: stop its chat and forget it. */
  forget = (remoteId: string): void => {
    const entry = this.entries.get(remoteId);
    if (entry) {
      void entry.chat.stop().catch(() => {});
      for (const [key, value] of this.entries) if (value === entry) this.entries.delete(key);
    }
    this.drafts.delete(remoteId);
    this.notices.forget(remoteId);
    this.workflows.forget(remoteId);
    if (this.currentThreadId === remoteId) {
      this.currentThreadId = undefined;
      if (this.rememberThread) rememberThread(undefined);
    }
    this.emit();
  };

  /** The chat of a server thread, if this page has one. */
  chatOf(serverId: string): ChatEntry | undefined {
    return this.entries.get(serverId);
  }

  /** The thread a panel starts on (the one shown last); its last page is read at once when this
   * page has not loaded it yet (after a reload). */
  startingThread(): string | undefined {
    const id = this.currentThreadId;
    if (id && !this.entries.has(id)) this.ahead.start(id);
    return id;
  }

  setCurrentThread = (remoteId: string | undefined): void => {
    this.workflows.shown(remoteId);
    if (this.currentThreadId === remoteId) return;
    this.currentThreadId = remoteId;
    if (this.rememberThread) rememberThread(remoteId);
    this.emit();
  };

  /** Stop the turn now: abort the stream and let no pending tool output resubmit it. */
  halt(entry: ChatEntry): Promise<void> {
    entry.haltedAfter = lastUserId(entry.chat.messages);
    this.emit();
    return entry.chat.stop();
  }

  private dropUnusedNewChats(): void {
    for (const [key, entry] of this.entries) {
      if (!entry.known && entry.chat.messages.length === 0 && entry.chat.status === "ready") {
        this.entries.delete(key);
      }
    }
  }

  /** Keeps a thread in view while its rewind switches workflow tabs (as a tab its tool opens). */
  private holdThread(threadId: string): () => void {
    const entry = this.entries.get(threadId);
    if (entry) entry.openingTabs++;
    return () => {
      if (entry) entry.openingTabs--;
    };
  }

  /** The page of the thread before the messages its chat holds (it opened with its last page). */
  async loadEarlier(entry: ChatEntry): Promise<void> {
    const { pages, chat } = entry;
    if (pages.loading || chat.status !== "ready" || !pages.hasEarlier(chat.messages)) return;
    pages.loading = true;
    this.emit();
    try {
      const page = await pages.earlier(chat.messages);
      entry.sent.have(recorded(page));
      chat.messages = [...page, ...chat.messages];
    } finally {
      pages.loading = false;
      this.emit();
    }
  }

  // ---- the same thread in another tab (threadSync.ts) ----

  /** A turn the server refused over another tab's: taken back, the words to the composer. */
  private failed(entry: ChatEntry, error: Error): void {
    if (!refusedTurn(error)) return;
    const words = withdrawUnsent(entry);
    if (words) entry.putBack = words;
    this.emit();
    // (once the chat has settled on the error: the SDK calls this just before)
    void Promise.resolve()
      .then(() => this.catchUp(entry))
      .catch(() => {}); // (the server is away: the next look tries again)
  }

  /** Loads the thread as the server has it when another tab's turns moved it on. */
  async catchUp(entry: ChatEntry): Promise<boolean> {
    const rerun = (name: string, toolCallId: string, input: unknown) => void this.calls.run(entry, name, toolCallId, input);
    const moved = await catchUp(entry, requestJson, (messages) => entry.approvals.restore(messages, rerun));
    if (moved) this.emit();
    return moved;
  }

  /**
   * While the panel is shown: the shown thread catches up with other tabs when the page becomes
   * visible or gets the focus, and every `everyMs` while it is visible (after a failed look, less
   * often: a request to a server that is down logs an error in the console). Not while ComfyUI's
   * socket says the server is away (`reconnecting`, a restart): it looks again once `reconnected`.
   * Returns the stop.
   */
  followOtherTabs(everyMs = 4000, server: ServerPresence = serverPresence()): () => void {
    let waitUntil = 0;
    let misses = 0;
    const look = async () => {
      const entry = this.currentThreadId ? this.entries.get(this.currentThreadId) : undefined;
      if (!entry || server.away() || document.visibilityState !== "visible" || Date.now() < waitUntil) return;
      try {
        await this.catchUp(entry);
        misses = 0;
      } catch {
        misses++;
        waitUntil = Date.now() + everyMs * Math.min(2 ** misses, 16);
      }
    };
    const now = () => void look();
    const stopBack = server.onBack(() => {
      waitUntil = 0;
      now();
    });
    document.addEventListener("visibilitychange", now);
    window.addEventListener("focus", now);
    const timer = setInterval(now, everyMs);
    return () => {
      document.removeEventListener("visibilitychange", now);
      window.removeEventListener("focus", now);
      stopBack();
      clearInterval(timer);
    };
  }

  /** Loads a thread's stored messages (GET /api/assistant/threads/{id}) into its chat. */
  historyAdapter(entry: ChatEntry): ThreadHistoryAdapter {
    return threadHistory(entry, {
      checkpoints: this.checkpoints,
      rewinds: this.rewinds,
      rerun: (entry, name, toolCallId, input) => void this.calls.run(entry, name, toolCallId, input),
    });
  }

  // ---- what the panel shows, kept across its unmounts ----

  draft(key: string): string {
    return this.drafts.get(key) ?? "";
  }

  setDraft(key: string, text: string): void {
    if (text) this.drafts.set(key, text);
    else this.drafts.delete(key);
  }

  noticesOf(key: string): readonly Notice[] {
    return this.notices.of(key);
  }

  addNotice(key: string, notice: NewNotice): string {
    return this.notices.add(key, notice);
  }

  /** Drops a thread's notes of `group` (a newer rewind makes the earlier ones stale). */
  dropNotices(key: string, group: string): void {
    this.notices.drop(key, group);
  }

  dismissNotice(key: string, id?: string): void {
    this.notices.dismiss(key, id);
  }

  updateSettings(patch: Partial<PanelSettings>): void {
    this.settings = {
      ...this.settings,
      ...patch,
      maxSteps: clampSteps(patch.maxSteps ?? this.settings.maxSteps),
    };
    saveSettings(this.settings);
    this.emit();
  }

  setView(view: PanelView): void {
    this.view = view;
    this.emit();
  }

  setThreadsOpen(open: boolean): void {
    this.threadsOpen = open;
    this.emit();
  }

  async loadSkills(): Promise<SkillInfo[]> {
    const skills = await fetchSkills();
    if (skills) {
      this.skills = skills;
      this.emit();
    }
    return this.skills;
  }
}

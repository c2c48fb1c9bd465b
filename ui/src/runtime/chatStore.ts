// The chat state that outlives the panel's React tree. ComfyUI destroys the tab's DOM whenever
// the bottom panel closes; everything that must survive lives here, in one module-level store:
// one AI SDK `Chat` per thread (its messages, its running stream, its panel tool calls and the
// automatic resubmits), the composer drafts, the local command answers, the panel settings, and
// the current thread. The React tree (panel/) is rebuilt on every render(el) and reads this.
import { Chat } from "@ai-sdk/react";
import { AssistantChatTransport } from "@assistant-ui/react-ai-sdk";
import type { ThreadHistoryAdapter } from "@assistant-ui/react";
import { generateId, isToolUIPart, type UIMessage } from "ai";
import { Approvals, awaitsOutput } from "./approvals";
import { ServerAttachments } from "./attachments";
import { apiUrl, requestJson, type ServerThread, type ServerToolSpec, type SkillInfo } from "../server/api";
import { loadSettings, saveSettings, clampSteps, type PanelSettings } from "./panelSettings";
import { settledForNewMessage } from "./pendingCalls";
import { lastUserId, shouldResubmit } from "./steps";
import { threadPath, toRepository } from "./threadAdapter";
import { editsSince, keepShot } from "./editNotes";
import { Checkpoints, type WorkflowAccess } from "./checkpoints";
import { Rewinds } from "./rewind";
import { canCarryNote, endedRunsNote, unfinishedRun, withNote, type Outgoing, type SendOptions } from "./runNotes";
import { runPanelTool, type ToolFunctions, type ToolKinds } from "./toolRunner";
import { WorkflowThreads } from "./workflowThreads";
import type { ApprovalRequest } from "../tools/approvals";
import type { OutputFile } from "../tools/outputFiles";

export type { ChatEntry, ChatStoreOptions, ComfyRuns, GraphReader, NewNotice, Notice, PanelView } from "./chatTypes";
import type { ChatEntry, ChatStoreOptions, ComfyRuns, GraphReader, NewNotice, Notice, PanelView, ToolsFactory } from "./chatTypes";

export const CHAT_PATH = "/api/assistant/chat";

/** The key of the thread the panel shows: its server id, or NEW before its first message. */
export const NEW_THREAD = "new";

// The thread shown last, so a page reload reopens it (only its id: the thread is on the server).
const THREAD_KEY = "comfyui-assistant.thread";

function rememberedThread(): string | undefined {
  try {
    return globalThis.localStorage?.getItem(THREAD_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

function rememberThread(id: string | undefined): void {
  try {
    if (id) globalThis.localStorage?.setItem(THREAD_KEY, id);
    else globalThis.localStorage?.removeItem(THREAD_KEY);
  } catch {
    // storage may be unavailable (private mode): the thread list still has every thread
  }
}

export class ChatStore {
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
  /** Where each tool runs, once GET /api/assistant/tools answered. */
  toolKinds: ToolKinds | null = null;
  /** The workflow tabs and the threads that belong to them. */
  readonly workflows: WorkflowThreads;
  /** The graph before each graph-changing turn, per thread ("Rewind to here"). */
  readonly checkpoints: Checkpoints;
  readonly graph: WorkflowAccess | undefined;
  /** "Rewind to here": what each rewind came to. */
  readonly rewinds: Rewinds;

  private readonly entries = new Map<string, ChatEntry>();
  private readonly interrupting = new Set<string>();
  private readonly drafts = new Map<string, string>();
  private readonly notices = new Map<string, Notice[]>();
  private readonly listeners = new Set<() => void>();
  private version = 0;
  private toolsFactory: ToolsFactory | undefined;
  private tools: ToolFunctions | null | undefined;
  private toolKindsLoad: Promise<ToolKinds | null> | null = null;

  constructor(options: ChatStoreOptions = {}) {
    this.settings = options.settings ?? loadSettings();
    this.toolsFactory = options.tools;
    this.runs = options.runs;
    this.readGraph = options.snapshot;
    this.graph = options.graph;
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
  }

  private readonly rememberThread: boolean;

  // ---- change notification, for useSyncExternalStore ----

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = (): number => this.version;

  private emit(): void {
    this.version++;
    for (const listener of [...this.listeners]) listener();
  }

  // ---- graph tools ----

  setTools(factory: ToolsFactory): void {
    this.toolsFactory = factory;
    this.tools = undefined;
  }

  private graphTools(): ToolFunctions | null {
    if (this.tools === undefined) {
      try {
        this.tools = this.toolsFactory?.() ?? null;
      } catch (error) {
        console.error("[comfyui-assistant] the graph tools failed to load", error);
        this.tools = null;
      }
    }
    return this.tools;
  }

  /** Which tools run in the panel and which on the server (GET /api/assistant/tools). */
  loadToolKinds(): Promise<ToolKinds | null> {
    if (!this.toolKindsLoad) {
      this.toolKindsLoad = requestJson<{ tools: ServerToolSpec[] }>("/api/assistant/tools").then(
        ({ tools }) => {
          this.toolKinds = new Map(tools.map((t) => [t.name, t.runs] as const));
          this.emit();
          return this.toolKinds;
        },
        (error: unknown) => {
          console.warn("[comfyui-assistant] the tool registry is unavailable", error);
          this.toolKindsLoad = null; // ask again next time
          return null;
        },
      );
    }
    return this.toolKindsLoad;
  }

  // ---- chats ----

  /** Stops waiting for a running call (a run goes on in ComfyUI; the model is told so). */
  stopWaiting(toolCallId: string): void {
    for (const entry of new Set(this.entries.values())) entry.waits.get(toolCallId)?.abort();
  }

  /** Whether the run of a running call can be interrupted from here (its prompt id is known). */
  canInterrupt(toolCallId: string): boolean {
    return !!this.runs && typeof this.progressOf(toolCallId)?.promptId === "string";
  }

  /** Interrupts the ComfyUI run of a running call; the call then reports it was interrupted.
   * Until the call ends, `interrupting` says so (ComfyUI stops between two nodes). */
  async interrupt(toolCallId: string): Promise<void> {
    const promptId = this.progressOf(toolCallId)?.promptId;
    if (typeof promptId !== "string" || !this.runs) return;
    this.interrupting.add(toolCallId);
    this.emit();
    try {
      await this.runs.interrupt(promptId);
    } catch (error) {
      console.warn("[comfyui-assistant] ComfyUI did not take the interrupt", error);
      this.interrupting.delete(toolCallId); // (not heard: the button may be pressed again)
      this.emit();
    }
  }

  /** Whether the user interrupted the run of a call that has not ended yet. */
  isInterrupting(toolCallId: string): boolean {
    return this.interrupting.has(toolCallId);
  }

  /** Where one of a run's files is shown; null where ComfyUI's runs are not at hand. */
  fileUrl(file: OutputFile): string | null {
    return this.runs?.fileUrl(file) ?? null;
  }

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
    await entry.chat.sendMessage(outgoing, options);
  }

  /** Keeps the graph as the assistant's turn left it, for the user's next message. */
  private keepGraph(entry: ChatEntry): void {
    keepShot(entry, this.readGraph?.() ?? null, this.workflows.workflowOf(entry.serverId));
  }

  /** Where a running panel tool call is (its card shows it), if it has said. */
  /** What a call asks the user before it acts (its card shows Allow and Deny), or undefined. */
  approvalOf(toolCallId: string): ApprovalRequest | undefined {
    for (const entry of new Set(this.entries.values())) {
      const found = entry.approvals.of(toolCallId);
      if (found) return found;
    }
    return undefined;
  }

  /** The user's Allow or Deny for a call, with their words on a denial (if any); `always`: this
   * thread's graph edits go ahead from now on. */
  async respondToApproval(toolCallId: string, approved: boolean, always = false, words = ""): Promise<void> {
    for (const entry of new Set(this.entries.values())) {
      if (entry.approvals.of(toolCallId)) await entry.approvals.respond(toolCallId, approved, always, words);
    }
  }

  progressOf(toolCallId: string): Record<string, unknown> | undefined {
    for (const entry of new Set(this.entries.values())) {
      const found = entry.progress.get(toolCallId);
      if (found) return found;
    }
    return undefined;
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
    const entry = this.createEntry(remoteId ?? `th_${generateId()}`, remoteId !== undefined);
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
    const waiting = this.notices.get(NEW_THREAD);
    if (waiting?.length) {
      this.notices.set(entry.serverId, [...(this.notices.get(entry.serverId) ?? []), ...waiting]);
      this.notices.delete(NEW_THREAD);
      this.emit();
    }
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
    this.notices.delete(remoteId);
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

  private createEntry(serverId: string, known: boolean): ChatEntry {
    const entry: ChatEntry = {
      serverId,
      known,
      haltedAfter: null,
      pendingTools: 0,
      openingTabs: 0,
      progress: new Map(),
      waits: new Map(),
      unfinishedRuns: new Set(),
      shot: null,
      graphNote: null,
      debugRequest: undefined,
      attachments: new ServerAttachments(() => serverId),
      approvals: new Approvals(() => entry.chat, () => this.emit(), this.settings.askBeforeEdits !== false),
      chat: undefined as unknown as Chat<UIMessage>,
    };
    const transport = new AssistantChatTransport<UIMessage>({
      api: apiUrl(CHAT_PATH),
      // No runtime is wired into the transport on purpose: the request id is the chat id,
      // which is the server's thread id, so a resubmit works while the tab is closed.
      prepareSendMessagesRequest: (request) => {
        // "Answer again" after a Stop: the new answer may run its tools to the end.
        if (request.trigger === "regenerate-message") entry.haltedAfter = null;
        this.workflows.touched(request.id);
        return {
          api: apiUrl(this.settings.debugContext ? `${CHAT_PATH}?debug=context` : CHAT_PATH),
          body: {
            ...request.body,
            id: request.id,
            messages: request.messages,
            trigger: request.trigger,
            messageId: request.messageId,
            metadata: request.requestMetadata,
            // The workflow tab the panel is on: a thread this request creates belongs to it.
            workflow: this.workflows.active,
          },
        };
      },
    });
    (entry as { chat: Chat<UIMessage> }).chat = new Chat<UIMessage>({
      id: serverId,
      transport,
      sendAutomaticallyWhen: ({ messages }) =>
        shouldResubmit(messages, { maxSteps: this.settings.maxSteps, haltedAfter: entry.haltedAfter }),
      onToolCall: ({ toolCall }) => {
        // Never await here: the SDK awaits this callback inside its stream loop.
        void this.runTool(entry, toolCall.toolName, toolCall.toolCallId, toolCall.input);
      },
      onFinish: ({ isAbort, messages }) => {
        if (isAbort) entry.haltedAfter = lastUserId(messages);
        entry.approvals.finished();
        this.keepGraph(entry);
        this.emit();
      },
      onData: (part) => {
        if (part.type === "data-context-request") {
          entry.debugRequest = part.data;
          this.emit();
        }
      },
    });
    return entry;
  }

  private async runTool(entry: ChatEntry, name: string, toolCallId: string, input: unknown): Promise<void> {
    const opensTab = name === TAB_OPENING_TOOL;
    entry.pendingTools++;
    if (opensTab) entry.openingTabs++;
    this.emit();
    try {
      const kinds = await this.loadToolKinds();
      if (this.graph) this.checkpoints.beforeCall(entry.serverId, entry.chat.messages, name, toolCallId, this.workflows.active ?? null, this.graph);
      const progress = (update: Record<string, unknown>) => {
        entry.progress.set(toolCallId, update);
        this.emit();
      };
      const stop = new AbortController();
      entry.waits.set(toolCallId, stop);
      const approve = (request: ApprovalRequest) => entry.approvals.ask(toolCallId, request);
      const outcome = await runPanelTool(name, input, this.graphTools(), kinds, { progress, detach: stop.signal, approve });
      // The workflow opened in a new tab, which the user now sees: the chat goes on there.
      if (opensTab && "output" in outcome && openedTab(outcome.output)) await this.workflows.adopt(entry.serverId);
      if (this.graph) await this.checkpoints.afterCall(entry.serverId, entry.chat.messages, name, toolCallId, this.graph);
      const unfinished = unfinishedRun(outcome);
      if (unfinished) entry.unfinishedRuns.add(unfinished);
      // The call may have been cancelled meanwhile (a new message marks it failed), or denied
      // (the SDK's denied approval is its answer): leave it.
      const waiting = entry.chat.messages.some((m) =>
        m.parts.some((p) => isToolUIPart(p) && p.toolCallId === toolCallId && awaitsOutput(p)),
      );
      if (!waiting) return;
      if ("errorText" in outcome) {
        await entry.chat.addToolOutput({ state: "output-error", tool: name, toolCallId, errorText: outcome.errorText });
      } else {
        await entry.chat.addToolOutput({ tool: name, toolCallId, output: outcome.output });
      }
    } catch (error) {
      console.error(`[comfyui-assistant] tool ${name} could not report its result`, error);
    } finally {
      entry.progress.delete(toolCallId);
      entry.waits.delete(toolCallId);
      this.interrupting.delete(toolCallId);
      entry.pendingTools--;
      if (opensTab) entry.openingTabs--;
      this.keepGraph(entry);
      this.emit();
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

  /** Loads a thread's stored messages (GET /api/assistant/threads/{id}) into its chat. */
  historyAdapter(entry: ChatEntry): ThreadHistoryAdapter {
    const load = async () => {
      if (!entry.known) return { headId: null, messages: [] };
      void this.checkpoints.load(entry.serverId);
      void this.rewinds.loadBranches(entry.serverId);
      const thread = await requestJson<ServerThread & { messages: UIMessage[] }>(threadPath(entry.serverId));
      // A card that waited when the page was reloaded waits again (runtime/approvals.ts).
      const rerun = (name: string, toolCallId: string, input: unknown) => void this.runTool(entry, name, toolCallId, input);
      return toRepository(entry.approvals.restore(thread.messages ?? [], rerun));
    };
    return {
      load: async () => ({ messages: [] }),
      append: async () => {}, // the server stores every turn itself (POST /api/assistant/chat)
      withFormat: <TMessage,>() => ({
        load: load as unknown as () => Promise<{ headId: string | null; messages: { parentId: string | null; message: TMessage }[] }>,
        append: async () => {},
      }),
    };
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
    return this.notices.get(key) ?? EMPTY;
  }

  addNotice(key: string, notice: NewNotice): string {
    const id = generateId();
    const after = this.entries.get(key)?.chat.messages.at(-1)?.id ?? null;
    const kept = notice.group ? this.noticesOf(key).filter((n) => n.group !== notice.group) : this.noticesOf(key);
    this.notices.set(key, [...kept, { ...notice, id, after }]);
    this.emit();
    return id;
  }

  /** Drops a thread's notes of `group` (a newer rewind makes the earlier ones stale). */
  dropNotices(key: string, group: string): void {
    const kept = this.noticesOf(key).filter((n) => n.group !== group);
    if (kept.length === this.noticesOf(key).length) return;
    if (kept.length) this.notices.set(key, kept);
    else this.notices.delete(key);
    this.emit();
  }

  dismissNotice(key: string, id?: string): void {
    const kept = id === undefined ? [] : this.noticesOf(key).filter((n) => n.id !== id);
    if (kept.length) this.notices.set(key, kept);
    else this.notices.delete(key);
    this.emit();
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
    const lists = await Promise.allSettled([
      requestJson<{ skills: SkillInfo[] }>("/api/assistant/system-context/skills"),
      requestJson<{ skills: SkillInfo[] }>("/api/assistant/user-context/skills"),
    ]);
    const seen = new Set<string>();
    const skills: SkillInfo[] = [];
    for (const result of lists) {
      if (result.status !== "fulfilled") continue;
      for (const skill of result.value.skills ?? []) {
        if (seen.has(skill.slug)) continue;
        seen.add(skill.slug);
        skills.push(skill);
      }
    }
    if (lists.some((r) => r.status === "fulfilled")) {
      this.skills = skills;
      this.emit();
    }
    return this.skills;
  }
}

const EMPTY: readonly Notice[] = Object.freeze([]);

/** The panel tool that opens a workflow tab (tools/loadWorkflow.ts). */
const TAB_OPENING_TOOL = "loadWorkflow";

/** Whether a tool's output says it opened a tab (`{ok: true, tab: "<its name>"}`). */
function openedTab(output: unknown): boolean {
  return !!output && typeof output === "object" && (output as { ok?: unknown }).ok === true && typeof (output as { tab?: unknown }).tab === "string";
}

// Threads that belong to a workflow tab. A thread records the workflow it was started on (the
// server stores its key: core/store/thread_workflows.py): a saved workflow's path, an unsaved one's
// thread key ("unsaved:<uuid>", comfy.ts workflowKey, kept in the workflow JSON: threadKeys.ts) —
// never a tab's name, which ComfyUI gives again to other new tabs, nor its graph id, which
// templates share (an earlier version's threads bound to one move to the first tab seen with it:
// adoptLegacy). The panel lists the active workflow's threads first and, when the
// user switches tabs, continues that workflow's thread — the one shown there last, else its
// latest — or starts a new one. Here: which workflow is active (from ComfyUI's workflow store,
// through comfy.ts), each thread's workflow as the server listed it, and the choice of thread.
// Only thread ids, workflow keys and tab names are kept, in memory.
import {
  activeGraphId,
  activeWorkflowKey,
  openWorkflowTitles,
  savedWorkflowKeys,
  UNSAVED,
  watchWorkflows,
  type ComfyApp,
  type WorkflowChange,
} from "../host/comfy";
import { t } from "../i18n";
import type { ServerThread } from "../server/api";
import { THREADS, threadPath } from "./threadAdapter";

export interface ThreadBinding {
  /** The workflow's key; null: the thread is bound to none. */
  workflow: string | null;
  /** Seconds since the epoch, as the server counts `updatedAt`. */
  updatedAt: number;
  archived: boolean;
}

/** What the panel does when the workflow changes: keep its thread, open one, or start anew. */
export type ThreadChoice = { kind: "stay" } | { kind: "thread"; remoteId: string } | { kind: "new" };

export interface WorkflowThreadsDeps {
  request: <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<T>;
  /** Something changed that the panel shows. */
  changed: () => void;
  /** The thread the panel shows (its server id), if it has one. */
  current: () => string | undefined;
  /** Whether the thread the panel shows runs panel tools now (one may open a tab). */
  busy: () => boolean;
}

/** The threads of `workflow` (not archived), the latest first. */
export function threadsOf(bindings: ReadonlyMap<string, ThreadBinding>, workflow: string): string[] {
  return [...bindings]
    .filter(([, b]) => b.workflow === workflow && !b.archived)
    .sort(([, a], [, b]) => b.updatedAt - a.updatedAt)
    .map(([id]) => id);
}

/** A workflow key as a person reads it: "portraits/flux.json" → "flux"; an unsaved workflow
 * that is not open (its name is not known) → "an unsaved workflow". */
export function workflowName(key: string): string {
  if (key.startsWith(UNSAVED)) return t("workflow.unsavedName");
  const file = key.split("/").pop() || key;
  return file.replace(/\.json$/i, "") || file;
}

/**
 * A thread bound by an earlier version, to a tab's name, which cannot be told from a saved
 * workflow's path: it stays bound only when a saved workflow has that path now (the same key as
 * before); else it was a temporary tab's name, given to other tabs since, and is unbound.
 */
export function staleKeys(bound: Iterable<string | null>, saved: ReadonlySet<string>): string[] {
  const keys = new Set<string>();
  for (const key of bound) if (key !== null && !key.startsWith(UNSAVED) && !saved.has(key)) keys.add(key);
  return [...keys];
}

export class WorkflowThreads {
  /** The active workflow's key; undefined without ComfyUI's workflow API (threads unbound). */
  active: string | undefined = undefined;
  /** The workflow whose thread the panel shows; differs from `active` until it follows. */
  shownFor: string | undefined = undefined;
  /** Whether the thread list was loaded (each thread's workflow is known). */
  loaded = false;
  readonly bindings = new Map<string, ThreadBinding>();
  /** The thread shown last on each workflow (this page only). */
  private readonly lastShown = new Map<string, string>();
  /** The tabs' names by key, as last seen (an unsaved workflow's key names no file). */
  private readonly titles = new Map<string, string>();
  private app: ComfyApp | undefined;
  /** Threads of an earlier version's keys are checked once per page, after the first list. */
  private checkedOld = false;
  /** Keys that a rename gave threads on this page: never an earlier version's. */
  private readonly renamedTo = new Set<string>();
  /** Graph-id keys of an earlier version already given to a tab on this page (adoptLegacy). */
  private readonly legacyDone = new Set<string>();

  constructor(private readonly deps: WorkflowThreadsDeps) {}

  /** Follow the app's workflow tabs (nothing happens without a workflow API). */
  follow(app: ComfyApp): () => void {
    this.app = app;
    const stop = watchWorkflows(app, (change) => void this.onChange(change)); // keys the active tab
    this.active = activeWorkflowKey(app);
    this.noteTitles();
    return stop;
  }

  /** How the panel names a workflow: its tab's name (as last seen), else from its key. */
  nameOf(key: string): string {
    return this.titles.get(key) ?? workflowName(key);
  }

  private noteTitles(): void {
    if (this.app) for (const [key, title] of openWorkflowTitles(this.app)) this.titles.set(key, title);
  }

  /** A workflow tab became active, was renamed or was closed unsaved. */
  async onChange(change: WorkflowChange): Promise<void> {
    this.noteTitles();
    if (change.type === "active") {
      this.active = change.key;
      void this.adoptLegacy();
      const current = this.deps.current();
      // The assistant's own work can open a tab (its loadWorkflow tool opens a new one): the
      // thread that loads stays in view, and is this tab's thread from now on (adopt).
      if (change.key !== undefined && current && this.deps.busy()) {
        this.lastShown.set(change.key, current);
        this.shownFor = change.key;
      }
      this.deps.changed();
      return;
    }
    const from = change.type === "renamed" ? change.from : change.key;
    const to = change.type === "renamed" ? change.to : null;
    if (to !== null) this.renamedTo.add(to);
    for (const binding of this.bindings.values()) if (binding.workflow === from) binding.workflow = to;
    const last = this.lastShown.get(from);
    this.lastShown.delete(from);
    if (to !== null) {
      if (last) this.lastShown.set(to, last);
      if (this.active === from) this.active = to;
      if (this.shownFor === from) this.shownFor = to;
    }
    this.deps.changed();
    try {
      // Every thread of that workflow, listed here or not (the panel may never have opened).
      await this.deps.request(`${THREADS}/rebind`, { method: "POST", body: { from, to } });
    } catch (error) {
      console.warn(`[comfyui-assistant] the threads of ${from} could not follow it`, error);
    }
  }

  /** The server's thread list (GET /api/assistant/threads). */
  listed(threads: readonly ServerThread[]): void {
    this.bindings.clear();
    for (const t of threads) {
      this.bindings.set(t.id, { workflow: t.workflow ?? null, updatedAt: t.updatedAt, archived: t.archived });
    }
    this.loaded = true;
    void this.adoptLegacy(); // moves bindings here before the panel chooses
    this.deps.changed();
    if (!this.checkedOld && this.app && this.active !== undefined) {
      this.checkedOld = true;
      void this.unbindOld(this.app);
    }
  }

  /** Unbinds the threads an earlier version bound to a temporary tab's name (staleKeys). */
  async unbindOld(app: ComfyApp): Promise<void> {
    const saved = await savedWorkflowKeys(app);
    if (!saved) return; // unknown: leave every binding as it is
    const bound = [...this.bindings.values()].map((b) => b.workflow);
    for (const key of staleKeys(bound, saved).filter((k) => !this.renamedTo.has(k))) {
      try {
        await this.deps.request(`${THREADS}/rebind`, { method: "POST", body: { from: key, to: null } });
        for (const binding of this.bindings.values()) if (binding.workflow === key) binding.workflow = null;
      } catch (error) {
        console.warn(`[comfyui-assistant] the threads of ${key} could not be unbound`, error);
      }
    }
    this.deps.changed();
  }

  /**
   * Threads an earlier version bound to an unsaved tab's graph id ("unsaved:<graph id>") move to
   * the tab's thread key: to the first tab seen with that graph id on this page (that version
   * could not tell two tabs of one template apart), here and on the server, checkpoints too.
   */
  async adoptLegacy(): Promise<void> {
    const key = this.active;
    const id = this.app ? activeGraphId(this.app) : undefined;
    if (!this.loaded || !key?.startsWith(UNSAVED) || !id) return;
    const legacy = `${UNSAVED}${id}`;
    if (legacy === key || this.legacyDone.has(legacy)) return;
    this.legacyDone.add(legacy);
    const moved = [...this.bindings.values()].filter((b) => b.workflow === legacy);
    if (!moved.length) return;
    // Here at once (the panel chooses the tab's thread from these), then on the server.
    for (const binding of moved) binding.workflow = key;
    try {
      await this.deps.request(`${THREADS}/rebind`, { method: "POST", body: { from: legacy, to: key } });
    } catch (error) {
      for (const binding of moved) if (binding.workflow === key) binding.workflow = legacy;
      this.legacyDone.delete(legacy);
      this.deps.changed();
      console.warn(`[comfyui-assistant] the threads of ${legacy} could not follow its tab`, error);
    }
  }

  /** A thread the panel just created: it belongs to the active workflow. */
  created(remoteId: string): void {
    const workflow = this.active ?? null;
    this.bindings.set(remoteId, { workflow, updatedAt: Date.now() / 1000, archived: false });
    if (workflow !== null && this.shownFor === workflow) this.lastShown.set(workflow, remoteId);
    this.deps.changed();
  }

  /** A message was sent on the thread: it is its workflow's latest. */
  touched(remoteId: string): void {
    const binding = this.bindings.get(remoteId);
    if (binding) binding.updatedAt = Date.now() / 1000;
  }

  /** A thread was archived or restored (it is no longer a workflow's latest while archived). */
  archived(remoteId: string, archived: boolean): void {
    const binding = this.bindings.get(remoteId);
    if (binding) binding.archived = archived;
    this.deps.changed();
  }

  forget(remoteId: string): void {
    this.bindings.delete(remoteId);
    for (const [key, id] of this.lastShown) if (id === remoteId) this.lastShown.delete(key);
    this.deps.changed();
  }

  /** The panel shows this thread now (while it shows the active workflow's). */
  shown(remoteId: string | undefined): void {
    if (remoteId && this.active !== undefined && this.shownFor === this.active) this.lastShown.set(this.active, remoteId);
  }

  workflowOf(remoteId: string | undefined): string | null | undefined {
    return remoteId === undefined ? undefined : this.bindings.get(remoteId)?.workflow;
  }

  /**
   * The thread whose tool opened the active tab (loadWorkflow) goes on there, where its tools
   * now work: shown on that tab, and bound to it (here and on the server).
   */
  async adopt(remoteId: string): Promise<void> {
    const key = this.active;
    if (key === undefined) return;
    // It left the tab it was on: that tab shows its own threads again.
    for (const [workflow, id] of this.lastShown) if (id === remoteId) this.lastShown.delete(workflow);
    this.lastShown.set(key, remoteId);
    if (this.bindings.get(remoteId)?.workflow === key) return;
    try {
      await this.move(remoteId, key);
    } catch (error) {
      console.warn("[comfyui-assistant] the thread could not follow the workflow it opened", error);
    }
  }

  /** Move a thread to a workflow, or unbind it (null). */
  async move(remoteId: string, workflow: string | null): Promise<void> {
    const thread = await this.deps.request<ServerThread>(threadPath(remoteId), { method: "PATCH", body: { workflow } });
    this.bindings.set(remoteId, { workflow: thread.workflow ?? null, updatedAt: thread.updatedAt, archived: thread.archived });
    this.deps.changed();
  }

  /**
   * Which thread to show for the active workflow, with `current` shown now: the one shown on it
   * last, else `current` if it belongs to it, else its latest, else a new one. On the first
   * choice after a page load the thread shown before the reload stays if it is bound to none.
   */
  choose(current: string | undefined): ThreadChoice {
    const key = this.active;
    if (key === undefined) return { kind: "stay" };
    const last = this.lastShown.get(key);
    const usable = (id: string | undefined) => id !== undefined && this.bindings.has(id) && !this.bindings.get(id)?.archived;
    const pick = (id: string): ThreadChoice => (id === current ? { kind: "stay" } : { kind: "thread", remoteId: id });
    if (last !== undefined && usable(last)) return pick(last);
    if (current !== undefined && usable(current)) {
      const workflow = this.bindings.get(current)?.workflow;
      if (workflow === key || (workflow === null && this.shownFor === undefined)) return { kind: "stay" };
    }
    const [latest] = threadsOf(this.bindings, key);
    if (latest !== undefined) return pick(latest);
    return current === undefined ? { kind: "stay" } : { kind: "new" };
  }

  /** The panel now shows the active workflow's thread. */
  settle(): void {
    this.shownFor = this.active;
  }
}

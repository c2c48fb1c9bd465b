// The panel tool calls of every thread's chat: running one (its checkpoint, progress, Stop
// waiting, approval, the tab it opens, its output into the chat), and what a call's card asks
// of it while it runs (its progress, its question, interrupting its ComfyUI run).
import { isToolUIPart } from "ai";
import type { ApprovalRequest } from "../tools/approvals";
import { awaitsOutput } from "./approvals";
import type { ChatEntry, ComfyRuns } from "./chatTypes";
import type { Checkpoints, WorkflowAccess } from "./checkpoints";
import type { PanelTools } from "./panelTools";
import { unfinishedRun } from "./runNotes";
import { runPanelTool } from "./toolRunner";
import type { WorkflowThreads } from "./workflowThreads";

export interface ToolCallDeps {
  /** Every thread's chat entry (an entry may be listed under two keys: each comes once). */
  entries: () => Iterable<ChatEntry>;
  tools: PanelTools;
  runs: ComfyRuns | undefined;
  graph: WorkflowAccess | undefined;
  checkpoints: Checkpoints;
  workflows: WorkflowThreads;
  changed: () => void;
  /** Keeps the graph as the call left it, for the user's next message. */
  keepGraph: (entry: ChatEntry) => void;
}

/** The panel tools that open a workflow tab (tools/loadWorkflow.ts, tools/loadTemplate.ts). */
const TAB_OPENING_TOOLS: ReadonlySet<string> = new Set(["loadWorkflow", "loadTemplate"]);

/** Whether a tool's output says it opened a tab (`{ok: true, tab: "<its name>"}`). */
function openedTab(output: unknown): boolean {
  return !!output && typeof output === "object" && (output as { ok?: unknown }).ok === true && typeof (output as { tab?: unknown }).tab === "string";
}

export class ToolCalls {
  private readonly interrupting = new Set<string>();

  constructor(private readonly deps: ToolCallDeps) {}

  /** Where a running panel tool call is (its card shows it), if it has said. */
  progressOf(toolCallId: string): Record<string, unknown> | undefined {
    for (const entry of this.deps.entries()) {
      const found = entry.progress.get(toolCallId);
      if (found) return found;
    }
    return undefined;
  }

  /** What a call asks the user before it acts (its card shows Allow and Deny), or undefined. */
  approvalOf(toolCallId: string): ApprovalRequest | undefined {
    for (const entry of this.deps.entries()) {
      const found = entry.approvals.of(toolCallId);
      if (found) return found;
    }
    return undefined;
  }

  /** The user's Allow or Deny for a call, with their words on a denial (if any); `always`: this
   * thread's graph edits go ahead from now on. */
  async respondToApproval(toolCallId: string, approved: boolean, always: boolean, words: string): Promise<void> {
    for (const entry of this.deps.entries()) {
      if (entry.approvals.of(toolCallId)) await entry.approvals.respond(toolCallId, approved, always, words);
    }
  }

  /** Stops waiting for a running call (a run goes on in ComfyUI; the model is told so). */
  stopWaiting(toolCallId: string): void {
    for (const entry of this.deps.entries()) entry.waits.get(toolCallId)?.abort();
  }

  /** Whether the run of a running call can be interrupted from here (its prompt id is known). */
  canInterrupt(toolCallId: string): boolean {
    return !!this.deps.runs && typeof this.progressOf(toolCallId)?.promptId === "string";
  }

  /** Interrupts the ComfyUI run of a running call; the call then reports it was interrupted.
   * Until the call ends, `interrupting` says so (ComfyUI stops between two nodes). */
  async interrupt(toolCallId: string): Promise<void> {
    const promptId = this.progressOf(toolCallId)?.promptId;
    const runs = this.deps.runs;
    if (typeof promptId !== "string" || !runs) return;
    this.interrupting.add(toolCallId);
    this.deps.changed();
    try {
      await runs.interrupt(promptId);
    } catch (error) {
      console.warn("[comfyui-assistant] ComfyUI did not take the interrupt", error);
      this.interrupting.delete(toolCallId); // (not heard: the button may be pressed again)
      this.deps.changed();
    }
  }

  /** Whether the user interrupted the run of a call that has not ended yet. */
  isInterrupting(toolCallId: string): boolean {
    return this.interrupting.has(toolCallId);
  }

  /** Runs a panel tool call of `entry`'s chat and adds its output (never throws). */
  async run(entry: ChatEntry, name: string, toolCallId: string, input: unknown): Promise<void> {
    const { deps } = this;
    const opensTab = TAB_OPENING_TOOLS.has(name);
    entry.pendingTools++;
    if (opensTab) entry.openingTabs++;
    deps.changed();
    try {
      const kinds = await deps.tools.loadKinds();
      if (deps.graph) deps.checkpoints.beforeCall(entry.serverId, entry.chat.messages, name, toolCallId, deps.workflows.active ?? null, deps.graph);
      const progress = (update: Record<string, unknown>) => {
        entry.progress.set(toolCallId, update);
        deps.changed();
      };
      const stop = new AbortController();
      entry.waits.set(toolCallId, stop);
      const approve = (request: ApprovalRequest) => entry.approvals.ask(toolCallId, request);
      const outcome = await runPanelTool(name, input, deps.tools.functions(), kinds, { progress, detach: stop.signal, approve });
      // The workflow opened in a new tab, which the user now sees: the chat goes on there.
      if (opensTab && "output" in outcome && openedTab(outcome.output)) await deps.workflows.adopt(entry.serverId);
      if (deps.graph) await deps.checkpoints.afterCall(entry.serverId, entry.chat.messages, name, toolCallId, deps.graph);
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
      deps.keepGraph(entry);
      deps.changed();
    }
  }
}

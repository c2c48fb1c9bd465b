// When the user switches workflow tabs, the panel continues that workflow's thread (the one
// shown there last, else its latest) or starts a new one: runtime/workflowThreads.ts chooses,
// this switches assistant-ui's thread list, once it has loaded the threads.
import type { AssistantRuntime } from "@assistant-ui/react";
import { useEffect } from "react";
import type { ChatStore } from "../runtime/chatStore";

/** Show the active workflow's thread, if the panel does not already. */
export function followWorkflow(store: ChatStore, threads: AssistantRuntime["threads"]): void {
  const workflows = store.workflows;
  if (workflows.active === undefined || workflows.shownFor === workflows.active || !workflows.loaded) return;
  const choice = workflows.choose(store.currentThreadId);
  workflows.settle();
  const switched =
    choice.kind === "thread" ? threads.switchToThread(choice.remoteId) : choice.kind === "new" ? threads.switchToNewThread() : null;
  void switched?.catch((error: unknown) => console.warn("[comfyui-assistant] could not open the workflow's thread", error));
}

export function useFollowWorkflow(store: ChatStore, runtime: AssistantRuntime): void {
  useEffect(() => {
    let alive = true;
    const follow = () => {
      void runtime.threads.getLoadThreadsPromise().then(
        () => alive && followWorkflow(store, runtime.threads),
        () => {},
      );
    };
    follow();
    const unsubscribe = store.subscribe(follow);
    return () => {
      alive = false;
      unsubscribe();
    };
  }, [store, runtime]);
}

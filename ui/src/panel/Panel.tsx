// The Assistant tab: a header (threads, title, context gauge, new, settings) over the chat or
// the settings. Everything that must outlive the tab is in the store; this tree is rebuilt
// whenever ComfyUI renders the tab again.
import { AssistantRuntimeProvider, useAuiState } from "@assistant-ui/react";
import { useEffect, type FC } from "react";
import type { ChatStore } from "../runtime/chatStore";
import { useAssistantRuntime } from "../runtime/useAssistantRuntime";
import { BranchMenu } from "./Branches";
import { Chat } from "./Chat";
import { RuntimeContext, StoreContext, useRuntime, useStore, useStoreVersion } from "./context";
import { ThreadGauge } from "./Gauge";
import { Settings } from "./Settings";
import { ThreadList } from "./ThreadList";
import { useFollowWorkflow } from "./useFollowWorkflow";

const Header: FC = () => {
  const store = useStore();
  const runtime = useRuntime();
  useStoreVersion(store);
  const title = useAuiState((s) => s.threadListItem.title) || "New chat";
  const settings = store.view === "settings";
  return (
    <div className="cua-header">
      <button
        type="button"
        className="cua-icon"
        aria-label={store.threadsOpen ? "Hide the threads" : "Show the threads"}
        aria-expanded={store.threadsOpen}
        title="Threads"
        onClick={() => store.setThreadsOpen(!store.threadsOpen)}
      >
        ☰
      </button>
      <span className="cua-title" title={title}>
        {settings ? "Settings" : title}
      </span>
      <ThreadGauge />
      {settings ? null : <BranchMenu />}
      <button
        type="button"
        className="cua-icon"
        aria-label="New thread"
        title="New thread"
        onClick={() => {
          store.setView("chat");
          void runtime.threads.switchToNewThread();
        }}
      >
        +
      </button>
      <button
        type="button"
        className={settings ? "cua-icon cua-active" : "cua-icon"}
        aria-label={settings ? "Back to the chat" : "Open the settings"}
        aria-pressed={settings}
        title="Settings"
        onClick={() => store.setView(settings ? "chat" : "settings")}
      >
        ⚙
      </button>
    </div>
  );
};

const Layout: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  return (
    <div className="cua-root" data-view={store.view}>
      <Header />
      <div className="cua-body">
        {store.threadsOpen ? <ThreadList /> : null}
        <div className="cua-main">{store.view === "settings" ? <Settings /> : <Chat />}</div>
      </div>
    </div>
  );
};

export const Panel: FC<{ store: ChatStore }> = ({ store }) => {
  const runtime = useAssistantRuntime(store);
  useFollowWorkflow(store, runtime);
  useEffect(() => {
    void store.loadSkills();
    void store.loadToolKinds();
  }, [store]);
  return (
    <StoreContext.Provider value={store}>
      <RuntimeContext.Provider value={runtime}>
        <AssistantRuntimeProvider runtime={runtime}>
          <Layout />
        </AssistantRuntimeProvider>
      </RuntimeContext.Provider>
    </StoreContext.Provider>
  );
};

// The Assistant tab: a header (threads, title, context gauge, new, settings) over the chat or
// the settings. Everything that must outlive the tab is in the store; this tree is rebuilt
// whenever ComfyUI renders the tab again.
import { AssistantRuntimeProvider, useAuiState } from "@assistant-ui/react";
import { useEffect, useRef, type FC } from "react";
import { useI18n } from "../i18n";
import type { ChatStore } from "../runtime/chatStore";
import { useAssistantRuntime } from "../runtime/useAssistantRuntime";
import { BranchMenu } from "./Branches";
import { Chat } from "./Chat";
import { ExternalAgent } from "./ExternalAgent";
import { RuntimeContext, StoreContext, useRuntime, useStore, useStoreVersion } from "./context";
import { ThreadGauge } from "./Gauge";
import { Settings } from "./Settings";
import { ThreadList } from "./ThreadList";
import { useFollowWorkflow } from "./useFollowWorkflow";
import { useKeysKeptInPanel } from "./panelKeys";

const Header: FC = () => {
  const store = useStore();
  const runtime = useRuntime();
  useStoreVersion(store);
  const { t } = useI18n();
  const title = useAuiState((s) => s.threadListItem.title) || t("header.newChat");
  const settings = store.view === "settings";
  return (
    <div className="cua-header">
      <button
        type="button"
        className="cua-icon"
        aria-label={store.threadsOpen ? t("header.hideThreads") : t("header.showThreads")}
        aria-expanded={store.threadsOpen}
        title={t("header.threads")}
        onClick={() => store.setThreadsOpen(!store.threadsOpen)}
      >
        ☰
      </button>
      <span className="cua-title" title={title} dir="auto">
        {settings ? t("header.settings") : title}
      </span>
      <ThreadGauge />
      {settings ? null : <BranchMenu />}
      <button
        type="button"
        className="cua-icon"
        aria-label={t("header.newThread")}
        title={t("header.newThread")}
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
        aria-label={settings ? t("header.backToChat") : t("header.openSettings")}
        aria-pressed={settings}
        title={t("header.settings")}
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
  const { locale, dir } = useI18n();
  const root = useRef<HTMLDivElement>(null);
  useKeysKeptInPanel(root);
  return (
    <div ref={root} className="cua-root" data-view={store.view} lang={locale} dir={dir}>
      <Header />
      <ExternalAgent />
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

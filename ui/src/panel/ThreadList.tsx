// The thread list: new, switch, rename, delete — assistant-ui's thread list over our threads
// endpoints (runtime/threadAdapter.ts). In ComfyUI the active workflow's threads come first,
// under "This workflow", the others under "Other threads" with the workflow each belongs to;
// a thread's ⋯ menu moves it to the active workflow or unbinds it (runtime/workflowThreads.ts).
import { ThreadListItemPrimitive, ThreadListPrimitive, useAui, useAuiState } from "@assistant-ui/react";
import { useState, type FC, type KeyboardEvent } from "react";
import { useI18n } from "../i18n";
import { useStore, useStoreVersion } from "./context";
import { WorkflowMenu } from "./WorkflowMenu";

const Item: FC = () => {
  const store = useStore();
  const aui = useAui();
  const { t } = useI18n();
  const title = useAuiState((s) => s.threadListItem.title) || t("header.newChat");
  const isMain = useAuiState((s) => s.threads.mainThreadId === s.threadListItem.id);
  const isRunning = useAuiState((s) => s.threadListItem.isRunning);
  const remoteId = useAuiState((s) => s.threadListItem.remoteId);
  const [editing, setEditing] = useState<string | null>(null);
  useStoreVersion(store);
  const { active } = store.workflows;
  const workflow = store.workflows.workflowOf(remoteId);
  // Under "Other threads": where the thread belongs.
  const where =
    active === undefined || workflow === active || workflow === undefined ? null : workflow === null ? t("threads.noWorkflow") : store.workflows.nameOf(workflow);

  const save = () => {
    const next = editing?.trim();
    setEditing(null);
    if (next && next !== title) aui.threadListItem.rename(next);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "Enter") {
      e.preventDefault();
      save();
    } else if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      setEditing(null);
    }
  };
  const remove = async () => {
    if (await store.confirm(t("threads.deleteTitle"), t("threads.deleteMessage", { title }))) {
      aui.threadListItem.delete();
    }
  };

  return (
    <ThreadListItemPrimitive.Root className={isMain ? "cua-thread cua-active" : "cua-thread"}>
      {editing !== null ? (
        <input
          className="cua-thread-rename"
          value={editing}
          aria-label={t("threads.titleInput")}
          maxLength={200}
          autoFocus
          onChange={(e) => setEditing(e.target.value)}
          onKeyDown={onKeyDown}
          onBlur={save}
        />
      ) : (
        <ThreadListItemPrimitive.Trigger className="cua-thread-trigger" title={title} aria-current={isMain ? "true" : undefined}>
          {isRunning ? <span className="cua-dot" aria-label={t("threads.answering")} /> : null}
          <span className="cua-thread-text">
            <span className="cua-thread-title" dir="auto">
              {title}
            </span>
            {where ? (
              <span className="cua-thread-workflow" title={workflow === null ? t("threads.unbound") : where}>
                {where}
              </span>
            ) : null}
          </span>
        </ThreadListItemPrimitive.Trigger>
      )}
      {remoteId && active !== undefined ? <WorkflowMenu remoteId={remoteId} title={title} /> : null}
      <button type="button" className="cua-icon" onClick={() => setEditing(title)} aria-label={t("threads.rename", { title })} title={t("threads.renameShort")}>
        ✎
      </button>
      <button type="button" className="cua-icon" onClick={() => void remove()} aria-label={t("threads.delete", { title })} title={t("threads.deleteShort")}>
        ✕
      </button>
    </ThreadListItemPrimitive.Root>
  );
};

const ITEM = { ThreadListItem: Item };

/** The active workflow's threads, then the others; one list without a workflow API. */
const Groups: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const { t } = useI18n();
  const ids = useAuiState((s) => s.threads.threadIds);
  const items = useAuiState((s) => s.threads.threadItems);
  const { active } = store.workflows;
  const mine: number[] = [];
  const others: number[] = [];
  const remoteIds = new Map(items.map((item) => [item.id, item.remoteId]));
  ids.forEach((id, index) => (store.workflows.workflowOf(remoteIds.get(id)) === active ? mine : others).push(index));
  if (active === undefined) return <ThreadListPrimitive.Items>{() => <Item />}</ThreadListPrimitive.Items>;
  const rows = (indexes: number[]) => indexes.map((index) => <ThreadListPrimitive.ItemByIndex key={ids[index]} index={index} components={ITEM} />);
  return (
    <>
      <div className="cua-thread-group" role="group" aria-label={t("threads.thisWorkflow")}>
        <div className="cua-thread-heading" title={store.workflows.nameOf(active)}>
          {t("threads.thisWorkflowHeading", { name: store.workflows.nameOf(active) ?? "" })}
        </div>
        {mine.length ? rows(mine) : <div className="cua-muted cua-thread-empty">{t("threads.none")}</div>}
      </div>
      {others.length ? (
        <div className="cua-thread-group" role="group" aria-label={t("threads.others")}>
          <div className="cua-thread-heading">{t("threads.others")}</div>
          {rows(others)}
        </div>
      ) : null}
    </>
  );
};

export const ThreadList: FC = () => {
  const isLoading = useAuiState((s) => s.threads.isLoading);
  const loadError = useAuiState((s) => s.threads.loadError);
  const hasMore = useAuiState((s) => s.threads.hasMore);
  const { t } = useI18n();
  return (
    <ThreadListPrimitive.Root className="cua-threads" aria-label={t("threads.list")}>
      <ThreadListPrimitive.New className="cua-btn cua-new" aria-label={t("threads.new")}>
        {t("threads.newButton")}
      </ThreadListPrimitive.New>
      {loadError ? <div className="cua-muted">{t("threads.loadError")}</div> : null}
      {isLoading ? <div className="cua-muted">{t("threads.loading")}</div> : null}
      <div className="cua-thread-items">
        <Groups />
      </div>
      {hasMore ? (
        <ThreadListPrimitive.LoadMore className="cua-link" aria-label={t("threads.loadMore")}>
          {t("threads.more")}
        </ThreadListPrimitive.LoadMore>
      ) : null}
    </ThreadListPrimitive.Root>
  );
};

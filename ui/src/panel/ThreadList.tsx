// The thread list: new, switch, rename, delete — assistant-ui's thread list over our threads
// endpoints (runtime/threadAdapter.ts).
import { ThreadListItemPrimitive, ThreadListPrimitive, useAui, useAuiState } from "@assistant-ui/react";
import { useState, type FC, type KeyboardEvent } from "react";
import { useStore } from "./context";

const Item: FC = () => {
  const store = useStore();
  const aui = useAui();
  const title = useAuiState((s) => s.threadListItem.title) || "New chat";
  const isMain = useAuiState((s) => s.threads.mainThreadId === s.threadListItem.id);
  const isRunning = useAuiState((s) => s.threadListItem.isRunning);
  const [editing, setEditing] = useState<string | null>(null);

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
    if (await store.confirm("Delete this thread?", `“${title}” and its messages will be deleted from the server.`)) {
      aui.threadListItem.delete();
    }
  };

  return (
    <ThreadListItemPrimitive.Root className={isMain ? "cua-thread cua-active" : "cua-thread"}>
      {editing !== null ? (
        <input
          className="cua-thread-rename"
          value={editing}
          aria-label="Thread title"
          maxLength={200}
          autoFocus
          onChange={(e) => setEditing(e.target.value)}
          onKeyDown={onKeyDown}
          onBlur={save}
        />
      ) : (
        <ThreadListItemPrimitive.Trigger className="cua-thread-trigger" title={title} aria-current={isMain ? "true" : undefined}>
          {isRunning ? <span className="cua-dot" aria-label="answering" /> : null}
          <span className="cua-thread-title">{title}</span>
        </ThreadListItemPrimitive.Trigger>
      )}
      <button type="button" className="cua-icon" onClick={() => setEditing(title)} aria-label={`Rename “${title}”`} title="Rename">
        ✎
      </button>
      <button type="button" className="cua-icon" onClick={() => void remove()} aria-label={`Delete “${title}”`} title="Delete">
        ✕
      </button>
    </ThreadListItemPrimitive.Root>
  );
};

export const ThreadList: FC = () => {
  const isLoading = useAuiState((s) => s.threads.isLoading);
  const loadError = useAuiState((s) => s.threads.loadError);
  const hasMore = useAuiState((s) => s.threads.hasMore);
  return (
    <ThreadListPrimitive.Root className="cua-threads" aria-label="Threads">
      <ThreadListPrimitive.New className="cua-btn cua-new" aria-label="New thread">
        + New thread
      </ThreadListPrimitive.New>
      {loadError ? <div className="cua-muted">The threads could not be loaded.</div> : null}
      {isLoading ? <div className="cua-muted">Loading…</div> : null}
      <div className="cua-thread-items">
        <ThreadListPrimitive.Items>{() => <Item />}</ThreadListPrimitive.Items>
      </div>
      {hasMore ? (
        <ThreadListPrimitive.LoadMore className="cua-link" aria-label="Load more threads">
          more…
        </ThreadListPrimitive.LoadMore>
      ) : null}
    </ThreadListPrimitive.Root>
  );
};

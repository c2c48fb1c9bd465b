// The thread's branches, in the header: what conversation rewinds set aside, each to return to
// (what follows its place in the thread then becomes a branch in turn).
import { useChat } from "@ai-sdk/react";
import { useState, type FC } from "react";
import { useCurrentThread, useStore, useStoreVersion } from "./context";

const OUT_OF_REACH = "It followed a message that is itself set aside now: return to the branch that holds that message first.";

export const BranchMenu: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const { entry, remoteId } = useCurrentThread();
  const { status } = useChat({ chat: entry.chat });
  const [open, setOpen] = useState(false);
  const branches = store.rewinds.branchesOf(remoteId);
  if (!remoteId || branches.length === 0) return null;
  const running = status === "submitted" || status === "streaming" || entry.pendingTools > 0;
  return (
    <div className="cua-branches">
      <button
        type="button"
        className="cua-icon"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-label={`Branches (${branches.length})`}
        title="Branches: what rewinds set aside, to return to"
        onClick={() => setOpen(!open)}
      >
        {branches.length === 1 ? "1 branch" : `${branches.length} branches`}
      </button>
      {open ? (
        <div className="cua-branch-menu" role="menu" aria-label="Branches">
          {branches.map((branch) => (
            <button
              key={branch.number}
              type="button"
              role="menuitem"
              disabled={!branch.available || running}
              title={branch.available ? `Return to branch ${branch.number}: the ${branch.messageCount} messages set aside` : OUT_OF_REACH}
              onClick={() => {
                setOpen(false);
                void store.rewinds.returnTo(entry, branch.number);
              }}
            >
              <span className="cua-rewind-label">Return to branch {branch.number}</span>
              <span className="cua-muted">
                “{branch.preview}” · {branch.messageCount} messages
              </span>
            </button>
          ))}
        </div>
      ) : null}
    </div>
  );
};

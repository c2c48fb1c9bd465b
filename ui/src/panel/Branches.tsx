// The thread's branches, in the header: what conversation rewinds set aside, each to return to
// (what follows its place in the thread then becomes a branch in turn).
import { useState, type FC } from "react";
import { useI18n } from "../i18n";
import { useChatStatus, useCurrentThread, useStore, useStoreVersion } from "./context";

export const BranchMenu: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const { entry, remoteId } = useCurrentThread();
  const status = useChatStatus(entry.chat);
  const { t } = useI18n();
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
        aria-label={t("branches.label", { count: branches.length })}
        title={t("branches.title")}
        onClick={() => setOpen(!open)}
      >
        {t("branches.count", { count: branches.length })}
      </button>
      {open ? (
        <div className="cua-branch-menu" role="menu" aria-label={t("branches.menu")}>
          {branches.map((branch) => (
            <button
              key={branch.number}
              type="button"
              role="menuitem"
              disabled={!branch.available || running}
              title={branch.available ? t("branches.returnTitle", { number: branch.number, count: branch.messageCount }) : t("branches.outOfReach")}
              onClick={() => {
                setOpen(false);
                void store.rewinds.returnTo(entry, branch.number);
              }}
            >
              <span className="cua-rewind-label">{t("branches.returnTo", { number: branch.number })}</span>
              <span className="cua-muted">
                “{branch.preview}” · {t("branches.messages", { count: branch.messageCount })}
              </span>
            </button>
          ))}
        </div>
      ) : null}
    </div>
  );
};

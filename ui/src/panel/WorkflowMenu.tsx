// A thread's ⋯ menu in the thread list: move it to the workflow tab the user is on, or unbind it
// from its workflow (it is then listed under "Other threads" on every tab).
import { useEffect, useRef, useState, type FC } from "react";
import { useI18n } from "../i18n";
import { errorMessage } from "../server/api";
import { NEW_THREAD } from "../runtime/chatStore";
import { useStore } from "./context";

export const WorkflowMenu: FC<{ remoteId: string; title: string }> = ({ remoteId, title }) => {
  const store = useStore();
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const { active } = store.workflows;
  const workflow = store.workflows.workflowOf(remoteId);

  useEffect(() => {
    if (!open) return;
    const close = (event: Event) => {
      if (!root.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener("pointerdown", close, true);
    return () => document.removeEventListener("pointerdown", close, true);
  }, [open]);

  const move = (to: string | null) => {
    setOpen(false);
    store.workflows.move(remoteId, to).catch((error: unknown) => {
      store.addNotice(store.currentThreadId ?? NEW_THREAD, { kind: "error", title: t("workflowMenu.moveFailed"), text: errorMessage(error) });
    });
  };
  const items: [string, string | null][] = [];
  if (active !== undefined && workflow !== active) items.push([t("workflowMenu.moveHere"), active]);
  if (workflow) items.push([t("workflowMenu.unbind"), null]);
  if (!items.length) return null;

  return (
    <div
      className="cua-menu-anchor"
      ref={root}
      onKeyDown={(e) => {
        if (e.key === "Escape" && open) {
          e.stopPropagation();
          setOpen(false);
        }
      }}
    >
      <button
        type="button"
        className={open ? "cua-icon cua-active" : "cua-icon"}
        aria-label={t("workflowMenu.label", { title })}
        aria-haspopup="menu"
        aria-expanded={open}
        title={t("workflowMenu.title")}
        onClick={() => setOpen(!open)}
      >
        ⋯
      </button>
      {open ? (
        <div className="cua-menu" role="menu" aria-label={t("workflowMenu.label", { title })}>
          {items.map(([label, to]) => (
            <button key={String(to)} type="button" role="menuitem" className="cua-menu-item" onClick={() => move(to)}>
              {label}
            </button>
          ))}
        </div>
      ) : null}
    </div>
  );
};

// "Show earlier messages" at the top of a long thread: it opened with its last page
// (runtime/threadPages.ts); each click reads the page before.
import type { FC } from "react";
import { useI18n } from "../i18n";
import { useCurrentThread, useStore, useStoreVersion } from "./context";

export const EarlierMessages: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const { entry } = useCurrentThread();
  const { t } = useI18n();
  const { pages, chat } = entry;
  if (!pages.hasEarlier(chat.messages)) return null;
  return (
    <button type="button" className="cua-link cua-earlier" disabled={pages.loading} onClick={() => void store.loadEarlier(entry)}>
      {pages.loading ? t("chat.loadingEarlier") : t("chat.earlier")}
    </button>
  );
};

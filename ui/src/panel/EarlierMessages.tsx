// "Show earlier messages" at the top of a long thread: it opened with its last page
// (runtime/threadPages.ts); each click reads the page before.
import { useChat } from "@ai-sdk/react";
import type { FC } from "react";
import { useI18n } from "../i18n";
import { useCurrentThread, useStore, useStoreVersion } from "./context";

export const EarlierMessages: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const { entry } = useCurrentThread();
  const { t } = useI18n();
  const { messages } = useChat({ chat: entry.chat, experimental_throttle: 250 }); // (set when the thread loads)
  const { pages } = entry;
  if (!pages.hasEarlier(messages)) return null;
  return (
    <button type="button" className="cua-link cua-earlier" disabled={pages.loading} onClick={() => void store.loadEarlier(entry)}>
      {pages.loading ? t("chat.loadingEarlier") : t("chat.earlier")}
    </button>
  );
};

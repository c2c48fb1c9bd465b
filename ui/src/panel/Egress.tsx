// "Where your requests go", in Settings: the provider's origin (scheme://host:port as the server's
// HTTP client reads the base URL: never its path, which may hold a key, never the key), what the
// server sends there (core/chat, core/files), and what never leaves. tests/test_egress.py checks
// the claim: a whole session through the real server contacts nothing else.
import { Fragment, type FC, type ReactNode } from "react";
import { useI18n } from "../i18n";
import type { ProviderSettings } from "../runtime/api";
import { providerName } from "../runtime/providerForm";

const LOOPBACK = /^https?:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\]):\d+$/i;

/** Whether requests to this origin cross a network unencrypted (http:// to another machine). */
export function travelsInClear(origin: string): boolean {
  return origin.startsWith("http://") && !LOOPBACK.test(origin);
}

/** A translated text with elements in place of its `{name}` parameters. */
function withElements(text: string, elements: Record<string, ReactNode>): ReactNode[] {
  return text.split(/\{(\w+)\}/).map((part, i) => (i % 2 === 1 ? <Fragment key={i}>{elements[part] ?? `{${part}}`}</Fragment> : part));
}

export const WhereRequestsGo: FC<{ settings: ProviderSettings }> = ({ settings }) => {
  const { t } = useI18n();
  const { origin } = settings;
  const code = <code>{origin}</code>;
  return (
    <section className="cua-form cua-egress" aria-labelledby="cua-egress-title">
      <h3 id="cua-egress-title">{t("egress.title")}</h3>
      <p>{withElements(t("egress.destination", { provider: providerName(settings.provider).replace(/^The /, "the ") }), { origin: code })}</p>
      {travelsInClear(origin) ? (
        <p className="cua-error" role="note">
          {t(settings.apiKeySet ? "egress.inClearWithKey" : "egress.inClear")}
        </p>
      ) : null}
      <p>{t("egress.sentHeading")}</p>
      <ul className="cua-egress-list">
        <li>{t("egress.sent.conversation")}</li>
        <li>{t("egress.sent.workflow")}</li>
        <li>{t("egress.sent.files")}</li>
        <li>{t("egress.sent.images")}</li>
        <li>{t("egress.sent.delegated")}</li>
        <li>{t("egress.sent.sizing")}</li>
      </ul>
      <p>{withElements(t("egress.neverLeaves"), { origin: code })}</p>
    </section>
  );
};

// "Where your requests go", in Settings: every destination the server sends requests to, as the
// server's own list has them (core/base/egress.py, served at /api/assistant/egress: kinds and
// addresses, never a base URL's path, never the key), worded here in the panel's language; what
// the offline switch turns off and whether it is on; what the provider is sent; what never
// leaves. tests/test_egress.py checks the list: a whole session reaches exactly these addresses.
import { Fragment, useEffect, useState, type FC, type ReactNode } from "react";
import { useI18n, type MessageKey } from "../i18n";
import { errorMessage, requestJson, type ProviderSettings } from "../server/api";
import { providerName } from "../runtime/providerForm";
import type { EgressEntry, EgressStatement } from "./egress.generated";

const LOOPBACK = /^https?:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\]):\d+$/i;
export const EGRESS = "/api/assistant/egress";
const GENERIC = "The provider"; // the server's label for a provider it cannot name

/** Whether requests to this origin cross a network unencrypted (http:// to another machine). */
export function travelsInClear(origin: string): boolean {
  return origin.startsWith("http://") && !LOOPBACK.test(origin);
}

/** A translated text with elements in place of its `{name}` parameters. */
function withElements(text: string, elements: Record<string, ReactNode>): ReactNode[] {
  return text.split(/\{(\w+)\}/).map((part, i) => (i % 2 === 1 ? <Fragment key={i}>{elements[part] ?? `{${part}}`}</Fragment> : part));
}

const DESTINATION: Record<EgressEntry["kind"], MessageKey> = {
  provider: "egress.dest.provider",
  comfyui: "egress.dest.comfyui",
  manager: "egress.dest.manager",
  registry: "egress.dest.registry",
  modelSizes: "egress.dest.modelSizes",
  downloads: "egress.dest.downloads",
};
const UNUSED: Record<NonNullable<EgressEntry["unused"]>, MessageKey> = {
  offline: "egress.tag.offline",
  noComfyUI: "egress.tag.noComfyUI",
  badSetting: "egress.tag.badSetting",
};

// No address: inside ComfyUI its own; else the setting that would give one (unset or refused).
const UNSET: Partial<Record<NonNullable<EgressEntry["unused"]>, string>> = {
  noComfyUI: "COMFYUI_URL",
  badSetting: "COMFY_ASSISTANT_REGISTRY_URL",
};

const Hosts: FC<{ entry: EgressEntry }> = ({ entry }) => {
  const { t } = useI18n();
  const unset = entry.unused ? UNSET[entry.unused] : undefined;
  if (unset) return <code>{unset}</code>;
  if (!entry.hosts.length) return <>{t("egress.thisComfyUI")}</>;
  return (
    <>
      {entry.hosts.map((host, i) => (
        <Fragment key={host}>
          {i ? ", " : null}
          <code>{host}</code>
        </Fragment>
      ))}
    </>
  );
};

const Destination: FC<{ entry: EgressEntry; provider: string | null; env: string }> = ({ entry, provider, env }) => {
  const { t } = useI18n();
  const tag = entry.unused ? t(UNUSED[entry.unused], { env }) : entry.offlineOff ? t("egress.tag.offlineOff", { env }) : null;
  const unnamed = entry.kind === "provider" && provider === null;
  const text = unnamed ? t("egress.dest.providerUnnamed") : t(DESTINATION[entry.kind], { provider: provider ?? "" });
  return (
    <li className={entry.unused ? "cua-muted" : undefined} data-kind={entry.kind}>
      {withElements(text, { hosts: <Hosts entry={entry} /> })}
      {tag ? <strong className="cua-egress-tag"> {tag}</strong> : null}
    </li>
  );
};

export const WhereRequestsGo: FC<{ settings: ProviderSettings }> = ({ settings }) => {
  const { t } = useI18n();
  const { origin } = settings;
  const [egress, setEgress] = useState<EgressStatement | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let cancelled = false;
    requestJson<EgressStatement>(EGRESS).then(
      (statement) => !cancelled && (setEgress(statement), setError(null)),
      (failed: unknown) => !cancelled && setError(errorMessage(failed)),
    );
    return () => {
      cancelled = true;
    };
  }, [origin]); // (a saved base URL moves the provider's entry)
  const code = <code>{origin}</code>;
  const provider = settings.provider === GENERIC ? null : providerName(settings.provider).replace(/^The /, "the ");
  const env = egress?.offlineEnv ?? "COMFY_ASSISTANT_OFFLINE";
  return (
    <section className="cua-form cua-egress" aria-labelledby="cua-egress-title">
      <h3 id="cua-egress-title">{t("egress.title")}</h3>
      <p>{t("egress.intro")}</p>
      {error ? <p className="cua-error" role="alert">{error}</p> : null}
      {egress ? (
        <ul className="cua-egress-list cua-egress-destinations">
          {egress.entries.map((entry) => (
            <Destination key={entry.kind} entry={entry} provider={provider} env={env} />
          ))}
        </ul>
      ) : error ? null : (
        <p className="cua-muted">{t("settings.loading")}</p>
      )}
      {egress ? <p>{t(egress.offline ? "egress.offline.on" : "egress.offline.off", { env })}</p> : null}
      {travelsInClear(origin) ? (
        <p className="cua-error" role="note">
          {t(settings.apiKeySet ? "egress.inClearWithKey" : "egress.inClear")}
        </p>
      ) : null}
      <p>{t("egress.providerGets")}</p>
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

// The Settings view: the provider (base URL, model, write-only API key, window and output
// reserve overrides, a test with the server's verdict), the panel's own settings, projects and
// the MCP clients (McpClients.tsx). Nothing here is required: with the provider configured by
// environment the chat just works.
import { useEffect, useId, useState, type FC, type FormEvent } from "react";
import { useI18n, type MessageKey } from "../i18n";
import { errorMessage, requestJson, type ProviderSettings, type ProviderVerdict } from "../server/api";
import { MAX_STEPS_RANGE } from "../runtime/panelSettings";
import { fieldLabel, FormError, formFrom, providerName, providerUpdate, sourceLabel, type ProviderForm } from "../runtime/providerForm";
import { useStore, useStoreVersion } from "./context";
import { WhereRequestsGo } from "./Egress";
import { McpClients } from "./McpClients";
import { Projects } from "./Projects";

const PROVIDER = "/api/assistant/provider";

/** The test's verdict on the key, in words. */
const AUTH: Record<string, MessageKey> = { ok: "settings.auth.ok", failed: "settings.auth.failed", unknown: "settings.unknown" };

type Status = { kind: "idle" } | { kind: "busy"; what: string } | { kind: "ok"; text: string } | { kind: "error"; text: string };

const Field: FC<{
  id: string;
  label: string;
  hint: string;
  children: React.ReactNode;
}> = ({ id, label, hint, children }) => (
  <div className="cua-field">
    <label htmlFor={id}>{label}</label>
    {children}
    <span className="cua-hint">{hint}</span>
  </div>
);

export const Settings: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const { t } = useI18n();
  const id = useId();
  const [saved, setSaved] = useState<ProviderSettings | null>(null);
  const [form, setForm] = useState<ProviderForm | null>(null);
  const [status, setStatus] = useState<Status>({ kind: "idle" });
  const [verdict, setVerdict] = useState<ProviderVerdict | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    requestJson<ProviderSettings>(PROVIDER).then(
      (settings) => {
        if (cancelled) return;
        setSaved(settings);
        setForm(formFrom(settings));
      },
      (error: unknown) => !cancelled && setLoadError(errorMessage(error)),
    );
    return () => {
      cancelled = true;
    };
  }, []);

  const set = (key: keyof ProviderForm) => (e: { target: { value: string } }) => {
    setForm((f) => (f ? { ...f, [key]: e.target.value } : f));
    setVerdict(null); // a verdict speaks of the fields as they were tested
  };

  const save = async (body: Record<string, unknown>, done: string) => {
    setStatus({ kind: "busy", what: t("settings.saving") });
    try {
      const next = await requestJson<ProviderSettings>(PROVIDER, { method: "PUT", body });
      setSaved(next);
      setForm(formFrom(next)); // also empties the key field: the key never stays in the page
      setStatus({ kind: "ok", text: next.notice ? `${done} ${next.notice}` : done });
    } catch (error) {
      setStatus({ kind: "error", text: errorMessage(error) });
    }
  };

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    if (!form || !saved) return;
    let update: Record<string, unknown>;
    try {
      update = providerUpdate(form, saved);
    } catch (error) {
      setStatus({ kind: "error", text: error instanceof FormError ? error.message : String(error) });
      return;
    }
    if (Object.keys(update).length === 0) {
      setStatus({ kind: "ok", text: t("settings.nothingChanged") });
      return;
    }
    void save(update, t("settings.saved"));
  };

  const test = async () => {
    if (!form || !saved) return;
    let overrides: Record<string, unknown>;
    try {
      overrides = providerUpdate(form, saved);
    } catch (error) {
      setStatus({ kind: "error", text: error instanceof FormError ? error.message : String(error) });
      return;
    }
    setStatus({ kind: "busy", what: t("settings.testing") });
    try {
      const result = await requestJson<ProviderVerdict>(`${PROVIDER}/test`, { method: "POST", body: overrides });
      setVerdict(result);
      setStatus({ kind: "idle" });
    } catch (error) {
      setStatus({ kind: "error", text: errorMessage(error) });
    }
  };

  const busy = status.kind === "busy";
  const models = verdict?.models ?? [];

  return (
    <div className="cua-settings">
      <form className="cua-form" onSubmit={onSubmit} aria-labelledby={`${id}-provider`}>
        <h3 id={`${id}-provider`}>{t("settings.provider")}</h3>
        <p className="cua-muted">{t("settings.providerHelp")}</p>
        {loadError ? <div className="cua-error" role="alert">{loadError}</div> : null}
        {saved?.problems?.length ? (
          <div className="cua-error" role="alert">
            {saved.problems.map((problem) => (
              <div key={problem}>{problem}</div>
            ))}
          </div>
        ) : null}
        {form && saved ? (
          <>
            <Field id={`${id}-url`} label={fieldLabel("baseUrl")} hint={`${providerName(saved.provider)} · ${sourceLabel(saved, "baseUrl")}`}>
              <input id={`${id}-url`} type="url" value={form.baseUrl} onChange={set("baseUrl")} placeholder="http://127.0.0.1:11434/v1" spellCheck={false} />
            </Field>
            <Field
              id={`${id}-model`}
              label={fieldLabel("model")}
              hint={models.length ? t("settings.modelsOffered", { count: models.length }) : t("settings.modelHint", { source: sourceLabel(saved, "model") })}
            >
              <input id={`${id}-model`} value={form.model} onChange={set("model")} list={`${id}-models`} placeholder={t("settings.automatic")} spellCheck={false} />
              <datalist id={`${id}-models`}>
                {models.map((m) => (
                  <option key={m} value={m} />
                ))}
              </datalist>
            </Field>
            <Field
              id={`${id}-key`}
              label={fieldLabel("apiKey")}
              hint={saved.apiKeySet ? t("settings.keySet", { source: sourceLabel(saved, "apiKey") }) : t("settings.noKey")}
            >
              <input
                id={`${id}-key`}
                type="password"
                value={form.apiKey}
                onChange={set("apiKey")}
                autoComplete="new-password"
                placeholder={saved.apiKeySet ? "••••••••" : ""}
                spellCheck={false}
              />
            </Field>
            {saved.sources?.apiKey === "settings" ? (
              <button type="button" className="cua-link" disabled={busy} onClick={() => void save({ apiKey: null }, t("settings.keyRemoved"))}>
                {t("settings.removeKey")}
              </button>
            ) : null}
            <Field id={`${id}-window`} label={fieldLabel("contextWindow")} hint={t("settings.windowHint", { source: sourceLabel(saved, "contextWindow") })}>
              <input id={`${id}-window`} inputMode="numeric" value={form.contextWindow} onChange={set("contextWindow")} placeholder={t("settings.automatic")} />
            </Field>
            <Field id={`${id}-reserve`} label={fieldLabel("maxOutputTokens")} hint={t("settings.reserveHint", { source: sourceLabel(saved, "maxOutputTokens") })}>
              <input id={`${id}-reserve`} inputMode="numeric" value={form.maxOutputTokens} onChange={set("maxOutputTokens")} placeholder={t("settings.automatic")} />
            </Field>
            <div className="cua-row">
              <button type="submit" className="cua-btn cua-primary" disabled={busy}>
                {t("settings.save")}
              </button>
              <button type="button" className="cua-btn" disabled={busy} onClick={() => void test()}>
                {t("settings.test")}
              </button>
              {status.kind === "busy" ? <span className="cua-muted">{status.what}</span> : null}
              {status.kind === "ok" ? <span className="cua-ok" role="status">{status.text}</span> : null}
            </div>
            {status.kind === "error" ? <div className="cua-error" role="alert">{status.text}</div> : null}
            {verdict ? (
              <div className={verdict.ok ? "cua-verdict cua-ok" : "cua-verdict cua-error"} role="status">
                <strong>{verdict.ok ? t("settings.works") : t("settings.doesNotWork")}</strong> — {verdict.message}
                <div className="cua-muted">
                  {t("settings.verdict", {
                    reachable: t(verdict.reachable ? "settings.yes" : "settings.no"),
                    auth: t(AUTH[verdict.auth] ?? "settings.unknown"),
                    modelFound: t(verdict.modelFound === null ? "settings.unknown" : verdict.modelFound ? "settings.yes" : "settings.no"),
                  })}
                </div>
              </div>
            ) : null}
          </>
        ) : loadError ? null : (
          <div className="cua-muted">{t("settings.loading")}</div>
        )}
      </form>
      {saved ? <WhereRequestsGo settings={saved} /> : null}
      <div className="cua-form">
        <h3>{t("settings.panel")}</h3>
        <div className="cua-field">
          <label htmlFor={`${id}-steps`}>{t("settings.steps")}</label>
          <input
            id={`${id}-steps`}
            type="number"
            min={MAX_STEPS_RANGE.min}
            max={MAX_STEPS_RANGE.max}
            value={store.settings.maxSteps}
            onChange={(e) => store.updateSettings({ maxSteps: Number(e.target.value) })}
          />
          <span className="cua-hint">{t("settings.stepsHint")}</span>
        </div>
        <div className="cua-field cua-check">
          <input
            id={`${id}-ask`}
            type="checkbox"
            checked={store.settings.askBeforeEdits !== false}
            onChange={(e) => store.updateSettings({ askBeforeEdits: e.target.checked })}
          />
          <label htmlFor={`${id}-ask`}>{t("settings.askBeforeEdits")}</label>
        </div>
        <div className="cua-field cua-check">
          <input
            id={`${id}-debug`}
            type="checkbox"
            checked={store.settings.debugContext}
            onChange={(e) => store.updateSettings({ debugContext: e.target.checked })}
          />
          <label htmlFor={`${id}-debug`}>{t("settings.debugContext")}</label>
        </div>
      </div>
      <div className="cua-form">
        <Projects />
      </div>
      <div className="cua-form">
        <McpClients />
      </div>
    </div>
  );
};

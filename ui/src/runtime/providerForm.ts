// The Settings form of the provider: form values ⇄ the PUT body of /api/assistant/provider.
// Only what the user changed is sent; an emptied field sends null, which resets the setting to
// the environment's value (or the default). The API key is write-only: it is never read back,
// and it is sent only when something was typed.
import { t, type MessageKey } from "../i18n";
import type { ProviderSettings } from "../server/api";

export interface ProviderForm {
  baseUrl: string;
  model: string;
  apiKey: string;
  contextWindow: string;
  maxOutputTokens: string;
}

const FIELD_LABELS: Record<keyof ProviderForm, MessageKey> = {
  baseUrl: "settings.field.baseUrl",
  model: "settings.field.model",
  apiKey: "settings.field.apiKey",
  contextWindow: "settings.field.contextWindow",
  maxOutputTokens: "settings.field.maxOutputTokens",
};

/** A field's label in the current locale. */
export function fieldLabel(field: keyof ProviderForm): string {
  return t(FIELD_LABELS[field]);
}

export function formFrom(settings: ProviderSettings): ProviderForm {
  return {
    baseUrl: settings.baseUrl ?? "",
    model: settings.model ?? "",
    apiKey: "",
    contextWindow: settings.contextWindow == null ? "" : String(settings.contextWindow),
    maxOutputTokens: settings.maxOutputTokens == null ? "" : String(settings.maxOutputTokens),
  };
}

export class FormError extends Error {}

function wholeNumber(field: keyof ProviderForm, text: string): number | null {
  const value = text.trim();
  if (!value) return null;
  if (!/^\d+$/.test(value)) throw new FormError(t("settings.notWholeNumber", { field: fieldLabel(field) }));
  return Number(value);
}

/** The changed fields as a PUT (or test) body; empty when nothing changed. */
export function providerUpdate(form: ProviderForm, saved: ProviderSettings): Record<string, string | number | null> {
  const update: Record<string, string | number | null> = {};
  const baseUrl = form.baseUrl.trim();
  if (baseUrl !== (saved.baseUrl ?? "")) update.baseUrl = baseUrl || null;
  const model = form.model.trim();
  if (model !== (saved.model ?? "")) update.model = model || null;
  const window = wholeNumber("contextWindow", form.contextWindow);
  if (window !== (saved.contextWindow ?? null)) update.contextWindow = window;
  const reserve = wholeNumber("maxOutputTokens", form.maxOutputTokens);
  if (reserve !== (saved.maxOutputTokens ?? null)) update.maxOutputTokens = reserve;
  const key = form.apiKey.trim();
  if (key) update.apiKey = key;
  return update;
}

/** The server's names that are words, not names (core/provider/provider_profiles.py). */
const DESCRIBED: Record<string, MessageKey> = {
  "The provider": "settings.providerName.generic",
  "The llama.cpp server": "settings.providerName.llamaCpp",
};

/** The provider's name as the server sends it ("Ollama"), or its description in the current
 * locale when it has no name ("The provider"). */
export function providerName(name: string): string {
  const key = DESCRIBED[name];
  return key ? t(key) : name;
}

/** Where a setting's value comes from, in words (the current locale's). */
export function sourceLabel(settings: ProviderSettings, key: string): string {
  const source = settings.sources?.[key];
  if (source === "settings") return t("settings.source.here");
  if (source === "environment") return t("settings.source.environment");
  return t("settings.source.default");
}

// The Settings form of the provider: form values ⇄ the PUT body of /api/assistant/provider.
// Only what the user changed is sent; an emptied field sends null, which resets the setting to
// the environment's value (or the default). The API key is write-only: it is never read back,
// and it is sent only when something was typed.
import type { ProviderSettings } from "./api";

export interface ProviderForm {
  baseUrl: string;
  model: string;
  apiKey: string;
  contextWindow: string;
  maxOutputTokens: string;
}

export const FIELD_LABELS: Record<keyof ProviderForm, string> = {
  baseUrl: "Base URL",
  model: "Model",
  apiKey: "API key",
  contextWindow: "Context window",
  maxOutputTokens: "Output reserve",
};

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

function wholeNumber(label: string, text: string): number | null {
  const value = text.trim();
  if (!value) return null;
  if (!/^\d+$/.test(value)) throw new FormError(`${label} must be a whole number of tokens (or empty for automatic).`);
  return Number(value);
}

/** The changed fields as a PUT (or test) body; empty when nothing changed. */
export function providerUpdate(form: ProviderForm, saved: ProviderSettings): Record<string, string | number | null> {
  const update: Record<string, string | number | null> = {};
  const baseUrl = form.baseUrl.trim();
  if (baseUrl !== (saved.baseUrl ?? "")) update.baseUrl = baseUrl || null;
  const model = form.model.trim();
  if (model !== (saved.model ?? "")) update.model = model || null;
  const window = wholeNumber(FIELD_LABELS.contextWindow, form.contextWindow);
  if (window !== (saved.contextWindow ?? null)) update.contextWindow = window;
  const reserve = wholeNumber(FIELD_LABELS.maxOutputTokens, form.maxOutputTokens);
  if (reserve !== (saved.maxOutputTokens ?? null)) update.maxOutputTokens = reserve;
  const key = form.apiKey.trim();
  if (key) update.apiKey = key;
  return update;
}

/** Where a setting's value comes from, in words. */
export function sourceLabel(settings: ProviderSettings, key: string): string {
  const source = settings.sources?.[key];
  if (source === "settings") return "set here";
  if (source === "environment") return "from the environment";
  return "default";
}

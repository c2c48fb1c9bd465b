// The panel's words in the user's language: one message table per locale (messages.ts is the
// English one, every key; locales/<tag>.ts translate them, one file per ComfyUI locale: adding a
// file adds the language), the current locale (ComfyUI's `Comfy.Locale`, followed live by
// comfyLocale.ts), `t(key, params)` and a hook that re-renders a component when the locale
// changes. A locale without a table shows English; numbers, dates and plural forms still follow
// the locale itself (Intl).
import { useSyncExternalStore } from "react";
import { en, type Message, type MessageKey } from "./messages";

export type { MessageKey };
export type Translation = Record<MessageKey, Message>;
export type Params = Record<string, string | number | Date>;

const files = import.meta.glob<Translation>("./locales/*.ts", { eager: true, import: "default" });

/** The translated locales by tag ("zh", "zh-TW", "pt-BR"): each has every key (i18n.test.ts). */
export const SHIPPED: Record<string, Translation> = Object.fromEntries(
  Object.entries(files).map(([path, table]) => [path.replace(/^.*\/|\.ts$/g, ""), table]),
);

/** Right-to-left scripts among ComfyUI's locales. */
const RTL = new Set(["ar", "fa", "he"]);

let locale = "en";
const listeners = new Set<() => void>();

/** Traditional Chinese however the tag says it (zh-TW, zh-Hant, zh-HK, zh-MO): the zh-TW table. */
const TRADITIONAL = /^zh-(tw|hant|hk|mo)\b/i;

/** The table for a locale: its own ("pt-BR"), else its language's ("fr-CA" → fr), else English. */
function tableOf(tag: string): Translation {
  if (TRADITIONAL.test(tag)) return SHIPPED["zh-TW"] ?? SHIPPED.zh ?? en;
  return SHIPPED[tag] ?? SHIPPED[tag.split("-")[0] ?? ""] ?? en;
}

function validTag(tag: string): string {
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? "en";
  } catch {
    return "en";
  }
}

export function getLocale(): string {
  return locale;
}

/** Switch the panel's language; every component using useI18n re-renders. */
export function setLocale(tag: string): void {
  const next = validTag(tag.trim() || "en");
  if (next === locale) return;
  locale = next;
  for (const listener of listeners) listener();
}

export function subscribeLocale(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function dirOf(tag: string): "rtl" | "ltr" {
  return RTL.has(tag.split("-")[0] ?? tag) ? "rtl" : "ltr";
}

export function formatNumber(value: number, tag = locale): string {
  return new Intl.NumberFormat(tag).format(value);
}

export function formatDate(value: Date | number, tag = locale, options: Intl.DateTimeFormatOptions = { dateStyle: "medium", timeStyle: "short" }): string {
  return new Intl.DateTimeFormat(tag, options).format(value);
}

function formatParam(value: string | number | Date, tag: string): string {
  if (typeof value === "number") return formatNumber(value, tag);
  if (value instanceof Date) return formatDate(value, tag);
  return value;
}

/** The text of `key` in `tag`: the plural form for `params.count`, `{name}` filled from params. */
export function translate(tag: string, key: MessageKey, params: Params = {}): string {
  const message = tableOf(tag)[key] ?? en[key];
  let text: string;
  if (typeof message === "string") text = message;
  else {
    const count = typeof params.count === "number" ? params.count : 0;
    text = message[new Intl.PluralRules(tag).select(count)] ?? message.other;
  }
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    return value === undefined ? whole : formatParam(value, tag);
  });
}

/** The text of `key` in the current locale. */
export function t(key: MessageKey, params?: Params): string {
  return translate(locale, key, params);
}

/** The current locale's t, locale tag and direction; the component re-renders when it changes. */
export function useI18n(): { t: typeof t; locale: string; dir: "rtl" | "ltr" } {
  const current = useSyncExternalStore(subscribeLocale, getLocale, getLocale);
  return { t: (key, params) => translate(current, key, params), locale: current, dir: dirOf(current) };
}

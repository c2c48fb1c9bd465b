// The panel's words in the user's language: one message table per locale (messages.ts is the
// English one, every key, inside the bundle; locales/<tag>.ts translate them, each built into
// ui/dist/locales/<tag>.json and fetched the first time its language is chosen), the current
// locale (ComfyUI's `Comfy.Locale`, followed live by comfyLocale.ts), `t(key, params)` and a hook
// that re-renders a component when the locale changes. A locale without a table shows English;
// numbers, dates and plural forms still follow the locale itself (Intl).
import { useSyncExternalStore } from "react";
import { en, type Message, type MessageKey, type Translation } from "./messages";
import { isAtHand, load, tableOf, tableTag } from "./tables";

export type { MessageKey, Translation };
export { registerTable, tableUrl } from "./tables";
export type Params = Record<string, string | number | Date>;

/** Right-to-left scripts among ComfyUI's locales. */
const RTL = new Set(["ar", "fa", "he"]);

/** The locale shown, and the one last chosen (ahead of it while its table is on the way). */
let locale = "en";
let wanted = "en";
const listeners = new Set<() => void>();

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

/** Switch the panel's language; every component using useI18n re-renders. A table not at hand
 * is fetched first, the previous language staying until it arrives (the last choice wins). */
export function setLocale(tag: string): void {
  const next = validTag(tag.trim() || "en");
  if (next === wanted) return;
  wanted = next;
  const table = tableTag(next);
  if (table === undefined || isAtHand(table)) {
    show(next);
    return;
  }
  void load(table).then(() => {
    if (wanted === next) show(next);
  });
}

function show(tag: string): void {
  if (tag === locale) return;
  locale = tag;
  for (const listener of listeners) listener();
}

export function subscribeLocale(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function dirOf(tag: string): "rtl" | "ltr" {
  return RTL.has(tag.split("-")[0] ?? tag) ? "rtl" : "ltr";
}

/** One formatter per locale and options, made once: making one costs more than formatting with it
 * many times, and the context gauge formats its figures on every streamed chunk. */
function cached<T>(cache: Map<string, T>, tag: string, options: object | undefined, make: () => T): T {
  const key = `${tag}\u0000${options ? JSON.stringify(options) : ""}`;
  let made = cache.get(key);
  if (made === undefined) cache.set(key, (made = make()));
  return made;
}
const numberFormats = new Map<string, Intl.NumberFormat>();
const dateFormats = new Map<string, Intl.DateTimeFormat>();
const pluralRules = new Map<string, Intl.PluralRules>();

/** The locale's number format with `options` (made once). */
export function numberFormat(tag: string, options?: Intl.NumberFormatOptions): Intl.NumberFormat {
  return cached(numberFormats, tag, options, () => new Intl.NumberFormat(tag, options));
}

/** Makes the locale's number format and plural rules in a task of their own while the page is
 * idle: the first Intl formatter of a page costs some 17 ms (its locale data loaded), which
 * otherwise lands in the task that shows a thread (the context gauge formats its figures). */
export function warmFormats(tag = locale): void {
  const warm = () => {
    numberFormat(tag);
    cached(pluralRules, tag, undefined, () => new Intl.PluralRules(tag));
  };
  const idle = (globalThis as { requestIdleCallback?: (run: () => void, options?: { timeout: number }) => number }).requestIdleCallback;
  if (idle) idle(warm, { timeout: 200 });
  else setTimeout(warm, 0);
}

export function formatNumber(value: number, tag = locale): string {
  return numberFormat(tag).format(value);
}

export function formatDate(value: Date | number, tag = locale, options: Intl.DateTimeFormatOptions = { dateStyle: "medium", timeStyle: "short" }): string {
  return cached(dateFormats, tag, options, () => new Intl.DateTimeFormat(tag, options)).format(value);
}

function formatParam(value: string | number | Date, tag: string): string {
  if (typeof value === "number") return formatNumber(value, tag);
  if (value instanceof Date) return formatDate(value, tag);
  return value;
}

/** The text of `key` in `tag`: the plural form for `params.count`, `{name}` filled from params. */
export function translate(tag: string, key: MessageKey, params: Params = {}): string {
  const message: Message = tableOf(tag)?.[key] ?? en[key];
  let text: string;
  if (typeof message === "string") text = message;
  else {
    const count = typeof params.count === "number" ? params.count : 0;
    text = message[cached(pluralRules, tag, undefined, () => new Intl.PluralRules(tag)).select(count)] ?? message.other;
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

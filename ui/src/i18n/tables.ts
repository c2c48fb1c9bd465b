// The translation tables at hand, and how one is fetched: each locales/<tag>.ts is built into
// ui/dist/locales/<tag>.json (vite.config.ts), beside the panel's module, and fetched the first
// time its language is chosen (setLocale in index.ts). No React here: the unit tests' setup
// (ui/test/vitest.setup.ts) registers every table through this module before React loads.
import type { Translation } from "./messages";
import { SHIPPED_TAGS, type ShippedTag } from "./shipped";

const SHIPPED = new Set<string>(SHIPPED_TAGS);
/** The tables at hand, by tag: fetched ones, and in unit tests all (ui/test/vitest.setup.ts). */
const tables = new Map<string, Translation>();
/** Each table's fetch, started once; dropped when it fails, so a later choice tries again. */
const loading = new Map<string, Promise<void>>();

/** Traditional Chinese however the tag says it (zh-TW, zh-Hant, zh-HK, zh-MO): the zh-TW table. */
const TRADITIONAL = /^zh-(tw|hant|hk|mo)\b/i;

/** The table a locale reads: its own ("pt-BR"), else its language's ("fr-CA" → fr), else none
 * (English). */
export function tableTag(tag: string): ShippedTag | undefined {
  const language = tag.split("-")[0] ?? "";
  const found = TRADITIONAL.test(tag) ? "zh-TW" : SHIPPED.has(tag) ? tag : language;
  return SHIPPED.has(found) ? (found as ShippedTag) : undefined;
}

/** The table at hand for a locale; none (English) while it is on the way or has failed. */
export function tableOf(tag: string): Translation | undefined {
  return tables.get(tableTag(tag) ?? "");
}

export function isAtHand(tag: ShippedTag): boolean {
  return tables.has(tag);
}

/** Make a table available without fetching it (the unit tests register every one). */
export function registerTable(tag: ShippedTag, table: Translation): void {
  tables.set(tag, table);
}

/** Where the build put a table: beside the panel's module (ui/dist/locales/<tag>.json). The
 * base is a variable so that Vite leaves this URL alone: given `new URL(<template>,
 * import.meta.url)` itself, it would look for the files among the sources at build time. */
const HERE = import.meta.url;
export function tableUrl(tag: ShippedTag): URL {
  return new URL(`./locales/${tag}.json`, HERE);
}

async function fetchTable(tag: ShippedTag): Promise<Translation> {
  const response = await fetch(tableUrl(tag));
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const table: unknown = await response.json();
  if (typeof table !== "object" || table === null || Array.isArray(table)) throw new Error("not a table");
  return table as Translation;
}

/** Fetch a table once; a failure is warned about and leaves the locale in English. */
export function load(tag: ShippedTag): Promise<void> {
  let pending = loading.get(tag);
  if (pending === undefined) {
    pending = fetchTable(tag).then(
      (table) => void tables.set(tag, table),
      (error: unknown) => {
        loading.delete(tag);
        console.warn(`ComfyUI Assistant: the ${tag} translation could not be loaded (${String(error)}); the panel stays in English.`);
      },
    );
    loading.set(tag, pending);
  }
  return pending;
}

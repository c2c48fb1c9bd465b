// The locales the panel has a translation for (locales/<tag>.ts), by ComfyUI's tag. Only this
// list is in the panel's bundle: each table is a file of its own, ui/dist/locales/<tag>.json,
// fetched when the user picks its language (index.ts), so an English user downloads none.
// Adding a language: its locales/<tag>.ts, its tag here and its line in locales/index.ts.
export const SHIPPED_TAGS = ["ar", "de", "es", "fa", "fr", "he", "it", "ja", "ko", "pt-BR", "ru", "tr", "zh", "zh-TW"] as const;

export type ShippedTag = (typeof SHIPPED_TAGS)[number];

import { describe, expect, it, vi } from "vitest";
import { dirOf, translate, type MessageKey } from ".";
import { TABLES } from "./locales";
import { SHIPPED_TAGS } from "./shipped";
import { followComfyLocale } from "./comfyLocale";
import { formatNumber, getLocale, setLocale, warmFormats } from ".";
import type { ComfyApp } from "../host/comfy";
import { en, type Message } from "./messages";

const paramsOf = (message: Message): string[] => {
  const texts = typeof message === "string" ? [message] : Object.values(message);
  return [...new Set(texts.flatMap((text) => [...(text ?? "").matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? "")))].sort();
};

describe("every shipped locale", () => {
  it("is listed: each locales/<tag>.ts in shipped.ts (the bundle's list) and locales/index.ts (the build's)", () => {
    const files = Object.keys(import.meta.glob("./locales/*.ts")).map((path) => path.replace(/^.*\/|\.ts$/g, "")).filter((name) => name !== "index");
    expect([...SHIPPED_TAGS].sort()).toEqual(files.sort());
    expect(Object.keys(TABLES).sort()).toEqual(files.sort());
  });

  for (const [tag, table] of Object.entries(TABLES)) {
    const categories = new Intl.PluralRules(tag).resolvedOptions().pluralCategories as string[];
    it(`${tag} has every key, no other, each with the English parameters`, () => {
      expect(Object.keys(table).sort()).toEqual(Object.keys(en).sort());
      for (const key of Object.keys(en) as MessageKey[]) {
        const english = en[key] as Message;
        const message = table[key];
        expect(typeof message, key).toBe(typeof english);
        const texts = typeof message === "string" ? [message] : Object.values(message);
        for (const text of texts) expect(text?.trim(), key).toBeTruthy();
        // a plural message names its counted thing by {count} in English; a form may spell the
        // number out ("one"), so only the other parameters must all be there
        const wanted = paramsOf(english).filter((name) => typeof message === "string" || name !== "count");
        const found = paramsOf(message);
        for (const name of wanted) expect(found, `${tag} ${key}`).toContain(name);
        if (typeof message !== "string") {
          expect(message.other, key).toBeTruthy();
          for (const form of Object.keys(message)) expect(categories, `${tag} ${key}`).toContain(form);
        }
      }
    });
  }
});

// Values a translation may leave as in English: the literal arguments a command takes, and
// words the language itself uses (each checked: ComfyUI's own translation says it so too).
const TYPED = new Set(["command.rewind.args"]);
const SAME_WORDS: Record<string, string[]> = {
  de: ["workflowMenu.title", "tool.summary", "gauge.line.limit", "settings.panel", "rewind.graph", "mcp.details"],
  es: ["tool.error", "settings.no", "settings.panel", "delegate.traceError", "tool.where.panel"],
  fr: ["extension.tab", "branches.label", "branches.menu", "workflowMenu.title", "composer.message", "tool.arguments", "citations.source", "image.alt", "command.new.args"],
  it: ["workflowMenu.title", "gauge.source.provider", "settings.no", "installs.find.repository", "tool.where.server"],
  tr: ["settings.field.model", "settings.panel", "tool.where.panel"],
};

describe("no English left in a translated panel", () => {
  for (const [tag, table] of Object.entries(TABLES)) {
    it(`${tag}: a value equal to the English one has no words, or its words are the language's own`, () => {
      const wordy = (message: Message) =>
        (typeof message === "string" ? [message] : Object.values(message)).some((text) => /[A-Za-z]{2,}/.test((text ?? "").replace(/\{\w+\}/g, "")));
      const same = (Object.keys(en) as MessageKey[]).filter(
        (key) => JSON.stringify(table[key]) === JSON.stringify(en[key]) && wordy(en[key]) && !TYPED.has(key),
      );
      expect(same.sort()).toEqual((SAME_WORDS[tag] ?? []).sort());
    });
  }
});

describe("translate", () => {
  it("picks the locale's plural form and formats the count for it", () => {
    expect(translate("en", "chat.stepLimit", { count: 1 })).toMatch(/^Stopped after 1 step /);
    expect(translate("en", "chat.stepLimit", { count: 1200 })).toMatch(/^Stopped after 1,200 steps /);
    expect(translate("ar", "chat.stepLimit", { count: 2 })).toMatch(/^توقّف بعد خطوتين /);
    expect(translate("ar", "chat.stepLimit", { count: 3 })).toContain(`${new Intl.NumberFormat("ar").format(3)} خطوات`);
    expect(translate("zh", "tool.progress.step", { step: 7, steps: 20 })).toBe("第 7/20 步");
  });

  it("shows a locale its own table, else its language's, else English, and lays out ar, fa and he right to left", () => {
    expect(translate("x-klingon", "composer.send")).toBe("Send");
    expect(translate("zh-Hans-CN", "approval.allow")).toBe("允许");
    expect(translate("ar-EG", "approval.allow")).toBe(translate("ar", "approval.allow"));
    expect(translate("zh-HK", "approval.allow")).toBe(translate("zh-TW", "approval.allow"));
    expect(translate("zh", "approval.allow")).toBe("允许");
    expect(["ar", "fa", "he", "ar-EG"].map(dirOf)).toEqual(["rtl", "rtl", "rtl", "rtl"]);
    expect(["en", "zh", "ja"].map(dirOf)).toEqual(["ltr", "ltr", "ltr"]);
  });
});

describe("followComfyLocale", () => {
  it("takes ComfyUI's Comfy.Locale now and at each `Comfy.Locale.change` of its settings dialog", () => {
    const values = new Map<string, unknown>([["Comfy.Locale", "zh"]]);
    const settings = new EventTarget();
    const app = { extensionManager: { setting: { get: (id: string) => values.get(id) } }, ui: { settings } } as unknown as ComfyApp;
    const stop = followComfyLocale(app);
    expect(getLocale()).toBe("zh");
    settings.dispatchEvent(new CustomEvent("Comfy.Locale.change", { detail: { value: "ar", oldValue: "zh" } }));
    expect(getLocale()).toBe("ar");
    stop();
    settings.dispatchEvent(new CustomEvent("Comfy.Locale.change", { detail: { value: "fr", oldValue: "ar" } }));
    expect(getLocale()).toBe("ar");
    setLocale("en");
  });
});

describe("warmFormats", () => {
  it("makes the locale's number format in a later task, and formatting then makes none", async () => {
    const Real = Intl.NumberFormat;
    const made: unknown[][] = [];
    Intl.NumberFormat = new Proxy(Real, {
      construct: (target, args) => {
        made.push(args);
        return Reflect.construct(target, args) as object;
      },
    });
    try {
      warmFormats("de-CH");
      expect(made).toEqual([]); // (not in the task that mounts the panel)
      await vi.waitFor(() => expect(made).toEqual([["de-CH", undefined]]));
      expect(formatNumber(12345, "de-CH")).toBe(new Real("de-CH").format(12345));
      expect(made).toEqual([["de-CH", undefined]]);
    } finally {
      Intl.NumberFormat = Real;
    }
  });
});

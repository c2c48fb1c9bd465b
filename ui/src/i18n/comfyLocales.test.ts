// @vitest-environment node
// The repository's locales/<lang>/main.json and commands.json, which ComfyUI serves to its
// frontend (GET /i18n) to translate our tab's title and our command's label, are generated from
// the panel's tables (messages.ts, locales/index.ts): this test fails when they differ.
// Regenerate them after changing "extension.tab" or "extension.toggleCommand", or adding a locale:
//   cd ui && UPDATE_COMFY_LOCALES=1 npx vitest run src/i18n/comfyLocales.test.ts
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Translation } from ".";
import { comfyLocaleFiles } from "./comfyLocales";
import { TABLES as TRANSLATIONS } from "./locales";
import { en } from "./messages";

const LOCALES = join(__dirname, "../../../locales");
const TABLES: Record<string, Translation> = { en, ...TRANSLATIONS };
const UPDATE = process.env["UPDATE_COMFY_LOCALES"] === "1";

const json = (value: object) => `${JSON.stringify(value, null, 2)}\n`;

describe("ComfyUI's locales/ folder", () => {
  for (const [tag, table] of Object.entries(TABLES)) {
    it(`${tag}: main.json and commands.json say what the ${tag} table says`, () => {
      for (const [file, content] of Object.entries(comfyLocaleFiles(table))) {
        const path = join(LOCALES, tag, file);
        if (UPDATE) {
          mkdirSync(join(LOCALES, tag), { recursive: true });
          writeFileSync(path, json(content));
        }
        expect(existsSync(path), `${path} is missing: regenerate (see this file's header)`).toBe(true);
        expect(readFileSync(path, "utf8"), `${path} is stale: regenerate (see this file's header)`).toBe(json(content));
      }
      // vue-i18n would read these as a placeholder, a linked message or plural forms
      for (const key of ["extension.tab", "extension.toggleCommand"] as const) expect(table[key], key).not.toMatch(/[{}@|]/);
    });
  }

  it("holds a folder for each table and no other", () => {
    expect(readdirSync(LOCALES).sort()).toEqual(Object.keys(TABLES).sort());
  });
});

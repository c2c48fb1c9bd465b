// The panel fetches a translation the first time its language is chosen (index.ts). Each test
// takes a fresh copy of the i18n module, with no table at hand (vitest.setup.ts registered them
// all in the shared one), and a stub `fetch` whose answers the test releases when it likes.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { TABLES } from "./locales";

type I18n = typeof import(".");
type Answer = { ok: boolean; status: number; json: () => Promise<unknown> };

let i18n: I18n;
let requests: { url: string; answer: (reply: Answer | Error) => void }[];

const table = (value: unknown): Answer => ({ ok: true, status: 200, json: async () => value });
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

beforeEach(async () => {
  vi.resetModules();
  i18n = await import(".");
  requests = [];
  vi.stubGlobal("fetch", (url: URL) =>
    new Promise<Answer>((resolve, reject) =>
      requests.push({ url: String(url), answer: (reply) => (reply instanceof Error ? reject(reply) : resolve(reply)) }),
    ),
  );
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe("a translation not at hand", () => {
  it("is fetched from locales/<tag>.json beside the module; the previous language stays until it arrives", async () => {
    i18n.registerTable("ar", TABLES.ar);
    i18n.setLocale("ar");
    expect(i18n.t("approval.allow")).toBe(TABLES.ar["approval.allow"]);
    const changes = vi.fn();
    i18n.subscribeLocale(changes);

    i18n.setLocale("zh-CN");
    // beside the module: ui/src/i18n here, ui/dist (comfyui-assistant.js) once built
    expect(requests.map((r) => r.url)).toEqual([expect.stringMatching(/^file:\/\/.*\/ui\/src\/i18n\/locales\/zh\.json$/)]);
    await settle();
    expect([i18n.getLocale(), i18n.t("approval.allow"), changes.mock.calls.length]).toEqual(["ar", TABLES.ar["approval.allow"], 0]);

    requests[0]?.answer(table(TABLES.zh));
    await settle();
    expect([i18n.getLocale(), i18n.t("approval.allow"), changes.mock.calls.length]).toEqual(["zh-CN", "允许", 1]);
    expect(i18n.translate("zh", "approval.allow")).toBe("允许"); // the same table for the language
  });

  it("that cannot be fetched leaves the words English (the numbers the locale's), says why in the console, and is tried again at the next choice", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    i18n.setLocale("fr");
    requests[0]?.answer({ ok: false, status: 404, json: async () => ({}) });
    await settle();
    expect([i18n.getLocale(), i18n.t("composer.send")]).toEqual(["fr", "Send"]);
    expect(i18n.t("chat.stepLimit", { count: 1200 })).toContain(new Intl.NumberFormat("fr").format(1200));
    expect(String(warn.mock.calls[0]?.[0])).toMatch(/the fr translation could not be loaded \(Error: HTTP 404\); the panel stays in English/);

    i18n.setLocale("de");
    requests[1]?.answer(new TypeError("Failed to fetch"));
    await settle();
    expect([i18n.getLocale(), i18n.t("composer.send")]).toEqual(["de", "Send"]);
    i18n.setLocale("ja");
    requests[2]?.answer(table(["not", "a", "table"]));
    await settle();
    expect([i18n.getLocale(), i18n.t("composer.send"), warn.mock.calls.length]).toEqual(["ja", "Send", 3]);

    i18n.setLocale("fr-CA");
    expect(requests.map((r) => r.url.replace(/^.*\//, ""))).toEqual(["fr.json", "de.json", "ja.json", "fr.json"]);
    requests[3]?.answer(table(TABLES.fr));
    await settle();
    expect(i18n.t("composer.send")).toBe(TABLES.fr["composer.send"]);
  });

  it("is fetched once however often it is chosen, and the last choice wins", async () => {
    i18n.setLocale("zh");
    i18n.setLocale("en");
    i18n.setLocale("zh-Hans");
    i18n.setLocale("ar");
    expect(requests.map((r) => r.url.replace(/^.*\//, ""))).toEqual(["zh.json", "ar.json"]);
    requests[1]?.answer(table(TABLES.ar));
    await settle();
    expect(i18n.getLocale()).toBe("ar");
    requests[0]?.answer(table(TABLES.zh)); // arrives late: ar was chosen since
    await settle();
    expect(i18n.getLocale()).toBe("ar");

    i18n.setLocale("zh");
    expect([i18n.getLocale(), i18n.t("approval.allow"), requests.length]).toEqual(["zh", "允许", 2]); // at hand now
    i18n.setLocale("nl");
    expect([i18n.getLocale(), i18n.t("approval.allow"), requests.length]).toEqual(["nl", "Allow", 2]); // no table: English
  });
});

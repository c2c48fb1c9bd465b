import { describe, expect, it } from "vitest";
import { setLocale } from "../i18n";
import { COMMANDS, completions, helpText, isLocal, parseInput, unknownCommandText } from "./parse";

const skills = [
  { slug: "upscale", name: "Upscale", description: "Make images bigger" },
  { slug: "sdxl-basics", name: "SDXL basics", description: "SDXL workflows" },
  { slug: "inpaint", name: "Inpainting", description: "" },
];

describe("parseInput", () => {
  it("leaves ordinary text alone", () => {
    expect(parseInput("make it blue")).toEqual({ kind: "text", text: "make it blue" });
  });

  it("reads every known command, case-insensitively, with its arguments", () => {
    for (const c of COMMANDS) {
      const parsed = parseInput(`/${c.name.toUpperCase()}  some args `);
      expect(parsed).toMatchObject({ kind: "command", name: c.name, args: "some args" });
    }
    expect(parseInput("/help")).toMatchObject({ kind: "command", name: "help", args: "" });
  });

  it("keeps /skill's arguments whole, over several lines", () => {
    expect(parseInput("/skill upscale\nmake it 4x")).toMatchObject({
      kind: "command",
      name: "skill",
      args: "upscale\nmake it 4x",
    });
  });

  it("knows an unknown command", () => {
    expect(parseInput("/frobnicate now")).toEqual({ kind: "unknown", name: "frobnicate", args: "now" });
  });

  it("treats paths and stray slashes as text", () => {
    expect(parseInput("/home/me/a.png is broken").kind).toBe("text");
    expect(parseInput("/ hello").kind).toBe("text");
    expect(parseInput("/").kind).toBe("text");
    expect(parseInput("a/b").kind).toBe("text");
  });

  it("turns a leading // into one slash", () => {
    expect(parseInput("//help me")).toEqual({ kind: "text", text: "/help me" });
  });

  it("tells what the panel answers itself", () => {
    expect(isLocal(parseInput("/help"))).toBe(true);
    expect(isLocal(parseInput("/new"))).toBe(true);
    expect(isLocal(parseInput("/clear"))).toBe(true);
    expect(isLocal(parseInput("/compact"))).toBe(true);
    expect(isLocal(parseInput("/context"))).toBe(true);
    expect(isLocal(parseInput("/nope"))).toBe(true);
    expect(isLocal(parseInput("/skill upscale"))).toBe(false);
    expect(isLocal(parseInput("hello"))).toBe(false);
  });
});

describe("help and unknown commands", () => {
  it("lists every command", () => {
    const text = helpText();
    for (const c of COMMANDS) expect(text).toContain(`/${c.name}`);
  });

  it("suggests a near command", () => {
    expect(unknownCommandText("hlep")).toContain("Did you mean /help?");
    expect(unknownCommandText("cont")).toContain("Did you mean /context?");
    expect(unknownCommandText("co")).toContain("Did you mean /compact or /context?");
    expect(unknownCommandText("zzz")).not.toContain("Did you mean");
    expect(unknownCommandText("co")).toBe(
      "There is no command /co. Did you mean /compact or /context? Commands: /skill, /new, /clear, /rewind, /compact, /context, /help. Start with // to send a message that begins with a slash.",
    );
  });

  it("answers in the user's language, its sentences written as the language writes them", () => {
    setLocale("zh");
    try {
      expect(unknownCommandText("co")).toBe(
        "没有 /co 这个命令。你是不是想输入 /compact或/context？可用命令：/skill、/new、/clear、/rewind、/compact、/context、/help。要发送以斜杠开头的消息，请以 // 开头。",
      );
      expect(helpText()).toContain("- `/help` — 列出所有命令");
      expect(completions("/sk", [])).toEqual([{ text: "/skill ", label: "/skill <名称> [请求]", detail: "按某个技能处理这次请求" }]);
    } finally {
      setLocale("en");
    }
  });
});

describe("completions", () => {
  it("offers every command after a bare slash", () => {
    expect(completions("/", skills).map((c) => c.text)).toEqual(COMMANDS.map((c) => `/${c.name} `));
  });

  it("narrows by prefix", () => {
    expect(completions("/co", skills).map((c) => c.text)).toEqual(["/compact ", "/context "]);
    expect(completions("/h", skills)).toHaveLength(1);
  });

  it("stops once a command without arguments is typed in full", () => {
    expect(completions("/help", skills)).toEqual([]);
  });

  it("still offers /skill when it is typed in full (it takes a name)", () => {
    expect(completions("/skill", skills).map((c) => c.text)).toEqual(["/skill "]);
  });

  it("completes skill names after /skill", () => {
    expect(completions("/skill ", skills).map((c) => c.label)).toEqual(["inpaint", "sdxl-basics", "upscale"]);
    expect(completions("/skill up", skills).map((c) => c.text)).toEqual(["/skill upscale "]);
    // by name, and inside the slug
    expect(completions("/skill inpainting", skills).map((c) => c.label)).toEqual(["inpaint"]);
    expect(completions("/skill basics", skills).map((c) => c.label)).toEqual(["sdxl-basics"]);
  });

  it("offers every matching skill, however many (the list scrolls)", () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ slug: `skill-${String(i).padStart(2, "0")}`, name: `Skill ${i}` }));
    const offered = completions("/skill ", many).map((c) => c.label);
    expect(offered).toHaveLength(30);
    expect(offered.at(-1)).toBe("skill-29");
    expect(completions("/skill skill-2", many)).toHaveLength(10); // skill-20 to skill-29
  });

  it("stops after the skill name and for anything else", () => {
    expect(completions("/skill upscale ", skills)).toEqual([]);
    expect(completions("/skill upscale", skills)).toEqual([]);
    expect(completions("hello", skills)).toEqual([]);
    expect(completions("//he", skills)).toEqual([]);
    expect(completions("/help\nmore", skills)).toEqual([]);
  });
});

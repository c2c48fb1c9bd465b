// No deprecated frontend API in the panel's code (ComfyUI 1.58 logs a warning for each): the
// only uses are the 1.27 fallbacks in comfy.ts, each behind a check for the current API.
import { describe, expect, it } from "vitest";

const { readdirSync, readFileSync, statSync } = process.getBuiltinModule("node:fs");
const { join, relative, resolve } = process.getBuiltinModule("node:path");

const SRC = [resolve(process.cwd(), "src"), resolve(process.cwd(), "ui/src")].find((p) => {
  try {
    return statSync(join(p, "host", "comfy.ts")).isFile();
  } catch {
    return false;
  }
})!;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "playground" || name === "fixtures" ? [] : sources(path);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && name !== "testing.ts" ? [path] : [];
  });
}

const DEPRECATED: [string, RegExp][] = [
  ["input.link (use the graph's links)", /\.link\b(?!s)/],
  ["output.links (use the graph's links)", /\b(output|outputs\[[^\]]*\]|slot)\.links\b/],
  ["app.graph (use rootGraph(app))", /\bapp\.graph\b/],
  ["checkState() (use captureState())", /\.checkState\??\.?\(/],
  ["toast.add() (use showToast())", /toast\??\.add\??\.?\(/],
];

/** The fallbacks for 1.27, in comfy.ts: each line after a check for the current API. */
const ALLOWED = ["return app.rootGraph ?? app.graph;", "else tracker?.checkState?.();", "else toast?.add?.({"];

describe("deprecated frontend API", () => {
  it("is used only as a fallback in comfy.ts", () => {
    const found: string[] = [];
    for (const file of sources(SRC)) {
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          const code = line.replace(/\/\/.*$|^\s*\*.*$|\/\*\*.*$/, "");
          if (ALLOWED.some((allowed) => code.includes(allowed))) return;
          for (const [what, pattern] of DEPRECATED) if (pattern.test(code)) found.push(`${relative(SRC, file)}:${i + 1}: ${what}`);
        });
    }
    expect(sources(SRC).length).toBeGreaterThan(20);
    expect(found).toEqual([]);
  });
});

// The panel's wings (as tests/test_package.py holds core/'s): every folder of src/ says in its
// README.md what it owns ("Owns: …") and what it may import ("May import: …"); a module imports
// only its own wing and those, so no import runs back up; no files import each other in a
// circle (type-only imports included); the entries at src/'s top are imported by no wing; and
// the test support in ui/test/ is imported by tests only.
import ts from "typescript";
import { describe, expect, it } from "vitest";

// (Node's modules as the other file-reading tests take them: vitest runs in a DOM environment)
const { existsSync, readdirSync, readFileSync, statSync } = process.getBuiltinModule("node:fs");
const { dirname, join, relative, resolve, sep } = process.getBuiltinModule("node:path");

const UI = [resolve(process.cwd()), resolve(process.cwd(), "ui")].find((p) => existsSync(join(p, "src", "wings.test.ts")))!;
const SRC = join(UI, "src");
const TEST = join(UI, "test");

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

const isCode = (path: string) => /\.tsx?$/.test(path) && !path.endsWith(".d.ts");
const isTest = (path: string) => /\.test\.tsx?$/.test(path);
const modules = walk(SRC).filter((p) => isCode(p) && !isTest(p));

/** The file a relative import names (null: a package, or a file outside ui/). */
function resolveImport(from: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const base = resolve(dirname(from), spec.split("?")[0]!);
  const found = ["", ".ts", ".tsx", `${sep}index.ts`, `${sep}index.tsx`].map((ext) => base + ext).find((p) => existsSync(p) && statSync(p).isFile());
  return found && found.startsWith(UI + sep) ? found : null;
}

/** Every file a module imports (type-only and dynamic imports included). */
function importsOf(path: string): string[] {
  return ts
    .preProcessFile(readFileSync(path, "utf8"), true, true)
    .importedFiles.map((f) => resolveImport(path, f.fileName))
    .filter((p): p is string => p !== null);
}

/** A file's wing: its folder under src/ ("" for the entries at the top), or "test" for ui/test/. */
function wingOf(path: string): string {
  if (path.startsWith(TEST + sep)) return "test";
  const parts = relative(SRC, path).split(sep);
  return parts.length > 1 ? parts[0]! : "";
}

function readmes(): Map<string, { owns: string; may: Set<string> }> {
  const wings = new Map<string, { owns: string; may: Set<string> }>();
  for (const name of readdirSync(SRC)) {
    if (!statSync(join(SRC, name)).isDirectory()) continue;
    const readme = join(SRC, name, "README.md");
    expect(existsSync(readme), `${name}/README.md says what the wing owns and may import`).toBe(true);
    const text = readFileSync(readme, "utf8");
    const owns = /^Owns: ([^]*?)\n\n/m.exec(text);
    const may = /^May import: ([^]*?)\.\n?$/m.exec(text);
    expect(owns, `${name}/README.md: "Owns: …"`).not.toBeNull();
    expect(may, `${name}/README.md: "May import: … ." as its last line`).not.toBeNull();
    const names = may![1]!.replace(/\n/g, " ");
    wings.set(name, { owns: owns![1]!, may: new Set(names === "nothing of src" ? [] : names.split(",").map((n) => n.trim())) });
  }
  return wings;
}

describe("the panel's wings", () => {
  const wings = readmes();

  it("each say what they may import, and those imports go one way", () => {
    expect([...wings.keys()].sort()).toEqual(["commands", "host", "i18n", "litegraph", "panel", "playground", "runtime", "server", "styles", "tools"]);
    for (const [name, { may }] of wings) {
      for (const other of may) expect(wings.has(other) && other !== name, `${name} may import unknown wing ${other}`).toBe(true);
    }
    const floors: string[] = []; // the wings from the ground up: none may import one above it
    while (floors.length < wings.size) {
      const ready = [...wings].filter(([name, { may }]) => !floors.includes(name) && [...may].every((w) => floors.includes(w))).map(([name]) => name);
      expect(ready, `the wings' allowed imports go round: ${[...wings.keys()].filter((w) => !floors.includes(w))}`).not.toEqual([]);
      floors.push(...ready.sort());
    }
  });

  it("import only their own wing and what their README allows", () => {
    const wrong: string[] = [];
    for (const path of modules) {
      const wing = wingOf(path);
      for (const target of importsOf(path)) {
        const other = wingOf(target);
        if (other === wing) continue;
        if (wing === "" ? other === "test" : !wings.get(wing)!.may.has(other)) wrong.push(`${relative(SRC, path)} imports ${relative(UI, target)}`);
      }
    }
    expect(modules.length).toBeGreaterThan(100);
    expect(wrong).toEqual([]);
  });

  it("have no files that import each other in a circle", () => {
    const graph = new Map(modules.map((path) => [path, importsOf(path).filter((t) => t.startsWith(SRC + sep))] as const));
    const circles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (path: string) => {
      state.set(path, "open");
      stack.push(path);
      for (const next of graph.get(path) ?? []) {
        if (state.get(next) === "open") circles.push(stack.slice(stack.indexOf(next)).concat(next).map((p) => relative(SRC, p)).join(" -> "));
        else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(path, "done");
    };
    for (const path of modules) if (!state.has(path)) visit(path);
    expect(circles).toEqual([]);
  });

  it("keep test support out of src/, imported by tests alone", () => {
    const support = walk(TEST).filter(isCode);
    expect(support.map((p) => relative(TEST, p)).sort()).toContain("testing.ts");
    expect(walk(SRC).filter((p) => isCode(p) && !isTest(p) && /(^|[/\\])(testing|fakeServer|approvalTesting|reactTestEnv|installFixtures)\.ts$/.test(p))).toEqual([]);
    const leaks = modules.flatMap((path) => importsOf(path).filter((t) => wingOf(t) === "test").map((t) => `${relative(SRC, path)} imports ${relative(UI, t)}`));
    expect(leaks).toEqual([]);
  });
});

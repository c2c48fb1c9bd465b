// No English left in the panel's code: what a user sees comes from t() (literalScan.ts says what
// the check reads and what it lets through).
import { describe, expect, it } from "vitest";
import { findUntranslated, panelSources } from "../../test/literalScan";

const { mkdtempSync, writeFileSync } = process.getBuiltinModule("node:fs");
const { tmpdir } = process.getBuiltinModule("node:os");
const { join, resolve } = process.getBuiltinModule("node:path");

const SRC = resolve(process.cwd().endsWith("ui") ? "src" : "ui/src");

describe("the panel's code", () => {
  it("shows no English text of its own: JSX text, shown attributes, code words rendered, worded literals", () => {
    const files = panelSources(SRC);
    expect(files.length).toBeGreaterThan(40);
    expect(findUntranslated(files, SRC)).toEqual([]);
  }, 60_000);

  it("would have caught the untranslated words of issue 35: an unsaved workflow's name, the tool card's badge", () => {
    const dir = mkdtempSync(join(tmpdir(), "literals-"));
    // as they were: runtime/workflowThreads.ts's workflowName and panel/Messages.tsx's badge
    writeFileSync(
      join(dir, "workflowThreads.ts"),
      'export function workflowName(key: string): string {\n  if (key.startsWith("unsaved:")) return "an unsaved workflow";\n  return key;\n}\n',
    );
    writeFileSync(
      join(dir, "Badge.tsx"),
      'type ToolKinds = ReadonlyMap<string, "panel" | "server">;\ndeclare const kinds: ToolKinds;\n' +
        'export const Badge = (p: { name: string }) => {\n  const where = kinds.get(p.name);\n  return <span className="cua-tool-where" title="Where it runs">{where}{p.name}</span>;\n};\n' +
        'export const Yes = (p: { ok: boolean }) => <b>{p.ok ? "yes" : "no"} Done</b>;\n',
    );
    const found = findUntranslated([join(dir, "workflowThreads.ts"), join(dir, "Badge.tsx")], dir);
    expect(found.map(({ file, line, text, why }) => [file, line, text, why])).toEqual([
      ["workflowThreads.ts", 2, "an unsaved workflow", "English words in code"],
      ["Badge.tsx", 5, "Where it runs", "a shown attribute"],
      ["Badge.tsx", 5, "panel", "a code's word shown as it is"],
      ["Badge.tsx", 5, "server", "a code's word shown as it is"],
      ["Badge.tsx", 7, "yes", "a code's word shown as it is"],
      ["Badge.tsx", 7, "no", "a code's word shown as it is"],
      ["Badge.tsx", 7, "Done", "JSX text"],
    ]);
  }, 60_000);
});

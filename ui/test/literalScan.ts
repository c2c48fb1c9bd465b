// The check that finds English left in the panel's code (i18n/literals.test.ts; Node only, never
// bundled). Parsed and typed with TypeScript itself, it lists:
// - JSX text with a word in it ("<span>Send</span>");
// - a JSX child or a shown attribute (title, aria-label, alt, placeholder, …) whose type holds
//   a string literal with a word: `{"Send"}`, `{ok ? "yes" : "no"}`, `{where}` typed
//   "panel" | "server" (a code's word shown as it is);
// - in any scanned file, a string literal of two or more words ("an unsaved workflow") that is
//   not matched against (===, includes, startsWith…), logged (console.*), a key, a type, an
//   import, or a non-shown JSX attribute (className, rel, …).
// Text for the user comes from t() (i18n/messages.ts and the 14 locales). What is meant for the
// model, not the user (notes and tool results, English by design), is in ALLOWED, by file or by
// exact text, each with its reason.
import ts from "typescript";

// (Node's modules as the other file-reading tests take them: vitest runs in a DOM environment)
const { readdirSync } = process.getBuiltinModule("node:fs");
const { join, relative } = process.getBuiltinModule("node:path");

export interface Untranslated {
  file: string;
  line: number;
  text: string;
  why: string;
}

const WORD = /[A-Za-z]{2,}/;
const URL_LIKE = /^[a-z][a-z+.-]*:\/\/\S*$/; // (an address shown as an example is no word)
const PROSE = /[A-Za-z]{2,}[,;:.'’]? +[A-Za-z]{2,}/;
const SHOWN_ATTRIBUTES = new Set(["title", "aria-label", "alt", "placeholder", "aria-description", "aria-roledescription", "aria-valuetext", "label"]);
const MATCHERS = new Set(["includes", "startsWith", "endsWith", "test", "match", "replace", "split", "indexOf"]);
const COMPARISONS = new Set([ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken]);

/** What may stay English, and why: by file (relative to ui/src), or by file and exact text. */
export const ALLOWED: { file: string; text?: string; why: string }[] = [
  { file: "runtime/rewindNotes.ts", why: "notes for the model (the panel labels them in the user's language)" },
  { file: "runtime/toolRunner.ts", why: "tool results for the model" },
  { file: "runtime/approvals.ts", text: "The user denied it.", why: "a tool result for the model" },
  { file: "runtime/pendingCalls.ts", text: "User cancelled tool call by sending a new message.", why: "a tool result for the model (assistant-ui's own words)" },
  { file: "panel/Egress.tsx", text: "The provider", why: "the server's label, compared, never shown" },
  { file: "extension.ts", text: "pi pi-comments", why: "an icon's CSS classes" },
  { file: "panel/Chat.tsx", text: "/skill", why: "a command, typed as it is" },
  { file: "panel/Chat.tsx", text: "/help", why: "a command, typed as it is" },
  { file: "panel/DelegateCard.tsx", text: "delegate", why: "a tool's name, as every tool card shows it" },
  { file: "panel/McpClients.tsx", text: "Claude Code", why: "a product's name, the same in every language" },
  { file: "panel/McpClients.tsx", text: "Cursor (mcp.json)", why: "a product's name and its file's" },
  { file: "panel/McpClients.tsx", text: "Claude Desktop (stdio, claude_desktop_config.json)", why: "a product's name, its transport and its file's" },
  { file: "host/comfy.ts", text: "LiteGraph is not loaded on this page", why: "a programming error, never shown" },
  { file: "panel/context.ts", text: "the panel's store is missing", why: "a programming error, never shown" },
  { file: "panel/context.ts", text: "the panel's runtime is missing", why: "a programming error, never shown" },
];

/** The panel's source files the check reads: components, runtime, commands, the entry modules. */
export function panelSources(srcRoot: string): string[] {
  const files: string[] = [];
  for (const folder of ["", "host", "server", "panel", "runtime", "commands"]) {
    for (const name of readdirSync(join(srcRoot, folder))) {
      if (/\.tsx?$/.test(name) && !/\.test\.tsx?$|\.d\.ts$/.test(name)) files.push(join(srcRoot, folder, name));
    }
  }
  return files;
}

/** Whether the literal is used as a value that could be shown (not matched, logged, a key…). */
function shownContext(node: ts.Node): boolean {
  const parent = node.parent;
  if (ts.isImportDeclaration(parent) || ts.isExportDeclaration(parent) || ts.isLiteralTypeNode(parent) || ts.isExternalModuleReference(parent)) return false;
  if ((ts.isPropertyAssignment(parent) || ts.isPropertySignature(parent) || ts.isPropertyDeclaration(parent)) && parent.name === node) return false;
  if (ts.isElementAccessExpression(parent) || ts.isCaseClause(parent)) return false;
  if (ts.isBinaryExpression(parent) && COMPARISONS.has(parent.operatorToken.kind)) return false;
  for (let at: ts.Node | undefined = parent; at && !ts.isSourceFile(at); at = at.parent) {
    if (ts.isJsxAttribute(at)) return SHOWN_ATTRIBUTES.has(at.name.getText()); // (className={on ? "a b" : "a"})
    if (ts.isJsxElement(at) || ts.isJsxSelfClosingElement(at) || ts.isJsxFragment(at)) break;
  }
  for (let at: ts.Node | undefined = parent; at && !ts.isSourceFile(at); at = at.parent) {
    if (ts.isCallExpression(at)) {
      const callee = at.expression.getText();
      if (/^console\./.test(callee)) return false;
      if (ts.isPropertyAccessExpression(at.expression) && MATCHERS.has(at.expression.name.text) && at.arguments.some((a) => a === node)) return false;
    }
    if (ts.isFunctionLike(at) || ts.isBlock(at)) break;
  }
  return true;
}

function literalText(node: ts.Node): string | null {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join("…");
  return null;
}

/** The worded string literal types an expression can have ("panel" of "panel" | "server"). */
function wordedLiterals(checker: ts.TypeChecker, node: ts.Expression): string[] {
  const type = checker.getTypeAtLocation(node);
  const parts = type.isUnion() ? type.types : [type];
  return parts.filter((p): p is ts.StringLiteralType => p.isStringLiteral() && WORD.test(p.value)).map((p) => p.value);
}

function allowed(file: string, text: string): boolean {
  return ALLOWED.some((a) => a.file === file && (a.text === undefined || a.text === text));
}

/** Everything English the check finds in `files` (names relative to `srcRoot`). */
export function findUntranslated(files: string[], srcRoot: string): Untranslated[] {
  const program = ts.createProgram(files, { jsx: ts.JsxEmit.ReactJSX, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, strict: true, skipLibCheck: true, noEmit: true, allowImportingTsExtensions: true });
  const checker = program.getTypeChecker();
  const found: Untranslated[] = [];
  for (const path of files) {
    const source = program.getSourceFile(path);
    if (!source) continue;
    const file = relative(srcRoot, path).replace(/\\/g, "/");
    const add = (node: ts.Node, text: string, why: string) => {
      if (!allowed(file, text)) found.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text, why });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isJsxText(node) && WORD.test(node.text)) add(node, node.text.trim(), "JSX text");
      const shown = ts.isJsxExpression(node) && node.expression && (ts.isJsxElement(node.parent) || ts.isJsxFragment(node.parent) || (ts.isJsxAttribute(node.parent) && SHOWN_ATTRIBUTES.has(node.parent.name.getText())));
      if (shown && node.expression) for (const value of wordedLiterals(checker, node.expression)) add(node, value, "a code's word shown as it is");
      const text = literalText(node);
      if (text !== null && shownContext(node)) {
        const inShownAttribute = ts.isJsxAttribute(node.parent);
        if (!URL_LIKE.test(text) && (inShownAttribute ? WORD.test(text) : PROSE.test(text))) add(node, text, inShownAttribute ? "a shown attribute" : "English words in code");
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

// Slash commands typed in the composer. `/skill <name> [request]` goes to the server as the
// user's text (the server injects the skill); the others are answered in the panel and never
// reach the model. A message that should start with a slash is written with two (`//etc`).
// What a command says to the user is in the user's language (the names stay as they are typed).
import { getLocale, t, type MessageKey } from "../i18n";
import { sentences } from "../i18n/sentences";

export interface CommandSpec {
  name: string;
  /** How the arguments are written, for the help text and the autocomplete (a message). */
  args?: MessageKey;
  /** What it does (a message). */
  description: MessageKey;
  /** Sent to the server as the user's message (true) or handled in the panel (false). */
  sent: boolean;
}

export const COMMANDS: readonly CommandSpec[] = [
  { name: "skill", args: "command.skill.args", description: "command.skill", sent: true },
  { name: "new", args: "command.new.args", description: "command.new", sent: false },
  { name: "clear", description: "command.clear", sent: false },
  { name: "rewind", args: "command.rewind.args", description: "command.rewind", sent: false },
  { name: "compact", description: "command.compact", sent: false },
  { name: "context", description: "command.context", sent: false },
  { name: "help", description: "command.help", sent: false },
];

/** How a command is written: `/name` and its arguments. */
function usage(c: CommandSpec): string {
  return `/${c.name}${c.args ? ` ${t(c.args)}` : ""}`;
}

export type ParsedInput =
  /** Plain text for the model (a leading `//` already turned into `/`). */
  | { kind: "text"; text: string }
  /** A command of COMMANDS. */
  | { kind: "command"; name: string; args: string; spec: CommandSpec }
  /** Looks like a command but is none of ours. */
  | { kind: "unknown"; name: string; args: string };

const COMMAND = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/;

export function findCommand(name: string): CommandSpec | undefined {
  const lower = name.toLowerCase();
  return COMMANDS.find((c) => c.name === lower);
}

/**
 * What the composer's text means. A command is a slash, a name, then whitespace or the end:
 * `/help`, `/skill upscale 2x`. A path such as `/home/me/a.png` is plain text.
 */
export function parseInput(input: string): ParsedInput {
  const text = input.trim();
  if (text.startsWith("//")) return { kind: "text", text: text.slice(1) };
  const match = COMMAND.exec(text);
  if (!match) return { kind: "text", text: input };
  const name = match[1] ?? "";
  const args = (match[2] ?? "").trim();
  const spec = findCommand(name);
  return spec ? { kind: "command", name: spec.name, args, spec } : { kind: "unknown", name, args };
}

/** Whether the text is answered in the panel (a local command or an unknown one). */
export function isLocal(parsed: ParsedInput): boolean {
  return parsed.kind === "unknown" || (parsed.kind === "command" && !parsed.spec.sent);
}

export function helpText(): string {
  const lines = COMMANDS.map((c) => `- \`${usage(c)}\` — ${t(c.description)}`);
  lines.push(`- ${t("command.slash")}`);
  return lines.join("\n");
}

export function unknownCommandText(name: string): string {
  const typed = name.toLowerCase();
  let close = COMMANDS.filter((c) => c.name.startsWith(typed));
  if (close.length === 0) close = COMMANDS.filter((c) => c.name[0] === typed[0]);
  const near = close.map((c) => `/${c.name}`);
  const hint = near.length > 0 && t("command.didYouMean", { commands: new Intl.ListFormat(getLocale(), { type: "disjunction" }).format(near) });
  const all = COMMANDS.map((c) => `/${c.name}`).join(t("command.listSeparator"));
  return sentences(t("command.unknown", { name }), hint, t("command.list", { commands: all }), t("command.startWithSlashes"));
}

export interface Completion {
  /** The composer's whole text once this completion is taken. */
  text: string;
  label: string;
  detail: string;
}

export interface SkillName {
  slug: string;
  name: string;
  description?: string;
}

/**
 * The autocomplete for the composer's text: command names while the first word is typed,
 * skill names after `/skill `. Every match, best first (the list scrolls); empty when nothing
 * fits (or the text is complete).
 */
export function completions(input: string, skills: readonly SkillName[]): Completion[] {
  if (!input.startsWith("/") || input.startsWith("//") || input.includes("\n")) return [];
  const head = /^\/([\w-]*)$/.exec(input);
  if (head) {
    const typed = (head[1] ?? "").toLowerCase();
    return COMMANDS.filter((c) => c.name.startsWith(typed) && c.name !== typed)
      .concat(COMMANDS.filter((c) => c.name === typed && c.args))
      .map((c) => ({
        text: `/${c.name} `,
        label: usage(c),
        detail: t(c.description),
      }));
  }
  const skill = /^\/skill\s+(\S*)$/i.exec(input);
  if (skill) {
    const typed = (skill[1] ?? "").toLowerCase();
    const score = (s: SkillName) => {
      const slug = s.slug.toLowerCase();
      const name = s.name.toLowerCase();
      if (slug === typed) return -1; // complete already
      if (slug.startsWith(typed)) return 0;
      if (name.startsWith(typed)) return 1;
      if (slug.includes(typed) || name.includes(typed)) return 2;
      return -1;
    };
    return skills
      .map((s) => ({ s, rank: score(s) }))
      .filter(({ rank }) => rank >= 0)
      .sort((a, b) => a.rank - b.rank || a.s.slug.localeCompare(b.s.slug))
      .map(({ s }) => ({
        text: `/skill ${s.slug} `,
        label: s.slug,
        detail: s.name !== s.slug ? `${s.name}${s.description ? ` — ${s.description}` : ""}` : (s.description ?? ""),
      }));
  }
  return [];
}

// What the user changed in the workflow by hand since the assistant's last answer, as one note
// the chat store adds to the user's next message (runtime/chatStore.ts sendMessage): two graph
// shots (tools/graphSnapshot.ts) compared — nodes added, removed or moved into (or out of) a
// subgraph, links added and removed, widget values, bypass and mute, titles — so the model
// keeps the user's deliberate changes instead of undoing them.
import type { GraphShot, LinkShot, NodeShot, WidgetValue } from "./graphSnapshot";

const NOTE_START = "[Since your last answer the user changed the workflow by hand";
const NOTE_HEAD = `${NOTE_START} (keep these changes unless asked): `;
const NOTE_TAIL = "call getWorkflow to see the graph]";

/**
 * The longest note, in characters (the panel has no tokenizer). Past this a note costs about
 * what reading the graph does — a compact getWorkflow of the 7-node text-to-image graph is 919
 * characters (handEdits.test.ts prints it) — and tells less, so a larger change is counted and
 * the model is asked to call getWorkflow. The note stays in the thread and goes with every later
 * request: the bound also caps what hand edits add to a thread per message.
 */
export const NOTE_CHARS = 1200;

/** A string value longer than this is shown as the part that changed, with some context. */
const SHORT = 40;
const CONTEXT = 12;

type Kind = "added" | "removed" | "moved" | "linked" | "unlinked" | "widgets" | "mode" | "title";

/** How a capped note counts each kind: [one, many]. */
const KINDS: Record<Kind, [string, string]> = {
  added: ["node added", "nodes added"],
  removed: ["node removed", "nodes removed"],
  moved: ["node moved", "nodes moved"],
  linked: ["link added", "links added"],
  unlinked: ["link removed", "links removed"],
  widgets: ["widget value", "widget values"],
  mode: ["bypass/mute", "bypass/mute"],
  title: ["title", "titles"],
};

interface Change {
  kind: Kind;
  text: string;
  /** How many single changes the text tells (a node's widget line tells each widget). */
  count: number;
}

/** Whether a user message's text part is this note (the panel shows it as its own). */
export function isEditNote(text: string): boolean {
  return text.startsWith(NOTE_START);
}

/** The note for what changed from `before` to `after` (the same workflow); null if nothing did. */
export function handEditsNote(before: GraphShot, after: GraphShot): string | null {
  const changes = graphChanges(before, after);
  return changes.length ? capped(changes) : null;
}

function capped(changes: Change[]): string {
  const whole = `${NOTE_HEAD}${changes.map((c) => c.text).join("; ")}]`;
  if (whole.length <= NOTE_CHARS) return whole;
  const total = changes.reduce((n, c) => n + c.count, 0);
  const head = `${NOTE_HEAD}${total} changes (${summary(changes)}): `;
  const kept: string[] = [];
  let rest = total;
  for (const change of changes) {
    const tail = `; … and ${rest - change.count} more changes: ${NOTE_TAIL}`;
    if (head.length + [...kept, change.text].join("; ").length + tail.length > NOTE_CHARS) break;
    kept.push(change.text);
    rest -= change.count;
  }
  return kept.length ? `${head}${kept.join("; ")}; … and ${rest} more changes: ${NOTE_TAIL}` : `${head}${NOTE_TAIL}`;
}

function summary(changes: Change[]): string {
  const counts = new Map<Kind, number>();
  for (const c of changes) counts.set(c.kind, (counts.get(c.kind) ?? 0) + c.count);
  return [...counts].map(([kind, n]) => `${n} ${KINDS[kind][n === 1 ? 0 : 1]}`).join(", ");
}

// ---- the comparison ----

const parentOf = (id: string): string => (id.includes(":") ? id.slice(0, id.lastIndexOf(":")) : "");
const localOf = (id: string): string => id.slice(id.lastIndexOf(":") + 1);
/** The node a link end belongs to: "12" for subgraph 12's boundary "12:in" / "12:out". */
const endNode = (end: string): string => (/:(in|out)$/.test(end) ? parentOf(end) : end);
const isWithin = (id: string, ancestors: ReadonlySet<string>): boolean => {
  for (let p = parentOf(id); p; p = parentOf(p)) if (ancestors.has(p)) return true;
  return false;
};

function graphChanges(before: GraphShot, after: GraphShot): Change[] {
  const same = (id: string) => before.nodes.get(id)?.type !== undefined && before.nodes.get(id)?.type === after.nodes.get(id)?.type;
  const gone = [...before.nodes.keys()].filter((id) => !same(id));
  const fresh = new Set([...after.nodes.keys()].filter((id) => !same(id)));
  const { moved, told } = matchMoves(before, after, gone, fresh);
  const removed = new Set(gone.filter((id) => !moved.has(id)));
  for (const to of moved.values()) fresh.delete(to);
  const name = (id: string) => (after.inSubgraph && !id.includes(":") ? `root:${id}` : id);
  const label = (id: string, node: NodeShot) => `${name(id)} ${node.type}`;

  const changes: Change[] = [];
  for (const id of fresh) {
    if (!isWithin(id, fresh)) changes.push({ kind: "added", text: `added node ${label(id, after.nodes.get(id)!)}`, count: 1 });
  }
  for (const id of removed) {
    if (!isWithin(id, removed)) changes.push({ kind: "removed", text: `removed node ${name(id)} (${before.nodes.get(id)!.type})`, count: 1 });
  }
  changes.push(...moveLines(told, name));
  changes.push(...linkChanges(before, after, { moved, removed, fresh, into: new Set([...told.values()].map(parentOf)) }, name));
  for (const [id, node] of after.nodes) {
    const was = before.nodes.get([...moved].find(([, to]) => to === id)?.[0] ?? id);
    if (!was || fresh.has(id)) continue;
    changes.push(...nodeChanges(label(id, node), was, node));
  }
  const order: Kind[] = ["added", "removed", "moved", "linked", "unlinked", "widgets", "mode", "title"];
  return changes.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
}

/**
 * Nodes that left one level and came back at another with their id and type (LiteGraph keeps a
 * node's id when it converts a selection to a subgraph or unpacks one): old id → new id. `told`
 * holds the moves to tell; a node inside a moved subgraph node moves with it, untold.
 */
function matchMoves(before: GraphShot, after: GraphShot, gone: string[], fresh: ReadonlySet<string>) {
  const moved = new Map<string, string>();
  const told = new Map<string, string>();
  const free = new Set(fresh);
  const depth = (id: string) => id.split(":").length;
  for (const id of [...gone].sort((a, b) => depth(a) - depth(b))) {
    const type = before.nodes.get(id)!.type;
    const parent = [...moved.keys()].find((p) => id.startsWith(`${p}:`));
    const candidates = parent ? [`${moved.get(parent)}${id.slice(parent.length)}`] : [...free];
    const to = candidates.find((c) => free.has(c) && localOf(c) === localOf(id) && after.nodes.get(c)?.type === type && parentOf(c) !== parentOf(id));
    if (to === undefined) continue;
    moved.set(id, to);
    free.delete(to);
    if (!parent) told.set(id, to);
  }
  return { moved, told };
}

function moveLines(told: ReadonlyMap<string, string>, name: (id: string) => string): Change[] {
  const groups = new Map<string, [string, string][]>();
  for (const [from, to] of told) {
    const key = `${parentOf(from)}>${parentOf(to)}`;
    groups.set(key, [...(groups.get(key) ?? []), [from, to]]);
  }
  return [...groups.values()].map((pairs) => {
    const [from, to] = pairs[0]!;
    const where = parentOf(to) ? `into subgraph ${parentOf(to)}` : `out of subgraph ${parentOf(from)}`;
    const ids = pairs.map(([f]) => name(f)).join(", ");
    const now = pairs.map(([, t]) => name(t)).join(", ");
    return { kind: "moved" as const, text: `${pairs.length === 1 ? "node" : "nodes"} ${ids} moved ${where} (now ${now})`, count: pairs.length };
  });
}

interface NodeFates {
  moved: ReadonlyMap<string, string>;
  removed: ReadonlySet<string>;
  fresh: ReadonlySet<string>;
  /** The subgraphs nodes were moved into: their new links are the move's. */
  into: ReadonlySet<string>;
}

/**
 * Links added and removed, the nodes that moved named by their new ids. Left out, because the
 * node lines say them: the links of removed nodes, the links inside added subgraphs, and the
 * links a move rewired (into the subgraph's boundary, or across levels before the move).
 */
function linkChanges(before: GraphShot, after: GraphShot, fates: NodeFates, name: (id: string) => string): Change[] {
  const renamed = (end: string) => {
    const node = endNode(end);
    const to = fates.moved.get(node);
    return to === undefined ? end : `${to}${end.slice(node.length)}`;
  };
  const key = (l: LinkShot) => `${name(l.from)}.${l.fromSlot} → ${name(l.to)}.${l.toSlot}`;
  const was = before.links.map((l) => ({ ...l, from: renamed(l.from), to: renamed(l.to) }));
  const wasKeys = new Set(was.map(key));
  const nowKeys = new Set(after.links.map(key));
  const changes: Change[] = [];
  for (const link of after.links) {
    const ends = [endNode(link.from), endNode(link.to)];
    if (wasKeys.has(key(link)) || ends.some((e) => fates.into.has(e) || isWithin(e, fates.fresh))) continue;
    changes.push({ kind: "linked", text: `link ${key(link)}`, count: 1 });
  }
  for (const link of was) {
    const ends = [endNode(link.from), endNode(link.to)];
    // (after a move, a link across two levels is one the move rewired through the boundary)
    if (nowKeys.has(key(link)) || parentOf(link.from) !== parentOf(link.to)) continue;
    if (ends.some((e) => fates.removed.has(e) || isWithin(e, fates.removed))) continue;
    changes.push({ kind: "unlinked", text: `removed link ${key(link)}`, count: 1 });
  }
  return changes;
}

const MODES: Record<number, string> = { 0: "normal", 1: "on event", 2: "muted", 3: "on trigger", 4: "bypassed" };

function nodeChanges(label: string, was: NodeShot, now: NodeShot): Change[] {
  const changes: Change[] = [];
  const values = Object.keys(now.widgets).filter(
    (w) => w in was.widgets && !now.auto.includes(w) && !sameValue(was.widgets[w]!, now.widgets[w]!),
  );
  if (values.length) {
    const text = values.map((w) => `${w} ${valueChange(was.widgets[w]!, now.widgets[w]!)}`).join(", ");
    changes.push({ kind: "widgets", text: `${label}: ${text}`, count: values.length });
  }
  if (was.mode !== now.mode) changes.push({ kind: "mode", text: `${label} ${modeChange(was.mode, now.mode)}`, count: 1 });
  if (was.title !== now.title) changes.push({ kind: "title", text: `${label} renamed ${quoted(now.title, 0, now.title.length)}`, count: 1 });
  return changes;
}

function modeChange(was: number, now: number): string {
  const named = (mode: number) => MODES[mode] ?? `mode ${mode}`;
  if (now === 2 || now === 4) return named(now);
  if (now === 0) return `no longer ${named(was)}`;
  return `${named(was)} → ${named(now)}`;
}

function sameValue(a: WidgetValue, b: WidgetValue): boolean {
  if (typeof a === "number" && typeof b === "number") return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
  return a === b;
}

/** "20 → 28", "\"euler\" → \"dpmpp_2m\"", or for long text the part that changed:
 * "\"…a photo of a cat on…\" → \"…a photo of a dog on…\"". */
function valueChange(was: WidgetValue, now: WidgetValue): string {
  if (typeof was !== "string" || typeof now !== "string") return `${valueText(was)} → ${valueText(now)}`;
  if (was.length <= SHORT && now.length <= SHORT) return `${JSON.stringify(was)} → ${JSON.stringify(now)}`;
  let start = 0;
  while (start < was.length && start < now.length && was[start] === now[start]) start++;
  let end = 0;
  while (end < was.length - start && end < now.length - start && was.at(-1 - end) === now.at(-1 - end)) end++;
  const from = Math.max(0, start - CONTEXT);
  const piece = (text: string) => quoted(text, from, Math.max(start, text.length - end) + CONTEXT);
  return `${piece(was)} → ${piece(now)}`;
}

/** text[from, to) quoted, at most SHORT characters of it, "…" where some is left out. */
function quoted(text: string, from: number, to: number): string {
  const end = Math.min(text.length, to, from + SHORT);
  return JSON.stringify(`${from > 0 ? "…" : ""}${text.slice(from, end)}${end < text.length ? "…" : ""}`);
}

function valueText(value: WidgetValue): string {
  if (typeof value === "number" && !Number.isInteger(value)) return String(Number(value.toPrecision(6)));
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

// Citations: a tool that returns documents (core/tools/documents.py) gives each a citation id,
// numbered thread-wide; the model cites `[n]`. Here `[n]` in an answer becomes a chip when a
// document of the thread has that id, and the chip opens the source in a popover. Ids no
// document has stay plain text; code (inline or fenced) and link texts are never touched.
import { useAuiState } from "@assistant-ui/react";
import { createContext, useContext, useEffect, useId, useMemo, useRef, useState, type FC, type ReactNode } from "react";
import { formatDate, t, useI18n } from "../i18n";
import type { CitedDocument } from "./documents.generated";

export type { CitedDocument };

function isDocument(value: unknown): value is CitedDocument {
  if (!value || typeof value !== "object") return false;
  const d = value as Partial<CitedDocument>;
  return (
    typeof d.citation_id === "number" &&
    Number.isInteger(d.citation_id) &&
    d.citation_id > 0 &&
    typeof d.title === "string"
  );
}

/** The well-formed documents of one tool output (`{documents: [...]}`), else none. */
export function documentsOf(result: unknown): CitedDocument[] {
  if (!result || typeof result !== "object") return [];
  const docs = (result as { documents?: unknown }).documents;
  return Array.isArray(docs) ? docs.filter(isDocument) : [];
}

type PartLike = { type?: unknown; result?: unknown };
type MessageLike = { content?: readonly unknown[] };

const OF_MESSAGE = new WeakMap<object, readonly CitedDocument[]>();

/** The documents of one message's tool outputs, read once per message object (a message that did
 * not change keeps its object while another streams in). */
function documentsOfMessage(message: MessageLike): readonly CitedDocument[] {
  const cached = OF_MESSAGE.get(message);
  if (cached) return cached;
  const found: CitedDocument[] = [];
  for (const part of message.content ?? []) {
    const p = part as PartLike;
    if (p?.type === "tool-call") found.push(...documentsOf(p.result));
  }
  OF_MESSAGE.set(message, found);
  return found;
}

/** Citation id -> document, over the tool outputs of `messages` (the first holder of an id wins). */
export function documentsIn(messages: readonly MessageLike[]): Map<number, CitedDocument> {
  const found = new Map<number, CitedDocument>();
  for (const message of messages) {
    for (const doc of documentsOfMessage(message)) if (!found.has(doc.citation_id)) found.set(doc.citation_id, doc);
  }
  return found;
}

function sameDocuments(a: ReadonlyMap<number, CitedDocument>, b: ReadonlyMap<number, CitedDocument>): boolean {
  if (a.size !== b.size) return false;
  for (const [id, doc] of a) if (b.get(id) !== doc) return false;
  return true;
}

export const DocumentsContext = createContext<ReadonlyMap<number, CitedDocument>>(new Map());

/** The thread's documents, for the chips of every message: one lookup table for the whole thread,
 * kept (the same object) while no document comes or goes, so a streamed chunk re-renders no chip. */
export const ThreadDocuments: FC<{ children: ReactNode }> = ({ children }) => {
  const messages = useAuiState((s) => s.thread.messages);
  const last = useRef<ReadonlyMap<number, CitedDocument>>(new Map());
  const documents = useMemo(() => {
    const next = documentsIn(messages as readonly MessageLike[]);
    if (!sameDocuments(next, last.current)) last.current = next;
    return last.current;
  }, [messages]);
  return <DocumentsContext.Provider value={documents}>{children}</DocumentsContext.Provider>;
};

// --- markdown: `[n]` in prose becomes a `cite` element (a remark plugin on the mdast) ---

type MdNode = { type: string; value?: string; children?: MdNode[]; data?: Record<string, unknown> };

const CITATION = /\[(\d{1,6})\]/g;
// (code and inline code hold no text nodes; link texts would nest a button in an anchor)
const SKIP = new Set(["link", "linkReference", "code", "inlineCode", "html", "definition"]);

function splitText(value: string): MdNode[] | null {
  if (!value.includes("[")) return null;
  const out: MdNode[] = [];
  let at = 0;
  for (const match of value.matchAll(CITATION)) {
    const index = match.index ?? 0;
    if (index > at) out.push({ type: "text", value: value.slice(at, index) });
    out.push({
      type: "citation",
      data: { hName: "cite", hProperties: { dataCitation: match[1] } },
      children: [{ type: "text", value: match[0] }],
    });
    at = index + match[0].length;
  }
  if (at === 0) return null;
  if (at < value.length) out.push({ type: "text", value: value.slice(at) });
  return out;
}

function walk(node: MdNode): void {
  if (!node.children || SKIP.has(node.type)) return;
  const next: MdNode[] = [];
  for (const child of node.children) {
    const split = child.type === "text" && typeof child.value === "string" ? splitText(child.value) : null;
    if (split) next.push(...split);
    else {
      walk(child);
      next.push(child);
    }
  }
  node.children = next;
}

/** remark plugin: marks `[n]` in prose as a citation (rendered by `Cite`). */
export function remarkCitations() {
  return (tree: unknown) => walk(tree as MdNode);
}

// --- the chip and its popover ---

/** How a source opens. An extension point: project documents (retrieved passages) come later. */
export type SourceView = { label: string; href: string | null };

/** A label and, when the metadata has it, what it names (" · KSampler"). */
const withDetail = (label: string, detail: unknown) => (typeof detail === "string" ? `${label} · ${detail}` : label);

/** A date in the metadata, in the user's locale (as written when it is no date). */
function dateOf(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : formatDate(date);
}

const SOURCE_LABELS: Record<string, (meta: Record<string, unknown>) => string> = {
  "node docs": (meta) => withDetail(t("citations.nodeDocs"), meta["node_type"]),
  url: () => t("citations.webPage"),
  project: (meta) => withDetail(t("citations.project"), meta["path"]),
  conversation: (meta) => withDetail(t("citations.conversation"), dateOf(meta["createdAt"])),
};

/** A link only for http(s) URLs: nothing else (javascript:, data:, file:) is ever opened. */
export function safeUrl(value: unknown): string | null {
  if (typeof value !== "string") return null;
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

export function sourceView(doc: CitedDocument): SourceView {
  const meta = doc.metadata && typeof doc.metadata === "object" ? doc.metadata : {};
  const source = typeof meta["source"] === "string" ? meta["source"] : "";
  const label = SOURCE_LABELS[source]?.(meta) ?? (source || t("citations.source"));
  return { label, href: safeUrl(meta["url"]) };
}

export const CitationChip: FC<{ id: number; doc: CitedDocument }> = ({ id, doc }) => {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const popoverId = useId();
  const label = t("citations.chip", { id: String(id), title: doc.title });
  const view = sourceView(doc);
  useEffect(() => {
    if (!open) return;
    const close = (e: KeyboardEvent) => e.key === "Escape" && setOpen(false);
    window.addEventListener("keydown", close);
    return () => window.removeEventListener("keydown", close);
  }, [open]);
  return (
    <span className="cua-cite-wrap">
      <button
        type="button"
        className="cua-cite"
        aria-label={label}
        aria-expanded={open}
        aria-controls={open ? popoverId : undefined}
        onClick={() => setOpen((o) => !o)}
      >
        {id}
      </button>
      {open ? (
        <span className="cua-cite-pop" id={popoverId} role="dialog" aria-label={label}>
          <span className="cua-cite-head">
            <strong>{doc.title}</strong>
            <button type="button" className="cua-link" aria-label={t("citations.close")} onClick={() => setOpen(false)}>
              ×
            </button>
          </span>
          <span className="cua-cite-source">
            {view.href ? (
              <a href={view.href} target="_blank" rel="noopener noreferrer">
                {view.label}
              </a>
            ) : (
              view.label
            )}
          </span>
          {typeof doc.contents === "string" && doc.contents ? (
            <span className="cua-cite-contents">{doc.contents}</span>
          ) : null}
        </span>
      ) : null}
    </span>
  );
};

/** The markdown `cite` element: a chip when the thread has the document, else the plain `[n]`. */
export const Cite: FC<{ children?: ReactNode; "data-citation"?: string; node?: unknown }> = (props) => {
  const documents = useContext(DocumentsContext);
  const id = Number(props["data-citation"]);
  const doc = Number.isInteger(id) ? documents.get(id) : undefined;
  if (!doc) return <>{props.children}</>;
  return <CitationChip id={id} doc={doc} />;
};

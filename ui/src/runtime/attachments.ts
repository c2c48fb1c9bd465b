// Files attached in the composer (picked, dropped or pasted). Each one is sent to the server
// the moment it is attached: read, counted and checked against the model's window there, and
// stored with the thread — or refused at once, with the server's reason on its chip. The
// message then holds only `attachment:<id>`: the bytes never sit in the browser's storage, and
// every later request sends the file as it was (the server builds what the model reads).
import type { Attachment, AttachmentAdapter, CompleteAttachment, PendingAttachment } from "@assistant-ui/react";
import { t } from "../i18n";
import { requestJson, withUserQuery } from "../server/api";

export const ATTACHMENTS_PATH = "/api/assistant/attachments";
const SCHEME = "attachment:";

/** What the server answers for an attached file. */
export interface ServerAttachment {
  id: string;
  url: string;
  name: string;
  mediaType: string;
  kind: "image" | "comfy-image" | "workflow" | "text";
  size: number;
  tokens: number;
  summary: string;
  note: string;
  width: number | null;
  height: number | null;
  workflow: boolean;
  /** Tokens one message can take with this model (null: the model could not be asked). */
  room?: number | null;
  vision?: boolean;
}

type Request = typeof requestJson;

/** The attachment id an `attachment:<id>` url names, or null. */
export function attachmentId(url: unknown): string | null {
  return typeof url === "string" && url.startsWith(SCHEME) ? url.slice(SCHEME.length) : null;
}

/** Where the panel shows an attached file from (the server serves it back by id, to the user
 * the URL names: an `<img src>` sends no header). */
export function attachmentSrc(url: unknown): string | null {
  const id = attachmentId(url);
  return id === null ? null : withUserQuery(`${ATTACHMENTS_PATH}/${encodeURIComponent(id)}`);
}

/** The file's bytes as base64 (the server takes JSON bodies only). */
export async function fileBase64(file: Blob): Promise<string> {
  const url = await new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error(t("attach.unreadable")));
    reader.readAsDataURL(file);
  });
  return url.slice(url.indexOf(",") + 1);
}

/**
 * The composer's attachment adapter for one thread. `uploaded` keeps what the server said
 * of each attached file (by the composer's attachment id) for its chip.
 */
export class ServerAttachments implements AttachmentAdapter {
  accept = "*"; // the server decides, and says why it refuses
  readonly uploaded = new Map<string, ServerAttachment>();

  constructor(
    private readonly threadId: () => string,
    private readonly request: Request = requestJson,
  ) {}

  async *add({ file }: { file: File }): AsyncGenerator<PendingAttachment, void> {
    const pending: PendingAttachment = {
      id: `local-${Math.random().toString(36).slice(2)}`,
      type: file.type.startsWith("image/") ? "image" : "document",
      name: file.name,
      contentType: file.type,
      file,
      status: { type: "running", reason: "uploading", progress: 0 },
    };
    yield pending;
    const body = { thread: this.threadId(), name: file.name, data: await fileBase64(file) };
    const stored = await this.request<ServerAttachment>(ATTACHMENTS_PATH, { method: "POST", body });
    this.uploaded.set(pending.id, stored);
    yield { ...pending, contentType: stored.mediaType, status: { type: "requires-action", reason: "composer-send" } };
  }

  async send(attachment: PendingAttachment): Promise<CompleteAttachment> {
    const stored = this.uploaded.get(attachment.id);
    if (!stored) throw new Error(t("attach.notAttached", { name: attachment.name }));
    return {
      ...attachment,
      status: { type: "complete" },
      content: [{ type: "file", data: stored.url, mimeType: stored.mediaType, filename: stored.name }],
    };
  }

  async remove(attachment: Attachment): Promise<void> {
    const stored = this.uploaded.get(attachment.id);
    this.uploaded.delete(attachment.id);
    if (!stored || attachment.status.type === "complete") return; // (a sent file stays with its message)
    await this.request(`${ATTACHMENTS_PATH}/${encodeURIComponent(stored.id)}`, { method: "DELETE" }).catch(() => {});
  }
}

// Attached files: their chips in the composer (what the server read of each, its tokens, or
// why it was refused), the attach button, and the files a sent message holds.
import { AttachmentPrimitive, ComposerPrimitive, MessagePrimitive, useAuiState } from "@assistant-ui/react";
import { useEffect, useState, type FC } from "react";
import { useI18n } from "../i18n";
import { attachmentSrc, type ServerAttachment } from "../runtime/attachments";
import { isPastedFile } from "../runtime/pastedWorkflow";
import { useCurrentThread } from "./context";

/** Icons drawn inline (an emoji glyph is missing where no emoji font is installed). */
const PaperClip: FC = () => (
  <svg width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden>
    <path d="M21 11.5l-8.6 8.6a5.5 5.5 0 0 1-7.8-7.8l8.6-8.6a3.7 3.7 0 0 1 5.2 5.2l-8.6 8.6a1.8 1.8 0 0 1-2.6-2.6l7.9-7.9" />
  </svg>
);

const FileIcon: FC = () => (
  <svg className="cua-chip-icon" width="20" height="20" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="1.8" aria-hidden>
    <path d="M14 3H7a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V8z" />
    <path d="M14 3v5h5" />
  </svg>
);

type Attached = { id: string; name: string; file?: File; status: { type: string; message?: string } };

/** An object URL for an image file while it is shown. */
function usePreview(file: File | undefined): string | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!file || !file.type.startsWith("image/") || typeof URL.createObjectURL !== "function") return;
    const made = URL.createObjectURL(file);
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [file]);
  return url;
}

const ComposerChip: FC<{ uploaded: Map<string, ServerAttachment> }> = ({ uploaded }) => {
  const { t } = useI18n();
  const attachment = useAuiState((s) => s.attachment) as Attached | undefined;
  const preview = usePreview(attachment?.file);
  if (!attachment) return null;
  const stored = uploaded.get(attachment.id);
  const state = attachment.status.type;
  return (
    <AttachmentPrimitive.Root className="cua-chip" data-state={state}>
      {preview ? <img className="cua-chip-thumb" src={preview} alt="" /> : <FileIcon />}
      <span className="cua-chip-body">
        <span className="cua-chip-name">
          <AttachmentPrimitive.Name />
        </span>
        {isPastedFile(attachment.file) ? <span className="cua-muted">{t("attach.pastedWorkflow")}</span> : null}
        {state === "running" ? <span className="cua-muted">{t("attach.attaching")}</span> : null}
        {stored ? (
          <span className="cua-muted">
            {stored.summary} · {t("attach.tokens", { count: stored.tokens })}
          </span>
        ) : null}
        {stored?.note ? <span className="cua-muted">{stored.note}</span> : null}
        {state === "incomplete" ? (
          <span className="cua-chip-error" role="alert">
            {attachment.status.message ?? t("attach.refused")}
          </span>
        ) : null}
      </span>
      <AttachmentPrimitive.Remove className="cua-chip-remove" aria-label={t("attach.remove", { name: attachment.name })} title={t("attach.removeShort")}>
        ×
      </AttachmentPrimitive.Remove>
    </AttachmentPrimitive.Root>
  );
};

/** The composer's attached files, and a warning when together they cannot fit one message. */
export const ComposerAttachments: FC = () => {
  const { t } = useI18n();
  const { entry } = useCurrentThread();
  const ids = useAuiState((s) => s.composer.attachments.map((a) => `${a.id}:${a.status.type}`).join(","));
  const uploaded = entry.attachments.uploaded;
  const files = ids ? ids.split(",").map((key) => uploaded.get(key.slice(0, key.lastIndexOf(":")))) : [];
  const total = files.reduce((sum, f) => sum + (f?.tokens ?? 0), 0);
  const room = files.find((f) => typeof f?.room === "number")?.room ?? null;
  const blind = files.some((f) => f && f.vision === false && f.width !== null);
  return (
    <>
      {ids ? (
        <div className="cua-chips" aria-label={t("attach.files")}>
          <ComposerPrimitive.Attachments>{() => <ComposerChip uploaded={uploaded} />}</ComposerPrimitive.Attachments>
        </div>
      ) : null}
      {room !== null && files.length > 1 && total > room ? (
        <div className="cua-chip-error" role="alert">
          {t("attach.tooMuch", { count: total, room })}
        </div>
      ) : null}
      {blind ? <div className="cua-muted">{t("attach.blind")}</div> : null}
    </>
  );
};

/** Whether the composer holds a file still attaching, or one that was refused (Send waits). */
export function useAttachmentsBlock(): "attaching" | "refused" | null {
  return useAuiState((s) => {
    const states = s.composer.attachments.map((a) => a.status.type);
    if (states.includes("incomplete")) return "refused";
    return states.includes("running") ? "attaching" : null;
  });
}

export const AttachButton: FC = () => {
  const { t } = useI18n();
  return (
    <ComposerPrimitive.AddAttachment className="cua-btn cua-attach" aria-label={t("composer.attach")} title={t("composer.attachTitle")}>
      <PaperClip />
    </ComposerPrimitive.AddAttachment>
  );
};

type SentFile = { name?: string; contentType?: string; content?: { type: string; image?: string; data?: string }[] };

/** A file a sent message holds: an image as a thumbnail, anything else by name; both open it. */
const MessageAttachment: FC = () => {
  const { t } = useI18n();
  const attachment = useAuiState((s) => s.attachment) as SentFile | undefined;
  const part = attachment?.content?.[0];
  const src = attachmentSrc(part?.image ?? part?.data);
  if (!attachment || !src) return null;
  const image = attachment.contentType?.startsWith("image/") ?? false;
  return (
    <a className="cua-chip cua-chip-sent" href={src} target="_blank" rel="noreferrer" title={attachment.name}>
      {image ? <img className="cua-chip-thumb" src={src} alt={attachment.name ?? t("attach.image")} /> : <FileIcon />}
      <span className="cua-chip-name">{attachment.name}</span>
    </a>
  );
};

export const MessageAttachments: FC = () => (
  <div className="cua-chips">
    <MessagePrimitive.Attachments>{() => <MessageAttachment />}</MessagePrimitive.Attachments>
  </div>
);

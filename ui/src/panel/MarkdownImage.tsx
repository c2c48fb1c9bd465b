// A picture in markdown the model wrote (an answer, a summary). Loaded only from this ComfyUI's
// own origin or a data:/blob: URL; any other is a link the user may open, never fetched by the
// page: an image URL is a request to whoever the model (or a document it read) names, and its
// query can carry what the conversation holds.
import type { ComponentPropsWithoutRef, FC } from "react";
import { useI18n } from "../i18n";

/** Whether the page may load this image by itself: same origin, or data the page already has. */
export function loadsHere(src: string, base: string = globalThis.location?.href ?? "http://invalid/"): boolean {
  try {
    const url = new URL(src, base);
    return url.protocol === "data:" || url.protocol === "blob:" || url.origin === new URL(base).origin;
  } catch {
    return false;
  }
}

export const MarkdownImage: FC<ComponentPropsWithoutRef<"img"> & { node?: unknown }> = ({ node: _node, src, alt, ...rest }) => {
  const { t } = useI18n();
  if (typeof src !== "string" || !src) return null;
  if (loadsHere(src)) return <img src={src} alt={alt ?? ""} {...rest} />;
  let host = src;
  try {
    host = new URL(src).host || src;
  } catch {
    // (not a URL: shown as written)
  }
  return (
    <a className="cua-md-image-link" href={src} target="_blank" rel="noopener noreferrer" title={t("image.notLoadedTitle", { src, host })}>
      🖼 {t("image.notLoaded", { alt: alt || t("image.alt"), host })}
    </a>
  );
};

// Where the keyboard focus goes: into the composer when the panel opens, and never out of
// ComfyUI's canvas or another field behind the user's back.
import { useAui } from "@assistant-ui/react";
import { useEffect, type RefObject } from "react";

/**
 * Refuse an undo or redo of the composer's text while the focus is elsewhere. The browser's
 * Ctrl+Z is document-wide: ComfyUI's frontends (1.27.10 and 1.58.1) undo the graph on Ctrl+Z
 * without cancelling the key's default action, so the browser also undoes the composer's last
 * edit (the text cleared after sending), which moves the focus into the composer, and the next
 * Ctrl+Z edits the text instead of the graph.
 */
export function refuseForeignHistory(textarea: HTMLTextAreaElement): () => void {
  const onBeforeInput = (event: InputEvent) => {
    if (!event.inputType.startsWith("history")) return; // historyUndo, historyRedo
    if (textarea.ownerDocument.activeElement === textarea) return;
    event.preventDefault();
  };
  textarea.addEventListener("beforeinput", onBeforeInput);
  return () => textarea.removeEventListener("beforeinput", onBeforeInput);
}

/** Whether the user is in the panel, or nowhere (the focus on the page's body). */
export function focusIsInPanel(element: HTMLElement): boolean {
  const active = element.ownerDocument.activeElement;
  if (!active || active === element.ownerDocument.body) return true;
  return Boolean(element.closest(".cua-root")?.contains(active));
}

function focusComposer(textarea: HTMLTextAreaElement): void {
  textarea.focus({ preventScroll: true });
  textarea.setSelectionRange(textarea.value.length, textarea.value.length);
}

/**
 * The composer's focus: taken when the panel mounts (the user opened it); after a run starts
 * (a resubmission after panel tools too) or the thread changes only if the user is in the panel.
 * Instead of assistant-ui's autoFocus, which also focuses on those events from anywhere.
 */
export function useComposerFocus(ref: RefObject<HTMLTextAreaElement | null>): void {
  const aui = useAui();
  useEffect(() => {
    const textarea = ref.current;
    if (!textarea) return;
    focusComposer(textarea);
    const follow = () => {
      if (focusIsInPanel(textarea)) focusComposer(textarea);
    };
    const stops = [
      aui.on("thread.runStart", follow),
      aui.on("threads.selectionChanged", follow),
      refuseForeignHistory(textarea),
    ];
    return () => stops.forEach((stop) => stop());
  }, [aui, ref]);
}

// The composer: the message box with the slash-command autocomplete, Send, and a Stop that
// aborts at once (the stream, and any resubmit after panel tools still running).
import { ComposerPrimitive, useAui, useAuiState } from "@assistant-ui/react";
import { useEffect, useId, useRef, useState, type ClipboardEvent, type FC, type FormEvent, type KeyboardEvent } from "react";
import { completions, isLocal, parseInput } from "../commands/parse";
import { runCommand, type CommandContext } from "../commands/run";
import { useI18n } from "../i18n";
import { requestJson } from "../server/api";
import { attachPastedWorkflow } from "../runtime/pastedWorkflow";
import { AttachButton, ComposerAttachments, useAttachmentsBlock } from "./Attachments";
import { useComposerFocus } from "./composerFocus";
import { useClearOfHostDialogs } from "./hostOverlays";
import { useCurrentThread, useRuntime, useStore, useStoreVersion } from "./context";
import { rewindLast } from "./Rewind";

/** The browser fits the box to its text (CSS `field-sizing: content`, panel.css) where it can; elsewhere
 * (Firefox) assistant-ui's own textarea does, measuring a hidden copy of the box in script: a forced
 * layout at every keystroke, half of what a keystroke cost in script. */
const SIZED_BY_BROWSER = typeof CSS !== "undefined" && typeof CSS.supports === "function" && CSS.supports("field-sizing", "content");

export const Composer: FC = () => {
  const store = useStore();
  useStoreVersion(store);
  const runtime = useRuntime();
  const aui = useAui();
  const { t } = useI18n();
  const { entry, key, remoteId } = useCurrentThread();
  // The box's text is this component's own: assistant-ui's composer gets it when it is sent (or set
  // from elsewhere), not at every keystroke, where its store updated every message of the thread.
  // (kept with the thread it was typed in: another thread shows its own draft at once)
  const composerText = useAuiState((s) => s.composer.text);
  const [local, setLocal] = useState({ key, text: composerText || store.draft(key) });
  const text = local.key === key ? local.text : composerText || store.draft(key);
  const setLocalText = (value: string) => setLocal({ key, text: value });
  // set from elsewhere (a rewind puts a question back, a message is sent): the box shows it
  useEffect(() => setLocal({ key, text: composerText }), [composerText]); // (key: the current one)
  const setText = (value: string) => {
    setLocalText(value);
    aui.composer.setText(value);
  };
  const attachments = useAuiState((s) => s.composer.attachments.length);
  const isRunning = useAuiState((s) => s.thread.isRunning);
  const [active, setActive] = useState(0);
  const [dismissed, setDismissed] = useState<string | null>(null);
  const listId = useId();
  const input = useRef<HTMLTextAreaElement>(null);
  useComposerFocus(input);
  const form = useRef<HTMLFormElement>(null);
  useClearOfHostDialogs(form); // ComfyUI's own bottom dialogs must not cover the message box

  // A message the server refused over another tab's turn comes back here (runtime/threadSync.ts).
  const putBack = entry.putBack;
  useEffect(() => {
    if (putBack === null) return;
    entry.putBack = null;
    if (!aui.composer.getState().text) aui.composer.setText(putBack);
  }, [entry, aui, putBack]);

  // The draft survives closing the tab and switching threads: keep it in the store.
  useEffect(() => {
    const saved = store.draft(key);
    if (saved && !aui.composer.getState().text) aui.composer.setText(saved);
  }, [store, aui, key]);
  useEffect(() => {
    store.setDraft(key, text);
  }, [store, key, text]);

  const items = dismissed === text ? [] : completions(text, store.skills);
  const open = items.length > 0;
  const current = open ? Math.min(active, items.length - 1) : 0;
  // Every match is listed and the list scrolls: keep the chosen one in view.
  useEffect(() => {
    if (open) document.getElementById(`${listId}-${current}`)?.scrollIntoView?.({ block: "nearest" });
  }, [open, current, listId]);

  const context = (): CommandContext => ({
    serverId: remoteId,
    messages: entry.chat.messages,
    debugRequest: entry.debugRequest,
    note: (notice) => store.addNotice(key, notice),
    dismiss: (id) => store.dismissNotice(key, id),
    clearNotes: () => store.dismissNotice(key),
    newThread: () => runtime.threads.switchToNewThread(),
    send: (message) => runtime.thread.append({ role: "user", content: [{ type: "text", text: message }] }),
    request: requestJson,
    rewind: (scope) => rewindLast(store, entry, runtime, scope),
  });

  /** Handle what the panel answers itself; false when the text goes to the model as it is. */
  const handleLocally = (input: string): boolean => {
    const parsed = parseInput(input);
    if (parsed.kind === "text") {
      if (parsed.text === input) return false;
      // `//text`: send it with one slash
      setText("");
      runtime.thread.append({ role: "user", content: [{ type: "text", text: parsed.text }] });
      return true;
    }
    if (!isLocal(parsed)) return false; // /skill goes to the server
    setText("");
    void runCommand(parsed, context());
    return true;
  };

  const accept = (index: number) => {
    const item = items[index];
    if (!item) return;
    setText(item.text);
    setActive(0);
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.nativeEvent.isComposing) return;
    if (open) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const step = e.key === "ArrowDown" ? 1 : -1;
        setActive((current + step + items.length) % items.length);
        return;
      }
      const item = items[current];
      if (e.key === "Enter" && !e.shiftKey && item) {
        // a command that takes nothing runs at once: Enter on "/help" answers it
        const chosen = parseInput(item.text);
        if (chosen.kind === "command" && !chosen.spec.args && handleLocally(item.text)) {
          e.preventDefault();
          return;
        }
      }
      if (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey && item?.text.trim() !== text.trim())) {
        e.preventDefault();
        accept(current);
        return;
      }
      if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation(); // closes the list, does not stop the answer
        setDismissed(text);
        return;
      }
    }
    if (e.key === "Enter" && !e.shiftKey && handleLocally(text)) e.preventDefault();
  };

  // A pasted workflow's JSON is attached as a file, not typed in (runtime/pastedWorkflow.ts).
  const onPaste = (e: ClipboardEvent<HTMLTextAreaElement>) => {
    if (aui.thread.getState().capabilities.attachments) attachPastedWorkflow(e, (file) => aui.composer.addAttachment(file));
  };

  const blocked = useAttachmentsBlock();
  const busy = isRunning || entry.pendingTools > 0;
  const onSubmit = (e: FormEvent) => {
    e.preventDefault(); // (sent here, not by ComposerPrimitive.Root's own submit)
    if (blocked) return; // a file still attaching, or one refused: its chip says
    if (handleLocally(text)) return;
    aui.composer.setText(text);
    aui.composer.send(); // (assistant-ui decides, as for its own Send: not while an answer runs)
    if (!runtime.thread.composer.getState().text) setLocalText("");
  };
  const stop = () => {
    if (isRunning) runtime.thread.cancelRun();
    void store.halt(entry).catch(() => {});
  };

  return (
    <ComposerPrimitive.AttachmentDropzone className="cua-dropzone">
    <ComposerAttachments />
    <ComposerPrimitive.Root ref={form} className="cua-composer" onSubmit={onSubmit}>
      {open ? (
        <ul className="cua-complete" role="listbox" id={listId} aria-label={t("composer.commands")}>
          {items.map((item, i) => (
            <li
              key={item.text}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === current}
              className={i === current ? "cua-complete-item cua-active" : "cua-complete-item"}
              onMouseDown={(e) => {
                e.preventDefault();
                accept(i);
              }}
            >
              <span className="cua-complete-label">{item.label}</span>
              <span className="cua-complete-detail">{item.detail}</span>
            </li>
          ))}
        </ul>
      ) : null}
      <ComposerPrimitive.Input
        className="cua-input"
        placeholder={t("composer.placeholder")}
        aria-label={t("composer.message")}
        aria-autocomplete="list"
        aria-expanded={open}
        aria-controls={open ? listId : undefined}
        aria-activedescendant={open ? `${listId}-${current}` : undefined}
        rows={1}
        ref={input}
        value={text}
        onChange={(e) => {
          e.preventDefault(); // (assistant-ui's own handler, which would set the composer's text, is skipped)
          setLocalText(e.target.value);
        }}
        onBlur={() => aui.composer.setText(text)} // (what reads the composer meanwhile, a rewind, sees the draft)
        onKeyDown={onKeyDown}
        onPaste={onPaste}
        asChild={SIZED_BY_BROWSER}
      >
        {SIZED_BY_BROWSER ? <textarea /> : undefined}
      </ComposerPrimitive.Input>
      <AttachButton />
      {busy ? (
        <button type="button" className="cua-btn cua-stop" onClick={stop} aria-label={t("composer.stopAnswer")} title={t("composer.stop")}>
          ■
        </button>
      ) : (
        <button
          type="submit"
          className="cua-btn cua-send"
          aria-label={t("composer.send")}
          title={blocked === "refused" ? t("composer.removeRefused") : blocked ? t("composer.attaching") : t("composer.sendEnter")}
          disabled={blocked !== null || (!text.trim() && attachments === 0)}
        >
          ➤
        </button>
      )}
    </ComposerPrimitive.Root>
    </ComposerPrimitive.AttachmentDropzone>
  );
};

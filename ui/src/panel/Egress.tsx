// "Where your requests go", in Settings: the provider's origin (scheme://host:port as the server's
// HTTP client reads the base URL: never its path, which may hold a key, never the key), what the
// server sends there (core/chat, core/files), and what never leaves. tests/test_egress.py checks
// the claim: a whole session through the real server contacts nothing else.
import type { FC } from "react";
import type { ProviderSettings } from "../runtime/api";

const LOOPBACK = /^https?:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\]):\d+$/i;

/** Whether requests to this origin cross a network unencrypted (http:// to another machine). */
export function travelsInClear(origin: string): boolean {
  return origin.startsWith("http://") && !LOOPBACK.test(origin);
}

export const WhereRequestsGo: FC<{ settings: ProviderSettings }> = ({ settings }) => {
  const { origin } = settings;
  return (
    <section className="cua-form cua-egress" aria-labelledby="cua-egress-title">
      <h3 id="cua-egress-title">Where your requests go</h3>
      <p>
        To <code>{origin}</code> ({settings.provider.replace(/^The /, "the ")}), and nowhere else. The panel talks only to this ComfyUI.
      </p>
      {travelsInClear(origin) ? (
        <p className="cua-error" role="note">
          This address is another machine over plain http: what is sent{settings.apiKeySet ? ", the key included," : ""} crosses the network unencrypted.
        </p>
      ) : null}
      <p>What is sent there:</p>
      <ul className="cua-egress-list">
        <li>
          The conversation: your messages and the answers, each tool call and its result, summaries of older parts; with the
          instructions (the assistant's guidance, the skills list, your rules, SOUL.md, goals and preferences).
        </li>
        <li>
          The workflow when a tool reads it, and what lookups find: installed node types, model file names, documentation.
        </li>
        <li>Attached files (text, workflows, the workflow in a ComfyUI image) and the chat's project documents.</li>
        <li>
          Images — those you attach and one picture of a run's outputs — only when the model sees images; otherwise their
          facts in words (format, size, what looks wrong).
        </li>
        <li>A delegated task: the task alone, to the same model.</li>
        <li>To size requests, questions about the model (its context window; a llama.cpp server counts the tokens).</li>
      </ul>
      <p>
        What never leaves: the API key goes only to <code>{origin}</code>, never back to this page or into a log. Nothing
        else is contacted: no telemetry, no update check, no download; a run's images are read from this ComfyUI (standalone: the one at COMFYUI_URL). A
        picture an answer links to is not loaded: it opens when you click it.
      </p>
    </section>
  );
};

// "MCP clients" in the Settings view: how an agent (Claude, Cursor, any MCP client) connects to
// this ComfyUI (the endpoint's URL and config snippets, made from the page's own origin), and
// the tokens a client on another machine needs (mcp_server/access.py, routes.py): listed with
// when each was made and last used, made (the token shown once, here, and kept nowhere: only
// this component's state holds it until "Done"), and revoked after a confirmation. Errors are
// the routes' own words.
import { useId, useRef, useState, type FC } from "react";
import { formatDate, useI18n } from "../i18n";
import { apiUrl, errorMessage, requestJson } from "../server/api";
import { NameForm, useNamedList } from "./NamedList";
import { useStore } from "./context";

export const MCP_PATH = "/api/assistant/mcp";
const TOKENS = `${MCP_PATH}/tokens`;

export interface McpToken {
  id: string;
  name: string;
  created: string; // ISO 8601
  lastUsed: string | null;
}

/** A token just made: the only answer that holds the token itself. */
type MadeToken = McpToken & { token: string };

/** The endpoint's URL and the config snippets for it, for the ComfyUI at `origin`. */
export function connectSnippets(origin: string): { url: string; claudeCode: string; http: string; stdio: string } {
  const url = new URL(apiUrl(MCP_PATH), origin).href;
  const name = "comfyui-assistant";
  const stdio = { command: "python", args: ["-m", "comfyui_assistant", "mcp", "--comfyui", new URL(origin).origin] };
  return {
    url,
    claudeCode: ["claude", "mcp", "add", "--transport", "http", name, url].join(" "),
    http: JSON.stringify({ mcpServers: { [name]: { url } } }, null, 2),
    stdio: JSON.stringify({ mcpServers: { [name]: stdio } }, null, 2),
  };
}

/** Put `text` on the clipboard: the Clipboard API where the page may use it (a secure context),
 * else the selected field's text through the older copy command (ComfyUI reached over plain HTTP
 * from another machine). */
async function copyText(text: string, field: HTMLTextAreaElement | HTMLInputElement | null): Promise<boolean> {
  try {
    if (navigator.clipboard) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // (refused: try the selection)
  }
  if (!field) return false;
  field.select();
  return typeof document.execCommand === "function" && document.execCommand("copy");
}

const CopyField: FC<{ label: string; text: string; rows?: number }> = ({ label, text, rows = 1 }) => {
  const { t } = useI18n();
  const id = useId();
  const field = useRef<HTMLTextAreaElement>(null);
  const [copied, setCopied] = useState<boolean | null>(null);
  const copy = async () => setCopied(await copyText(text, field.current));
  return (
    <div className="cua-mcp-copy">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} ref={field} readOnly rows={rows} value={text} spellCheck={false} onFocus={(e) => e.target.select()} />
      <div className="cua-row">
        <button type="button" className="cua-btn" aria-label={t("mcpClients.copyWhat", { what: label })} onClick={() => void copy()}>
          {t("message.copy")}
        </button>
        {copied === true ? <span className="cua-ok" role="status">{t("message.copied")}</span> : null}
        {copied === false ? <span className="cua-hint" role="status">{t("mcpClients.copyByHand")}</span> : null}
      </div>
    </div>
  );
};

/** The clients the snippets are for: names, the same in every language. */
const CLIENTS = {
  claudeCode: "Claude Code",
  cursor: "Cursor (mcp.json)",
  claudeDesktop: "Claude Desktop (stdio, claude_desktop_config.json)",
};

const Connect: FC = () => {
  const { t } = useI18n();
  const snippets = connectSnippets(window.location.href);
  return (
    <>
      <h4>{t("mcpClients.connect")}</h4>
      <p className="cua-hint">{t("mcpClients.connectHelp")}</p>
      <CopyField label={t("mcpClients.url")} text={snippets.url} />
      <CopyField label={CLIENTS.claudeCode} text={snippets.claudeCode} rows={2} />
      <CopyField label={CLIENTS.cursor} text={snippets.http} rows={8} />
      <CopyField label={CLIENTS.claudeDesktop} text={snippets.stdio} rows={12} />
      <p className="cua-hint">{t("mcpClients.stdioHelp")}</p>
    </>
  );
};

/** The token just made, shown this once. */
const NewToken: FC<{ token: MadeToken; onDone: () => void }> = ({ token, onDone }) => {
  const { t } = useI18n();
  return (
    <div className="cua-mcp-new" role="group" aria-label={t("mcpClients.newToken", { name: token.name })}>
      <strong>{t("mcpClients.newToken", { name: token.name })}</strong>
      <p className="cua-warning">{t("mcpClients.onlyOnce")}</p>
      <CopyField label={t("mcpClients.theToken")} text={token.token} rows={2} />
      <p className="cua-hint">{t("mcpClients.useToken")}</p>
      <button type="button" className="cua-btn" onClick={onDone}>
        {t("mcpClients.done")}
      </button>
    </div>
  );
};

const when = (iso: string | null, never: string) => (iso ? formatDate(new Date(iso)) : never);

export const McpClients: FC = () => {
  const store = useStore();
  const { t } = useI18n();
  const list = useNamedList<McpToken, MadeToken>(TOKENS, "tokens");
  const { items: tokens, load, setError } = list;
  const [made, setMade] = useState<MadeToken | null>(null);

  const revoke = async (token: McpToken) => {
    if (!(await store.confirm(t("mcpClients.revokeTitle", { name: token.name }), t("mcpClients.revokeMessage")))) return;
    try {
      await requestJson(`${TOKENS}/${encodeURIComponent(token.id)}`, { method: "DELETE" });
      setError("");
    } catch (err) {
      setError(errorMessage(err));
    }
    load();
  };

  return (
    <section className="cua-mcp-clients" aria-label={t("mcpClients.heading")}>
      <h3>{t("mcpClients.heading")}</h3>
      <p className="cua-hint">{t("mcpClients.help")}</p>
      <Connect />
      <h4>{t("mcpClients.tokens")}</h4>
      <p className="cua-hint">{t("mcpClients.tokensHelp")}</p>
      {tokens?.length === 0 ? <p className="cua-hint">{t("mcpClients.noTokens")}</p> : null}
      <ul className="cua-mcp-tokens">
        {(tokens ?? []).map((token) => (
          <li key={token.id}>
            <span className="cua-mcp-token-name">{token.name}</span>
            <span className="cua-hint">
              {t("mcpClients.dates", { created: when(token.created, ""), used: when(token.lastUsed, t("mcpClients.never")) })}
            </span>
            <button type="button" className="cua-btn" aria-label={t("mcpClients.revokeNamed", { name: token.name })} onClick={() => void revoke(token)}>
              {t("mcpClients.revoke")}
            </button>
          </li>
        ))}
      </ul>
      {made ? <NewToken token={made} onDone={() => setMade(null)} /> : null}
      <NameForm list={list} label={t("mcpClients.tokenName")} placeholder={t("mcpClients.tokenPlaceholder")} submit={t("mcpClients.create")} onMade={setMade} />
    </section>
  );
};

// The "external agent" line: shown while an MCP client is connected to the server (from its
// `initialize` on, runtime/mcpRelay.ts), or has calls listed, with each client's name and since
// when, its Disconnect (the server ends its session and refuses it until "Allow again"), and the
// list of its calls with their results (like a delegation's trace), each with the name of the
// client that made it (two clients at once). An approval the call asks for shows its card here,
// marked with the client's name. Nothing of it goes into the user's chat threads.
import { useState, type FC } from "react";
import { useI18n, type MessageKey } from "../i18n";
import type { ConnectedClient, McpCall, McpClient } from "../runtime/mcpRelay";
import { ApprovalCard } from "./ApprovalCard";
import { useStore, useStoreVersion } from "./context";
import { briefJson } from "./ToolCard";

/** A call that waits for the user: the approval card, marked with the client's name. */
const Asking: FC<{ call: McpCall }> = ({ call }) => {
  const { t } = useI18n();
  const store = useStore();
  const client = call.client.name || t("mcp.unnamed");
  if (!call.asking) return null;
  return (
    <div className="cua-mcp-asking" data-call={call.callId}>
      <div className="cua-mcp-asker">{t("mcp.asks", { client })}</div>
      <ApprovalCard
        request={call.asking}
        alwaysLabel={t("mcp.always", { client })}
        onAnswer={(approved, always, words) => store.mcp.respond(call.callId, approved, always, words)}
      />
    </div>
  );
};

const CallRow: FC<{ call: McpCall }> = ({ call }) => {
  const { t } = useI18n();
  return (
    <li className="cua-mcp-call" data-state={call.state} data-call={call.callId}>
      <div className="cua-mcp-call-head">
        <span className="cua-mcp-call-name">{call.name}</span> <span className="cua-mcp-call-state">{t(`mcp.state.${call.state}` as MessageKey)}</span>{" "}
        <span className="cua-mcp-call-client">{call.client.name || t("mcp.unnamed")}</span>
      </div>
      <details>
        <summary>{t("mcp.details")}</summary>
        <div className="cua-mcp-call-input" dir="ltr">
          {t("mcp.input", { input: briefJson(call.input, 400) })}
        </div>
        {call.result !== undefined ? (
          <div className="cua-mcp-call-result" dir="ltr">
            {t("mcp.result", { result: typeof call.result === "string" ? call.result : briefJson(call.result, 400) })}
          </div>
        ) : null}
      </details>
    </li>
  );
};

/** "Put the graph back as it was before these calls" (the latest group's checkpoint), and what it came to. */
const Restore: FC = () => {
  const { t } = useI18n();
  const relay = useStore().mcp;
  const group = relay.lastCheckpoint();
  const done = relay.restored;
  const note = !done ? null : done.ok ? t("mcp.restored") : "closed" in done ? t("mcp.restoreClosed") : t("mcp.restoreFailed", { error: done.error });
  return (
    <>
      {group ? (
        <button type="button" className="cua-mcp-restore" onClick={() => void relay.restoreBefore(group.id)}>
          {t("mcp.restore")}
        </button>
      ) : null}
      {note ? <span className="cua-mcp-restored">{note}</span> : null}
    </>
  );
};

/** A connected client: its name, since when, and its Disconnect. */
const Connected: FC<{ client: ConnectedClient; name: string }> = ({ client, name }) => {
  const { t } = useI18n();
  const relay = useStore().mcp;
  const since = new Date(client.since);
  const time = Number.isNaN(since.getTime()) ? client.since : since.toLocaleTimeString();
  return (
    <div className="cua-mcp-client" data-session={client.id}>
      <span>{t("mcp.since", { client: name, time })}</span>
      <button type="button" className="cua-mcp-disconnect" title={t("mcp.disconnectTitle")} onClick={() => void relay.disconnect(client)}>
        {t("mcp.disconnect")}
      </button>
    </div>
  );
};

/** A client the user disconnected, and "Allow again". */
const Refused: FC<{ name: string }> = ({ name }) => {
  const { t } = useI18n();
  const relay = useStore().mcp;
  return (
    <div className="cua-mcp-client" data-disconnected="">
      <span>{t("mcp.disconnected", { client: name })}</span>
      <button type="button" className="cua-mcp-allow" onClick={() => void relay.allow(name)}>
        {t("mcp.allow")}
      </button>
    </div>
  );
};

export const ExternalAgent: FC = () => {
  const { t } = useI18n();
  const store = useStore();
  useStoreVersion(store);
  const relay = store.mcp;
  const [open, setOpen] = useState(false);
  const clients = relay.connectedClients;
  if (!clients.length && !relay.calls.length && !relay.disconnected.length) return null;
  const asking = relay.calls.filter((c) => c.asking);
  const named = (c: McpClient) => [c.name || t("mcp.unnamed"), c.version].filter(Boolean).join(" ");
  const names = clients.map(named).join(", ");
  return (
    <div className="cua-mcp" role="region" aria-label={t("mcp.label")}>
      <div className="cua-mcp-line">
        <span className="cua-mcp-who">{clients.length ? t("mcp.connected", { clients: names }) : t("mcp.none")}</span>
        <button type="button" className="cua-mcp-toggle" onClick={() => setOpen(!open)} aria-expanded={open}>
          {t("mcp.calls", { count: relay.calls.length })}
        </button>
        <Restore />
        <button type="button" className="cua-mcp-clear" onClick={() => relay.clear()}>
          {t("mcp.clear")}
        </button>
      </div>
      {clients.map((client) => (
        <Connected key={client.id} client={client} name={named(client)} />
      ))}
      {relay.disconnected.map((name) => (
        <Refused key={name} name={name} />
      ))}
      {asking.map((call) => (
        <Asking key={call.callId} call={call} />
      ))}
      {open ? (
        <ul className="cua-mcp-calls">
          {relay.calls.map((call) => (
            <CallRow key={call.callId} call={call} />
          ))}
        </ul>
      ) : null}
    </div>
  );
};

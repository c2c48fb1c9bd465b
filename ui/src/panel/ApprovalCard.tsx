// The card a tool call shows while it waits for the user: what will happen, on which nodes, what
// it costs when known; Allow or Deny (tools/approvals.ts asks, runtime/approvals.ts waits).
import { useState, type FC } from "react";
import { useI18n } from "../i18n";
import type { ApprovalRequest } from "../tools/approvals";

const SHOWN_NODES = 12;

export const ApprovalCard: FC<{
  request: ApprovalRequest;
  onAnswer: (approved: boolean, always: boolean) => void;
}> = ({ request, onAnswer }) => {
  const { t } = useI18n();
  const [always, setAlways] = useState(false);
  const [answered, setAnswered] = useState(false);
  const answer = (approved: boolean) => {
    setAnswered(true);
    onAnswer(approved, approved && always);
  };
  const more = request.nodes.length - SHOWN_NODES;
  return (
    <div className="cua-approval" role="group" aria-label={t("approval.label")} data-kind={request.kind}>
      <div className="cua-approval-what">{request.action}</div>
      {request.nodes.length ? (
        <ul className="cua-approval-nodes">
          {request.nodes.slice(0, SHOWN_NODES).map((node) => (
            <li key={node}>{node}</li>
          ))}
          {more > 0 ? <li>{t("approval.more", { count: more })}</li> : null}
        </ul>
      ) : null}
      {request.cost ? <div className="cua-approval-cost">{t("approval.cost", { cost: request.cost })}</div> : null}
      {request.kind === "graph-edit" ? (
        <label className="cua-approval-always">
          <input type="checkbox" checked={always} onChange={(e) => setAlways(e.target.checked)} disabled={answered} />
          {t("approval.always")}
        </label>
      ) : null}
      <div className="cua-approval-buttons">
        <button type="button" className="cua-approval-allow" onClick={() => answer(true)} disabled={answered}>
          {t("approval.allow")}
        </button>
        <button type="button" onClick={() => answer(false)} disabled={answered}>
          {t("approval.deny")}
        </button>
      </div>
    </div>
  );
};

// The card a tool call shows while it waits for the user: what will happen, on which nodes, what
// it costs when known; Allow or Deny, with the user's words on why not if they write any (the
// model reads them with the denial). tools/approvals.ts asks, runtime/approvals.ts waits.
import { useState, type FC } from "react";
import { useI18n } from "../i18n";
import type { ApprovalRequest } from "../tools/approvals";

const SHOWN_NODES = 12;
/** The most the user may write on why not (the server quotes up to 1,000 characters). */
const WORDS = 500;

export const ApprovalCard: FC<{
  request: ApprovalRequest;
  onAnswer: (approved: boolean, always: boolean, words: string) => void;
  /** What "always" allows, where it is not this thread's edits (an MCP client's). */
  alwaysLabel?: string;
}> = ({ request, onAnswer, alwaysLabel }) => {
  const { t } = useI18n();
  const [always, setAlways] = useState(false);
  const [words, setWords] = useState("");
  const [answered, setAnswered] = useState(false);
  const answer = (approved: boolean) => {
    setAnswered(true);
    onAnswer(approved, approved && always, approved ? "" : words.trim());
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
          {alwaysLabel ?? t("approval.always")}
        </label>
      ) : null}
      <input
        type="text"
        className="cua-approval-words"
        dir="auto"
        value={words}
        maxLength={WORDS}
        placeholder={t("approval.words")}
        aria-label={t("approval.words")}
        onChange={(e) => setWords(e.target.value)}
        disabled={answered}
      />
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

// The context gauge: one slim bar of the model's window split by section, from the newest
// `data-context` report; the numbers on hover, a marker when history was shortened.
import { useChat } from "@ai-sdk/react";
import { useEffect, useState, type FC } from "react";
import { useI18n } from "../i18n";
import { requestJson } from "../server/api";
import { threadPath } from "../runtime/threadAdapter";
import { useCurrentThread } from "./context";
import { computeGauge, formatTokens, isContextReport, latestReport, type ContextReport } from "./gauge";

export const GaugeBar: FC<{ report: ContextReport; wide?: boolean }> = ({ report, wide }) => {
  const { t, locale } = useI18n();
  const gauge = computeGauge(report, locale);
  const title = gauge.lines.join("\n");
  const label = t("gauge.label", { prompt: formatTokens(gauge.prompt, locale), window: formatTokens(gauge.window, locale) });
  return (
    <div className={wide ? "cua-gauge cua-gauge-wide" : "cua-gauge"} title={title}>
      <div
        className="cua-gauge-bar"
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={gauge.window}
        aria-valuenow={Math.min(gauge.prompt, gauge.window)}
        aria-valuetext={`${label}${gauge.marker ? `; ${gauge.marker.text}` : ""}`}
      >
        {gauge.segments.map((s) => (
          <span
            key={s.key}
            className={`cua-seg cua-seg-${s.key}`}
            style={{ width: `${(s.fraction * 100).toFixed(2)}%` }}
            title={t("gauge.sectionLine", { section: s.label, tokens: t("gauge.tokens", { count: s.tokens }) })}
          />
        ))}
      </div>
      <span className="cua-gauge-text">
        {formatTokens(gauge.prompt, locale)}/{formatTokens(gauge.window, locale)}
      </span>
      {gauge.marker ? (
        <span className="cua-gauge-marker" title={gauge.marker.text} aria-label={gauge.marker.text}>
          ≈
        </span>
      ) : null}
    </div>
  );
};

/** The legend and numbers of a report, for /context. */
export const ContextDetails: FC<{ report: ContextReport }> = ({ report }) => {
  const { t, locale } = useI18n();
  const gauge = computeGauge(report, locale);
  return (
    <div className="cua-context">
      <GaugeBar report={report} wide />
      <ul className="cua-legend">
        {gauge.segments.map((s) => (
          <li key={s.key}>
            <span className={`cua-swatch cua-seg-${s.key}`} aria-hidden="true" />
            {t("gauge.sectionLine", { section: s.label, tokens: s.tokens })}
          </li>
        ))}
      </ul>
      <pre className="cua-context-lines">{gauge.lines.join("\n")}</pre>
    </div>
  );
};

/** The header's gauge for the current thread (fetches the stored report of a loaded thread). */
export const ThreadGauge: FC = () => {
  const { entry, remoteId } = useCurrentThread();
  // (at most 4 times a second while an answer streams: the report comes once per step)
  const { messages } = useChat({ chat: entry.chat, experimental_throttle: 250 });
  const live = latestReport(messages);
  const [stored, setStored] = useState<{ id: string; report: ContextReport | null } | null>(null);
  useEffect(() => {
    if (live || !remoteId || stored?.id === remoteId || messages.length === 0) return;
    let cancelled = false;
    requestJson<{ report: unknown }>(threadPath(remoteId, "/context"))
      .then(({ report }) => {
        if (!cancelled) setStored({ id: remoteId, report: isContextReport(report) ? report : null });
      })
      .catch(() => {
        if (!cancelled) setStored({ id: remoteId, report: null });
      });
    return () => {
      cancelled = true;
    };
  }, [live, remoteId, stored?.id, messages.length]);
  const report = live ?? (stored && stored.id === remoteId ? stored.report : null);
  return report ? <GaugeBar report={report} /> : <div className="cua-gauge cua-gauge-empty" />;
};

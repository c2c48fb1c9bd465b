// The install tools' cards under their tool card: findMissing's scan in full (a card per node
// pack and per model, with what the model does not read: descriptions, repositories, hashes),
// and downloadModels' files (progress with a Cancel while they come, then each one's outcome).
import { useEffect, useState, type FC } from "react";
import { useI18n, type MessageKey } from "../i18n";
import { localizedError } from "../server/api";
import { byteText, isRunning } from "../tools/downloadModels";
import { cancelDownload, knownScan, storedScan, type DownloadJob, type Scan, type ScanModel, type ScanPack } from "../tools/installScans";
import { useStore } from "./context";
import type { ToolCardSpec } from "./toolCard";

const PackCard: FC<{ pack: ScanPack }> = ({ pack }) => {
  const { t } = useI18n();
  const unknown = t("installs.find.unknown");
  return (
    <li className="cua-install-card" data-kind="pack" data-state={pack.state}>
      <div className="cua-install-title">
        <strong>{pack.title ?? pack.id}</strong>
        {pack.author ? <span className="cua-muted"> {t("installs.find.by", { author: pack.author })}</span> : null}
        <span className="cua-install-state">{t(`installs.find.state.${pack.state}` as MessageKey)}</span>
      </div>
      {pack.description ? <div className="cua-install-description">{pack.description}</div> : null}
      <div className="cua-install-facts">
        {pack.repository ? (
          <a href={pack.repository} target="_blank" rel="noreferrer noopener">
            {t("installs.find.repository")}
          </a>
        ) : null}
        <span>{t("installs.find.license", { license: pack.license ?? unknown })}</span>
        <span>{t("installs.find.size", { size: pack.size == null ? unknown : typeof pack.size === "number" ? byteText(pack.size) : pack.size })}</span>
      </div>
      <div className="cua-muted">{t("installs.find.provides", { types: pack.nodeTypes.join(", ") })}</div>
    </li>
  );
};

const ModelCard: FC<{ model: ScanModel }> = ({ model }) => {
  const { t } = useI18n();
  return (
    <li className="cua-install-card" data-kind="model" data-downloadable={model.downloadable}>
      <div className="cua-install-title">
        <strong>{model.name}</strong>
        <span className="cua-install-state">{t("installs.find.notDownloaded")}</span>
      </div>
      <div className="cua-install-facts">
        <span>{t("installs.find.folder", { folder: model.directory ?? t("installs.find.unknown") })}</span>
        <span>{t("installs.find.host", { host: model.host ?? t("installs.find.unknown") })}</span>
        <span>{t("installs.find.size", { size: model.size == null ? t("installs.find.unknown") : byteText(model.size) })}</span>
      </div>
      <div className="cua-muted">{t(model.hash ? "installs.find.hash" : "installs.find.noHash")}</div>
      {model.pickle ? <div className="cua-install-warning">{t("installs.find.pickle")}</div> : null}
      {model.downloadable ? null : <div className="cua-install-warning">{t("installs.find.notDownloadable", { reason: model.problem ?? "" })}</div>}
    </li>
  );
};

/** The scan's cards, from this page's copy of it or the server's. */
export const FindMissingCards: FC<{ result: unknown }> = ({ result }) => {
  const { t } = useI18n();
  const id = (result as { scan?: unknown } | undefined)?.scan;
  const [scan, setScan] = useState<Scan | null | undefined>(typeof id === "string" ? knownScan(id) : null);
  useEffect(() => {
    if (typeof id === "string" && scan === undefined) void storedScan(id).then(setScan);
  }, [id, scan]);
  if (scan === undefined) return null;
  if (scan === null) return typeof id === "string" ? <div className="cua-muted">{t("installs.find.gone")}</div> : null;
  const unprovided = scan.missingNodes.filter((n) => !n.packs.length);
  if (!scan.packs.length && !unprovided.length && !scan.missingModels.length) {
    return <div className="cua-install-cards cua-muted">{t("installs.find.nothing")}</div>;
  }
  return (
    <div className="cua-install-cards" aria-label={t("installs.find.packs")}>
      {scan.packs.length || unprovided.length ? (
        <>
          <div className="cua-tool-label">{t("installs.find.packs")}</div>
          <ul>
            {scan.packs.map((pack) => (
              <PackCard key={pack.id} pack={pack} />
            ))}
            {unprovided.map((n) => (
              <li key={n.type} className="cua-install-card" data-kind="unknown">
                {t("installs.find.noPack", { type: n.type })}
                {n.note ? <div className="cua-muted">{n.note}</div> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {scan.missingModels.length || scan.presentModels.length ? (
        <>
          <div className="cua-tool-label">{t("installs.find.models")}</div>
          <ul>
            {scan.missingModels.map((model) => (
              <ModelCard key={model.name} model={model} />
            ))}
            {scan.presentModels.map((model) => (
              <li key={model.name} className="cua-install-card" data-kind="model" data-present="true">
                <div className="cua-install-title">
                  <strong>{model.name}</strong>
                  <span className="cua-install-state">{t("installs.find.downloaded")}</span>
                </div>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {scan.sources.modelListLegacyUiOnly && scan.missingModels.length ? <div className="cua-muted">{t("installs.find.noModelList")}</div> : null}
      {scan.sources.notes.map((note) => (
        <div key={note} className="cua-muted">
          {note}
        </div>
      ))}
    </div>
  );
};

type Outcome = { name: string; status: string; error?: string; code?: string; params?: Record<string, string | number> };

function stateKey(status: string): MessageKey {
  return `installs.download.state.${status}` as MessageKey;
}

const JobRow: FC<{ job: DownloadJob }> = ({ job }) => {
  const { t } = useI18n();
  const [cancelling, setCancelling] = useState(false);
  const total = job.bytesTotal;
  const percent = total ? Math.min(100, Math.floor((job.bytesDone / total) * 100)) : null;
  const bits = [t("installs.download.progress", { done: byteText(job.bytesDone), total: total ? byteText(total) : "?" })];
  if (job.bytesPerSecond > 0) bits.push(t("installs.download.speed", { speed: byteText(job.bytesPerSecond) }));
  if (job.etaSeconds !== null) bits.push(t("installs.download.eta", { seconds: Math.ceil(job.etaSeconds) }));
  return (
    <li className="cua-install-card" data-kind="download" data-state={job.state}>
      <div className="cua-install-title">
        <strong>{job.name}</strong>
        <span className="cua-install-state">{t(stateKey(job.state))}</span>
      </div>
      <progress max={100} value={percent ?? undefined} aria-label={job.name} />
      <div className="cua-muted" role="status">
        {percent !== null ? `${percent}% · ` : ""}
        {bits.join(" · ")}
      </div>
      {isRunning(job) ? (
        <button
          type="button"
          disabled={cancelling}
          onClick={() => {
            setCancelling(true);
            void cancelDownload(job.id).catch(() => setCancelling(false));
          }}
        >
          {t("installs.download.cancel")}
        </button>
      ) : null}
    </li>
  );
};

/** downloadModels' files: live while it runs (its progress), each outcome once it is done. */
export const DownloadCards: FC<{ progress: Record<string, unknown> | undefined; result: unknown }> = ({ progress, result }) => {
  const { t } = useI18n();
  const models = (result as { models?: Outcome[] } | undefined)?.models;
  if (Array.isArray(models)) {
    return (
      <ul className="cua-install-cards">
        {models.map((m) => (
          <li key={m.name} className="cua-install-card" data-kind="download" data-state={m.status}>
            <div className="cua-install-title">
              <strong>{m.name}</strong>
              <span className="cua-install-state">{t(stateKey(m.status))}</span>
            </div>
            {m.status === "failed" && m.error ? (
              <div className="cua-install-warning">{localizedError(m.error, m.code ? { code: m.code, params: m.params ?? {} } : null)}</div>
            ) : null}
          </li>
        ))}
      </ul>
    );
  }
  const jobs = progress?.downloads;
  if (!Array.isArray(jobs)) return null;
  return (
    <ul className="cua-install-cards">
      {(jobs as DownloadJob[]).map((job) => (
        <JobRow key={job.id} job={job} />
      ))}
    </ul>
  );
};

/** Under a `findMissing` call that is done: its scan in full. */
export const findMissingCard: ToolCardSpec = {
  tool: "findMissing",
  Below: ({ part, state }) => (state === "done" ? <FindMissingCards result={part.result} /> : null),
};

/** Under a `downloadModels` call: its files, live while it runs. */
export const downloadModelsCard: ToolCardSpec = {
  tool: "downloadModels",
  Below: function DownloadsBelow({ part, state }) {
    const store = useStore();
    return <DownloadCards progress={store.progressOf(part.toolCallId)} result={state === "running" ? undefined : part.result} />;
  },
};

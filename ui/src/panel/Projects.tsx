// Projects in the Settings view: list and create projects, pin documents to one (pasted text or
// a text file), remove them, and put the current chat in a project or take it out. The server
// sends a project's documents with every request of its threads, whole or the passages that
// match (core/files/project_documents.py); the gauge says which.
import { useCallback, useEffect, useId, useState, type FC, type FormEvent } from "react";
import { useI18n } from "../i18n";
import { errorMessage, requestJson } from "../server/api";
import { useStore } from "./context";
import { NameForm, useNamedList } from "./NamedList";

const BASE = "/api/assistant/projects";

export interface ProjectSummary {
  id: number;
  name: string;
  documentCount: number;
  tokens: number;
}

export interface ProjectDocument {
  id: number;
  title: string;
  tokens: number;
  passages: number;
}

type Detail = ProjectSummary & { documents: ProjectDocument[] };

const DocumentForm: FC<{ projectId: number; onAdded: () => void; onError: (text: string) => void }> = ({ projectId, onAdded, onError }) => {
  const { t } = useI18n();
  const id = useId();
  const [title, setTitle] = useState("");
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);

  const add = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    try {
      await requestJson(`${BASE}/${projectId}/documents`, { method: "POST", body: { title, text } });
      setTitle("");
      setText("");
      onAdded();
    } catch (error) {
      onError(errorMessage(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="cua-project-doc-form" onSubmit={(e) => void add(e)}>
      <input id={`${id}-title`} aria-label={t("projects.documentTitle")} placeholder={t("projects.title")} value={title} onChange={(e) => setTitle(e.target.value)} />
      <textarea aria-label={t("projects.documentText")} placeholder={t("projects.pasteText")} rows={4} value={text} onChange={(e) => setText(e.target.value)} />
      <input
        type="file"
        aria-label={t("projects.textFile")}
        accept=".txt,.md,.markdown,.csv,.json,text/*"
        onChange={(e) => {
          const file = e.target.files?.[0];
          if (!file) return;
          void file.text().then((content) => {
            setText(content);
            if (!title) setTitle(file.name.replace(/\.[^.]+$/, ""));
          });
        }}
      />
      <button type="submit" disabled={busy || !title.trim() || !text.trim()}>
        {t("projects.addDocument")}
      </button>
    </form>
  );
};

type ItemProps = {
  project: ProjectSummary;
  onChanged: () => void;
  onError: (text: string) => void;
  /** The chat was put in a project (or taken out: null). */
  onMoved: (to: number | null) => void;
};

const ProjectItem: FC<ItemProps> = ({ project, onChanged, onError, onMoved }) => {
  const store = useStore();
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const [detail, setDetail] = useState<Detail | null>(null);

  const load = useCallback(() => {
    requestJson<Detail>(`${BASE}/${project.id}`).then(setDetail, (error: unknown) => onError(errorMessage(error)));
  }, [project.id, onError]);
  useEffect(() => {
    if (open) load();
  }, [open, load]);

  const changed = () => {
    load();
    onChanged();
  };
  const remove = async (path: string) => {
    try {
      await requestJson(path, { method: "DELETE" });
      changed();
    } catch (error) {
      onError(errorMessage(error));
    }
  };
  const attach = async (to: number | null) => {
    const thread = store.currentThreadId;
    try {
      if (!thread) throw new Error(t("projects.sendFirst"));
      await requestJson(`/api/assistant/threads/${encodeURIComponent(thread)}`, { method: "PATCH", body: { project: to } });
      onError("");
      onMoved(to);
    } catch (error) {
      const text = errorMessage(error);
      onError(text.includes("does not exist") ? t("projects.sendFirst") : text);
    }
  };

  return (
    <li className="cua-project">
      <div className="cua-project-row">
        <button type="button" className="cua-link" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "▾" : "▸"} {project.name}
        </button>
        <span className="cua-hint">
          {t("projects.summary", { count: project.documentCount, tokens: t("projects.tokens", { count: project.tokens }) })}
        </span>
      </div>
      {open ? (
        <div className="cua-project-body">
          <div className="cua-project-actions">
            <button type="button" onClick={() => void attach(project.id)}>
              {t("projects.useHere")}
            </button>
            <button type="button" onClick={() => void attach(null)}>
              {t("projects.takeOut")}
            </button>
            <button type="button" onClick={() => void remove(`${BASE}/${project.id}`)}>
              {t("projects.delete")}
            </button>
          </div>
          <ul className="cua-project-docs">
            {(detail?.documents ?? []).map((doc) => (
              <li key={doc.id}>
                <span>{doc.title}</span> <span className="cua-hint">{t("projects.tokens", { count: doc.tokens })}</span>{" "}
                <button type="button" aria-label={t("projects.removeDocument", { title: doc.title })} onClick={() => void remove(`${BASE}/${project.id}/documents/${doc.id}`)}>
                  {t("projects.remove")}
                </button>
              </li>
            ))}
          </ul>
          <DocumentForm projectId={project.id} onAdded={changed} onError={onError} />
        </div>
      ) : null}
    </li>
  );
};

/** The project of the chat shown (null: none, undefined: not known yet or no chat yet). */
function useChatProject(): [number | null | undefined, (to: number | null) => void] {
  const store = useStore();
  const thread = store.currentThreadId;
  const [project, setProject] = useState<number | null | undefined>(undefined);
  useEffect(() => {
    if (!thread) return;
    requestJson<{ project?: number | null }>(`/api/assistant/threads/${encodeURIComponent(thread)}`).then(
      (found) => setProject(found.project ?? null),
      () => setProject(undefined), // (a chat the server does not have yet)
    );
  }, [thread]);
  return [project, setProject];
}

export const Projects: FC = () => {
  const { t } = useI18n();
  const list = useNamedList<ProjectSummary>(BASE, "projects");
  const { load, setError } = list;
  const projects = list.items ?? [];
  const [chatProject, setChatProject] = useChatProject();
  const current = projects.find((p) => p.id === chatProject);

  return (
    <section className="cua-projects" aria-label={t("projects.heading")}>
      <h3>{t("projects.heading")}</h3>
      <p className="cua-hint">{t("projects.help")}</p>
      {chatProject !== undefined ? (
        <p className="cua-hint" role="status">
          {current ? t("projects.chatIn", { name: current.name }) : t("projects.chatInNone")}
        </p>
      ) : null}
      <ul>
        {projects.map((p) => (
          <ProjectItem key={p.id} project={p} onChanged={load} onError={setError} onMoved={setChatProject} />
        ))}
      </ul>
      <NameForm list={list} label={t("projects.newName")} placeholder={t("projects.new")} submit={t("projects.create")} />
    </section>
  );
};

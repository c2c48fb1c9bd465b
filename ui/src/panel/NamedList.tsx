// A list one of our routes answers (`GET path`: `{[key]: T[]}`) with a form that makes an item by
// name (`POST path` with `{name}`): Settings' projects and MCP tokens. The error is the route's own
// words, from the last request that failed (cleared by a create that works). `NameForm` is that
// form, with the error under it.
import { useCallback, useEffect, useState, type FormEvent } from "react";
import { errorMessage, requestJson } from "../server/api";

export interface NamedList<T, Made> {
  items: T[] | null; // (null: not read yet)
  load: () => void;
  name: string;
  setName: (name: string) => void;
  error: string;
  setError: (error: string) => void;
  create: (e: FormEvent) => Promise<Made | null>;
}

export function useNamedList<T, Made = unknown>(path: string, key: string): NamedList<T, Made> {
  const [items, setItems] = useState<T[] | null>(null);
  const [name, setName] = useState("");
  const [error, setError] = useState("");

  const load = useCallback(() => {
    requestJson<Record<string, T[]>>(path).then(
      (body) => setItems(body[key] ?? []),
      (e: unknown) => setError(errorMessage(e)),
    );
  }, [path, key]);
  useEffect(load, [load]);

  /** Make the item named in the form; what the route answered, or null (the error is set). */
  const create = async (e: FormEvent): Promise<Made | null> => {
    e.preventDefault();
    try {
      const made = await requestJson<Made>(path, { method: "POST", body: { name } });
      setName("");
      setError("");
      load();
      return made;
    } catch (err) {
      setError(errorMessage(err));
      return null;
    }
  };

  return { items, load, name, setName, error, setError, create };
}

/** The form that makes an item by name (`onMade`: what the route answered), and the error. */
export function NameForm<Made>({ list, label, placeholder, submit, onMade }: { list: NamedList<unknown, Made>; label: string; placeholder: string; submit: string; onMade?: (made: Made) => void }) {
  return (
    <>
      <form onSubmit={(e) => void list.create(e).then((made) => made !== null && onMade?.(made))}>
        <input aria-label={label} placeholder={placeholder} value={list.name} onChange={(e) => list.setName(e.target.value)} />
        <button type="submit" className="cua-btn" disabled={!list.name.trim()}>
          {submit}
        </button>
      </form>
      {list.error ? (
        <p className="cua-error" role="alert">
          {list.error}
        </p>
      ) : null}
    </>
  );
}

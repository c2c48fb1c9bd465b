// The backend's HTTP surface as the panel uses it. Our routes already start with /api and are
// served at the page's origin (ComfyUI, the standalone server and the playground alike), so a
// path is used as it is — not through app.api.fetchApi, which would prefix a second /api.

import { t, type MessageKey, type Params } from "../i18n";
import { en } from "../i18n/messages";

/** The URL of one of our routes: the path as it is, relative to the page's origin. */
export function apiUrl(path: string): string {
  return path;
}

/**
 * The ComfyUI user our requests are made for. ComfyUI's `api.fetchApi` sends `Comfy-User: api.user`
 * with every request (1.27.10 and 1.58.1 alike: `api.user` is "" until a multi-user server's user
 * logs in, then that user's id, kept in localStorage as `Comfy.userId`); with `--multi-user` the
 * server keys each user's data by it. Our requests do not go through fetchApi (it would prefix a
 * second /api), so they send it themselves: the host's `api.user` once the panel is given the app,
 * `Comfy.userId` before that (the standalone page and the playground have neither: no header).
 */
let currentUser: () => string | null | undefined = () => storedUser();

export function followUser(user: () => string | null | undefined): void {
  currentUser = () => user() ?? storedUser();
}

function storedUser(): string | null {
  try {
    return globalThis.localStorage?.getItem("Comfy.userId") ?? null;
  } catch {
    return null; // (storage refused: a sandboxed page)
  }
}

/** `init` with the `Comfy-User` header (see followUser), when there is a user to name. */
export function withUser(init: RequestInit = {}): RequestInit {
  const user = currentUser();
  if (user === null || user === undefined) return init;
  const headers = new Headers(init.headers);
  headers.set("Comfy-User", user);
  return { ...init, headers };
}

/**
 * `path` naming the user in its `user` query parameter, for what the browser loads itself (an
 * attachment's `<img src>` and `<a href>` cannot send a header): the server reads it only on
 * the routes marked for it (routes/users.py `user_in_query`) and only when no header names a
 * user. No user, no parameter: `path` as it is.
 */
export function withUserQuery(path: string): string {
  const user = currentUser();
  if (!user) return path; // (single-user ComfyUI: api.user is "")
  return `${path}${path.includes("?") ? "&" : "?"}user=${encodeURIComponent(user)}`;
}

/** fetch for our routes: every request carries the user (the chat's stream too). */
export const apiFetch: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, withUser(init));

/**
 * A coded error's code and parameters, which the server sends beside its English text
 * (core/base/error_codes.py): the panel shows the `error.<code>` message in the user's language.
 */
export interface ErrorCode {
  code: string;
  params: Params;
}

/**
 * A failed request, with the server's own message (our routes answer `{"error": "..."}`, with
 * `code` and `params` when coded): `message` is the text to show, in the user's language where
 * the panel has the code's message.
 */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly coded: ErrorCode | null = null,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/**
 * What an error body says: `{"error": "...", "code"?, "params"?}` → the English text and the
 * code; plain text as it is. Used for HTTP errors and for the chat transport's errors (the AI SDK
 * puts the response body, or a stream's `errorText`, in `error.message`).
 */
export function parseServerError(body: string, fallback = t("chatError.requestFailed")): { text: string; coded: ErrorCode | null } {
  const text = body.trim();
  if (!text) return { text: fallback, coded: null };
  if (text.startsWith("{")) {
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === "object") {
        const { error, code, params } = parsed as Record<string, unknown>;
        if (typeof error === "string" && error) return { text: error, coded: codeOf(code, params) };
        if (error && typeof error === "object") {
          const message = (error as Record<string, unknown>).message;
          if (typeof message === "string" && message) return { text: message, coded: null };
        }
      }
    } catch {
      // not JSON after all: show it as it is
    }
  }
  return { text, coded: null };
}

function codeOf(code: unknown, params: unknown): ErrorCode | null {
  if (typeof code !== "string" || !code) return null;
  const values: Params = {};
  if (params && typeof params === "object") {
    for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
      values[name] = typeof value === "number" || typeof value === "string" ? value : String(value);
    }
  }
  return { code, params: values };
}

/** A coded error in the user's language (its `error.<code>` message), else the server's English. */
export function localizedError(english: string, coded: ErrorCode | null): string {
  if (!coded) return english;
  const key = `error.${coded.code}`;
  if (!Object.hasOwn(en, key)) return english;
  const params: Params = {};
  let worded = false;
  for (const [name, value] of Object.entries(coded.params)) {
    const word = typeof value === "string" ? WORDS.get(value) : undefined;
    params[name] = word ? t(word) : value;
    worded ||= word !== undefined;
  }
  const text = t(key as MessageKey, params);
  // a template spaces a name off from Chinese or Japanese text ("连接到 Ollama（"); a word in
  // those scripts in its place takes no space ("连接到模型提供商（")
  return worded ? text.replace(CJK_GAP, "$1") : text;
}

// (Script_Extensions: the long-vowel mark ー and the iteration marks are Common by script, CJK by use)
const CJK_GAP = /([\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]) (?=[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}])/gu;

/**
 * Parameter values the server writes in English that are words, not names ("The provider"):
 * their `error.word.*` messages, by the English text.
 */
const WORDS = new Map(
  Object.entries(en)
    .filter(([key]) => key.startsWith("error.word."))
    .map(([key, text]) => [text as string, key as MessageKey]),
);

/** The text to show for an error body (see parseServerError), in the user's language if coded. */
export function serverErrorText(body: string, fallback = t("chatError.requestFailed")): string {
  const { text, coded } = parseServerError(body, fallback);
  return localizedError(text, coded);
}

type Fetch = typeof globalThis.fetch;

/** JSON over fetch; a non-2xx answer becomes an ApiError carrying the server's message. */
export async function requestJson<T>(
  path: string,
  init: { method?: string; body?: unknown; signal?: AbortSignal } = {},
  fetchImpl: Fetch = apiFetch,
): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  const options: RequestInit = { method: init.method ?? "GET", headers };
  if (init.signal) options.signal = init.signal;
  if (init.body !== undefined) {
    headers["content-type"] = "application/json";
    options.body = JSON.stringify(init.body);
  }
  let response: Response;
  try {
    response = await fetchImpl(apiUrl(path), options);
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw new ApiError(t("chatError.unreachable", { error: String(error) }), 0);
  }
  const text = await response.text();
  if (!response.ok) {
    const { text: english, coded } = parseServerError(text, `${response.status} ${response.statusText}`);
    throw new ApiError(localizedError(english, coded), response.status, coded);
  }
  return (text ? JSON.parse(text) : null) as T;
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return serverErrorText(error.message, error.name);
  return String(error);
}

// ---- the shapes our routes answer with (routes/*.py) ----

export interface ServerThread {
  id: string;
  title: string;
  archived: boolean;
  createdAt: number; // seconds since the epoch
  updatedAt: number;
  messageCount: number;
  /** The key of the ComfyUI workflow the thread belongs to; null: none. */
  workflow?: string | null;
}

export interface ServerToolSpec {
  name: string;
  description: string;
  parameters: unknown;
  runs: "panel" | "server";
}

export interface SkillInfo {
  slug: string;
  name: string;
  description: string;
  modelFamily?: boolean;
  size?: number;
}

export interface ProviderSettings {
  baseUrl: string;
  /** scheme://host:port of the base URL: where every request to the provider goes. */
  origin: string;
  model: string | null;
  contextWindow: number | null;
  maxOutputTokens: number | null;
  timeoutSeconds: number;
  apiKeySet: boolean;
  provider: string;
  sources: Record<string, "settings" | "environment" | string>;
  /** After a save: what the user must know (e.g. the key was for another address, removed). */
  notice?: string | null;
  /** Environment settings the server refused and ignores (a bad LLM_BASE_URL: its key unused). */
  problems?: string[];
}

export interface ProviderVerdict {
  ok: boolean;
  provider: string;
  baseUrl: string;
  reachable: boolean;
  auth: "ok" | "failed" | "unknown";
  model: string | null;
  modelFound: boolean | null;
  models: string[];
  message: string;
}

export interface CompactResult {
  summary: { text: string; until: string; fallback: boolean } | null;
  compacted: number;
}

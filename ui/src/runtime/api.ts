// The backend's HTTP surface as the panel uses it. Our routes already start with /api and are
// served at the page's origin (ComfyUI, the standalone server and the playground alike), so a
// path is used as it is — not through app.api.fetchApi, which would prefix a second /api.
import { t } from "../i18n";

/** The URL of one of our routes: the path as it is, relative to the page's origin. */
export function apiUrl(path: string): string {
  return path;
}

/** A failed request, with the server's own message (our routes answer `{"error": "..."}`). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/**
 * The human text of an error body: `{"error": "..."}` → the message; plain text as it is.
 * Used for HTTP errors and for the chat transport's errors (the AI SDK puts the response body
 * in `error.message`).
 */
export function serverErrorText(body: string, fallback = t("chatError.requestFailed")): string {
  const text = body.trim();
  if (!text) return fallback;
  if (text.startsWith("{")) {
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === "object") {
        const error = (parsed as Record<string, unknown>).error;
        if (typeof error === "string" && error) return error;
        if (error && typeof error === "object") {
          const message = (error as Record<string, unknown>).message;
          if (typeof message === "string" && message) return message;
        }
      }
    } catch {
      // not JSON after all: show it as it is
    }
  }
  return text;
}

type Fetch = typeof globalThis.fetch;

/** JSON over fetch; a non-2xx answer becomes an ApiError carrying the server's message. */
export async function requestJson<T>(
  path: string,
  init: { method?: string; body?: unknown; signal?: AbortSignal } = {},
  fetchImpl: Fetch = (input, opts) => globalThis.fetch(input, opts),
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
    throw new ApiError(serverErrorText(text, `${response.status} ${response.statusText}`), response.status);
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

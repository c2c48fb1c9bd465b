// For tests only: our backend's routes answered in memory (fetch stubbed), and helpers that
// write AI SDK UI message streams (docs/DESIGN.md §5) the way core/stream/ui_stream.py does.
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from "ai";
import type { EgressEntry, EgressStatement } from "../src/panel/egress.generated";

export type Chunk = Record<string, unknown>;

export function sseText(chunks: readonly Chunk[], done = true): string {
  return chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + (done ? "data: [DONE]\n\n" : "");
}

const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "x-vercel-ai-ui-message-stream": "v1",
};

export function sseResponse(chunks: readonly Chunk[]): Response {
  return new Response(sseText(chunks), { headers: SSE_HEADERS });
}

/** A streaming response the test writes to as it goes. */
export function openStream(): { response: Response; send(chunks: readonly Chunk[]): void; close(): void } {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  return {
    response: new Response(body, { headers: SSE_HEADERS }),
    send: (chunks) => controller.enqueue(encoder.encode(sseText(chunks, false))),
    close: () => {
      controller.enqueue(encoder.encode("data: [DONE]\n\n"));
      controller.close();
    },
  };
}

/** One text answer, as the server streams it. */
export function textAnswer(text: string, messageId?: string, report?: unknown): Chunk[] {
  return [
    messageId ? { type: "start", messageId } : { type: "start" },
    { type: "start-step" },
    { type: "text-start", id: "t1" },
    { type: "text-delta", id: "t1", delta: text },
    { type: "text-end", id: "t1" },
    ...(report ? [{ type: "data-context", id: "context", data: report }] : []),
    { type: "finish-step" },
    { type: "finish", finishReason: "stop" },
  ];
}

/** An answer that ends on a call of a panel tool. */
export function toolCallAnswer(name: string, input: unknown, toolCallId = "call_1", messageId?: string): Chunk[] {
  return [
    messageId ? { type: "start", messageId } : { type: "start" },
    { type: "start-step" },
    { type: "tool-input-start", toolCallId, toolName: name },
    { type: "tool-input-available", toolCallId, toolName: name, input },
    { type: "finish-step" },
    { type: "finish", finishReason: "tool-calls" },
  ];
}

export interface ChatRequestBody {
  id: string;
  messages: UIMessage[];
  trigger: string;
  messageId?: string;
  workflow?: string;
  /** A request of what is new: the stored message its messages follow (core/chat/thread_delta.py). */
  parentId?: string;
  parentIndex?: number;
}

/** The answer a chat response streams, as the server stores it: assembled by the AI SDK. */
async function answerOf(body: ReadableStream<Uint8Array>, base: UIMessage | undefined): Promise<UIMessage | undefined> {
  const chunks = parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream<{ success: boolean; value?: unknown }, UIMessageChunk>({
      transform(part, controller) {
        if (part.success) controller.enqueue(part.value as UIMessageChunk);
      },
    }),
  );
  let answer: UIMessage | undefined;
  try {
    for await (const message of readUIMessageStream({ message: base ? structuredClone(base) : undefined, stream: chunks })) answer = message;
  } catch {
    // (an error chunk: what came before it is kept)
  }
  return answer;
}

export interface FakeThread {
  id: string;
  title: string;
  archived: boolean;
  messages: UIMessage[];
  updatedAt: number;
  /** Bound to none when left out. */
  workflow?: string | null;
  /** The project it belongs to (none when left out). */
  project?: number | null;
}

export interface FakeServer {
  fetch: typeof globalThis.fetch;
  provider: Record<string, unknown>;
  providerPuts: Record<string, unknown>[];
  /** What `/api/assistant/egress` answers (the provider's origin follows `provider`). */
  egress: EgressStatement;
  threads: Map<string, FakeThread>;
  /** What each chat request was once the server rebuilt it from the thread it keeps. */
  chatRequests: ChatRequestBody[];
  /** Each chat request's body as the panel sent it. */
  sentBodies: ChatRequestBody[];
  calls: string[];
  /** Each thread's checkpoints by message id (routes/checkpoints.py): the first save kept. */
  checkpoints: Map<string, Map<string, { workflow: string | null; graph: unknown; createdAt: number }>>;
  /** Each thread's branches, the latest first (core/store/branches.py). */
  branches: Map<string, FakeBranch[]>;
}

export interface FakeBranch {
  number: number;
  afterId: string | null;
  messageCount: number;
  preview: string;
  createdAt: number;
  messages: UIMessage[];
}

/** scheme://host:port of a base URL, the default port written out (as the server answers it). */
function originOf(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return `${url.protocol}//${url.hostname}:${url.port || (url.protocol === "https:" ? 443 : 80)}`;
  } catch {
    return "";
  }
}

/** What the server answers inside ComfyUI, online (core/base/egress.py). */
function insideComfyUI(): EgressStatement {
  const models = ["https://huggingface.co:443", "https://civitai.com:443"];
  const entry = (kind: EgressEntry["kind"], hosts: string[], offlineOff = false): EgressEntry => ({ kind, hosts, offlineOff, unused: null });
  return {
    offline: false,
    offlineEnv: "COMFY_ASSISTANT_OFFLINE",
    entries: [
      entry("provider", []),
      entry("manager", []),
      entry("registry", ["https://api.comfy.org:443"], true),
      entry("modelSizes", models, true),
      entry("downloads", models),
    ],
  };
}

export function fakeServer(chat: (body: ChatRequestBody, url: string) => Response | Promise<Response>): FakeServer {
  const threads: FakeServer["threads"] = new Map();
  const chatRequests: ChatRequestBody[] = [];
  const sentBodies: ChatRequestBody[] = [];
  const answers = new Map<string, Promise<void>>(); // each thread's last answer, being stored
  const calls: string[] = [];
  const providerPuts: Record<string, unknown>[] = [];
  const checkpoints: FakeServer["checkpoints"] = new Map();
  const branches: FakeServer["branches"] = new Map();
  const egress = insideComfyUI();
  const provider: Record<string, unknown> = {
    baseUrl: "http://127.0.0.1:11434/v1",
    origin: "http://127.0.0.1:11434",
    model: null,
    contextWindow: null,
    maxOutputTokens: null,
    timeoutSeconds: 300,
    apiKeySet: false,
    provider: "Ollama",
    sources: { baseUrl: "environment" },
    problems: [],
  };
  const json = (value: unknown, status = 200) =>
    new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });
  const fresh = (id: string, workflow: unknown): FakeThread => ({
    id,
    title: "",
    archived: false,
    messages: [],
    updatedAt: Date.now() / 1000,
    workflow: typeof workflow === "string" ? workflow : null,
  });
  const meta = (t: FakeThread) => ({
    id: t.id,
    title: t.title,
    archived: t.archived,
    createdAt: t.updatedAt,
    updatedAt: t.updatedAt,
    messageCount: t.messages.length,
    workflow: t.workflow ?? null,
    project: t.project ?? null,
  });

  // projects and their documents (core/files/projects.py), in memory; tokens counted as words
  type FakeDocument = { id: number; projectId: number; title: string; text: string; tokens: number; passages: number };
  const projects = new Map<number, { id: number; name: string; documents: FakeDocument[] }>();
  let nextId = 1;
  const projectJson = (p: { id: number; name: string; documents: FakeDocument[] }) => ({
    id: p.id,
    name: p.name,
    documentCount: p.documents.length,
    tokens: p.documents.reduce((a, d) => a + d.tokens, 0),
  });
  const projectRoute = (method: string, path: string, body: Record<string, unknown> | undefined) => {
    const [, pid, , did] = /^\/api\/assistant\/projects(?:\/(\d+))?(\/documents(?:\/(\d+))?)?$/.exec(path) ?? [];
    const project = pid ? projects.get(Number(pid)) : undefined;
    if (!pid) {
      if (method !== "POST") return json({ projects: [...projects.values()].map(projectJson) });
      const created = { id: nextId++, name: String(body?.name ?? "").trim(), documents: [] };
      projects.set(created.id, created);
      return json(projectJson(created), 201);
    }
    if (!project) return json({ error: `project ${pid} does not exist` }, 404);
    if (path.endsWith("/documents") && method === "POST") {
      const text = String(body?.text ?? "");
      const doc = { id: nextId++, projectId: project.id, title: String(body?.title ?? ""), text, tokens: text.split(/\s+/).length, passages: 1 };
      project.documents.push(doc);
      return json(doc, 201);
    }
    if (did) {
      const doc = project.documents.find((d) => d.id === Number(did));
      if (!doc) return json({ error: `document ${did} of project ${pid} does not exist` }, 404);
      if (method !== "DELETE") return json(doc);
      project.documents = project.documents.filter((d) => d !== doc);
      return json({ deleted: doc.id });
    }
    if (method === "DELETE") {
      projects.delete(project.id);
      return json({ deleted: project.id });
    }
    return json({ ...projectJson(project), documents: project.documents.map(({ text: _, ...d }) => d) });
  };

  // rewinds and branches (core/store/branches.py), in memory
  const textOf = (m: UIMessage | undefined) => (m?.parts ?? []).map((p) => (p.type === "text" ? p.text : "")).join("");
  const branchRoute = (id: string, rewind: boolean, restore: string | undefined, body: Record<string, unknown> | undefined) => {
    const thread = threads.get(id);
    if (!thread) return json({ error: `thread ${id} does not exist` }, 404);
    const list = branches.get(id) ?? [];
    branches.set(id, list);
    const info = ({ messages: _, ...b }: FakeBranch) => b;
    const setAside = (afterId: string | null, cut: number): FakeBranch | null => {
      const tail = thread.messages.slice(cut);
      if (!tail.length) return null;
      const number = Math.max(0, ...list.map((b) => b.number)) + 1;
      const branch = { number, afterId, messageCount: tail.length, preview: textOf(tail[0]), createdAt: Date.now() / 1000, messages: tail };
      list.unshift(branch);
      thread.messages = thread.messages.slice(0, cut);
      return branch;
    };
    if (rewind) {
      const found = thread.messages.findIndex((m) => m.id === body?.messageId);
      if (found < 0) return json({ error: `message ${String(body?.messageId)} in thread ${id} does not exist` }, 404);
      let start = found;
      while (start >= 0 && thread.messages[start]?.role !== "user") start--;
      if (start < 0) start = found;
      const draft = thread.messages[start]?.role === "user" ? textOf(thread.messages[start]) : "";
      const branch = setAside(thread.messages[start - 1]?.id ?? null, start);
      return json({ messages: thread.messages, setAside: branch && info(branch), draft });
    }
    if (restore === undefined) {
      const available = (b: FakeBranch) => b.afterId === null || thread.messages.some((m) => m.id === b.afterId);
      return json({ branches: list.map((b) => ({ ...info(b), available: available(b) })) });
    }
    const branch = list.find((b) => b.number === Number(restore));
    if (!branch) return json({ error: `branch ${restore} of thread ${id} does not exist` }, 404);
    const cut = branch.afterId === null ? 0 : thread.messages.findIndex((m) => m.id === branch.afterId) + 1;
    if (cut === 0 && branch.afterId !== null) return json({ error: `branch ${restore} followed a message that is itself set aside now` }, 409);
    const aside = setAside(branch.afterId, cut); // (numbered before the branch returned to goes)
    list.splice(list.indexOf(branch), 1);
    thread.messages = [...thread.messages, ...branch.messages];
    return json({ messages: thread.messages, setAside: aside && info(aside), draft: "" });
  };

  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? "GET").toUpperCase();
    const body = typeof init?.body === "string" ? (JSON.parse(init.body) as Record<string, unknown>) : undefined;
    calls.push(`${method} ${url}`);
    const path = url.split("?")[0] ?? url;
    if (path === "/api/assistant/chat" && method === "POST") {
      const sent = body as unknown as ChatRequestBody;
      sentBodies.push(sent);
      await answers.get(sent.id);
      const thread = threads.get(sent.id) ?? fresh(sent.id, sent.workflow);
      // like the server (core/chat/thread_delta.py): what is new follows the stored thread
      const { parentId, parentIndex, ...request } = sent;
      if (parentId !== undefined) {
        const at = thread.messages.findIndex((m) => m.id === parentId);
        if (at < 0 || (parentIndex !== undefined && parentIndex !== at)) return json({ error: `thread ${sent.id} is stale` }, 409);
        const after = thread.messages[at + 1];
        if (after && !sent.messageId && sent.trigger !== "regenerate-message" && !sent.messages.some((m) => m.id === after.id)) {
          return json({ error: "This thread has new messages from another tab…", code: "chat.thread_moved_on", params: {} }, 409);
        } // (another tab's turn: core/chat/thread_delta.py)
        request.messages = [...thread.messages.slice(0, at + 1), ...sent.messages];
      }
      chatRequests.push(request);
      thread.messages = request.messages;
      thread.updatedAt = Date.now() / 1000;
      threads.set(request.id, thread);
      const response = await chat(request, url);
      if (!response.ok || !response.body) return response;
      // the server stores the answer it streams
      const [mine, theirs] = response.body.tee();
      const last = request.messages.at(-1);
      const stored = answerOf(mine, last?.role === "assistant" ? last : undefined).then((answer) => {
        if (!answer || answer.parts.length === 0) return; // (as the server: one with content)
        const at = thread.messages.findIndex((m) => m.id === answer.id);
        thread.messages = at < 0 ? [...thread.messages, answer] : thread.messages.map((m, i) => (i === at ? answer : m));
      });
      answers.set(request.id, stored);
      return new Response(theirs, { status: response.status, headers: response.headers });
    }
    if (path === "/api/assistant/provider") {
      let notice: string | null = null;
      if (method === "PUT" && body) {
        providerPuts.push(body);
        // like the server: a key is bound to its base URL; moving away without a key drops it
        if ("baseUrl" in body && !("apiKey" in body) && provider.apiKeySet) {
          provider.apiKeySet = false;
          notice = `The stored API key was for ${String(provider.baseUrl)} and has been removed.`;
        }
        for (const [k, v] of Object.entries(body)) {
          if (k === "apiKey") provider.apiKeySet = v !== null;
          else provider[k] = v;
          (provider.sources as Record<string, string>)[k] = "settings";
        }
        provider.origin = originOf(String(provider.baseUrl));
      }
      return json(method === "PUT" ? { ...provider, notice } : provider);
    }
    if (path === "/api/assistant/egress") {
      const entries = egress.entries.map((e) => (e.kind === "provider" ? { ...e, hosts: [String(provider.origin)] } : e));
      return json({ ...egress, entries });
    }
    if (path === "/api/assistant/provider/test") {
      return json({
        ok: true,
        provider: "Ollama",
        baseUrl: provider.baseUrl,
        reachable: true,
        auth: "ok",
        model: "qwen3:8b",
        modelFound: true,
        models: ["qwen3:8b", "llama3.1:8b"],
        message: `Ollama at ${String(provider.baseUrl)} works with qwen3:8b.`,
      });
    }
    if (path === "/api/assistant/tools") {
      return json({
        tools: [
          { name: "addNode", description: "", parameters: {}, runs: "panel" },
          { name: "loadWorkflow", description: "", parameters: {}, runs: "panel" },
          { name: "queueWorkflow", description: "", parameters: {}, runs: "panel" },
          { name: "removeNodes", description: "", parameters: {}, runs: "panel" },
          { name: "searchInstalledNodes", description: "", parameters: {}, runs: "server" },
        ],
      });
    }
    if (path === "/api/assistant/system-context/skills") return json({ skills: [{ slug: "upscale", name: "Upscale", description: "bigger" }] });
    if (path === "/api/assistant/user-context/skills") return json({ skills: [] });
    if (path === "/api/assistant/threads") {
      if (method === "POST") {
        const id = String(body?.id);
        if (!threads.has(id)) threads.set(id, fresh(id, body?.workflow));
        return json(meta(threads.get(id)!), 201);
      }
      const first = new URL(url, "http://panel").searchParams.get("workflow"); // its threads first
      const listed = [...threads.values()].sort((a, b) => Number((b.workflow ?? null) === first) - Number((a.workflow ?? null) === first) || b.updatedAt - a.updatedAt);
      return json({ threads: listed.map(meta) });
    }
    if (path === "/api/assistant/threads/rebind" && method === "POST") {
      let moved = 0;
      for (const t of threads.values()) if ((t.workflow ?? null) === body?.from && ++moved) t.workflow = (body?.to as string | null) ?? null;
      return json({ from: body?.from, to: body?.to, moved });
    }
    if (path.startsWith("/api/assistant/projects")) return projectRoute(method, path, body);
    if (path === "/api/assistant/mcp/tokens" && method === "GET") return json({ tokens: [] }); // (Settings' MCP clients: none made; McpClients.test.tsx has the routes whole)
    const rewound = /^\/api\/assistant\/threads\/([^/]+)\/(rewind|branches)(?:\/(\d+)\/restore)?$/.exec(path);
    if (rewound) return branchRoute(decodeURIComponent(rewound[1] ?? ""), rewound[2] === "rewind", rewound[3], body);
    const saved = /^\/api\/assistant\/threads\/([^/]+)\/checkpoints(?:\/([^/]+))?$/.exec(path);
    if (saved) {
      const id = decodeURIComponent(saved[1] ?? "");
      const kept = checkpoints.get(id) ?? new Map();
      checkpoints.set(id, kept);
      const info = (messageId: string) => {
        const c = kept.get(messageId)!;
        const nodes = (c.graph as { nodes?: unknown[] } | null)?.nodes?.length ?? 0;
        return { messageId, workflow: c.workflow, nodes, bytes: JSON.stringify(c.graph).length, createdAt: c.createdAt };
      };
      if (method === "POST") {
        if (!threads.has(id)) return json({ error: `thread ${id} does not exist` }, 404);
        const messageId = String(body?.messageId);
        const created = !kept.has(messageId);
        if (created) kept.set(messageId, { workflow: (body?.workflow as string | null) ?? null, graph: body?.graph, createdAt: Date.now() / 1000 });
        return json({ ...info(messageId), dropped: [] }, created ? 201 : 200);
      }
      if (saved[2] === undefined) return json({ checkpoints: [...kept.keys()].map(info) });
      const messageId = decodeURIComponent(saved[2]);
      if (!kept.has(messageId)) return json({ error: `a checkpoint of message ${messageId} in thread ${id} does not exist` }, 404);
      return json({ ...info(messageId), graph: kept.get(messageId)!.graph });
    }
    const one = /^\/api\/assistant\/threads\/([^/]+)(\/\w+)?$/.exec(path);
    if (one) {
      const id = decodeURIComponent(one[1] ?? "");
      const thread = threads.get(id);
      if (!thread) return json({ error: `thread ${id} does not exist` }, 404);
      if (one[2] === "/context") return json({ report: null });
      if (method === "DELETE") {
        threads.delete(id);
        return json({ deleted: id });
      }
      if (method === "PATCH") {
        if (typeof body?.title === "string") thread.title = body.title;
        if (body && "workflow" in body) thread.workflow = (body.workflow as string | null) ?? null;
        if (body && "project" in body) thread.project = (body.project as number | null) ?? null;
        return json(meta(thread));
      }
      // a page: the last N messages (before message `before`), and where they start (routes/threads.py)
      const query = new URL(url, "http://panel").searchParams;
      const last = query.get("last");
      if (last === null) return json({ ...meta(thread), messages: thread.messages });
      const before = query.get("before");
      const end = before === null ? thread.messages.length : thread.messages.findIndex((m) => m.id === before);
      if (end < 0) return json({ error: `message ${before} in thread ${id} does not exist` }, 404);
      const start = Math.max(0, end - Number(last));
      return json({ ...meta(thread), firstIndex: start, messages: thread.messages.slice(start, end) });
    }
    return json({ error: `no route ${method} ${path}` }, 404);
  }) as typeof globalThis.fetch;

  return { fetch, threads, chatRequests, sentBodies, calls, provider, providerPuts, egress, checkpoints, branches };
}

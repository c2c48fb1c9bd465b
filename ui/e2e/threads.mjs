// Long threads for the browser tests and the bench (longthreads.bench.mjs): deterministic turns of
// a person iterating on a workflow (a question of 20–200 words, an answer with a list and now and
// then a code block, a tool call every 10 turns), stored through the real routes: one POST
// /api/assistant/chat carrying N-1 turns and a question, which the server stores with the scripted
// answer.
import { reply } from "./support.mjs";

const CHAT = "/api/assistant/chat";

export function random(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s ^ (s >>> 15), 2246822507) + 0x9e3779b9) >>> 0) / 2 ** 32);
}
export const VOCAB = ("the a sampler steps cfg seed latent image model checkpoint lora strength denoise scheduler karras euler " +
  "upscale node workflow prompt negative positive clip vae decode encode batch size width height preview save " +
  "why does this look washed out try lower more detail face hands background lighting portrait style").split(" ");
const words = (rand, n) => Array.from({ length: n }, () => VOCAB[Math.floor(rand() * VOCAB.length)]).join(" ");

export function userMessage(rand, i, text = null) {
  return { id: `u${i}`, role: "user", parts: [{ type: "text", text: text ?? `Q${i + 1}. ${words(rand, 20 + Math.floor(rand() * 180))}?` }] };
}

export function assistantMessage(rand, i) {
  const parts = [{ type: "step-start" }];
  if (i % 10 === 9) {
    // a tool call every 10 turns, as the panel stores one (a client tool with its output)
    parts.push({
      type: "tool-getWorkflow",
      toolCallId: `call_${i}`,
      state: "output-available",
      input: {},
      output: { nodes: Array.from({ length: 8 }, (_, n) => ({ id: n + 1, type: "KSampler", widgets: { seed: n, steps: 20 } })) },
    });
    parts.push({ type: "step-start" });
  }
  const body = [
    words(rand, 30 + Math.floor(rand() * 120)) + ".",
    `- **${words(rand, 2)}**: ${words(rand, 12)}\n- ${words(rand, 10)}`,
    i % 5 === 0 ? "```json\n{\"steps\": 20, \"cfg\": 7.5}\n```" : words(rand, 20) + ".",
  ].join("\n\n");
  parts.push({ type: "text", text: body, state: "done" });
  return { id: `a${i}`, role: "assistant", parts };
}

/** A turn of one line each: a question and its answer. */
function shortTurn(i) {
  return [
    { id: `u${i}`, role: "user", parts: [{ type: "text", text: `Q${i + 1}?` }] },
    { id: `a${i}`, role: "assistant", parts: [{ type: "step-start" }, { type: "text", text: `A${i + 1}.`, state: "done" }] },
  ];
}

/** A thread of `turns` turns, built through POST /api/assistant/chat; returns its last answer's
 * text. `short`: every question and answer one line (rows of the least height). */
export async function buildThread(harness, id, turns, { short = false, title = `Bench ${turns} turns` } = {}) {
  const rand = random(turns);
  const messages = [];
  for (let i = 0; i < turns - 1; i++) messages.push(...(short ? shortTurn(i) : [userMessage(rand, i), assistantMessage(rand, i)]));
  messages.push(short ? shortTurn(turns - 1)[0] : userMessage(rand, turns - 1));
  const last = `End of the ${turns}-turn thread.`;
  await harness.provider.reset();
  await harness.provider.script(reply.text(last));
  const res = await fetch(harness.app + CHAT, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id, messages, trigger: "submit-message" }),
  });
  const text = await res.text();
  if (!res.ok || !text.includes("[DONE]") || text.includes('"type":"error"')) throw new Error(`building ${id}: ${res.status} ${text.slice(0, 400)}`);
  const titled = await fetch(`${harness.app}/api/assistant/threads/${id}`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ title }),
  });
  if (!titled.ok) throw new Error(`naming ${id}: ${titled.status}`);
  return last;
}

/** A window the longest thread fits whole: the bench measures the panel, not compaction (which
 * would also ask the scripted provider for summaries). */
export async function roomyWindow(harness) {
  const res = await fetch(`${harness.app}/api/assistant/provider`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ contextWindow: 10_000_000 }),
  });
  if (!res.ok) throw new Error(`PUT /api/assistant/provider: ${res.status} ${await res.text()}`);
}


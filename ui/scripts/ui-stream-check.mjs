// Parses UI Message Streams with the real AI SDK client code, the way the browser does.
// Reads one JSON request per line on stdin: {"sse": "<response body>", "message": <UIMessage?>}
// and writes one JSON line per request:
//   {"chunks": [...], "message": <assembled UIMessage>, "errors": [errorText...],
//    "violation": "<what the client rejected>" | null, "autoResubmit": bool}
// `message` is the assistant message a continuation builds on (the client passes its last one).
import { createInterface } from "node:readline";
import {
  lastAssistantMessageIsCompleteWithToolCalls,
  parseJsonEventStream,
  readUIMessageStream,
  uiMessageChunkSchema,
} from "ai";

async function check({ sse, message }) {
  const chunks = [];
  const errors = [];
  let violation = null;
  let assembled = message ?? null;
  const parsed = parseJsonEventStream({ stream: new Response(sse).body, schema: uiMessageChunkSchema });
  const stream = parsed.pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (!result.success) throw new Error(`invalid chunk: ${String(result.error?.message ?? result.error).slice(0, 400)}`);
        chunks.push(result.value);
        if (result.value.type === "error") errors.push(result.value.errorText);
        controller.enqueue(result.value);
      },
    }),
  );
  try {
    for await (const m of readUIMessageStream({
      message: message ?? undefined,
      stream,
      terminateOnError: true,
      onError: (e) => { if (!errors.includes(e?.message)) violation = String(e?.message ?? e); },
    })) {
      assembled = structuredClone(m);
    }
  } catch (e) {
    const text = String(e?.message ?? e);
    if (!errors.includes(text)) violation = text;
  }
  // What the panel's sendAutomaticallyWhen decides after this response: resubmit or stop.
  const autoResubmit =
    assembled != null && errors.length === 0
      ? lastAssistantMessageIsCompleteWithToolCalls({ messages: [assembled] })
      : false;
  return { chunks, message: assembled, errors, violation, autoResubmit };
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  let out;
  try {
    out = await check(JSON.parse(line));
  } catch (e) {
    out = { chunks: [], message: null, errors: [], violation: `checker failed: ${e?.message ?? e}` };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

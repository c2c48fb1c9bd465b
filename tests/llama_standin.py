"""A stand-in for llama.cpp's `llama-server` on 127.0.0.1: what bench/local_llm.py and
bench/count_accuracy.py run against when no real server is given (CI builds no llama.cpp), and
what tests can use. It has no model: every answer is the same short text. What it serves is what
the benches and the app read of llama-server (docs/DESIGN.md §7):

- `GET /health`, `GET /v1/models`, `GET /props` with the fields llama-server reports
  (`default_generation_settings.n_ctx`: a slot's context, `total_slots`,
  `chat_template_caps.supports_tools`, `modalities`; nothing says whether the cache is shared),
  `GET /slots` (`id`, `n_ctx`, `is_processing`);
- `POST /apply-template`: the request as ChatML, with the tools in the system turn (Hermes
  style, as ../shared/tools/tools-chatml.jinja renders them) when `renders_tools`, else dropped
  silently, as llama-server drops them when its template cannot render tools;
- `POST /tokenize`: its own tokenizer, deliberately not cl100k, so our counts differ from it as
  they do from a real model's: a token per special token (`<|im_start|>`), per run of up to 8
  letters or 3 punctuation marks (with the space before it), per digit (Gemma and Llama 2 split
  numbers into digits), per other run of whitespace or underscore; a BOS token with
  `add_special`;
- `POST /v1/chat/completions`, streamed or not. The prompt is the rendered request, tokenized;
  `usage.prompt_tokens` is all of it. Each slot keeps the tokens of its last prompt and answer
  (a prefix cache): a request reuses their longest common prefix (`timings.cache_n`, at most
  all but one token: llama-server evaluates the last one again) and processes the rest
  (`timings.prompt_n`). The slot is `id_slot` when given, else the one whose cache shares the
  most of the prompt (over 10% of it, llama-server's `slot_prompt_similarity`), else the least
  recently used; a request waits while its slot serves another. A prompt of a slot's `n_ctx`
  tokens or more is refused as llama-server refuses it: HTTP 400, `exceed_context_size_error`.

Its slots share one cache of `n_ctx` tokens when `unified` (llama-server's default: `-np` unset
starts 4 slots with `kv_unified`; each slot may hold `n_ctx`), else each has `n_ctx / slots`.
With `seconds_per_token` a request takes that long per token it processes, and requests overlap:
when those decoding at once need more than the shared cache holds (prompt and answer), every
one of them fails as llama-server fails them, "Context size has been exceeded." (HTTP 500, or an
error event when the stream has sent its progress), and their slots' caches are emptied. A
client that goes away while its prompt is processed leaves it processed to the end (the server
finishes its batch), its slot busy meanwhile.

Its timings are its own arithmetic over these tokens, not a model's speed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

MODEL = "standin.gguf"
ANSWER = "Done: I set it as you asked. Tell me if you want anything else changed."
BOS = 2
SIMILARITY = 0.1  # the share of a prompt a slot's cache must hold to be chosen for it
_SPECIAL = re.compile(r"(<\|\w+\|>)")  # each one token, never part of another
_PIECES = re.compile(r" ?[^\W\d_]{1,8}|\d| ?[^\w\s]{1,3}|\s+|_")


@dataclass
class Slot:
    id: int
    tokens: list[int] = field(default_factory=list)  # its last prompt and answer
    used: float = 0.0  # when it last served a request
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass
class Job:
    """A request decoding: the cache cells it takes (prompt and answer), whether the cache
    filled under it."""

    cells: int
    failed: asyncio.Event = field(default_factory=asyncio.Event)
    started: asyncio.Event = field(default_factory=asyncio.Event)


CACHE_FULL = "Context size has been exceeded."


def cache_full() -> dict[str, Any]:
    """llama-server's error when its cache filled while decoding (HTTP 500)."""
    return {"error": {"code": 500, "message": CACHE_FULL, "type": "server_error"}}


def common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def overflow(tokens: int, n_ctx: int) -> dict[str, Any]:
    """llama-server's answer to a prompt that does not fit (HTTP 400)."""
    message = (
        f"request ({tokens} tokens) exceeds the available context size ({n_ctx} tokens), "
        "try increasing it"
    )
    error = {"code": 400, "message": message, "type": "exceed_context_size_error"}
    return {"error": {**error, "n_prompt_tokens": tokens, "n_ctx": n_ctx}}


async def _first(*waits: Any) -> None:
    """Wait until the first of `waits` is done (the others are cancelled)."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in tasks:
        task.cancel()


def _text(content: Any) -> str:
    """A message's text (parts other than text, such as images, are not rendered)."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


class LlamaStandin:
    def __init__(
        self,
        n_ctx: int = 8192,
        slots: int = 1,
        renders_tools: bool = False,
        *,
        unified: bool | None = None,
        seconds_per_token: float = 0.0,
    ) -> None:
        self.n_ctx, self.renders_tools = n_ctx, renders_tools
        self.unified = slots > 1 if unified is None else unified
        # (without a shared cache each slot has its share; llama.cpp rounds it up to 256)
        self.slot_ctx = n_ctx if self.unified else n_ctx // slots
        self.seconds_per_token = seconds_per_token
        self.slots = [Slot(i) for i in range(slots)]
        self.decoding: dict[int, Job] = {}  # slot id -> the request it decodes
        self.failures = 0  # requests failed because the shared cache filled
        # when set: a request not streamed (a summary) decodes until this is set, as a model
        # writing a long answer does (tests make it be in flight when the next request comes)
        self.hold: asyncio.Event | None = None
        self.log: list[tuple[bool, int, int, bool]] = []  # streamed, slot, prompt, failed
        self.vocab: dict[str, int] = {}
        self.url = ""  # http://127.0.0.1:PORT, once started
        self._runner: web.AppRunner | None = None

    async def start(self) -> LlamaStandin:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/health", self._health)
        app.router.add_get("/props", self._props)
        app.router.add_get("/slots", self._slots)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/apply-template", self._apply_template)
        app.router.add_post("/tokenize", self._tokenize)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/chat/completions", self._chat)
        self._runner = web.AppRunner(app, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> LlamaStandin:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # --- the template and the tokenizer -----------------------------------------------------

    def render(self, body: dict[str, Any]) -> str:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        tools = body.get("tools") if self.renders_tools else None
        out = []
        if tools:
            head = ""
            if messages and messages[0].get("role") == "system":
                head = _text(messages.pop(0).get("content")) + "\n\n"
            listed = "".join(json.dumps(t) + "\n" for t in tools)
            out.append(
                f"<|im_start|>system\n{head}You may call functions. Their signatures, one JSON "
                f"object per line:\n<tools>\n{listed}</tools>\nTo call one, answer with:\n"
                '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
                "</tool_call><|im_end|>\n"
            )
        for m in messages:
            role, text = m.get("role"), _text(m.get("content"))
            if role == "tool":
                text, role = f"<tool_response>\n{text}\n</tool_response>", "user"
            for call in m.get("tool_calls") or []:
                f = call.get("function") or {}
                text += f'\n<tool_call>\n{{"name": "{f.get("name")}", "arguments": '
                text += f"{f.get('arguments')}}}\n</tool_call>"
            out.append(f"<|im_start|>{role}\n{text}<|im_end|>\n")
        return "".join(out) + "<|im_start|>assistant\n"

    def tokenize(self, text: str, add_special: bool = False) -> list[int]:
        pieces = [
            piece
            for i, part in enumerate(_SPECIAL.split(text))
            for piece in ([part] if i % 2 else _PIECES.findall(part))
        ]
        ids = [self.vocab.setdefault(p, len(self.vocab) + 3) for p in pieces]
        return [BOS, *ids] if add_special else ids

    # --- endpoints ----------------------------------------------------------------------------

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _props(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "default_generation_settings": {"params": {}, "n_ctx": self.slot_ctx},
                "total_slots": len(self.slots),
                "model_alias": MODEL,
                "model_path": MODEL,
                "modalities": {"vision": False, "video": False, "audio": False},
                "endpoint_slots": True,
                "endpoint_props": False,
                "endpoint_metrics": False,
                "chat_template_caps": {"supports_tools": self.renders_tools},
                "build_info": "stand-in (tests/llama_standin.py)",
                "is_sleeping": False,
            }
        )

    async def _slots(self, request: web.Request) -> web.Response:
        return web.json_response(
            [
                {"id": s.id, "n_ctx": self.slot_ctx, "speculative": False,
                 "is_processing": s.lock.locked()}
                for s in self.slots
            ]
        )  # fmt: skip

    async def _models(self, request: web.Request) -> web.Response:
        entry = {"id": MODEL, "object": "model", "created": 0, "owned_by": "llamacpp"}
        return web.json_response({"object": "list", "data": [entry]})

    async def _apply_template(self, request: web.Request) -> web.Response:
        return web.json_response({"prompt": self.render(await request.json())})

    async def _tokenize(self, request: web.Request) -> web.Response:
        body = await request.json()
        tokens = self.tokenize(str(body.get("content", "")), bool(body.get("add_special")))
        return web.json_response({"tokens": tokens})

    def _slot(self, wanted: Any, prompt: list[int]) -> Slot:
        if isinstance(wanted, int) and 0 <= wanted < len(self.slots):
            return self.slots[wanted]
        best = max(self.slots, key=lambda s: common_prefix(s.tokens, prompt))
        if common_prefix(best.tokens, prompt) > SIMILARITY * len(prompt):
            return best
        return min(self.slots, key=lambda s: s.used)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        started = time.perf_counter()
        prompt = self.tokenize(self.render(body), add_special=True)
        if len(prompt) >= self.slot_ctx:
            return web.json_response(overflow(len(prompt), self.slot_ctx), status=400)
        slot = self._slot(body.get("id_slot"), prompt)
        text, made = self._answer(body, len(prompt))
        job = Job(len(prompt) + made)
        # (the server finishes a prompt it started even when the client goes away)
        streamed = bool(body.get("stream"))
        work = asyncio.ensure_future(self._decode(slot, prompt, job, streamed))
        progress = bool(body.get("stream") and body.get("return_progress"))
        if progress:
            await job.started.wait()
        cache_n = await asyncio.shield(work)
        if job.failed.is_set() and not progress:
            return web.json_response(cache_full(), status=500)
        slot.tokens = [] if job.failed.is_set() else prompt + self.tokenize(text)
        done = {
            "usage": {
                "prompt_tokens": len(prompt),
                "completion_tokens": made,
                "total_tokens": len(prompt) + made,
                "prompt_tokens_details": {"cached_tokens": cache_n},
            },
            "timings": {
                "cache_n": cache_n,
                "prompt_n": len(prompt) - cache_n,
                "prompt_ms": (time.perf_counter() - started) * 1000,
                "predicted_n": made,
            },
        }
        finish = "stop" if text == ANSWER else "length"
        if body.get("stream"):
            return await self._stream(request, body, text, finish, done, job.failed.is_set())
        message = {"role": "assistant", "content": text}
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return web.json_response(
            {"object": "chat.completion", "model": MODEL, "choices": [choice], **done}
        )

    async def _decode(self, slot: Slot, prompt: list[int], job: Job, streamed: bool) -> int:
        """The request in its slot (waiting while the slot serves another): the tokens it
        reused from the slot's cache. It fails, with every other request decoding, when they
        need more than the shared cache holds."""
        async with slot.lock:
            job.started.set()
            cache_n = min(common_prefix(slot.tokens, prompt), len(prompt) - 1)
            taken = sum(j.cells for j in self.decoding.values())
            if self.unified and taken + job.cells > self.n_ctx:
                for other in [*self.decoding.values(), job]:
                    other.failed.set()
                    self.failures += 1
            self.decoding[slot.id] = job
            try:
                seconds = (len(prompt) - cache_n) * self.seconds_per_token
                if seconds and not job.failed.is_set():
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(job.failed.wait(), seconds)
                if self.hold is not None and not streamed:
                    await _first(job.failed.wait(), self.hold.wait())
            finally:
                del self.decoding[slot.id]
                self.log.append((streamed, slot.id, len(prompt), job.failed.is_set()))
            if job.failed.is_set():
                slot.tokens = []
            slot.used = time.monotonic()
            return cache_n

    def _answer(self, body: dict[str, Any], prompt: int) -> tuple[str, int]:
        """ANSWER's words while they fit `max_tokens` and the context; the text and its
        tokens."""
        limit = body.get("max_tokens", body.get("max_completion_tokens"))
        room = self.n_ctx - prompt
        limit = room if not isinstance(limit, int) or limit < 0 else min(limit, room)
        text, made = "", 0
        for word in re.findall(r"\S+\s*", ANSWER):
            size = len(self.tokenize(word))
            if made + size > limit:
                break
            text, made = text + word, made + size
        return text, made

    async def _stream(
        self,
        request: web.Request,
        body: dict[str, Any],
        text: str,
        finish: str,
        done: Any,
        failed: bool = False,
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        async def send(choices: list[Any], **extra: Any) -> None:
            data = {"object": "chat.completion.chunk", "model": MODEL, "choices": choices, **extra}
            await response.write(f"data: {json.dumps(data)}\n\n".encode())

        def delta(piece: dict[str, Any], reason: str | None = None) -> list[Any]:
            return [{"index": 0, "delta": piece, "finish_reason": reason}]

        timings = done["timings"]
        if body.get("return_progress"):
            total, cached = timings["prompt_n"] + timings["cache_n"], timings["cache_n"]
            progress = {"total": total, "cache": cached, "processed": total, "time_ms": 0}
            await send([], prompt_progress=progress)
        if failed:  # (after the progress: an error event, as llama-server sends it)
            await response.write(f"data: {json.dumps(cache_full())}\n\n".encode())
            await response.write_eof()
            return response
        await send(delta({"role": "assistant", "content": None}))
        for word in re.findall(r"\S+\s*", text):
            await send(delta({"content": word}))
        if (body.get("stream_options") or {}).get("include_usage"):
            await send(delta({}, finish))
            await send([], **done)
        else:
            await send(delta({}, finish), timings=timings)
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

"""The llama-server stand-in (tests/llama_standin.py) answers as docs/DESIGN.md §7 says
llama-server does, as our own probes, counts and error parsing read it: the benches that run
against it in CI measure our code, not a server that could not exist."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from comfyui_assistant.core.provider import server_counts
from comfyui_assistant.core.provider.provider_config import resolve
from comfyui_assistant.core.provider.provider_probes import provider_capabilities, provider_window
from comfyui_assistant.core.provider.provider_profiles import is_context_overflow, window_from_error
from comfyui_assistant.core.tokens.tokens import counter_for

from .llama_standin import ANSWER, MODEL, LlamaStandin

SYSTEM: Any = {"role": "system", "content": "You are ComfyUI Assistant. Help with workflows."}
TOOLS = [{"type": "function", "function": {"name": "getWorkflow", "parameters": {}}}]


pytestmark = pytest.mark.usefixtures("fresh_probes")  # (conftest: no cached probe or count)


@pytest.fixture
async def llama() -> AsyncIterator[LlamaStandin]:
    async with LlamaStandin(n_ctx=4096, slots=2) as server:
        yield server


async def chat(server: LlamaStandin, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """A non-streamed completion: its status and JSON."""
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{server.url}/v1/chat/completions", json={"model": MODEL, **body}) as r,
    ):
        return r.status, await r.json()


def user(text: str) -> Any:
    return {"role": "user", "content": text}


async def test_our_probes_and_counts_read_it_as_llama_cpp(llama: LlamaStandin) -> None:
    settings = resolve({}, {"LLM_BASE_URL": f"{llama.url}/v1", "LLM_MODEL": MODEL})
    window = await provider_window(settings, MODEL)
    assert window is not None and window.tokens == 4096
    caps = await provider_capabilities(settings, MODEL)
    assert (caps.tools, caps.counts, caps.slots, caps.vision) == (False, True, 2, False)
    messages = [SYSTEM, user("Add a LoRA loader, strength 0.8, seed 123456789.")]
    parts = await server_counts.server_parts(settings, MODEL, messages, TOOLS)
    assert parts is not None and parts.tools == 0  # its template drops the tools
    status, answer = await chat(llama, {"messages": messages, "tools": TOOLS})
    assert status == 200 and answer["choices"][0]["message"]["content"] == ANSWER
    assert answer["usage"]["prompt_tokens"] == parts.total  # as §7: /tokenize = usage
    # its tokenizer is not ours (a digit per token), so our counts must be corrected
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{llama.url}/tokenize", json={"content": "seed 123456789"}) as r,
    ):
        assert len((await r.json())["tokens"]) == 11
    assert counter_for("gpt-4").text("seed 123456789") == 5


async def test_a_template_that_renders_tools_counts_them(llama: LlamaStandin) -> None:
    llama.renders_tools = True
    settings = resolve({}, {"LLM_BASE_URL": f"{llama.url}/v1", "LLM_MODEL": MODEL})
    assert (await provider_capabilities(settings, MODEL)).tools is True
    parts = await server_counts.server_parts(settings, MODEL, [SYSTEM, user("hi")], TOOLS)
    assert parts is not None and parts.tools > 10


async def test_each_slot_reuses_the_prefix_it_holds(llama: LlamaStandin) -> None:
    first = [SYSTEM, user("Make the image a bit warmer.")]
    _, a = await chat(llama, {"messages": first, "id_slot": 0})
    assert a["timings"]["cache_n"] == 0 and a["timings"]["prompt_n"] == a["usage"]["prompt_tokens"]
    # the next turn: everything up to the new user message is reused, the answer included
    answer = {"role": "assistant", "content": a["choices"][0]["message"]["content"]}
    second = [*first, answer, user("Set the steps to 28.")]
    _, b = await chat(llama, {"messages": second, "id_slot": 0})
    assert b["timings"]["cache_n"] > a["usage"]["prompt_tokens"]
    new = "<|im_end|>\n<|im_start|>user\nSet the steps to 28.<|im_end|>\n<|im_start|>assistant\n"
    assert b["timings"]["prompt_n"] == len(llama.tokenize(new))  # what follows the answer
    assert b["timings"]["cache_n"] + b["timings"]["prompt_n"] == b["usage"]["prompt_tokens"]
    # the same request again: all but the last token reused
    _, again = await chat(llama, {"messages": second, "id_slot": 0})
    assert again["timings"]["prompt_n"] == 1
    # another slot holds nothing of it; without id_slot the slot holding most of it is chosen
    _, other = await chat(llama, {"messages": second, "id_slot": 1})
    assert other["timings"]["cache_n"] == 0
    changed = [{"role": "system", "content": "Another prompt entirely."}, *second[1:]]
    _, moved = await chat(llama, {"messages": changed, "id_slot": 0})
    assert moved["timings"]["cache_n"] < 5  # a changed system prompt: processed again
    _, chosen = await chat(llama, {"messages": [*second, answer, user("Run it.")]})
    assert chosen["timings"]["cache_n"] >= b["usage"]["prompt_tokens"]  # slot 1 held it


async def test_a_prompt_over_the_context_is_refused_as_llama_server_does() -> None:
    async with LlamaStandin(n_ctx=64) as small:
        status, body = await chat(small, {"messages": [user("word " * 100)]})
    assert status == 400
    error = body["error"]
    assert error["type"] == "exceed_context_size_error" and error["n_ctx"] == 64
    assert error["message"].startswith(f"request ({error['n_prompt_tokens']} tokens) exceeds")
    assert window_from_error(error["message"]) == 64
    assert is_context_overflow(400, error["message"], error["type"])


async def test_a_stream_ends_with_usage_and_timings(llama: LlamaStandin) -> None:
    body = {
        "model": MODEL,
        "messages": [SYSTEM, user("hi")],
        "stream": True,
        "stream_options": {"include_usage": True},
        "return_progress": True,
        "max_tokens": 4,
    }
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{llama.url}/v1/chat/completions", json=body) as r,
    ):
        events = (await r.text()).strip().split("\n\n")
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-1]]
    assert "prompt_progress" in chunks[0]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text and ANSWER.startswith(text) and text != ANSWER  # cut at max_tokens
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "length"
    last = chunks[-1]
    assert last["choices"] == [] and last["usage"]["completion_tokens"] <= 4
    assert last["timings"]["prompt_n"] == last["usage"]["prompt_tokens"]

"""The context budget: the model table, where the window comes from (including each provider's
own metadata, asked of a real HTTP server on a socket), the budget arithmetic, the error a
request that cannot fit raises, and reading the window out of providers' overflow errors."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver
from comfyui_assistant.core.provider import provider_probes as probes
from comfyui_assistant.core.provider.budget import (
    Budget,
    ContextBudgetError,
    Window,
    compute_budget,
    resolve_window,
    table_window,
)
from comfyui_assistant.core.provider.provider_config import ProviderSettings
from comfyui_assistant.core.provider.provider_probes import provider_window
from comfyui_assistant.core.provider.provider_profiles import is_context_overflow, window_from_error

# --- the model table ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "tokens"),
    [
        ("gpt-4o", 128_000),
        ("openai/gpt-4o-mini", 128_000),
        ("gpt-4o-2024-08-06", 128_000),
        ("gpt-4.1-mini", 1_047_576),
        ("gpt-5-mini", 272_000),
        ("gpt-5-chat-latest", 128_000),
        ("o3-mini", 200_000),
        ("openai/o4-mini", 200_000),
        ("o1-mini", 128_000),
        ("gpt-4-turbo", 128_000),
        ("gpt-4-0613", 8_192),
        ("gpt-3.5-turbo", 16_385),
        ("gpt-oss:20b", 131_072),
        ("openai/gpt-oss-120b", 131_072),
        ("anthropic/claude-3.5-sonnet", 200_000),
        ("claude-sonnet-4-20250514", 200_000),
        ("google/gemini-2.5-pro", 1_048_576),
        ("gemini-1.5-flash", 1_048_576),
        ("llama3.1:8b-instruct-q4_K_M", 131_072),
        ("meta-llama/llama-3.1-8b-instruct", 131_072),
        ("llama-3.3-70b-versatile", 131_072),
        ("hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M", 131_072),
        ("llama3:8b", 8_192),
        ("Meta-Llama-3-8B-Instruct", 8_192),
        ("qwen3:8b", 40_960),
        ("qwen/qwen3-32b", 40_960),
        ("qwen3-coder:30b", 262_144),
        ("Qwen/Qwen3-30B-A3B-Instruct-2507", 262_144),
        ("Qwen/Qwen2.5-7B-Instruct", 32_768),
        ("qwen2.5-coder:7b", 32_768),
        ("mistral:7b", 32_768),
        ("mixtral-8x7b-32768", 32_768),
        ("mistral-nemo:12b", 131_072),
        ("gemma2:9b", 8_192),
        ("gemma3:4b", 131_072),
        ("gemma3:1b", 32_768),
        ("google/gemma-3-27b-it", 131_072),
        ("phi3:mini", 4_096),
        ("microsoft/Phi-3-mini-128k-instruct", 131_072),
        ("phi3.5:3.8b", 131_072),
        ("phi4:14b", 16_384),
        ("phi4-mini:3.8b", 131_072),
        ("deepseek-r1:8b", 131_072),
        ("deepseek-r1-distill-qwen-7b", 131_072),
        ("deepseek-chat", 65_536),
        ("deepseek/deepseek-chat-v3-0324", 65_536),
    ],
)
def test_model_table(model: str, tokens: int) -> None:
    window = table_window(model)
    assert window is not None and (window.tokens, window.source) == (tokens, "model table")


def test_the_table_names_the_family_it_matched() -> None:
    assert table_window("qwen3:8b") == Window(40_960, "model table", "model table: qwen3 → 40960")


@pytest.mark.parametrize("model", ["my-finetune-v2", "stable-code:3b", ""])
def test_an_unknown_model_is_not_in_the_table(model: str) -> None:
    assert table_window(model) is None


# --- where the window comes from ------------------------------------------------------------

ENV = ProviderSettings(context_window=16_384, sources={"contextWindow": "environment"})
STORED = ProviderSettings(context_window=24_576, sources={"contextWindow": "settings"})
PLAIN = ProviderSettings()
META = Window(8_192, "provider", "Ollama /api/show num_ctx=8192")


def test_the_thread_setting_wins() -> None:
    window = resolve_window(thread_setting=65_536, settings=ENV, model="qwen3:8b", provider=META)
    assert window == Window(65_536, "thread setting", "this thread's setting")


def test_then_the_provider_settings_say_where_they_came_from() -> None:
    got = [
        resolve_window(thread_setting=None, settings=s, model="qwen3:8b", provider=META)
        for s in (ENV, STORED)
    ]
    assert got == [
        Window(16_384, "environment", "LLM_CONTEXT_WINDOW"),
        Window(24_576, "settings", "Settings"),
    ]


def test_then_the_provider_metadata_before_the_table() -> None:
    # qwen3 may reach 40,960, but the server runs it with 8,192
    window = resolve_window(thread_setting=None, settings=PLAIN, model="qwen3:8b", provider=META)
    assert window == META


def test_then_the_table_then_the_default() -> None:
    got = [
        resolve_window(thread_setting=None, settings=PLAIN, model=m, provider=None)
        for m in ("qwen3:8b", "my-finetune")
    ]
    assert got == [
        Window(40_960, "model table", "model table: qwen3 → 40960"),
        Window(8_192, "default", "the default for a model of unknown window"),
    ]


# --- the provider's metadata, from a real server ---------------------------------------------


@dataclass
class Status:
    status: int
    body: Any = None


@dataclass
class Raw:
    """A 200 whose body is these bytes as they are."""

    data: bytes


@dataclass
class Hang:
    """Accept the request and never answer."""


@dataclass
class MetadataServer:
    """Answers "METHOD /path" from `routes` (a JSON body, Status, Raw or Hang); 404 otherwise."""

    routes: dict[str, Any]
    seen: list[str] = field(default_factory=list)
    bodies: list[Any] = field(default_factory=list)
    port: int = 0
    runner: web.AppRunner | None = None

    async def start(self) -> MetadataServer:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self.runner = web.AppRunner(app, handler_cancellation=True)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    def settings(self, host: str = "127.0.0.1", path: str = "/v1", **kw: Any) -> ProviderSettings:
        return ProviderSettings(base_url=f"http://{host}:{self.port}{path}", **kw)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        key = f"{request.method} {request.path}"
        self.seen.append(key)
        if request.can_read_body:
            self.bodies.append(await request.json())
        reply = self.routes.get(key)
        if reply is None:
            return web.json_response({"error": "not found"}, status=404)
        if isinstance(reply, Status):
            return web.json_response(reply.body, status=reply.status)
        if isinstance(reply, Raw):
            return web.Response(body=reply.data, content_type="text/html")
        if isinstance(reply, Hang):
            await asyncio.sleep(3600)
        return web.json_response(reply)


@pytest.fixture(autouse=True)
def fresh_caches() -> Iterator[None]:
    probes.clear_caches()
    yield
    probes.clear_caches()


@pytest.fixture
async def serve() -> AsyncIterator[Any]:
    servers: list[MetadataServer] = []

    async def start(routes: dict[str, Any]) -> MetadataServer:
        servers.append(await MetadataServer(routes).start())
        return servers[-1]

    yield start
    for server in servers:
        assert server.runner is not None
        await server.runner.cleanup()


class Loopback(AbstractResolver):
    """Every host name is 127.0.0.1, so a test server can stand in for ollama or openrouter.ai."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[dict[str, Any]]:
        return [
            {
                "hostname": host,
                "host": "127.0.0.1",
                "port": port,
                "family": socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
        ]

    async def close(self) -> None:
        pass


@pytest.fixture
async def loopback() -> AsyncIterator[aiohttp.ClientSession]:
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(resolver=Loopback()))
    yield session
    await session.close()


OLLAMA_MODELS = {
    "object": "list",
    "data": [{"id": "qwen3:8b", "object": "model", "created": 1746000000, "owned_by": "library"}],
}
OLLAMA_PARAMETERS = (
    'repeat_penalty                 1\nstop                           "<|im_start|>"\n'
    'stop                           "<|im_end|>"\ntemperature                    0.6\n'
    "top_k                          20\ntop_p                          0.95"
)


def ollama_show(num_ctx: int | None = None, context_length: int = 40960) -> dict[str, Any]:
    parameters = OLLAMA_PARAMETERS
    if num_ctx is not None:
        parameters = f"num_ctx                        {num_ctx}\n{parameters}"
    return {
        "license": "Apache License 2.0 ...",
        "modelfile": '# Modelfile generated by "ollama show"\nFROM /root/.ollama/models/blobs/x\n',
        "parameters": parameters,
        "template": "{{- if .Messages }}...",
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": "qwen3",
            "families": ["qwen3"],
            "parameter_size": "8.2B",
            "quantization_level": "Q4_K_M",
        },
        "model_info": {
            "general.architecture": "qwen3",
            "general.basename": "Qwen3",
            "general.file_type": 15,
            "general.parameter_count": 8190735360,
            "general.size_label": "8B",
            "qwen3.attention.head_count": 32,
            "qwen3.attention.head_count_kv": 8,
            "qwen3.block_count": 36,
            "qwen3.context_length": context_length,
            "qwen3.embedding_length": 4096,
            "qwen3.rope.freq_base": 1000000,
            "tokenizer.ggml.model": "gpt2",
        },
        "capabilities": ["completion", "tools", "thinking"],
        "modified_at": "2025-05-01T10:00:00.000000000+02:00",
    }


def ollama_ps(*loaded: tuple[str, int]) -> dict[str, Any]:
    return {
        "models": [
            {
                "name": name,
                "model": name,
                "size": 6654289920,
                "digest": "500a1f067a9f782620b40bee6f7b0c89e17ae61f686b92c24933e4ca4b2b8b41",
                "details": {"format": "gguf", "family": "qwen3", "parameter_size": "8.2B"},
                "expires_at": "2025-05-01T10:05:00.000000000+02:00",
                "size_vram": 6654289920,
                "context_length": context_length,
            }
            for name, context_length in loaded
        ]
    }


async def test_ollama_num_ctx_from_the_modelfile(serve: Any, loopback: Any) -> None:
    server = await serve({"GET /api/ps": ollama_ps(), "POST /api/show": ollama_show(num_ctx=8192)})
    settings = server.settings(host="ollama.internal")
    assert settings.label == "Ollama"
    window = await provider_window(settings, "qwen3:8b", loopback)
    assert window == Window(8192, "provider", "Ollama /api/show num_ctx=8192")
    assert server.seen == ["GET /api/ps", "POST /api/show"]
    assert server.bodies == [{"model": "qwen3:8b"}]
    assert not loopback.closed  # the caller's session stays open


async def test_ollama_without_num_ctx_assumes_its_default(serve: Any, loopback: Any) -> None:
    server = await serve({"GET /api/ps": ollama_ps(), "POST /api/show": ollama_show()})
    window = await provider_window(server.settings(host="ollama.internal"), "qwen3:8b", loopback)
    assert window == Window(
        4096,
        "provider",
        "Ollama default num_ctx 4096 (the model allows 40960; set num_ctx in the Modelfile or "
        "LLM_CONTEXT_WINDOW to use more)",
    )


async def test_ollama_small_model_keeps_its_own_maximum(serve: Any) -> None:
    show = ollama_show(context_length=2048)
    server = await serve({"GET /api/ps": ollama_ps(), "POST /api/show": show})
    window = await provider_window(server.settings(), "qwen3:8b")  # found on any port
    assert window == Window(2048, "provider", "Ollama /api/show context_length=2048")


async def test_ollama_a_loaded_model_shows_its_real_context(serve: Any, loopback: Any) -> None:
    routes = {
        "GET /api/ps": ollama_ps(("llama3.2:latest", 2048), ("qwen3:8b", 32768)),
        "POST /api/show": ollama_show(),
    }
    server = await serve(routes)
    settings = server.settings(host="ollama.internal")
    got = [await provider_window(settings, m, loopback) for m in ("qwen3:8b", "llama3.2")]
    assert got == [
        Window(32768, "provider", "Ollama /api/ps context_length=32768"),
        Window(2048, "provider", "Ollama /api/ps context_length=2048"),
    ]
    assert "POST /api/show" not in server.seen


async def test_ollama_remembers_the_context_after_the_model_unloads(
    serve: Any, loopback: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(probes, "CACHE_SECONDS", 0.0)
    routes = {"GET /api/ps": ollama_ps(("qwen3:8b", 32768)), "POST /api/show": ollama_show()}
    server = await serve(routes)
    settings = server.settings(host="ollama.internal")
    await provider_window(settings, "qwen3:8b", loopback)
    routes["GET /api/ps"] = ollama_ps()  # unloaded after its keep-alive
    window = await provider_window(settings, "qwen3:8b", loopback)
    assert window == Window(
        32768, "provider", "Ollama /api/ps context_length=32768 (when last loaded)"
    )


async def test_answers_are_cached_and_guesses_retried_soon(
    serve: Any, loopback: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    routes = {"GET /api/ps": ollama_ps(), "POST /api/show": ollama_show(num_ctx=8192)}
    server = await serve(routes)
    settings = server.settings(host="ollama.internal")
    await provider_window(settings, "qwen3:8b", loopback)
    await provider_window(settings, "qwen3:8b", loopback)
    assert len(server.seen) == 2  # the second call asked nobody

    monkeypatch.setattr(probes, "RETRY_SECONDS", 0.0)
    routes["POST /api/show"] = ollama_show()  # not loaded, no num_ctx: a guess
    first = await provider_window(settings, "llama3.2", loopback)
    routes["GET /api/ps"] = ollama_ps(("llama3.2:latest", 16384))
    second = await provider_window(settings, "llama3.2", loopback)
    assert (first and first.tokens, second and second.tokens) == (4096, 16384)


LMSTUDIO_ENTRY = {
    "id": "qwen3-8b",
    "object": "model",
    "type": "llm",
    "publisher": "qwen",
    "arch": "qwen3",
    "compatibility_type": "gguf",
    "quantization": "Q4_K_M",
    "state": "loaded",
    "max_context_length": 32768,
    "loaded_context_length": 8192,
}
LMSTUDIO_V1_MODELS = {
    "object": "list",
    "data": [{"id": "qwen3-8b", "object": "model", "owned_by": "organization_owner"}],
}


async def test_lmstudio_prefers_the_loaded_context(serve: Any) -> None:
    routes = {"GET /v1/models": LMSTUDIO_V1_MODELS, "GET /api/v0/models/qwen3-8b": LMSTUDIO_ENTRY}
    server = await serve(routes)
    window = await provider_window(server.settings(), "qwen3-8b")
    assert window == Window(8192, "provider", "LM Studio /api/v0/models loaded_context_length=8192")


async def test_lmstudio_not_loaded_gives_the_maximum(serve: Any) -> None:
    entry = {k: v for k, v in LMSTUDIO_ENTRY.items() if k != "loaded_context_length"}
    routes = {"GET /api/v0/models": {"object": "list", "data": [{**entry, "state": "not-loaded"}]}}
    server = await serve(routes)
    window = await provider_window(server.settings(), "qwen3-8b")
    assert window == Window(32768, "provider", "LM Studio /api/v0/models max_context_length=32768")


OPENROUTER_MODELS = {
    "data": [
        {
            "id": "openai/gpt-4o",
            "canonical_slug": "openai/gpt-4o",
            "name": "OpenAI: GPT-4o",
            "created": 1715367049,
            "context_length": 128000,
            "architecture": {"modality": "text+image->text", "tokenizer": "GPT"},
            "pricing": {"prompt": "0.0000025", "completion": "0.00001"},
            "top_provider": {
                "context_length": 128000,
                "max_completion_tokens": 16384,
                "is_moderated": True,
            },
            "per_request_limits": None,
        },
        {
            "id": "deepseek/deepseek-r1:free",
            "name": "DeepSeek: R1 (free)",
            "context_length": 163840,
            "top_provider": {"context_length": 64000, "max_completion_tokens": 16000},
        },
    ]
}


async def test_openrouter_lists_its_models_once(serve: Any, loopback: Any) -> None:
    server = await serve({"GET /api/v1/models": OPENROUTER_MODELS})
    settings = server.settings(host="openrouter.ai", path="/api/v1", api_key="sk-or-v1-test")
    assert settings.label == "OpenRouter"
    got = [
        await provider_window(settings, m, loopback)
        for m in ("openai/gpt-4o", "deepseek/deepseek-r1:free", "openai/gpt-4o:online", "x/y")
    ]
    assert got == [
        Window(128000, "provider", "OpenRouter /models context_length=128000"),
        Window(64000, "provider", "OpenRouter /models top_provider.context_length=64000"),
        Window(128000, "provider", "OpenRouter /models context_length=128000"),
        None,
    ]
    assert server.seen == ["GET /api/v1/models"]


VLLM_MODELS = {
    "object": "list",
    "data": [
        {
            "id": "Qwen/Qwen2.5-7B-Instruct",
            "object": "model",
            "created": 1746000000,
            "owned_by": "vllm",
            "root": "Qwen/Qwen2.5-7B-Instruct",
            "parent": None,
            "max_model_len": 16384,
            "permission": [{"id": "modelperm-1", "object": "model_permission"}],
        }
    ],
}


async def test_vllm_max_model_len(serve: Any) -> None:
    server = await serve({"GET /v1/models": VLLM_MODELS})
    window = await provider_window(server.settings(), "Qwen/Qwen2.5-7B-Instruct")
    assert window == Window(16384, "provider", "/models max_model_len=16384")
    assert server.seen == ["GET /v1/models"]


async def test_groq_context_window(serve: Any, loopback: Any) -> None:
    models = {
        "object": "list",
        "data": [
            {
                "id": "llama-3.3-70b-versatile",
                "object": "model",
                "owned_by": "Meta",
                "active": True,
                "context_window": 131072,
                "max_completion_tokens": 32768,
            }
        ],
    }
    server = await serve({"GET /openai/v1/models": models})
    settings = server.settings(host="api.groq.com", path="/openai/v1")
    window = await provider_window(settings, "llama-3.3-70b-versatile", loopback)
    assert window == Window(131072, "provider", "Groq /models context_window=131072")


LLAMACPP_MODELS = {
    "object": "list",
    "data": [
        {
            "id": "Llama-3.2-3B-Instruct-Q4_K_M.gguf",
            "object": "model",
            "owned_by": "llamacpp",
            "meta": {"n_vocab": 128256, "n_ctx_train": 131072, "n_params": 3212749888},
        }
    ],
}
LLAMACPP_PROPS = {
    "default_generation_settings": {
        "id": 0,
        "n_ctx": 8192,
        "is_processing": False,
        "params": {"n_predict": -1, "temperature": 0.8, "top_k": 40},
    },
    "total_slots": 1,
    "model_path": "/models/Llama-3.2-3B-Instruct-Q4_K_M.gguf",
    "modalities": {"vision": False, "audio": False},
    "build_info": "b5200-1d735c0b",
}


async def test_llamacpp_props_not_the_training_length(serve: Any) -> None:
    server = await serve({"GET /v1/models": LLAMACPP_MODELS, "GET /props": LLAMACPP_PROPS})
    window = await provider_window(server.settings(), "Llama-3.2-3B-Instruct-Q4_K_M.gguf")
    assert window == Window(8192, "provider", "llama.cpp /props n_ctx=8192")


async def test_openai_is_not_asked() -> None:
    settings = ProviderSettings(base_url="https://api.openai.com/v1", api_key="sk-test")
    assert await provider_window(settings, "gpt-4o") is None


async def test_a_hanging_server_gives_up_quickly(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(probes, "PROBE_TIMEOUT_SECONDS", 0.2)
    server = await serve({"GET /v1/models": Hang()})
    started = time.monotonic()
    assert await provider_window(server.settings(), "qwen3:8b") is None
    assert time.monotonic() - started < 1.5
    assert server.seen == ["GET /v1/models"]  # unreachable: nothing more is tried


async def test_a_failing_server_gives_none(serve: Any) -> None:
    paths = ["GET /v1/models", "GET /props", "GET /api/ps", "POST /api/show"]
    paths += ["GET /api/v0/models/qwen3:8b", "GET /api/v0/models"]
    server = await serve({p: Status(500, {"error": "boom"}) for p in paths})
    assert await provider_window(server.settings(), "qwen3:8b") is None
    assert server.seen == paths


async def test_garbage_gives_none(serve: Any) -> None:
    routes = {
        "GET /v1/models": Raw(b"<html>Welcome to nginx</html>"),
        "GET /props": Raw(b'{"default_generation_settings": {"n_ctx": '),
        "GET /api/ps": {"models": "none"},
        "POST /api/show": {"parameters": 42, "model_info": ["qwen3.context_length"]},
        "GET /api/v0/models/m": {"id": "m", "max_context_length": "big"},
        "GET /api/v0/models": [1, 2, 3],
    }
    server = await serve(routes)
    assert await provider_window(server.settings(), "m") is None


async def test_nothing_listening_gives_none() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = ProviderSettings(base_url=f"http://127.0.0.1:{port}/v1")
    assert await provider_window(settings, "qwen3:8b") is None


# --- the budget -----------------------------------------------------------------------------

SMALL = Window(4096, "provider", "Ollama default num_ctx 4096")
LARGE = Window(200_000, "model table", "model table: claude → 200000")


def test_budget_of_a_small_local_model() -> None:
    result = compute_budget(SMALL, None, 300)
    assert result == Budget(SMALL, reserve=819, margin=122, tools=300, limit=819)
    assert result.available == 2855


def test_budget_of_a_large_hosted_model() -> None:
    result = compute_budget(LARGE, None, 1500)
    assert result == Budget(LARGE, reserve=4096, margin=6000, tools=1500, limit=8192)
    assert result.available == 188_404


def test_reserve_rule() -> None:
    def reserve(tokens: int, max_output: int | None) -> int:
        return compute_budget(Window(tokens, "default", ""), max_output, 0).reserve

    got = [reserve(32_768, None), reserve(8192, None), reserve(4096, None), reserve(1024, None)]
    # 5% in [1024, 4096], at most the answer's limit (20% in [512, 8192], at most half)
    assert got == [1638, 1024, 819, 512]
    assert [reserve(8192, 1000), reserve(8192, 16_000)] == [1000, 4096]  # explicit; at most half


def test_the_answers_limit_is_what_the_window_leaves_within_its_limit_never_below_the_reserve():
    # the reserve is what the budget keeps free; the model may write more when the request
    # leaves room, up to the old 20% limit, and never past what the window holds
    budget = compute_budget(Window(32_768, "settings", "S"), None, 4_000)
    assert (budget.reserve, budget.limit, budget.margin) == (1638, 6553, 983)
    assert budget.answer_limit(10_000) == 6553  # room: the limit
    assert budget.answer_limit(28_000) == 32_768 - 983 - 28_000  # what the window leaves
    full = budget.window.tokens - budget.reserve - budget.margin  # a request at the brim
    assert budget.answer_limit(full) == budget.reserve
    assert budget.answer_limit(full) + full + budget.margin <= 32_768
    # the user's own setting is the limit and the reserve, as it was
    mine = compute_budget(Window(32_768, "settings", "S"), 3000, 4_000)
    assert (mine.reserve, mine.limit, mine.answer_limit(1_000)) == (3000, 3000, 3000)


def test_available_may_be_negative() -> None:
    assert compute_budget(SMALL, None, 4000).available == 4096 - 819 - 122 - 4000


def test_the_error_names_both_numbers_and_what_to_do() -> None:
    window = Window(8192, "provider", "Ollama /api/show num_ctx=8192")
    error = ContextBudgetError.for_message(9500, compute_budget(window, None, 209), "qwen3:8b")
    assert str(error) == (
        "The latest message needs 9,500 tokens but only 6,714 fit in qwen3:8b's context "
        "(window 8,192 from Ollama /api/show num_ctx=8192, 1,024 reserved for the answer, "
        "245 margin, 209 for tools) — shorten the message or raise the window "
        "(LLM_CONTEXT_WINDOW or Settings)."
    )
    assert (error.limit_name, error.limit, error.needed) == ("context budget", 6714, 9500)


# --- the provider's overflow errors ---------------------------------------------------------

OPENAI = (
    "This model's maximum context length is 8192 tokens. However, your messages resulted in "
    "9000 tokens. Please reduce the length of the messages."
)
OPENAI_CLIENT = (
    "Error code: 400 - {'error': {'message': \"This model's maximum context length is 128000 "
    "tokens. However, your messages resulted in 130512 tokens (130000 in the messages, 512 in "
    "the functions). Please reduce the length of the messages or functions.\", 'type': "
    "'invalid_request_error', 'param': 'messages', 'code': 'context_length_exceeded'}}"
)
LLAMACPP = (
    "request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it"
)
LLAMACPP_OLD = "the request exceeds the available context size, try increasing it"
LLAMACPP_BODY = (
    "Error code: 400 - {'error': {'code': 400, 'message': 'the request exceeds the available "
    "context size, try increasing it', 'type': 'exceed_context_size_error', "
    "'n_prompt_tokens': 5000, 'n_ctx': 4096}}"
)
LLAMA_CPP_PYTHON = "Requested tokens (5000) exceed context window of 2048"
VLLM = (
    "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
    "(4000 in the messages, 1000 in the completion). Please reduce the length of the messages "
    "or completion."
)
VLLM_NEW = (
    "'max_tokens' or 'max_completion_tokens' is too large: 1000. This model's maximum context "
    "length is 4096 tokens and your request has 3500 input tokens (1000 > 4096 - 3500)."
)
VLLM_DECODER = (
    "The decoder prompt (length 8825) is longer than the maximum model length of 8192. Make "
    "sure that `max_model_len` is no smaller than the number of text tokens."
)
LMSTUDIO = (
    "Trying to keep the first 5406 tokens when context the overflows. However, the model is "
    "loaded with context length of only 4096 tokens, which is not enough. Try to load the "
    "model with a larger context length, or provide a shorter input"
)
OPENROUTER = (
    "This endpoint's maximum context length is 131072 tokens. However, you requested about "
    "140000 tokens (139000 of text input, 1000 in the output). Please reduce the length of "
    'either one, or use the "middle-out" transform to compress your prompt automatically.'
)
ANTHROPIC = "prompt is too long: 215000 tokens > 200000 maximum"
GEMINI = "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
MISTRAL = (
    "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum "
    "context length"
)
GROQ = "Please reduce the length of the messages or completion."
RATE_LIMIT = (
    "Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit "
    "30000, Requested 50000. The input or output tokens must be reduced in order to run "
    "successfully."
)


@pytest.mark.parametrize(
    ("message", "window"),
    [
        (OPENAI, 8192),
        (OPENAI_CLIENT, 128000),
        (LLAMACPP, 4096),
        (LLAMACPP_OLD, None),
        (LLAMACPP_BODY, 4096),
        (LLAMA_CPP_PYTHON, 2048),
        (VLLM, 4096),
        (VLLM_NEW, 4096),
        (VLLM_DECODER, 8192),
        (LMSTUDIO, 4096),
        (OPENROUTER, 131072),
        (ANTHROPIC, 200000),
        (GEMINI, 1048576),
        (MISTRAL, 32768),
        (GROQ, None),
        ("Incorrect API key provided: sk-wro****", None),
        ("model 'qwen3:8b' not found, try pulling it first", None),
    ],
)
def test_window_from_error(message: str, window: int | None) -> None:
    assert window_from_error(message) == window


@pytest.mark.parametrize(
    ("status", "message", "code", "overflow"),
    [
        (400, OPENAI, "context_length_exceeded", True),
        (400, GROQ, "context_length_exceeded", True),
        (400, LLAMACPP_OLD, None, True),
        (500, LLAMACPP, None, True),
        (400, LLAMACPP_BODY, None, True),
        (None, LMSTUDIO, None, True),  # an error event mid-stream has no status
        (400, VLLM_DECODER, None, True),
        (400, ANTHROPIC, "invalid_request_error", True),
        (400, LLAMA_CPP_PYTHON, None, True),
        (429, RATE_LIMIT, "rate_limit_exceeded", False),
        (401, "Incorrect API key provided: sk-wro****", "invalid_api_key", False),
        (404, "model 'qwen3:8b' not found, try pulling it first", None, False),
        (400, "Invalid parameter: messages with role 'tool' must be a response", None, False),
        # llama.cpp's shared cache filled while decoding: not the window (test_shared_cache.py)
        (500, "Context size has been exceeded.", "server_error", False),
        (None, "Context size has been exceeded.", None, False),
    ],
)
def test_is_context_overflow(status: int | None, message: str, code: str | None, overflow: bool):
    assert is_context_overflow(status, message, code) is overflow

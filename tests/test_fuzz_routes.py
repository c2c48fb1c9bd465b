"""Fuzzing every route: no input may produce a 5xx or a traceback.

The app runs on a real socket in a thread of its own (so hypothesis can drive it from a plain
test); requests are raw HTTP (`http.client`), so bodies can be anything: JSON of any shape with
lone surrogates, huge integers and deep nesting, invalid UTF-8, odd content types, path
parameters and query strings of any length. Valid bodies of each route with one to three
fields changed (tests/fuzz_shapes.py) reach the code behind the first checks. Every JSON answer
must parse as a browser parses it (no NaN or Infinity). Bounded and deterministic
(derandomized); set `FUZZ_EXAMPLES` for a longer run.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from comfyui_assistant.core.base import UsersFile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import App, start_app
from .fuzz_shapes import (
    RAW,
    RAW_LITERALS,
    ROUTE_BODIES,
    SWEEP_BODIES,
    chat_bodies,
    encode,
    mutated,
    single_changes,
)
from .scripted_provider import ScriptedProvider, text_reply

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "300"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Every field name a route reads, so generated objects reach the checks past "unknown key".
FIELDS = (
    "id", "messages", "trigger", "messageId", "tools", "system", "metadata", "role", "parts",
    "type", "text", "state", "toolCallId", "toolName", "input", "output", "url", "mediaType",
    "title", "archived", "enabled", "name", "description", "instructions",
    "replacesSystemPrompt", "baseUrl", "apiKey", "model", "contextWindow", "maxOutputTokens",
    "timeoutSeconds", "content", "language", "prompt", "mode", "workflow", "from", "to",
    "project", "graph", "attachment", "scan", "models",
)  # fmt: skip

# Any code point, lone surrogates included (json.dumps escapes them as \\udXXX).
any_char = st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF)
nasty_text = st.one_of(
    st.text(any_char, max_size=30),
    st.sampled_from(["\ud800", "a\udfffb", "\u00a0sk-key", "x" * 300, "é" * 200, "%00", "../x"]),
)
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=2**63 - 2, max_value=2**70),
    st.integers(max_value=-(2**63) + 1, min_value=-(2**70)),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(RAW_LITERALS).map(lambda literal: RAW + literal),  # NaN, 1e400 in the text
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, nasty_text),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(FIELDS), nasty_text), inner, max_size=5),
    ),
    max_leaves=12,
)
shaped = st.dictionaries(st.sampled_from(FIELDS), json_values, min_size=1, max_size=6)
messages_body = st.fixed_dictionaries(
    {
        "id": nasty_text,
        "messages": st.lists(
            st.fixed_dictionaries(
                {
                    "id": nasty_text,
                    "role": st.sampled_from(["user", "assistant"]),
                    "parts": st.lists(
                        st.fixed_dictionaries(
                            {
                                "type": st.sampled_from(["text", "file", "tool-x"]),
                                "text": nasty_text,
                            }
                        ),
                        max_size=2,
                    ),
                }
            ),
            min_size=1,
            max_size=2,
        ),
    }
)


bodies = st.one_of(
    st.just(b""),
    json_values.map(encode),
    shaped.map(encode),
    messages_body.map(encode),
    mutated(chat_bodies()).map(encode),
    st.integers(1, 3000).map(lambda n: b"[" * n + b"]" * n),
    st.integers(1, 3000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
    st.integers(4000, 6000).map(lambda n: b'{"id": ' + b"7" * n + b"}"),
    st.integers(4000, 6000).map(lambda n: b'{"limit": ' + b"9" * n + b"}"),
    st.binary(max_size=64),
    st.just(b'{"text": "\\ud800"}'),
    st.just(b'{"id": 9223372036854775808}'),
)
content_types = st.sampled_from(
    ["application/json", "application/json", "text/plain", None, "application/json; charset=x"]
)
path_values = st.one_of(
    st.text(any_char, min_size=1, max_size=20),
    st.text("0123456789", min_size=1, max_size=5000),
    st.just("x" * 300),
    st.just("é" * 200),
)
query_values = st.one_of(path_values, st.just("9" * 5000), st.just(""))


def _quote(value: str) -> str:
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


@dataclass(frozen=True)
class Reply:
    status: int
    content_type: str
    body: bytes


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (a browser's JSON.parse refuses it)")


def assert_served_well(reply: Reply, request: Any) -> None:
    """No 5xx, no traceback, and JSON a browser can parse (an answer's or a stream's chunks)."""
    assert reply.status < 500, (request, reply.status, reply.body[:300])
    assert b"Traceback" not in reply.body, reply.body[:500]
    if reply.content_type == "application/json":
        json.loads(reply.body, parse_constant=_no_constant)
    elif reply.content_type == "text/event-stream":
        for line in reply.body.decode().splitlines():
            if line.startswith("data: {"):
                chunk = json.loads(line[6:], parse_constant=_no_constant)
                # our own exception inside the turn (a stream's 500), told as the provider's
                # or as the server's
                error = str(chunk.get("errorText"))
                assert "failed unexpectedly" not in error, (request, chunk)
                assert "an internal error" not in error, (request, chunk)


class ServerThread:
    """The standalone app and a scripted provider on their own event loop."""

    def __init__(self, data_dir: Path, **options: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.provider = self.run(ScriptedProvider().start())
        self.provider.responder = lambda _: text_reply("ok")  # every turn runs to its end
        env = {
            "LLM_BASE_URL": self.provider.base_url,
            "LLM_MODEL": "scripted-model",
            "LLM_CONTEXT_WINDOW": "32768",
        }
        self.app: App = self.run(start_app(data_dir, env, **options))
        self.port = int(self.app.base.rsplit(":", 1)[1])
        self.sent = self.server_errors = 0  # printed at the end (`pytest -s`)

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    def routes(self) -> list[tuple[str, str]]:
        found = set()
        for route in self.app.app.router.routes():
            info = route.resource.get_info() if route.resource is not None else {}
            path = info.get("formatter") or info.get("path")
            if path is not None and route.method != "HEAD":
                found.add((route.method, path))
            elif "prefix" in info:  # static folders: fuzz their file names
                found.add(("GET", info["prefix"] + "/{filename}"))
        return sorted(found)

    def request(
        self, method: str, path: str, body: bytes, content_type: str | None
    ) -> tuple[int, bytes]:
        reply = self.send(method, path, body, content_type)
        return reply.status, reply.body

    def send(
        self,
        method: str,
        path: str,
        body: bytes,
        content_type: str | None,
        extra: dict[str, str] | None = None,
    ) -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Content-Type": content_type} if content_type else {}
        headers.update(extra or {})
        try:
            conn.request(method, path, body=body or None, headers=headers)
            response = conn.getresponse()
            served = response.headers.get_content_type()
            self.sent += 1
            self.server_errors += response.status >= 500
            return Reply(response.status, served, response.read())
        finally:
            conn.close()

    def close(self) -> None:
        self.run(self.app.close())
        self.run(self.provider.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    running = ServerThread(tmp_path_factory.mktemp("fuzz") / "data")
    yield running
    running.close()
    print(f"\nfuzz: {running.sent} requests, {running.server_errors} answered 5xx")


def _fill(template: str, values: list[str]) -> str:
    out, rest = "", template
    while "{" in rest:
        head, _, tail = rest.partition("{")
        _, _, rest = tail.partition("}")
        out += head + _quote(values.pop() if values else "x")
    return out + rest


def test_the_routes_are_all_found(server: ServerThread) -> None:
    routes = server.routes()
    assert ("POST", "/api/assistant/chat") in routes
    assert ("PUT", "/api/assistant/user-context/personas/active") in routes
    assert any(path.startswith("/extensions/") for _, path in routes)
    assert len(routes) >= 40


@FUZZ
@given(data=st.data())
def test_no_input_yields_a_server_error(server: ServerThread, data: st.DataObject) -> None:
    method, path, body, content_type = _draw_request(server, data)
    reply = server.send(method, path, body, content_type)
    assert_served_well(reply, (method, path, body[:200]))


def _draw_request(server: ServerThread, data: st.DataObject) -> tuple[str, str, bytes, str | None]:
    method, template = data.draw(st.sampled_from(server.routes()), label="route")
    path = _fill(template, data.draw(st.lists(path_values, max_size=2), label="params"))
    query = data.draw(
        st.dictionaries(
            st.sampled_from(["q", "limit", "category", "archived", "debug", "workflow", "x"]),
            query_values, max_size=2), label="query")  # fmt: skip
    if query:
        path += "?" + urlencode(
            {k: v.encode("utf-8", "surrogatepass") for k, v in query.items()}, safe=""
        )
    body = data.draw(bodies, label="body") if method != "GET" else b""
    return method, path, body, data.draw(content_types, label="content type")


@pytest.fixture(scope="module")
def team_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    """The same, as ComfyUI's --multi-user serves it: two users in its users file."""
    folder = tmp_path_factory.mktemp("fuzz-team")
    users = UsersFile(folder / "users.json")
    running = ServerThread(folder / "data", users=users.as_users())
    running.users = [users.add("alice"), users.add("bob")]  # type: ignore[attr-defined]
    yield running
    running.close()
    print(f"\nfuzz (users): {running.sent} requests, {running.server_errors} answered 5xx")


# What a comfy-user header may hold (http.client sends latin-1, no line breaks)
header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=80)


@FUZZ
@given(data=st.data())
def test_no_user_header_yields_a_server_error(
    team_server: ServerThread, data: st.DataObject
) -> None:
    """Any route, any input, from a known user, an unknown one, a system user or none; a user
    ComfyUI does not know is served nothing."""
    users = team_server.users  # type: ignore[attr-defined]
    who = data.draw(
        st.one_of(st.none(), st.sampled_from(users), st.just("__system"), header_text),
        label="comfy-user",
    )
    method, path, body, content_type = _draw_request(team_server, data)
    extra = {} if who is None else {"comfy-user": who}
    reply = team_server.send(method, path, body, content_type, extra)
    assert_served_well(reply, (who, method, path, body[:200]))
    if path.startswith("/api/assistant/") and who not in users:
        assert reply.status >= 400, (who, method, path, reply.status)  # nothing served


@FUZZ
@given(body=mutated(chat_bodies()))
def test_no_changed_chat_body_yields_a_server_error(server: ServerThread, body: Any) -> None:
    """A valid /api/assistant/chat body with one to three fields left out or mistyped; the thread it
    stored is then read back as the panel reads it."""
    raw = encode(body)
    assert_served_well(
        server.send("POST", "/api/assistant/chat", raw, "application/json"), raw[:300]
    )
    thread = body.get("id") if isinstance(body, dict) else None
    if isinstance(thread, str) and thread:
        path = "/api/assistant/threads/" + _quote(thread)
        assert_served_well(server.send("GET", path, b"", None), raw[:300])


@pytest.mark.parametrize("name", sorted(SWEEP_BODIES))
def test_every_field_of_a_chat_body_changed_once(server: ServerThread, name: str) -> None:
    """Each field the route reads, left out or set to each odd value, one at a time; every
    failure is listed."""
    failures = []
    for what, body in single_changes(SWEEP_BODIES[name]):
        raw = encode(body)
        try:
            assert_served_well(
                server.send("POST", "/api/assistant/chat", raw, "application/json"), what
            )
            thread = "/api/assistant/threads/" + SWEEP_BODIES[name]["id"]
            assert_served_well(server.send("GET", thread, b"", None), what)
        except AssertionError as exc:
            failures.append(f"{what}: {str(exc)[:300]}")
    assert not failures, "\n".join(failures)


@pytest.fixture(scope="module")
def seeded(server: ServerThread) -> ServerThread:
    """The thread, project, document, rule and skill the bodies' paths name, as they are sent."""
    for (method, path), valid in ROUTE_BODIES.items():
        server.send(method, path, encode(valid), "application/json")
    return server


@FUZZ
@given(data=st.data())
def test_no_changed_route_body_yields_a_server_error(
    seeded: ServerThread, data: st.DataObject
) -> None:
    """Each route's valid body with fields left out or mistyped; what it changed is read back."""
    method, path = data.draw(st.sampled_from(sorted(ROUTE_BODIES)), label="route")
    raw = encode(data.draw(mutated(st.just(ROUTE_BODIES[(method, path)])), label="body"))
    assert_served_well(seeded.send(method, path, raw, "application/json"), (path, raw[:300]))
    assert_served_well(seeded.send("GET", path, b"", None), (path, raw[:300]))


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PUT", "/api/assistant/user-context/personas/active", b'{"id": 9223372036854775808}'),
        ("PUT", "/api/assistant/user-context/preferences", b'{"language": "\\ud800"}'),
        ("PUT", "/api/assistant/user-context/system-prompt", b'{"text": "a\\udfffb"}'),
        ("POST", "/api/assistant/threads", b"[" * 5000 + b"]" * 5000),
        ("POST", "/api/assistant/threads", b'{"id": ' + b"1" * 5000 + b"}"),
        ("GET", "/api/assistant/environment/nodes?q=x&limit=" + "9" * 5000, b""),
        ("GET", "/api/assistant/threads?workflow=%ED%A0%80%00", b""),
        ("POST", "/api/assistant/threads/rebind", b'{"from": "a", "to": ["b"]}'),
        ("GET", "/extensions/comfyui-assistant/" + "x" * 300, b""),
        ("GET", "/playground/" + _quote("é" * 200), b""),
        ("PUT", "/api/assistant/provider", b'{"apiKey": "sk-abc\\u00a0def"}'),
    ],
)
def test_the_inputs_a_fuzzer_found_are_refused_clearly(
    server: ServerThread, method: str, path: str, body: bytes
) -> None:
    status, answer = server.request(method, path, body, "application/json")
    assert 400 <= status < 500, (status, answer[:300])
    if body:  # a body refused says why, in words
        assert json.loads(answer)["error"], answer


def test_real_values_are_not_refused_with_the_odd_ones(server: ServerThread) -> None:
    """A ComfyUI seed goes up to 2**64 - 1 (20 digits); a pair of escapes is one emoji."""
    seed = 2**64 - 1
    body = {
        "id": "seeds",
        "messages": [
            {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "\ud83d\ude00 hi"}]},
            {
                "id": "a1",
                "role": "assistant",
                "parts": [
                    {
                        "type": "tool-getWorkflow",
                        "toolCallId": "c1",
                        "state": "output-available",
                        "input": {},
                        "output": {"nodes": [{"id": 3, "widgets_values": [seed, "fixed"]}]},
                    }
                ],
            },
            {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "and now?"}]},
        ],
    }
    status, answer = server.request(
        "POST", "/api/assistant/chat", json.dumps(body).encode(), "application/json"
    )
    assert status == 200, answer[:300]


# Attachments: files whose contents are workflows of every shape (.json, or the text of a PNG),
# the route's 3,000 requests above never held one. A file attached must be refused with a 4xx
# or stored; what is stored is given back as JSON a browser parses (no NaN, no Infinity).

loose_values = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), nasty_text,
        st.text(any_char, max_size=8),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)  # fmt: skip
ref_ids = st.one_of(
    st.integers(-3, 40), st.text("0123456789", min_size=1, max_size=3), st.none(), st.floats(),
    st.sampled_from(["²", "9" * 5000, "", "1.5", "\ud800"]), st.lists(st.integers(), max_size=2),
    st.dictionaries(st.just("id"), st.integers(), max_size=1),
)  # fmt: skip
ui_nodes = st.one_of(
    st.fixed_dictionaries({}, optional={
        "id": ref_ids,
        "type": st.one_of(st.sampled_from(["KSampler", "Note"]), loose_values),
        "title": loose_values,
        "mode": st.one_of(st.sampled_from([0, 2, 4]), loose_values),
        "inputs": st.one_of(st.lists(st.one_of(
            st.fixed_dictionaries({}, optional={"name": loose_values, "link": ref_ids}),
            loose_values), max_size=3), loose_values),
        "widgets_values": st.one_of(
            st.lists(loose_values, max_size=3),
            st.dictionaries(st.text(max_size=5), loose_values, max_size=3), loose_values),
    }),
    loose_values,
)  # fmt: skip
ui_links = st.one_of(
    st.lists(ref_ids, max_size=6),
    st.fixed_dictionaries({}, optional={"id": ref_ids, "origin_id": ref_ids}),
    loose_values,
)
subgraphs = st.one_of(
    st.lists(
        st.one_of(st.fixed_dictionaries({}, optional={"name": loose_values, "id": ref_ids}),
                  loose_values), max_size=3),
    loose_values,
)  # fmt: skip
ui_workflows = st.fixed_dictionaries(
    {"nodes": st.one_of(st.lists(ui_nodes, max_size=4),
                        st.dictionaries(st.text(max_size=3), ui_nodes, max_size=3))},
    optional={
        "links": st.one_of(st.lists(ui_links, max_size=4), loose_values),
        "definitions": st.one_of(
            st.fixed_dictionaries({}, optional={"subgraphs": subgraphs}), loose_values),
    },
)  # fmt: skip
api_nodes = st.fixed_dictionaries(
    {"class_type": st.sampled_from(["KSampler", "CLIPTextEncode"])},
    optional={
        "inputs": st.one_of(st.dictionaries(st.text(max_size=5), st.one_of(
            st.tuples(ref_ids, st.integers(0, 3)).map(list), loose_values), max_size=4),
            loose_values),
        "_meta": st.one_of(st.fixed_dictionaries({}, optional={"title": loose_values}),
                           loose_values),
    },
)  # fmt: skip
api_workflows = st.dictionaries(
    st.one_of(st.text("0123456789", min_size=1, max_size=4), st.sampled_from(["²", "9" * 5000]),
              st.text(max_size=4)),
    api_nodes, min_size=1, max_size=4,
)  # fmt: skip
workflows = st.one_of(ui_workflows, api_workflows, loose_values)


def _nested(value: Any, depth: int, how: str) -> str:
    inner = json.dumps(value)
    if how == "list":
        return "[" * depth + inner + "]" * depth
    if how == "nodes":
        return '{"nodes": [' + "[" * depth + "]" * depth + "]}"
    return '{"a": ' * depth + inner + "}" * depth


workflow_texts = st.one_of(
    workflows.map(json.dumps),  # (Python writes NaN and Infinity as they are)
    st.builds(_nested, workflows, st.integers(1, 3000), st.sampled_from(["list", "nodes", "a"])),
    st.sampled_from(['{"nodes": [NaN]}', '{"1": {"class_type": "A", "inputs": {"x": -Infinity}}}',
                     '{"nodes": [{"id": 1}]', "NaN", '{"nodes": []}' * 2,
                     '{"nodes": [{"id": 1, "widgets_values": [[1e400]]}]}',
                     '{"1": {"class_type": "A", "inputs": {"x": [-1e999]}}}',
                     '{"nodes": [{"id": 1, "widgets_values": [1%s]}]}' % ("0" * 400)]),
)  # fmt: skip


def _png_of(text: str, kind: str, key: str) -> bytes:
    import zlib

    from .comfy_images import png_chunk, png_with

    raw = text.encode("utf-8", "surrogatepass")
    body = {
        "tEXt": key.encode() + b"\0" + raw,
        "zTXt": key.encode() + b"\0\0" + zlib.compress(raw),
        "iTXt": key.encode() + b"\0\1\0\0\0" + zlib.compress(raw),
        "comf": key.encode() + b"\0" + raw,
    }[kind]
    return png_with(1, 1, zlib.compress(bytes(4)), png_chunk(kind.encode(), body))


attached_files = st.one_of(
    st.tuples(st.sampled_from(["flow.json", "notes.txt", "x"]),
              workflow_texts.map(lambda t: t.encode("utf-8", "surrogatepass"))),
    st.tuples(st.just("image.png"),
              st.builds(_png_of, workflow_texts, st.sampled_from(["tEXt", "zTXt", "iTXt", "comf"]),
                        st.sampled_from(["workflow", "prompt"]))),
)  # fmt: skip


def _strict(name: str) -> Any:
    raise AssertionError(f"{name} in a response: a browser's JSON.parse refuses it")


@FUZZ
@given(file=attached_files)
def test_no_attached_file_yields_a_server_error(server: ServerThread, file: tuple[str, bytes]):
    import base64

    name, data = file
    body = {"thread": "fuzz", "name": name, "data": base64.b64encode(data).decode()}
    path = "/api/assistant/attachments"
    status, answer = server.request("POST", path, json.dumps(body).encode(), "application/json")
    assert status < 500, (name, data[:300], status, answer[:300])
    got = json.loads(answer, parse_constant=_strict)
    if status != 201:
        assert got["error"], answer
        return
    for shown in ("", "/workflow"):
        status, answer = server.request("GET", f"{path}/{got['id']}{shown}", b"", None)
        assert status < 500, (name, data[:300], status, answer[:300])
    if got["workflow"]:  # offered as a workflow: it can be given back (1e400 could not)
        assert status == 200, (name, data[:300], status, answer[:300])
    json.loads(answer, parse_constant=_strict)

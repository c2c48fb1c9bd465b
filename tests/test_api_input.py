"""Bad input gets a 4xx whose message says what to fix; no client input causes a 500."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import start_app
from .helpers import chat_body, sent, sse_events, user
from .scripted_provider import text_reply

MESSAGES = "'messages' must be a non-empty list (or a list of what follows 'parentId')"


@pytest.mark.parametrize(
    ("data", "status", "message"),
    [
        (
            b"{not json",
            400,
            "the body is not valid JSON: Expecting property name enclosed in double quotes "
            "at line 1 column 2",
        ),
        (b"", 400, "the body is empty; send a JSON object"),
        (b"\xff\xfe", 400, "the body is not UTF-8 text"),
        (b"[1, 2]", 400, "the body must be a JSON object with 'id' and 'messages'"),
        (b'{"id": "t"}', 400, MESSAGES),
        (b'{"id": "t", "messages": "hi"}', 400, MESSAGES),
        (
            b'{"id": 5, "messages": []}',
            400,
            "'id' (the thread id) must be a string of 1 to 200 characters",
        ),
        (
            b'{"id": "t", "messages": [{"role": "robot", "parts": []}]}',
            400,
            "messages[0].role must be one of system, user, assistant (got 'robot')",
        ),
        (
            b'{"id": "t", "messages": [{"id": "u", "role": "user", "parts": [{"type": "text"}]}]}',
            400,
            "messages[0].parts[0].text must be a string",
        ),
        (
            b'{"id": "t", "messages": [{"id": "u", "role": "user", "parts": []}], "trigger": "x"}',
            400,
            "'trigger' must be one of submit-message, regenerate-message",
        ),
        (  # was a 500 (KeyError: 'id'): 45 of the 65 server errors the issue counted
            b'{"id": "t", "messages": [{"role": "user", "parts": [{"type": "text", '
            b'"text": "hi"}]}]}',
            400,
            "messages[0].id must be a string of 1 to 200 characters (the message's id)",
        ),
        (  # was a TypeError inside the turn, told as "the provider failed unexpectedly"
            b'{"id": "t", "messages": [{"id": "u", "role": "user", "parts": []}, {"id": "a", '
            b'"role": "assistant", "metadata": null, "parts": []}]}',
            400,
            "messages[1].metadata must be an object (leave it out when there is none)",
        ),
    ],
)
async def test_bad_chat_bodies_get_400_with_what_to_fix(assistant, provider, data, status, message):
    resp = await assistant.session.post(
        assistant.base + "/api/assistant/chat",
        data=data,
        headers={"Content-Type": "application/json"},
    )
    assert resp.status == status
    assert await resp.json() == {"error": message}
    assert provider.requests == []


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/assistant/chat"),
        ("PUT", "/api/assistant/provider"),
        ("POST", "/api/assistant/provider/test"),
    ],
)
async def test_state_changing_endpoints_accept_only_json(assistant, method, path, content_type):
    """A cross-site HTML form can post to localhost, but never as application/json."""
    resp = await assistant.session.request(
        method,
        assistant.base + path,
        data=b'{"baseUrl": "http://evil.example/v1"}',
        headers={"Content-Type": content_type},
    )
    assert resp.status == 415
    assert await resp.json() == {
        "error": "send the body as JSON with 'Content-Type: application/json'"
    }
    settings = await (
        await assistant.session.get(assistant.base + "/api/assistant/provider")
    ).json()
    assert settings["baseUrl"] != "http://evil.example/v1"


async def test_oversized_bodies_get_413(provider, tmp_path):
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model"}
    app = await start_app(tmp_path, env, chat_body_limit=10_000, json_body_limit=1_000)
    try:
        big = chat_body(user("x" * 20_000))
        async with await app.post("/api/assistant/chat", big) as resp:
            assert resp.status == 413
            assert await resp.json() == {
                "error": "the body is larger than the limit of 10000 bytes"
            }

        async def chunked():  # no Content-Length: the limit must hold while reading
            for _ in range(20):
                yield b" " * 1000

        resp = await app.session.post(
            app.base + "/api/assistant/provider",
            data=chunked(),
            headers={"Content-Type": "application/json"},
        )
        assert resp.status == 405 or resp.status == 413
        resp = await app.session.put(
            app.base + "/api/assistant/provider",
            data=chunked(),
            headers={"Content-Type": "application/json"},
        )
        assert resp.status == 413
    finally:
        await app.close()
    assert provider.requests == []


async def test_unknown_fields_are_ignored(assistant, provider):
    provider.enqueue(text_reply("ok"))
    body = chat_body(user("hi"), somethingNew={"x": 1}, metadata={"panel": "1.0"})
    body["messages"][0]["extra"] = True
    body["messages"][0]["parts"].append({"type": "data-workflow", "data": {"nodes": 1}})
    status, _ = await assistant.chat(body)
    assert status == 200
    assert sent(provider)[1] == {"role": "user", "content": "hi"}


async def test_a_body_is_parsed_with_the_cyclic_collector_paused(assistant, provider, monkeypatch):
    # a long thread's body is tens of thousands of objects: the collector waits, then resumes
    import gc
    import json
    from types import SimpleNamespace

    from comfyui_assistant.routes import common

    seen: list[bool] = []

    def loads(text: str, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return json.loads(text, **kwargs)  # type: ignore[arg-type]

    parser = SimpleNamespace(loads=loads, JSONDecodeError=json.JSONDecodeError)
    monkeypatch.setattr(common, "json", parser)  # the routes' parser only
    provider.enqueue(text_reply("ok"))
    status, _ = await assistant.chat(chat_body(user("hi")))
    assert status == 200 and seen == [False] and gc.isenabled()


@pytest.mark.parametrize(
    ("part", "message"),
    [
        (
            {"type": "file", "mediaType": "image/png", "url": "data:,", "text": [{"a": 1}]},
            "messages[0].parts[1].text must be a string",
        ),
        (
            {"type": "tool-addNode", "toolCallId": "c", "state": "output-available",
             "preliminary": [True]},
            "messages[0].parts[1].preliminary must be true or false",
        ),
        (
            {"type": "data-x", "toolCallId": {"id": 1}},
            "messages[0].parts[1].toolCallId must be a string",
        ),
        ({"type": "source-url", "url": ["https://a"]}, "messages[0].parts[1].url must be a string"),
        (
            {"type": "data-x", "toolCallId": "c", "state": [1]},
            "messages[0].parts[1].state must be a string",
        ),
    ],
)  # fmt: skip
async def test_a_field_any_part_may_hold_is_checked_on_every_part(
    assistant, provider, part, message
):
    """Was a TypeError inside the turn (the context cache keys a message by these fields),
    shown as "The request to the provider failed unexpectedly (TypeError) — try again"."""
    body = chat_body(user("hi"))
    body["messages"][0]["parts"].append(part)
    async with await assistant.post("/api/assistant/chat", body) as resp:
        assert resp.status == 400
        assert await resp.json() == {"error": message}
    assert provider.requests == []


def _nested_answer(depth: int, last: bool) -> bytes:
    """A thread whose answer holds a tool output nested `depth` levels; `last`: the answer
    ends the request (its client tool just ran: the server continues it)."""
    output = b'{"a":[' * (depth // 2) + b"1" + b"]}" * (depth // 2)
    answer = (
        b'{"id": "a", "role": "assistant", "parts": [{"type": "tool-addNode", "toolCallId": '
        b'"c", "state": "output-available", "input": {}, "output": ' + output + b"}]}"
    )
    ask = b'{"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}'
    messages = [ask, answer] if last else [ask, answer, ask.replace(b'"u"', b'"u2"')]
    return b'{"id": "t", "messages": [' + b", ".join(messages) + b"]}"


@pytest.mark.parametrize(("depth", "last"), [(500, True), (966, False), (2000, False)])
async def test_a_body_nested_past_the_limit_is_refused(assistant, provider, depth, last):
    """Was an error inside the turn: 500 levels in the answer the server continues (copied
    there, "The answer failed on the server (an internal error...)"), 966 in any message (the
    parser followed it; the turn, deeper in the stack, did not: "failed unexpectedly
    (RecursionError)")."""
    resp = await assistant.session.post(
        assistant.base + "/api/assistant/chat",
        data=_nested_answer(depth, last),
        headers={"Content-Type": "application/json"},
    )
    assert resp.status == 400
    assert await resp.json() == {
        "error": "the body's JSON is nested more than 256 levels deep; send a flatter object"
    }
    assert provider.requests == []


async def test_a_body_nested_to_the_limit_is_answered(assistant, provider):
    provider.enqueue(text_reply("ok"))
    status, body = await assistant.chat(json.loads(_nested_answer(250, True)))
    assert status == 200
    assert [e["type"] for e in sse_events(body) if e["type"] == "error"] == []


def test_the_nesting_limit_counts_levels() -> None:
    from comfyui_assistant.routes.common import MAX_DEPTH, parse_json

    assert parse_json(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)
    assert parse_json(b'{"a":' * (MAX_DEPTH - 1) + b"[]" + b"}" * (MAX_DEPTH - 1))
    for deeper in (
        b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1),
        b'{"a":' * MAX_DEPTH + b"{}" + b"}" * MAX_DEPTH,
    ):
        with pytest.raises(ValueError, match=f"nested more than {MAX_DEPTH} levels"):
            parse_json(deeper)


FLOAT_RANGE = ", beyond the range of a 64-bit float (about 1.8e308); send a smaller number"


@pytest.mark.parametrize(
    ("method", "path", "data", "number"),
    [
        ("PUT", "/api/assistant/provider", b'{"contextWindow": 1e400}', "1e400"),  # was a 500
        ("PUT", "/api/assistant/user-context/preferences", b'{"units": -1E+999}', "-1E+999"),
        (
            "POST",
            "/api/assistant/chat",
            b'{"id": "t", "messages": [{"id": "u", "role": "user", "parts": [{"type": "text", '
            b'"text": "hi"}]}, {"id": "a", "role": "assistant", "parts": [{"type": "tool-addNode"'
            b', "toolCallId": "c", "state": "output-available", "input": {"x": 1e400}}]}]}',
            "1e400",
        ),
    ],
)
async def test_a_number_beyond_a_float_is_refused(assistant, provider, method, path, data, number):
    """Python reads 1e400 as infinity, which was stored and sent back as `Infinity`: JSON no
    browser parses (the preferences, the thread)."""
    resp = await assistant.session.request(
        method, assistant.base + path, data=data, headers={"Content-Type": "application/json"}
    )
    assert resp.status == 400
    assert await resp.json() == {"error": f"the body contains the number {number}{FLOAT_RANGE}"}
    assert provider.requests == []
    async with assistant.session.get(assistant.base + "/api/assistant/user-context") as resp:
        assert "Infinity" not in await resp.text()


async def test_small_and_precise_floats_are_kept(assistant):
    data = b'{"units": 1e-400, "scale": 1.7976931348623157e308, "cfg": 7.5}'
    resp = await assistant.session.put(
        assistant.base + "/api/assistant/user-context/preferences",
        data=data,
        headers={"Content-Type": "application/json"},
    )
    assert resp.status == 200
    saved = await resp.json()
    assert (saved["units"], saved["scale"], saved["cfg"]) == (0.0, 1.7976931348623157e308, 7.5)


OVERFLOWING = [b"1e400", b"-1e999", b"1" + b"0" * 400]
NO_BODY = {("/api/assistant/environment/scan", 200), ("/api/assistant/threads/1/compact", 404)}


def _json_routes(app) -> list[tuple[str, str]]:
    """Every route of ours that takes a body (POST, PUT, PATCH), its path parameters filled."""
    out = set()
    for route in app.router.routes():
        path = route.resource.canonical if route.resource else ""
        # (the MCP endpoint's body is JSON-RPC read by the official SDK, which answers with
        # JSON-RPC errors: tests/test_fuzz_mcp.py)
        ours = path.startswith("/api/assistant") and path != "/api/assistant/mcp"
        if route.method in ("POST", "PUT", "PATCH") and ours:
            out.add((route.method, re.sub(r"\{\w+\}", "1", path)))
    return sorted(out)


async def test_every_route_refuses_a_number_past_a_float_wherever_it_is(assistant, provider):
    """1e400 reads as infinity in Python and as Infinity in a browser: stored, it comes back
    as `Infinity`, which no JSON reader takes. Refused by every route, at any depth (a route
    that checks its fields first never sees it: the body is refused as it is parsed)."""
    routes = _json_routes(assistant.app)
    assert len(routes) >= 25 and ("POST", "/api/assistant/attachments") in routes
    answered = set()
    for method, path in routes:
        for number in OVERFLOWING:
            for data in (
                b'{"id": "t", "x": ' + number + b"}",
                b'{"messages": [{"parts": [[[{"input": [' + number + b"]}]]]}]}",
            ):
                resp = await assistant.session.request(
                    method, assistant.base + path, data=data,
                    headers={"Content-Type": "application/json"},
                )  # fmt: skip
                said = (await resp.json()).get("error", "")
                if not (resp.status == 400 and said.startswith("the body contains ")):
                    answered.add((path, resp.status))
                else:
                    assert f"{number[:12].decode()}" in said, said  # (named)
    assert answered == NO_BODY  # (routes that read no body: what they were sent is ignored)
    assert provider.requests == []

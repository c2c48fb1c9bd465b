"""Fuzzing the MCP endpoint as the other routes are fuzzed (tests/test_fuzz_routes.py): no input
may produce a 5xx or a traceback. JSON-RPC messages of every method the SDK knows (and some it
does not), their params changed to any JSON, batches, bodies that are not JSON, and the headers
the transport reads (session id, protocol version, Accept) set to odd values; initialize
messages open sessions the later examples may name."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from .test_fuzz_routes import (
    FUZZ,
    Reply,
    ServerThread,
    assert_served_well,
    bodies,
    json_values,
    nasty_text,
)

MCP = "/api/assistant/mcp"
METHODS = (
    "initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read",
    "prompts/list", "prompts/get", "server/discover", "logging/setLevel", "completion/complete",
    "notifications/initialized", "notifications/cancelled", "subscriptions/listen", "x/y", "",
)  # fmt: skip
VERSIONS = ("2025-11-25", "2025-06-18", "2024-11-05", "2026-07-28", "1999-01-01", "", "x" * 300)
TOOL_NAMES = ("searchInstalledNodes", "addNode", "getNodeDefinition", "createUserSkill", "nope")


def _init() -> dict[str, Any]:
    return {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "fuzz", "version": "1"},
    }


params = st.one_of(
    json_values,
    st.just(_init()),
    st.fixed_dictionaries(
        {"name": st.one_of(st.sampled_from(TOOL_NAMES), nasty_text), "arguments": json_values}
    ),
)
message = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0", 2])},
    optional={
        "id": st.one_of(st.integers(), nasty_text, st.none(), st.floats(allow_nan=False)),
        "method": st.one_of(st.sampled_from(METHODS), nasty_text),
        "params": params,
        "result": json_values,
        "error": json_values,
    },
)
# well-formed requests (an initialize opens a session), their params of any shape
request = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": st.integers(0, 99),
        "method": st.sampled_from(METHODS),
        "params": params,
    }
)
initialize = st.builds(lambda i: {"jsonrpc": "2.0", "id": i, "method": "initialize",
                                  "params": _init()}, st.integers(0, 9))  # fmt: skip
mcp_bodies = st.one_of(
    initialize.map(lambda m: json.dumps(m).encode()),
    request.map(lambda m: json.dumps(m).encode("utf-8", "surrogatepass")),
    message.map(lambda m: json.dumps(m).encode("utf-8", "surrogatepass")),
    st.lists(message, max_size=3).map(lambda m: json.dumps(m).encode("utf-8", "surrogatepass")),
    bodies,
)
ACCEPT = "application/json, text/event-stream"
accepts = st.sampled_from([ACCEPT] * 3 + ["application/json", "text/event-stream", "*/*", None])


class McpFuzz:
    def __init__(self, server: ServerThread) -> None:
        self.server = server
        self.sessions: list[str] = []
        self.statuses: dict[int, int] = {}  # printed at the end (`pytest -s`)

    def open_session(self) -> None:
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _init()}
        headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        reply = self.send("POST", json.dumps(body).encode(), headers)
        assert reply.status == 200, reply

    def send(self, method: str, body: bytes, headers: dict[str, str]) -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        try:
            conn.request(method, MCP, body=body or None, headers=headers)
            response = conn.getresponse()
            opened, named = response.headers.get("Mcp-Session-Id"), headers.get("Mcp-Session-Id")
            if opened and opened not in self.sessions:
                self.sessions.append(opened)
            if named in self.sessions and (method == "DELETE" or response.status == 404):
                self.sessions.remove(named)  # (ended: later examples use the others)
            served = response.headers.get_content_type()
            self.statuses[response.status] = self.statuses.get(response.status, 0) + 1
            return Reply(response.status, served, response.read())
        finally:
            conn.close()


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpFuzz]:
    running = ServerThread(tmp_path_factory.mktemp("fuzz-mcp") / "data")
    fuzz = McpFuzz(running)
    yield fuzz
    running.close()
    print(f"\nMCP fuzz: answers by status {dict(sorted(fuzz.statuses.items()))}")


@FUZZ
@given(data=st.data())
def test_no_mcp_message_yields_a_server_error(fuzz: McpFuzz, data: st.DataObject) -> None:
    # (GET: only without a session, which answers at once; one with a session is a stream
    # that stays open)
    method = data.draw(st.sampled_from(["POST"] * 8 + ["DELETE", "GET"]), label="method")
    headers = {"Content-Type": "application/json"}
    accept = data.draw(accepts, label="accept")
    if accept is not None:
        headers["Accept"] = accept
    # (drawn the same way whatever sessions are open: hypothesis replays the draws)
    session = data.draw(st.sampled_from(["none", "opened", "opened", "odd"]), label="session")
    pick = data.draw(st.integers(0, 1000), label="which")
    odd = data.draw(st.text("abcdef0123456789", max_size=80), label="odd id")
    if method != "GET" and session == "opened":
        if not fuzz.sessions:
            fuzz.open_session()
        headers["Mcp-Session-Id"] = fuzz.sessions[pick % len(fuzz.sessions)]
    elif method != "GET" and session == "odd":
        headers["Mcp-Session-Id"] = odd
    if data.draw(st.booleans(), label="version header"):
        headers["Mcp-Protocol-Version"] = data.draw(st.sampled_from(VERSIONS), label="version")
    body = data.draw(mcp_bodies, label="body") if method == "POST" else b""
    reply = fuzz.send(method, body, headers)
    if reply.status in (200, 202) and reply.body == b"":
        # (the SDK's answer to a DELETE or a notification: no body, still labelled JSON)
        reply = Reply(reply.status, "", b"")
    assert_served_well(reply, (method, headers, body[:200]))


def test_a_body_over_the_limit_is_refused(fuzz: McpFuzz) -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "' + b"a" * (1 << 20)
    reply = fuzz.send("POST", body + b'"}}', {"Content-Type": "application/json"})
    assert (reply.status, reply.body) == (413, b"Request body too large")

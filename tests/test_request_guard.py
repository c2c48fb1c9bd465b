"""The request guard: a page on another site, a DNS-rebound name or a `no-cors` fetch cannot
drive our routes (routes/guard.py)."""

from __future__ import annotations

import socket

import pytest
from comfyui_assistant.routes.guard import HostPolicy

from .helpers import chat_body, user


@pytest.mark.parametrize(
    ("listen", "extra", "host", "allowed"),
    [
        (["127.0.0.1"], [], "127.0.0.1", True),
        (["127.0.0.1"], [], "localhost", True),
        (["127.0.0.1"], [], "::1", True),
        (["127.0.0.1"], [], "LOCALHOST.", True),
        (["127.0.0.1"], [], "evil.example", False),  # a rebound name
        (["127.0.0.1"], [], "192.168.1.5", False),
        (["127.0.0.1"], ["my.box"], "my.box", True),
        (["192.168.1.5"], [], "192.168.1.5", True),
        (["192.168.1.5"], [], "localhost", False),
        (["192.168.1.5"], [], "evil.example", False),
        (["0.0.0.0"], [], "10.0.0.7", True),  # an IP literal cannot be rebound
        (["::"], [], "fe80::1", True),
        (["0.0.0.0"], [], socket.gethostname(), True),
        (["0.0.0.0"], [], "evil.example", False),
        (["0.0.0.0"], [], "", False),
    ],
)
def test_host_policy(listen, extra, host, allowed):
    assert HostPolicy.listening_on(listen, extra).allows(host) is allowed


def test_allowed_hosts_from_the_environment():
    policy = HostPolicy.from_environment(["127.0.0.1"], {"COMFY_ASSISTANT_ALLOWED_HOSTS": "a.b, c"})
    assert policy.allows("a.b") and policy.allows("c") and not policy.allows("d")


async def _status(assistant, method, path, **kw):
    async with assistant.session.request(method, assistant.base + path, **kw) as resp:
        return resp.status, await resp.text()


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/assistant/provider"),
        ("GET", "/api/assistant/threads"),
        ("PUT", "/api/assistant/provider"),
        ("GET", "/status"),
        ("GET", "/"),
        ("GET", "/extensions/comfyui-assistant/comfyui-assistant.js"),
    ],
)
async def test_a_rebound_host_name_is_refused_everywhere(assistant, method, path):
    port = assistant.base.rsplit(":", 1)[1]
    status, text = await _status(
        assistant, method, path, json={"model": "x"}, headers={"Host": f"evil.example:{port}"}
    )
    assert status == 403 and "does not answer to the host name 'evil.example'" in text


async def test_another_sites_origin_is_refused_and_our_own_accepted(assistant, provider):
    host = assistant.base.removeprefix("http://")
    for origin, wanted in [
        ("http://evil.example", 403),
        (f"http://{host.split(':')[0]}:1", 403),  # another port is another origin
        ("null", 403),
        (f"http://{host}", 200),
    ]:
        status, text = await _status(
            assistant,
            "PUT",
            "/api/assistant/user-context/preferences",
            json={"language": "en"},
            headers={"Origin": origin},
        )
        assert status == wanted, (origin, text)
    status, _ = await _status(
        assistant,
        "POST",
        "/api/assistant/chat",
        json=chat_body(user("hi")),
        headers={"Origin": "http://x.y"},
    )
    assert status == 403 and provider.requests == []


@pytest.mark.parametrize(
    "path",
    [
        "/api/assistant/threads/thread-1/compact",
        "/api/assistant/environment/scan",
        "/api/assistant/provider/test",
    ],
)
async def test_a_no_cors_post_reaches_nothing(assistant, provider, path):
    """What `fetch(url, {method: "POST", mode: "no-cors"})` sends: no body, no content type;
    or a text/plain body, the other thing it may send."""
    provider.enqueue()
    for kwargs in ({}, {"data": b"{}", "headers": {"Content-Type": "text/plain"}}):
        status, text = await _status(assistant, "POST", path, **kwargs)
        assert status == 415 and "application/json" in text
    assert provider.seen == []

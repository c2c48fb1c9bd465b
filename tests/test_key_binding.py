"""The API key goes only where it was given: to the origin of the base URL it was saved with
(the environment's key: to the environment's base URL). Two capturing OpenAI-compatible servers
on 127.0.0.1 stand for the user's provider (`home`) and an address someone else chose
(`elsewhere`); every request either receives is recorded, headers included."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.provider import provider_probes

from .conftest import App, start_app
from .helpers import chat_body, summary_text, user
from .scripted_provider import Completion, ScriptedProvider, text_reply

KEY = "sk-home-0123456789abcdef"
OTHER_KEY = "sk-other-9876543210"


@pytest.fixture
async def home() -> AsyncIterator[ScriptedProvider]:
    server = await ScriptedProvider(api_key=KEY).start()
    yield server
    await server.stop()


@pytest.fixture
async def elsewhere() -> AsyncIterator[ScriptedProvider]:
    server = await ScriptedProvider().start()
    yield server
    await server.stop()


@pytest.fixture(autouse=True)
def fresh_window_probes() -> None:
    provider_probes.clear_caches()  # each test's servers are probed anew


async def _app(tmp_path: Path, home: ScriptedProvider, **env: str) -> App:
    # No LLM_CONTEXT_WINDOW: the window is probed on the provider (/props, /api/show, ...).
    return await start_app(tmp_path / "data", {"LLM_MODEL": "scripted-model", **env})


async def _json(app: App, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    async with app.session.request(method, app.base + path, json=body) as resp:
        return resp.status, await resp.json()


async def _store_key(app: App, home: ScriptedProvider) -> None:
    status, settings = await _json(
        app, "PUT", "/api/assistant/provider", {"baseUrl": home.base_url, "apiKey": KEY}
    )
    assert status == 200 and settings["apiKeySet"] is True and settings["notice"] is None


async def test_the_stored_key_reaches_its_own_provider(tmp_path, home, elsewhere):
    app = await _app(tmp_path, home)
    try:
        await _store_key(app, home)
        home.enqueue(text_reply("hello"))
        status, body = await app.chat(chat_body(user("hi")))
        assert status == 200 and "hello" in body
        # the positive control: the capture sees the key where it belongs
        assert "POST /v1/chat/completions" in home.saw(KEY)
        status, verdict = await _json(app, "POST", "/api/assistant/provider/test", {})
        assert verdict["ok"] is True, verdict
    finally:
        await app.close()


async def test_testing_another_base_url_never_sends_the_stored_key(tmp_path, home, elsewhere):
    app = await _app(tmp_path, home)
    try:
        await _store_key(app, home)
        status, verdict = await _json(
            app, "POST", "/api/assistant/provider/test", {"baseUrl": elsewhere.base_url}
        )
        assert status == 200 and verdict["reachable"] is True
        assert elsewhere.seen and elsewhere.saw(KEY) == []
        # a key typed into the form for that address is used there, and only that key
        elsewhere.api_key = OTHER_KEY
        status, verdict = await _json(
            app,
            "POST",
            "/api/assistant/provider/test",
            {"baseUrl": elsewhere.base_url, "apiKey": OTHER_KEY},
        )
        assert verdict["ok"] is True, verdict
        assert elsewhere.saw(OTHER_KEY) and elsewhere.saw(KEY) == []
        # the stored settings did not change
        status, settings = await _json(app, "GET", "/api/assistant/provider")
        assert settings["baseUrl"] == home.base_url and settings["apiKeySet"] is True
    finally:
        await app.close()


async def test_moving_the_base_url_clears_the_key_and_nothing_sends_it_there(
    tmp_path, home, elsewhere
):
    app = await _app(tmp_path, home)
    try:
        await _store_key(app, home)
        status, settings = await _json(
            app, "PUT", "/api/assistant/provider", {"baseUrl": elsewhere.base_url}
        )
        assert status == 200 and settings["apiKeySet"] is False
        assert (
            "removed" in settings["notice"]
            and home.base_url.rsplit("/", 1)[0] in (settings["notice"])
        )
        # chat (with its window probes), the summarizer, the connection test
        elsewhere.enqueue(text_reply("hi"), text_reply("ok"), Completion(summary_text("x")))
        thread = [user(f"message {i}", f"u{i}") for i in range(3)]
        await app.chat(chat_body(*thread[:1]))
        assert ("GET", "/props") in {(m, p) for m, p, _ in elsewhere.seen}
        assert any(p.startswith("/api/show") or p == "/api/show" for _, p, _ in elsewhere.seen)
        status, _ = await _json(app, "POST", "/api/assistant/provider/test", {})
        status, _ = await _json(app, "POST", "/api/assistant/threads/thread-1/compact", {})
        paths = {p for _, p, _ in elsewhere.seen}
        assert {"/v1/chat/completions", "/v1/models", "/props", "/api/v0/models"} <= paths
        assert elsewhere.saw(KEY) == []
        # moving back does not bring the key back: it is gone from the store
        status, settings = await _json(
            app, "PUT", "/api/assistant/provider", {"baseUrl": home.base_url}
        )
        assert settings["apiKeySet"] is False
    finally:
        await app.close()
    assert KEY.encode() not in (tmp_path / "data" / "assistant.sqlite3").read_bytes()


async def test_a_base_url_on_the_same_origin_keeps_the_key(tmp_path, home):
    app = await _app(tmp_path, home)
    try:
        await _store_key(app, home)
        _status, settings = await _json(
            app, "PUT", "/api/assistant/provider", {"baseUrl": home.base_url + "/"}
        )
        assert settings["apiKeySet"] is True and settings["notice"] is None
    finally:
        await app.close()


async def test_the_environment_key_is_bound_to_the_environment_base_url(tmp_path, home, elsewhere):
    app = await _app(tmp_path, home, LLM_BASE_URL=home.base_url, LLM_API_KEY=KEY)
    try:
        status, verdict = await _json(app, "POST", "/api/assistant/provider/test", {})
        assert verdict["ok"] is True and home.saw(KEY)
        status, verdict = await _json(
            app, "POST", "/api/assistant/provider/test", {"baseUrl": elsewhere.base_url}
        )
        assert status == 200 and verdict["reachable"] is True
        assert elsewhere.seen and elsewhere.saw(KEY) == []
        _status, settings = await _json(
            app, "PUT", "/api/assistant/provider", {"baseUrl": elsewhere.base_url}
        )
        assert settings["apiKeySet"] is False and "LLM_API_KEY" in settings["notice"]
        elsewhere.enqueue(text_reply("hi"))
        await app.chat(chat_body(user("hi")))
        assert elsewhere.saw(KEY) == []
    finally:
        await app.close()


async def test_a_redirect_to_another_origin_does_not_carry_the_key(tmp_path, home, elsewhere):
    app = await _app(tmp_path, home)
    try:
        await _store_key(app, home)
        home.redirect_to = elsewhere.base_url.rsplit("/v1", 1)[0]
        elsewhere.enqueue(text_reply("hi"))
        await app.chat(chat_body(user("hi")))
        await _json(app, "POST", "/api/assistant/provider/test", {})
        assert home.saw(KEY)  # it went where it was given...
        assert len(elsewhere.seen) >= 2  # the redirects were followed...
        assert elsewhere.saw(KEY) == []  # ...without the key
    finally:
        await app.close()


async def test_a_key_stored_before_binding_is_bound_to_where_it_was_used(tmp_path, home, elsewhere):
    from comfyui_assistant.core.store.store import Store

    store = await Store.open(tmp_path / "data")
    await store.update_settings("provider", {"baseUrl": home.base_url, "apiKey": KEY})
    await store.close()
    app = await _app(tmp_path, home)
    try:
        _status, settings = await _json(app, "GET", "/api/assistant/provider")
        assert settings["apiKeySet"] is True
        await _json(app, "POST", "/api/assistant/provider/test", {"baseUrl": elsewhere.base_url})
        assert elsewhere.seen and elsewhere.saw(KEY) == []
    finally:
        await app.close()


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"baseUrl": "http://user:hunter2@127.0.0.1:1/v1"}, "user name or password"),
        ({"baseUrl": "http://127.0.0.1:1/v1?key=hunter2"}, "query string"),
        ({"apiKey": "sk-abc\u00a0hunter2"}, "NO-BREAK SPACE (U+00A0) at position 7"),
        ({"apiKey": "sk-abc hunter2"}, "a space"),
    ],
)
async def test_settings_that_would_leak_or_break_every_chat_are_refused(tmp_path, home, body, says):
    app = await _app(tmp_path, home)
    try:
        status, answer = await _json(app, "PUT", "/api/assistant/provider", body)
        assert status == 400 and says in answer["error"], answer
        assert "hunter2" not in answer["error"]
    finally:
        await app.close()


async def test_a_base_url_with_a_password_stored_before_it_was_refused_is_dropped(
    tmp_path, home, caplog
):
    from comfyui_assistant.core.store.store import Store

    store = await Store.open(tmp_path / "data")
    leaky = home.base_url.replace("http://", "http://user:hunter2@")
    await store.update_settings("provider", {"baseUrl": leaky, "apiKey": KEY})
    await store.close()
    app = await _app(tmp_path, home)
    try:
        status, settings = await _json(app, "GET", "/api/assistant/provider")
        async with app.session.get(app.base + "/status") as resp:
            page = await resp.text()
    finally:
        await app.close()
    assert status == 200 and settings["apiKeySet"] is False
    assert "hunter2" not in json.dumps(settings) + page + caplog.text


REFUSED_BASE_URLS = {
    "a query string": "http://127.0.0.1:9/v1?key=hunter2",
    "user:password": "http://user:hunter2@127.0.0.1:9/v1",
    "a fragment": "http://127.0.0.1:9/v1#hunter2",
    "ftp:": "ftp://127.0.0.1:9/v1",
    "a non-ASCII host": "http://prövider.example:9/v1",
    "a bad port": "http://127.0.0.1:99999/v1",
    "no scheme": "127.0.0.1:9/v1",
}


@pytest.fixture
async def default_address() -> AsyncIterator[ScriptedProvider]:
    """A capturing server where the default base URL points (127.0.0.1:11434)."""
    server = ScriptedProvider()
    try:
        await server.start(port=11434)
    except OSError as exc:  # (a real Ollama running here)
        pytest.skip(f"port 11434 on 127.0.0.1 is taken ({exc.strerror})")
    yield server
    await server.stop()


@pytest.mark.parametrize("shape", REFUSED_BASE_URLS)
async def test_a_refused_environment_base_url_leaves_no_key_in_use(
    tmp_path, home, default_address, caplog, shape
):
    env = {"LLM_BASE_URL": REFUSED_BASE_URLS[shape], "LLM_API_KEY": KEY}
    app = await _app(tmp_path, home, **env)
    try:
        default_address.enqueue(*(text_reply("hi") for _ in range(3)))
        for _ in range(3):
            await app.chat(chat_body(user("hi")))
        await _json(app, "POST", "/api/assistant/provider/test", {})
        _status, settings = await _json(app, "GET", "/api/assistant/provider")
    finally:
        await app.close()
    assert default_address.seen  # the requests went to the default address...
    assert default_address.saw(KEY) == []  # ...without the key given for another
    sent = {headers.get("Authorization") for _m, _p, headers in default_address.seen}
    assert sent <= {None, "Bearer not-needed"}  # (the SDK's placeholder when there is no key)
    assert settings["apiKeySet"] is False
    [problem] = settings["problems"]
    assert problem.startswith("LLM_BASE_URL is ignored: ") and "LLM_API_KEY" in problem
    said = [r.getMessage() for r in caplog.records if "LLM_BASE_URL" in r.getMessage()]
    assert said == [problem]  # one line, at start
    assert "hunter2" not in problem + caplog.text


async def test_the_settings_say_nothing_is_wrong_when_nothing_is(tmp_path, home):
    app = await _app(tmp_path, home, LLM_BASE_URL=home.base_url, LLM_API_KEY=KEY)
    try:
        _status, settings = await _json(app, "GET", "/api/assistant/provider")
    finally:
        await app.close()
    assert settings["problems"] == [] and settings["apiKeySet"] is True


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (openssl), and its key."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl to make a certificate")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


async def test_an_http_to_https_redirect_does_not_carry_the_key(tmp_path, monkeypatch):
    """http://host (port 80) to https://host (port 443) is the one redirect the HTTP library
    keeps the Authorization header on; the key is bound to scheme and port too."""
    cert, key = _certificate(tmp_path)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts it
    plain, secure = ScriptedProvider(api_key=KEY), ScriptedProvider()
    try:
        await plain.start(port=80)
        await secure.start(port=443, tls=tls)
    except OSError as exc:
        await plain.stop()
        pytest.skip(f"needs ports 80 and 443 on 127.0.0.1 ({exc.strerror})")
    plain.redirect_to = "https://127.0.0.1"
    app = await _app(tmp_path, plain)
    try:
        await _store_key(app, plain)
        secure.enqueue(text_reply("over https"))
        status, body = await app.chat(chat_body(user("hi")))
        _status, verdict = await _json(app, "POST", "/api/assistant/provider/test", {})
        secure.api_key = KEY  # a server there that wants the key: the refusal says why
        _status, refused = await _json(app, "POST", "/api/assistant/provider/test", {})
    finally:
        await app.close()
        await plain.stop()
        await secure.stop()
    assert plain.saw(KEY)  # it went where it was given...
    assert "POST /v1/chat/completions" in [f"{m} {p}" for m, p, _ in secure.seen]  # followed
    assert secure.saw(KEY) == []  # ...and not on to another scheme and port
    assert status == 200 and '"type":"error"' not in body and "over http" in body
    assert verdict["ok"] is True, verdict
    assert refused["auth"] == "failed" and (
        "redirected the request to https://127.0.0.1:443, where the key is not sent"
        in refused["message"]
    ), refused

"""/api/assistant/attachments end to end: a file attached (read, counted, checked against the
window, stored with its thread), sent with its message as the model needs it (an image part
and the workflow's lines; a note to a model that cannot see), shown back, its workflow given
to the panel, a draft removed; and every bad input refused whole."""

from __future__ import annotations

import asyncio
import base64
import json
import math
import re
import time
from typing import Any

import pytest
from comfyui_assistant.core.files.attachment_files import FileReading
from comfyui_assistant.core.files.attachments import Attachments
from comfyui_assistant.standalone import SERVICE

from .comfy_images import WORKFLOW, comfy_png, pixel_bomb, plain, png_chunk, text_bomb
from .conftest import start_app
from .helpers import chat_body, sse_events, user, without_reminders
from .scripted_provider import text_reply

BASE = "/api/assistant/attachments"


def env_for(provider, **extra: str) -> dict[str, str]:
    return {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", **extra}


async def attach(app, name: str, data: bytes, thread: str = "thread-1") -> tuple[int, Any]:
    body = {"thread": thread, "name": name, "data": base64.b64encode(data).decode()}
    async with app.session.post(app.base + BASE, json=body) as resp:
        return resp.status, await resp.json()


async def call(app, method: str, path: str) -> tuple[int, Any]:
    async with app.session.request(method, app.base + path) as resp:
        if resp.content_type == "application/json":
            return resp.status, await resp.json()
        return resp.status, await resp.read()


def with_files(text: str, *files: dict[str, Any], mid: str = "u1") -> dict[str, Any]:
    """A user message as the panel sends it: its text, then a file part per attachment."""
    message = user(text, mid)
    message["parts"] += [
        {"type": "file", "url": f["url"], "mediaType": f["mediaType"], "filename": f["name"]}
        for f in files
    ]
    return message


async def test_an_attached_comfyui_image_reaches_the_model_with_its_workflow(assistant, provider):
    png = comfy_png(size=(640, 480))
    status, att = await attach(assistant, "ComfyUI_00001_.png", png)
    assert status == 201, att
    assert att["kind"] == "comfy-image" and att["url"] == f"attachment:{att['id']}"
    assert att["summary"] == "PNG 640×480, ComfyUI workflow, 7 nodes" and att["workflow"] is True
    assert att["tokens"] > 425 and att["vision"] is True  # (425: the 640×480 image alone)
    assert att["room"] > 20_000
    provider.enqueue(text_reply("A KSampler at 20 steps made it."))
    status, body = await assistant.chat(chat_body(with_files("what made this image?", att)))
    assert status == 200 and "A KSampler" in body
    message = provider.requests[0]["messages"][-1]
    assert message["role"] == "user"
    kinds = [part["type"] for part in message["content"]]
    assert kinds[0] == "text" and message["content"][0]["text"].startswith("what made this image?")
    assert kinds[1:3] == ["image_url", "text"]  # (then the turn's reminder block)
    assert message["content"][1]["image_url"]["url"] == (
        "data:image/png;base64," + base64.b64encode(png).decode()
    )
    assert "3 KSampler: seed=156680208700286, steps=20" in message["content"][2]["text"]
    # the browser holds the url only; the bytes and the workflow come back by id
    status, data = await call(assistant, "GET", f"{BASE}/{att['id']}")
    assert status == 200 and data == png
    status, got = await call(assistant, "GET", f"{BASE}/{att['id']}/workflow")
    assert status == 200 and got["workflow"] == WORKFLOW
    # sent: part of the thread now, it cannot be removed as a draft
    status, got = await call(assistant, "DELETE", f"{BASE}/{att['id']}")
    assert status == 409 and "part of a sent message" in got["error"]
    # the next turn sends it again, byte for byte (point in time, cache-friendly)
    provider.enqueue(text_reply("Sure."))
    thread = [with_files("what made this image?", att), *_answer(body), user("thanks", "u2")]
    await assistant.chat(chat_body(*thread))
    assert provider.requests[1]["messages"][1] == provider.requests[0]["messages"][1]
    # deleting the thread deletes its files
    status, _ = await call(assistant, "DELETE", "/api/assistant/threads/thread-1")
    assert status == 200
    status, _ = await call(assistant, "GET", f"{BASE}/{att['id']}")
    assert status == 404


def _answer(body: str) -> list[dict[str, Any]]:
    text = "".join(e["delta"] for e in sse_events(body) if e["type"] == "text-delta")
    return [{"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": text}]}]


async def test_the_count_at_attach_is_what_the_request_grows_by(assistant, provider):
    text = "\n".join(f"Shot {i}: wide, dusk light, slow push-in, 35mm." for i in range(60))
    status, att = await attach(assistant, "shots.md", text.encode(), thread="t2")
    assert status == 201 and att["kind"] == "text" and att["summary"] == "text, 60 lines"
    provider.enqueue(text_reply("ok"), text_reply("ok"))
    await assistant.chat(chat_body(user("plan the shots")))
    _, body = await assistant.chat({**chat_body(with_files("plan the shots", att)), "id": "t2"})
    reports = [e["data"] for e in sse_events(body) if e["type"] == "data-context"]
    status, first = await call(assistant, "GET", "/api/assistant/threads/thread-1/context")
    grown = reports[-1]["estimated"] - first["report"]["estimated"]
    assert abs(grown - att["tokens"]) <= 3, (grown, att["tokens"])
    sent = provider.requests[1]["messages"][-1]["content"]
    assert sent.startswith("plan the shots\n\n[attached file shots.md]\nShot 0:")


async def test_a_file_that_cannot_fit_the_window_is_refused_naming_both(provider, tmp_path):
    env = env_for(provider, LLM_CONTEXT_WINDOW="4096")
    app = await start_app(tmp_path / "data", env)
    try:
        text = "The quick brown fox jumps over the lazy dog. " * 600
        status, body = await attach(app, "log.txt", text.encode())
        assert status == 413
        numbers = [int(n.replace(",", "")) for n in _numbers(body["error"])]
        tokens, window, room = numbers[:3]
        assert tokens > room and window == 4096 and 0 < room < 4096
        assert body["error"].startswith(f"log.txt is about {tokens:,} tokens, but m's 4,096-token")
        assert await stored(app) == 0  # refused whole: nothing kept
        small = await attach(app, "note.txt", b"fits easily")
        assert small[0] == 201 and small[1]["room"] == room
    finally:
        await app.close()


async def stored(app) -> int:
    store = await app.app[SERVICE].store()
    row = await store.fetchone("SELECT count(*) FROM attachments")
    return int(row[0])


def _numbers(text: str) -> list[str]:
    return re.findall(r"\d[\d,]*", text)


async def test_a_model_that_cannot_see_gets_a_note_and_the_user_is_told_once(provider, tmp_path):
    env = env_for(provider, LLM_CONTEXT_WINDOW="32768", LLM_VISION="0")
    app = await start_app(tmp_path / "data", env)
    try:
        status, att = await attach(app, "photo.jpg", plain("JPEG", (300, 200)))
        assert status == 201 and att["vision"] is False and att["kind"] == "image"
        provider.enqueue(text_reply("I cannot see it."), text_reply("Still no."))
        _, body = await app.chat(chat_body(with_files("look", att)))
        sent = without_reminders(provider.requests[0]["messages"])[-1]["content"]
        assert isinstance(sent, str) and "image_url" not in json.dumps(provider.requests[0])
        assert sent == (
            "look\n\n[attached image photo.jpg, 300×200 — not shown: this model cannot see images]"
        )
        notes = [e["data"]["text"] for e in sse_events(body) if e["type"] == "data-status"]
        assert any(n.startswith("This model cannot see images") for n in notes)
        thread = [with_files("look", att), *_answer(body), user("and now?", "u2")]
        _, body = await app.chat(chat_body(*thread))
        notes = [e["data"]["text"] for e in sse_events(body) if e["type"] == "data-status"]
        assert not any(n.startswith("This model cannot see images") for n in notes)
    finally:
        await app.close()


async def test_bad_input_is_refused_whole(assistant, provider):
    cut = comfy_png()[:500]
    status, body = await attach(assistant, "cut.png", cut)
    assert status == 422 and body["error"].startswith("cut.png cannot be read: the PNG is cut off")
    status, body = await attach(assistant, "paper.pdf", b"%PDF-1.4 stuff")
    assert status == 415 and "PDF" in body["error"]
    assert await stored(assistant) == 0
    async with assistant.session.post(
        assistant.base + BASE, json={"thread": "t", "name": "a.txt", "data": "!!!"}
    ) as resp:
        assert resp.status == 400 and "not valid base64" in (await resp.json())["error"]
    async with assistant.session.post(
        assistant.base + BASE, json={"thread": "t", "name": "../x.txt", "data": ""}
    ) as resp:
        assert resp.status == 400 and "without a folder" in (await resp.json())["error"]
    async with assistant.session.post(
        assistant.base + BASE, data=b"raw", headers={"Content-Type": "text/plain"}
    ) as resp:
        assert resp.status == 415  # a cross-site form cannot post files to us
    status, body = await call(assistant, "GET", f"{BASE}/att_nothing")
    assert status == 404
    status, body = await call(assistant, "GET", f"{BASE}/{'x' * 65}")
    assert status == 400
    # a plain PNG: attached as an image, and loading its workflow says why not
    status, att = await attach(assistant, "photo.png", plain("PNG"))
    assert status == 201 and att["note"] == "no ComfyUI workflow in it: attached as a plain image"
    status, body = await call(assistant, "GET", f"{BASE}/{att['id']}/workflow")
    assert status == 422 and body["error"] == (
        "photo.png holds no ComfyUI workflow (no ComfyUI workflow in it: attached as a plain image)"
    )
    # a draft can be removed; a file of another thread is not sent (a note instead)
    status, other = await attach(assistant, "notes.md", b"secret plan", thread="other-thread")
    assert status == 201
    provider.enqueue(text_reply("ok"))
    await assistant.chat(chat_body(with_files("read it", other)))
    assert "secret plan" not in json.dumps(provider.requests[0])
    assert "is no longer available" in provider.requests[0]["messages"][-1]["content"]
    status, _ = await call(assistant, "DELETE", f"{BASE}/{other['id']}")
    assert status == 200
    status, _ = await call(assistant, "DELETE", f"{BASE}/{other['id']}")
    assert status == 404


async def test_oversized_uploads_are_refused_before_reading(provider, tmp_path):
    env = env_for(provider, LLM_CONTEXT_WINDOW="32768")
    app = await start_app(tmp_path / "data", env, attachment_max_bytes=10_000)
    try:
        status, body = await attach(app, "big.png", comfy_png() + b"\0" * 90_000)
        assert status == 413 and body["error"] == (
            "the file is larger than 10 KB, the limit for an attachment"
        )
        status, body = await attach(app, "big.png", comfy_png() + b"\0" * 20_000)
        assert status == 413 and body["error"].startswith("big.png is 2")
        assert body["error"].endswith("KB; an attachment can be at most 10 KB")
    finally:
        await app.close()


async def test_the_server_says_whether_the_model_sees(provider, tmp_path):
    # llama-server's /props `modalities` (Ollama: "vision" among /api/show capabilities);
    # LLM_VISION overrides what it says
    from comfyui_assistant.core.provider import provider_probes

    provider_probes.clear_caches()
    provider.props = {
        "default_generation_settings": {"n_ctx": 8192},
        "chat_template_caps": {"supports_tools": True},
        "modalities": {"vision": False, "audio": False},
    }
    env = env_for(provider)
    try:
        for extra, sees in (({}, False), ({"LLM_VISION": "1"}, True)):
            app = await start_app(tmp_path / f"data{len(extra)}", {**env, **extra})
            try:
                status, att = await attach(app, "p.png", plain("PNG"))
                assert status == 201 and att["vision"] is sees
                provider.props["modalities"]["vision"] = True
                provider_probes.clear_caches()
                status, att = await attach(app, "p.png", plain("PNG"))
                assert att["vision"] is True
                provider.props["modalities"]["vision"] = False
                provider_probes.clear_caches()
            finally:
                await app.close()
    finally:
        provider_probes.clear_caches()


async def test_bombs_are_refused_and_the_server_answers_meanwhile(assistant):
    # a PNG claiming 10000×10000 RGB (300 MB of rows) whose data inflate to 400 MB: checked on
    # a worker thread, up to its header's size; other requests are answered meanwhile (before:
    # checked on the event loop to the end, nothing answered for 32 s at 19.5 GB)
    done, waits = asyncio.Event(), []

    async def other_requests() -> None:
        while not done.is_set():
            started = time.monotonic()
            async with assistant.session.get(assistant.base + "/status") as resp:
                assert resp.status == 200
            waits.append(time.monotonic() - started)
            await asyncio.sleep(0.01)

    pinging = asyncio.ensure_future(other_requests())
    await asyncio.sleep(0.05)
    started = time.monotonic()
    status, body = await attach(assistant, "pixels.png", pixel_bomb(400))
    took = time.monotonic() - started
    done.set()
    await pinging
    assert status == 422 and "inflates past the 300,010,000 bytes its 10000×10000" in body["error"]
    assert took > 0.25  # (long enough that a blocked loop would show)
    assert max(waits) < max(0.15, took / 4), (max(waits), took, len(waits))
    status, body = await attach(assistant, "text.png", text_bomb(512))
    assert status == 413 and "is more than 8 MB" in body["error"]
    assert await stored(assistant) == 0


async def test_workflows_a_browser_cannot_parse_are_refused(assistant):
    nan = b'{"nodes": [{"id": 1, "type": "A", "widgets_values": [NaN, 1]}]}'
    status, body = await attach(assistant, "nan.json", nan)
    assert status == 422 and "holds NaN" in body["error"]
    status, body = await attach(assistant, "deep.json", b"[" * 100_000 + b"]" * 100_000)
    assert status == 422 and "nested more than 64 levels" in body["error"]
    # in an image: its metadata is broken, it is a plain image and says why it holds none
    png = comfy_png(prompt=None, workflow=None)
    png = png[:-12] + png_chunk(b"tEXt", b"workflow\x00" + nan) + png[-12:]
    status, att = await attach(assistant, "nan.png", png)
    assert status == 201 and att["kind"] == "image" and att["workflow"] is False
    status, body = await call(assistant, "GET", f"{BASE}/{att['id']}/workflow")
    assert status == 422 and "not valid JSON" in body["error"]
    # odd shapes: read, stored and given back as strict JSON
    odd = {"nodes": [{"id": [1], "mode": [2], "inputs": 3}], "links": 5, "definitions": [1]}
    status, att = await attach(assistant, "odd.json", json.dumps(odd).encode())
    assert status == 201 and att["kind"] == "workflow", att
    status, body = await call(assistant, "GET", f"{BASE}/{att['id']}/workflow")
    assert status == 200 and body["workflow"] == odd
    # a workflow kept before NaN was refused is not sent as JSON a browser cannot parse
    store = Attachments(await assistant.app[SERVICE].store())
    reading = FileReading("workflow", "application/json", "workflow", workflow={"x": math.nan})
    await store.add("att_old", "t", "old.json", reading, b"{}", 1)
    async with assistant.session.get(f"{assistant.base}{BASE}/att_old/workflow") as resp:
        assert resp.status == 422, await resp.text()
        assert "NaN" in json.loads(await resp.text(), parse_constant=_refuse)["error"]


@pytest.mark.parametrize(
    ("number", "shown"),
    [("1e400", "1e400"), ("-1e999", "-1e999"), ("1" + "0" * 400, "100000000000… (401 digits)")],
)
async def test_workflows_with_a_number_past_a_float_are_refused_at_upload(
    assistant, provider, number, shown
):
    # 1e400 was read as inf: attached (201), offered to the model, then its workflow could
    # not be given back (422); refused now when attached, as NaN is, nested or not
    said = (
        f"flow.json cannot be read: it holds the number {shown}, beyond the range of a 64-bit "
        "float (about 1.8e308), which a browser reads as Infinity: write a smaller number"
    )
    for text in (
        '{"nodes": [{"id": 1, "type": "A", "widgets_values": [%s]}]}',
        '{"1": {"class_type": "A", "inputs": {"x": [[[{"y": [%s]}]]]}}}',
    ):
        status, body = await attach(assistant, "flow.json", (text % number).encode())
        assert (status, body["error"]) == (422, said)
    # in an image's metadata: a plain image (its workflow is not offered), as with NaN
    png = comfy_png(prompt=None, workflow=None)
    workflow = b'{"nodes": [{"id": 1, "widgets_values": [[%s]]}]}' % number.encode()
    png = png[:-12] + png_chunk(b"tEXt", b"workflow\x00" + workflow) + png[-12:]
    status, att = await attach(assistant, "flow.png", png)
    assert status == 201 and (att["kind"], att["workflow"]) == ("image", False)
    assert await stored(assistant) == 1 and provider.requests == []


def _refuse(name: str) -> None:
    raise AssertionError(f"{name} in a response: a browser's JSON.parse refuses it")

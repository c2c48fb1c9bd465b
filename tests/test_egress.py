"""What leaves the machine: a whole session through the real standalone server — chat turns, a
server tool, an attached image, a project's documents, a delegated task, the panel's tools
reading the workflow and running it, the run's image looked at and shown to the model, the
provider test, a rescan, a compaction, a scan with a missing pack and a missing model, that
model's approved download — connects to exactly the addresses Settings lists for its mode
(`/api/assistant/egress`, from core/base/egress.py), online and with COMFY_ASSISTANT_OFFLINE=1,
and resolves no host name.

The server runs as its own process with `tests/egress_audit` on its PYTHONPATH: that
sitecustomize records every socket connect and every name lookup the process makes (Python's
audit events), whatever library makes it. The provider is the scripted one, set up as a
llama.cpp server (so the window, capability, slot and token-count lookups run too); the ComfyUI
is the stand-in's `/view` over its own folders (ComfyUI-Manager is asked there too: it has
none); the Comfy Registry and a model's host are local stand-ins."""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from comfyui_assistant.core.chat.delegation import helper_prompt
from comfyui_assistant.tests.comfy_standin.view import add_view_route, standin_folders

from .comfy_images import comfy_png
from .helpers import chat_body, serve_routes, summary_text, user
from .model_server import ModelServer, model_bytes
from .registry_standin import RegistryStandin
from .scripted_provider import Completion, ScriptedProvider, text_reply
from .test_chat_tools import call, calls_reply
from .test_delegation import ANSWER, delegate_call
from .test_standalone_process import Server

AUDIT = Path(__file__).resolve().parent / "egress_audit"
MODEL = "qwen2.5-vl-7b-instruct"
LLAMA_PROPS = {  # a llama.cpp server that sees images, renders tools, has two slots
    "default_generation_settings": {"n_ctx": 32768},
    "chat_template_caps": {"supports_tools": True},
    "modalities": {"vision": True},
    "total_slots": 2,
}


LOOKUPS = {
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "socket.gethostbyaddr",
    "socket.getnameinfo",
}


def read_log(path: Path) -> list[tuple[str, str, str]]:
    """(event, host, port) per line the audit wrote."""
    lines = path.read_text().splitlines() if path.exists() else []
    return [(event, host, port) for event, host, port in (line.split("\t", 2) for line in lines)]


def is_loopback_literal(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def outside(
    log: list[tuple[str, str, str]], allowed: set[tuple[str, int]]
) -> tuple[list[str], list[str]]:
    """(what was reached besides `allowed`, the names looked up: every address the test gives
    is an IP literal, so any name is one the server found elsewhere)."""
    reached = {(h, p) for e, h, p in log if e not in LOOKUPS and h != "unix"}
    strays = sorted(f"{h}:{p}" for h, p in reached if (h, int(p)) not in allowed)
    names = sorted({h for e, h, _ in log if e in LOOKUPS and not is_loopback_literal(h)})
    return strays, names


@pytest.fixture
async def comfyui(tmp_path: Path) -> AsyncIterator[tuple[str, Path]]:
    """The ComfyUI stand-in's `/view` over its own folders, on 127.0.0.1."""
    folders = standin_folders(tmp_path / "comfy")
    routes = web.RouteTableDef()
    add_view_route(routes, folders)
    runner, url = await serve_routes(routes)
    yield url, folders["output"]
    await runner.cleanup()


class Session:
    """The panel's side of a conversation: what it sends, and the messages as the real AI SDK
    client assembles them from each stream."""

    def __init__(self, http: aiohttp.ClientSession, base: str, sdk: Any) -> None:
        self.http, self.base, self.sdk = http, base, sdk
        self.messages: list[dict[str, Any]] = []

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        async with self.http.request(method, self.base + path, json=body) as resp:
            return resp.status, await resp.json()

    async def send(self, *, continuing: bool = False) -> dict[str, Any]:
        """Post the thread; the answer joins it (or completes the last one, after a panel
        tool's result was added to it)."""
        last = self.messages[-1] if continuing else None
        async with self.http.post(
            self.base + "/api/assistant/chat", json=chat_body(*self.messages)
        ) as resp:
            assert resp.status == 200
            body = await resp.text()
        assert '"type":"error"' not in body.replace(" ", ""), body[-600:]
        message: dict[str, Any] = self.sdk.check(body, last)["message"]
        if continuing:
            self.messages[-1] = message
        else:
            self.messages.append(message)
        return message

    async def ask(self, text: str, *files: dict[str, Any]) -> dict[str, Any]:
        message = user(text, f"u{len(self.messages)}")
        message["parts"] += files
        self.messages.append(message)
        return await self.send()

    async def answer_tool(self, name: str, output: Any) -> dict[str, Any]:
        """The panel ran the answer's `name` call: its output is added, and the thread sent."""
        (part,) = [p for p in self.messages[-1]["parts"] if p["type"] == f"tool-{name}"]
        part.update(state="output-available", output=output)
        return await self.send(continuing=True)


def text_of(message: dict[str, Any]) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


class Destinations:
    """The stand-ins the server may reach, and the server process with its audit log."""

    def __init__(self, tmp_path: Path, comfy_url: str) -> None:
        self.tmp_path, self.comfy_url = tmp_path, comfy_url
        self.log = tmp_path / "egress.log"

    async def __aenter__(self) -> Destinations:
        self.provider = await ScriptedProvider(models=[MODEL]).start()
        self.provider.props, self.provider.busy_slots, self.provider.counts = (
            LLAMA_PROPS, set(), True
        )  # fmt: skip
        self.registry = await RegistryStandin().__aenter__()  # the Comfy Registry, here
        self.models = await ModelServer(model_bytes(1000)).start()  # a model's host, here
        return self

    async def start(self, offline: bool) -> Server:
        env = {
            "COMFY_ASSISTANT_MODEL_ORIGINS": self.models.origin,
            "LLM_BASE_URL": self.provider.base_url,
            "LLM_MODEL": MODEL,
            "COMFYUI_URL": self.comfy_url,
            "COMFY_ASSISTANT_REGISTRY_URL": self.registry.url,
            "COMFY_ASSISTANT_OFFLINE": "1" if offline else "",
            "PYTHONPATH": os.pathsep.join([str(AUDIT), os.environ.get("PYTHONPATH", "")]),
            "EGRESS_LOG": str(self.log),
        }
        self.server = await Server.start(self.tmp_path / "data", env=env)
        return self.server

    async def __aexit__(self, *exc: object) -> None:
        if hasattr(self, "server"):
            await self.server.stop()
        await self.provider.stop()
        await self.registry.__aexit__()
        await self.models.stop()


def listed(statement: dict[str, Any]) -> set[tuple[str, int]]:
    """The addresses Settings lists as in use now (unused ones and host names aside: every
    address the test gives is an IP literal; a name is never looked up, see `outside`)."""
    out = set()
    for entry in statement["entries"]:
        for host in entry["hosts"] if entry["unused"] is None else []:
            name, port = host.split("://", 1)[1].rsplit(":", 1)
            if is_loopback_literal(name):
                out.add((name.strip("[]"), int(port)))
    return out


def check_connections(log: Path, statement: dict[str, Any], own_port: int) -> None:
    """The connections the process made are exactly the addresses the statement lists (its
    own address aside: none expected, none harmful), and no name was looked up."""
    recorded = read_log(log)
    connects = {(h, int(p)) for e, h, p in recorded if e == "socket.connect"}
    assert connects - {("127.0.0.1", own_port)} == listed(statement), recorded
    strays, names = outside(recorded, listed(statement) | {("127.0.0.1", own_port)})
    assert strays == [], f"the server contacted another address: {strays}"
    assert names == [], f"the server looked up a host name: {names}"


async def test_a_whole_session_contacts_exactly_what_settings_lists(tmp_path, comfyui, sdk):
    comfy_url, output_folder = comfyui
    (output_folder / "face.png").write_bytes(comfy_png(size=(512, 512)))
    async with Destinations(tmp_path, comfy_url) as to:
        server = await to.start(offline=False)
        async with aiohttp.ClientSession() as http:
            session = Session(http, server.base, sdk)
            await run_session(session, to.provider, to.models)
            scan = await scan_and_download(session, to.models)
            assert scan["missingModels"][0]["size"] == 1000, scan  # its host's HEAD
            status, statement = await session.call("GET", "/api/assistant/egress")
        assert status == 200 and statement["offline"] is False
        await server.stop()
        assert to.registry.requests == ["/comfy-nodes/AddMask/node"]  # the scan asked it
        assert to.models.heads() == ["/file/lora.safetensors"]  # the size, then the file
        assert [r["method"] for r in to.models.requests] == ["HEAD", "GET"], to.models.requests
        kinds = [e["kind"] for e in statement["entries"] if e["unused"] is None]
        assert kinds == ["provider", "comfyui", "manager", "registry", "modelSizes", "downloads"]
        check_connections(to.log, statement, server.port)


async def test_offline_the_session_contacts_exactly_what_settings_lists(tmp_path, comfyui, sdk):
    """COMFY_ASSISTANT_OFFLINE=1: a chat, a scan with a missing pack and a missing model, and
    that model's approved download reach the provider, ComfyUI and the model's host (the
    download only); neither the Registry nor a HEAD for a size."""
    comfy_url, _ = comfyui
    async with Destinations(tmp_path, comfy_url) as to:
        server = await to.start(offline=True)
        async with aiohttp.ClientSession() as http:
            session = Session(http, server.base, sdk)
            to.provider.enqueue(text_reply("Hello."))
            assert text_of(await session.ask("hi")) == "Hello."
            scan = await scan_and_download(session, to.models)
            assert scan["missingModels"][0]["size"] is None, scan  # its host was not asked
            notes = scan["sources"]["notes"]
            said = "the Comfy Registry is not asked (COMFY_ASSISTANT_OFFLINE is set)"
            assert said in notes, notes
            status, statement = await session.call("GET", "/api/assistant/egress")
        assert status == 200 and statement["offline"] is True
        await server.stop()
        assert to.registry.requests == []
        assert [r["method"] for r in to.models.requests] == ["GET"], to.models.requests
        unused = {e["kind"]: e["unused"] for e in statement["entries"]}
        off = {"registry": "offline", "modelSizes": "offline"}
        assert unused == {
            "provider": None,
            "comfyui": None,
            "manager": None,
            **off,
            "downloads": None,
        }
        check_connections(to.log, statement, server.port)


async def run_session(s: Session, provider: ScriptedProvider, models: ModelServer) -> None:
    # 1. a chat turn
    provider.enqueue(text_reply("Hello."))
    assert text_of(await s.ask("hi")) == "Hello."

    # 2. an attached ComfyUI image and a server tool
    png = comfy_png(size=(320, 240))
    status, att = await s.call(
        "POST",
        "/api/assistant/attachments",
        {
            "thread": "thread-1",
            "name": "ComfyUI_00001_.png",
            "data": base64.b64encode(png).decode(),
        },
    )
    assert status == 201, att
    part = {
        "type": "file",
        "url": att["url"],
        "mediaType": att["mediaType"],
        "filename": att["name"],
    }
    provider.enqueue(
        calls_reply(call("searchInstalledNodes", {"query": "upscale"}, "s1")),
        text_reply("A portrait; ImageUpscaleWithModel upscales it."),
    )
    await s.ask("what is this, and how do I upscale it?", part)
    sent = json.dumps(provider.requests[-1]["messages"])
    assert "image_url" in sent and "ImageUpscaleWithModel" in sent

    # 3. the chat's project documents, and a delegated task
    status, project = await s.call("POST", "/api/assistant/projects", {"name": "Harbour"})
    assert status == 201
    doc = {"title": "Style guide", "text": "Euler, 20 steps, teal and amber."}
    status, _ = await s.call("POST", f"/api/assistant/projects/{project['id']}/documents", doc)
    assert status == 201
    patch = {"project": project["id"]}
    assert (await s.call("PATCH", "/api/assistant/threads/thread-1", patch))[0] == 200
    provider.enqueue(
        delegate_call(),
        calls_reply(call("searchInstalledNodes", {"query": "upscale"}, "c1")),
        text_reply("```json\n" + json.dumps(ANSWER) + "\n```"),
        text_reply("The style guide says Euler; the helper found the upscaler."),
    )
    await s.ask("which sampler does our style guide want, and which upscalers are there?")
    assert "Euler, 20 steps" in json.dumps(provider.requests[-1]["messages"])
    helpers = [
        r for r in provider.requests if r["messages"][0]["content"].startswith(helper_prompt())
    ]
    assert len(helpers) == 2  # the helper's two steps

    # 4. the panel's tools: the workflow read, then run; the run's image looked at and shown
    provider.enqueue(calls_reply(call("getWorkflow", {}, "w1")))
    await s.ask("run it and tell me if the face looks right")
    provider.enqueue(calls_reply(call("queueWorkflow", {}, "q1")))
    workflow = {"nodes": [{"id": 9, "type": "SaveImage"}], "links": []}
    await s.answer_tool("getWorkflow", workflow)
    status, looked = await s.call(
        "POST", "/api/assistant/outputs/look", {"outputs": ["face.png [output]"]}
    )
    assert status == 200 and looked["outputs"][0]["width"] == 512, looked
    provider.enqueue(text_reply("It looks right."))
    ran = {"ok": True, "promptId": "p1", "seconds": 1.5,
           "outputs": {"9": {"images": ["face.png [output]"]}},
           "looked": [looked["outputs"][0]["line"]]}  # fmt: skip
    await s.answer_tool("queueWorkflow", ran)
    last = provider.requests[-1]["messages"]
    tools = [m["content"] for m in last if m["role"] == "tool"]
    assert '"type":"SaveImage"' in tools[-2]  # the workflow, as the tool read it
    shown = last[-1]["content"]  # the run's picture, for a model that sees
    assert shown[0]["text"].startswith("[What run p1 made") and shown[1]["type"] == "image_url"

    # 5. Settings' test, a rescan, a compaction
    status, verdict = await s.call("POST", "/api/assistant/provider/test", {})
    assert status == 200 and verdict["ok"] is True, verdict
    assert (await s.call("POST", "/api/assistant/environment/scan", {}))[0] == 200
    provider.summaries.append(Completion(summary_text("a portrait")))
    status, compacted = await s.call("POST", "/api/assistant/threads/thread-1/compact", {})
    assert status == 200 and compacted["compacted"] > 0, compacted


async def scan_and_download(s: Session, models: ModelServer) -> dict[str, Any]:
    """A scan finds a missing node type (its pack: the Registry's, when it is asked) and a
    missing model; the user approves the model's download, which completes."""
    lora = {"name": "lora.safetensors", "url": models.url("/file/lora.safetensors")}
    workflow = {"nodes": [{"id": 1, "type": "AddMask", "inputs": [], "widgets_values": []}],
                "models": [{**lora, "directory": "loras"}]}  # fmt: skip
    status, found = await s.call("POST", "/api/assistant/installs/scan", {"workflow": workflow})
    assert status == 200 and found["missingNodes"][0]["type"] == "AddMask", found
    approve = {"scan": found["scan"], "models": ["lora.safetensors"]}
    status, started = await s.call("POST", "/api/assistant/installs/downloads", approve)
    assert status == 200, started
    (job,) = started["jobs"]
    for _ in range(500):
        status, job = await s.call("GET", f"/api/assistant/installs/downloads/{job['id']}")
        if job["state"] not in ("queued", "downloading", "verifying"):
            break
        await asyncio.sleep(0.02)
    assert job["state"] == "done" and job["bytesDone"] == 1000, job
    return found

"""What leaves the machine: with a local provider, a whole session through the real standalone
server — chat turns, a server tool, an attached image, a project's documents, a delegated task,
the panel's tools reading the workflow and running it, the run's image looked at and shown to
the model, the provider test, a rescan, a compaction — contacts nothing but the provider and the
ComfyUI it was given (COMFYUI_URL), the Comfy Registry and a missing model's host (one HEAD for
its size: tests/test_model_sizes.py), and resolves no host name.

The server runs as its own process with `tests/egress_audit` on its PYTHONPATH: that
sitecustomize records every socket connect and every name lookup the process makes (Python's
audit events), whatever library makes it. The provider is the scripted one, set up as a
llama.cpp server (so the window, capability, slot and token-count lookups run too); the ComfyUI
is the stand-in's `/view` over its own folders."""

from __future__ import annotations

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


async def test_a_whole_session_contacts_only_the_provider_and_comfyui(tmp_path, comfyui, sdk):
    comfy_url, output_folder = comfyui
    (output_folder / "face.png").write_bytes(comfy_png(size=(512, 512)))
    provider = await ScriptedProvider(models=[MODEL]).start()
    provider.props, provider.busy_slots, provider.counts = LLAMA_PROPS, set(), True
    log = tmp_path / "egress.log"
    registry = await RegistryStandin().__aenter__()  # the Comfy Registry, here
    models = await ModelServer(model_bytes(1000)).start()  # a model's host, here
    env = {
        "COMFY_ASSISTANT_MODEL_ORIGINS": models.origin,
        "LLM_BASE_URL": provider.base_url,
        "LLM_MODEL": MODEL,
        "COMFYUI_URL": comfy_url,
        "COMFY_ASSISTANT_REGISTRY_URL": registry.url,
        "PYTHONPATH": os.pathsep.join([str(AUDIT), os.environ.get("PYTHONPATH", "")]),
        "EGRESS_LOG": str(log),
    }
    server = await Server.start(tmp_path / "data", env=env)
    try:
        async with aiohttp.ClientSession() as http:
            await run_session(Session(http, server.base, sdk), provider, models)
    finally:
        await server.stop()
        await provider.stop()
        await registry.__aexit__()
        await models.stop()

    provider_port = int(provider.base_url.rsplit(":", 1)[1].split("/")[0])
    comfy_port = int(comfy_url.rsplit(":", 1)[1])
    registry_port = int(registry.url.rsplit(":", 1)[1])
    assert registry.requests == ["/comfy-nodes/AddMask/node"]  # the scan asked it, nothing else
    allowed = {("127.0.0.1", provider_port), ("127.0.0.1", comfy_port)}
    allowed.add(("127.0.0.1", registry_port))
    assert models.heads() == ["/file/lora.safetensors"] and len(models.requests) == 1
    allowed.add(("127.0.0.1", int(models.origin.rsplit(":", 1)[1])))
    allowed.add(("127.0.0.1", server.port))  # its own address (none expected, none harmful)
    recorded = read_log(log)
    connects = {(h, int(p)) for e, h, p in recorded if e == "socket.connect"}
    # the audit saw the session: the provider and the ComfyUI were both reached
    assert {("127.0.0.1", provider_port), ("127.0.0.1", comfy_port)} <= connects, recorded
    strays, names = outside(recorded, allowed)
    assert strays == [], f"the server contacted another address: {strays}"
    assert names == [], f"the server looked up a host name: {names}"


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
    lora = {"name": "lora.safetensors", "url": models.url("/file/lora.safetensors")}
    workflow = {"nodes": [{"id": 1, "type": "AddMask", "inputs": [], "widgets_values": []}],
                "models": [{**lora, "directory": "loras"}]}  # fmt: skip
    status, found = await s.call("POST", "/api/assistant/installs/scan", {"workflow": workflow})
    assert status == 200 and found["missingNodes"][0]["packs"] == ["comfyui-impact-pack"], found
    assert found["missingModels"][0]["size"] == 1000, found  # its host's HEAD
    provider.summaries.append(Completion(summary_text("a portrait")))
    status, compacted = await s.call("POST", "/api/assistant/threads/thread-1/compact", {})
    assert status == 200 and compacted["compacted"] > 0, compacted

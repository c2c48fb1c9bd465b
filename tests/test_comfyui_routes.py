"""Our routes on ComfyUI's shared route table, beside another extension's: everything under
`/api/assistant/`, and `POST /api/chat` kept as an alias only where nobody else answers it.

`mount` is what ComfyUI's `PromptServer.add_routes` does (server.py): every `web.RouteDef` of
the table mirrored under `/api`, then the table itself. A second route with the same method and
path makes aiohttp raise `RuntimeError` there, and ComfyUI does not start."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from comfyui_assistant.api_handlers import add_routes
from comfyui_assistant.core.service import AssistantService, ServiceOptions


def mount(table: web.RouteTableDef, app: web.Application | None = None) -> web.Application:
    app = app or web.Application()
    api_routes = web.RouteTableDef()
    for route in table:
        if isinstance(route, web.RouteDef):
            api_routes.route(route.method, "/api" + route.path)(route.handler, **route.kwargs)
    app.add_routes(api_routes)
    app.add_routes(table)
    return app


async def theirs(request: web.Request) -> web.Response:
    return web.json_response({"from": "the other extension"})


def other_extension(path: str) -> Callable[[web.RouteTableDef], None]:
    def add(table: web.RouteTableDef) -> None:
        table.post(path)(theirs)

    return add


def ours(service: AssistantService) -> Callable[[web.RouteTableDef], None]:
    return lambda table: add_routes(table, service)


async def answers(app: web.Application) -> dict[str, str]:
    """Who answers POST /api/chat and POST /api/assistant/chat (our chat refuses an empty body
    with its own 400; theirs says who it is)."""
    out = {}
    async with TestClient(TestServer(app)) as client:
        for path in ("/api/chat", "/api/assistant/chat"):
            resp = await client.post(path, json={})
            body = await resp.text()
            out[path] = "theirs" if "other extension" in body else f"ours {resp.status}"
    return out


@pytest.fixture
async def service(tmp_path: Path):
    service = AssistantService(ServiceOptions(data_dir=tmp_path / "data", environ={}))
    yield service
    await service.close()


@pytest.mark.parametrize("path", ["/api/chat", "/chat"])  # (/chat is mirrored at /api/chat)
@pytest.mark.parametrize("order", ["theirs first", "ours first"])
async def test_another_extensions_chat_route_and_ours_both_work(service, caplog, path, order):
    table = web.RouteTableDef()
    steps = [other_extension(path), ours(service)]
    for add in steps if order == "theirs first" else steps[::-1]:
        add(table)
    with caplog.at_level(logging.INFO, logger="comfyui_assistant"):
        app = mount(table)  # ComfyUI starts: no RuntimeError
    assert await answers(app) == {"/api/chat": "theirs", "/api/assistant/chat": "ours 400"}
    skipped = [r for r in caplog.records if "another extension answers POST /api/chat" in r.message]
    assert len(skipped) == 1


async def test_a_route_added_to_comfyuis_app_directly_keeps_it(service):
    table = web.RouteTableDef()
    ours(service)(table)
    app = web.Application()
    app.router.add_post("/api/chat", theirs)  # (some extensions add routes to the app itself)
    mount(table, app)
    assert await answers(app) == {"/api/chat": "theirs", "/api/assistant/chat": "ours 400"}


async def test_alone_the_documented_api_chat_is_our_chat(service, caplog):
    table = web.RouteTableDef()
    ours(service)(table)
    with caplog.at_level(logging.INFO, logger="comfyui_assistant"):
        app = mount(table)
    assert await answers(app) == {"/api/chat": "ours 400", "/api/assistant/chat": "ours 400"}
    assert "another extension" not in caplog.text
    paths = {r.resource.canonical for r in app.router.routes() if r.resource is not None}
    # every other route of ours is namespaced (ComfyUI's mirror adds /api in front)
    assert {p for p in paths if "/api/assistant/" not in p} == {"/api/chat"}


def test_two_routes_with_one_method_and_path_stop_comfyui():
    """Why: the stand-in fails as ComfyUI does when two extensions take the same route."""
    table = web.RouteTableDef()
    table.post("/api/chat")(theirs)
    table.post("/api/chat")(theirs)
    with pytest.raises(RuntimeError):
        mount(table)


async def test_the_guard_holds_on_the_alias(service):
    table = web.RouteTableDef()
    ours(service)(table)
    async with TestClient(TestServer(mount(table))) as client:
        resp = await client.post(
            "/api/chat", data=b"{}", headers={"Content-Type": "text/plain"}
        )  # a cross-site form could send this
        assert resp.status == 415 and "application/json" in await resp.text()

"""The ComfyUI stand-in in multi-user mode (as ComfyUI's --multi-user, app/user_manager.py):
users made with `POST /api/users`, each request naming its user with the `comfy-user` header as
the frontend sends it; ComfyUI's settings and files and the assistant's data kept per user."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from comfyui_assistant.core.service import ServiceOptions
from comfyui_assistant.tests.comfy_standin import (
    create_standin,
    frontend_versions,
    multi_user_standin,
)

from .helpers import serve_app
from .test_comfy_standin import Standin

VERSION = frontend_versions()[-1]


class Users(Standin):
    """The stand-in, asked as one user or another (None: no comfy-user header)."""

    async def as_user(self, who: str | None, method: str, path: str, body: Any = None) -> Any:
        return await self.call(
            method, path, body, headers={} if who is None else {"comfy-user": who}
        )


@pytest.fixture
async def standin(tmp_path: Path) -> AsyncIterator[Users]:
    environ = {"LLM_BASE_URL": "http://127.0.0.1:9/v1", "LLM_MODEL": "m"}
    options = ServiceOptions(data_dir=tmp_path, environ=environ, users=multi_user_standin(tmp_path))
    runner, url = await serve_app(create_standin(VERSION, options))
    async with aiohttp.ClientSession() as session:
        yield Users(url, session)
    await runner.cleanup()


async def test_users_are_made_and_listed_as_comfyui_does_it(standin: Users) -> None:
    assert await standin.as_user(None, "GET", "/api/users") == (
        200,
        {"storage": "server", "users": {}},
    )
    status, alice = await standin.as_user(None, "POST", "/api/users", {"username": "alice"})
    assert status == 200 and alice.startswith("alice_") and len(alice) == len("alice_") + 36
    assert await standin.as_user(None, "POST", "/api/users", {"username": "alice"}) == (
        400,
        {"error": "Duplicate username."},
    )
    assert await standin.as_user(None, "GET", "/api/users") == (
        200,
        {"storage": "server", "users": {alice: "alice"}},
    )


async def test_each_users_settings_files_and_threads_are_their_own(standin: Users) -> None:
    _, alice = await standin.as_user(None, "POST", "/api/users", {"username": "alice"})
    _, bob = await standin.as_user(None, "POST", "/api/users", {"username": "bob"})
    assert (await standin.as_user(alice, "POST", "/api/settings", {"Comfy.Locale": "de"}))[0] == 200
    assert await standin.as_user(alice, "GET", "/api/settings") == (200, {"Comfy.Locale": "de"})
    assert await standin.as_user(bob, "GET", "/api/settings") == (200, {})
    name = "/api/userdata/workflows%2Fmine.json"
    assert (await standin.as_user(alice, "POST", name, {"a": 1}))[0] == 200
    assert (await standin.as_user(bob, "GET", name))[0] == 404
    thread = {"id": "t1", "title": "Alice's", "workflow": "w"}
    assert (await standin.as_user(alice, "POST", "/api/assistant/threads", thread))[0] == 201
    assert (await standin.as_user(bob, "GET", "/api/assistant/threads")) == (200, {"threads": []})
    for who in ("mallory", None):  # unknown, or none named: refused as ComfyUI refuses them
        assert (await standin.as_user(who, "GET", "/api/settings"))[0] == 401  # (as 0.3.64, 0.33)
        assert (await standin.as_user(who, "GET", "/api/userdata?dir=workflows"))[0] == 403
        assert (await standin.as_user(who, "GET", "/api/assistant/threads"))[0] == 403

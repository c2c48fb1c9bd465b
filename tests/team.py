"""Two users on one assistant, as ComfyUI's --multi-user serves them: users made as ComfyUI's
`POST /api/users` makes them (a users file, core/base/users.py `UsersFile`), each request naming its
user with the `comfy-user` header as ComfyUI's frontend sends it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from comfyui_assistant.core.base import UsersFile

from .conftest import App, start_app
from .scripted_provider import ScriptedProvider


def provider_env(provider: ScriptedProvider, **extra: str) -> dict[str, str]:
    return {
        "LLM_BASE_URL": provider.base_url,
        "LLM_MODEL": "scripted-model",
        "LLM_CONTEXT_WINDOW": "32768",
        **extra,
    }


@dataclass
class Team:
    app: App
    users: UsersFile
    alice: str
    bob: str

    @classmethod
    async def start(
        cls, data_dir: Path, environ: dict[str, str], users_file: Path | None = None
    ) -> Team:
        users = UsersFile(users_file or data_dir.parent / "users.json")
        alice, bob = users.add("alice"), users.add("bob")
        app = await start_app(data_dir, environ, users=users.as_users())
        return cls(app, users, alice, bob)

    async def call(
        self, user: str | None, method: str, path: str, body: Any = None
    ) -> tuple[int, str]:
        """(status, body text) of a request from `user` (None: no comfy-user header)."""
        headers = {} if user is None else {"comfy-user": user}
        kwargs: dict[str, Any] = {"headers": headers}
        if body is not None:
            kwargs["json"] = body
        async with self.app.session.request(method, self.app.base + path, **kwargs) as resp:
            return resp.status, await resp.text()

    async def json(self, user: str | None, method: str, path: str, body: Any = None) -> Any:
        status, text = await self.call(user, method, path, body)
        assert status < 300, (method, path, status, text[:300])
        return json.loads(text)

    async def close(self) -> None:
        await self.app.close()

"""An MCP connection acts for one ComfyUI user (`--multi-user`): the user ComfyUI resolves for
its requests (the comfy-user header); it reads that user's skills, its tokens are that user's,
and a request that names no user is refused as the panel's would be."""

from __future__ import annotations

import httpx2
import pytest
from comfyui_assistant.core.base.users import UsersFile
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from .conftest import start_app
from .test_mcp_http import ACCEPT, INIT

MCP = "/api/assistant/mcp"


def as_user(base: str, user: str) -> Client:
    http = httpx2.AsyncClient(headers={"comfy-user": user})
    return Client(streamable_http_client(base + MCP, http_client=http), mode="legacy")


async def test_each_connection_is_its_users(tmp_path) -> None:
    users = UsersFile(tmp_path / "users.json")
    alice, bob = users.add("alice"), users.add("bob")
    app = await start_app(tmp_path / "data", {}, users=users.as_users())
    try:
        skill = {"name": "Alice's light", "description": "Hers.", "body": "Soft."}
        headers = {"comfy-user": alice}
        async with await app.post(
            "/api/assistant/user-context/skills", skill, headers=headers
        ) as r:
            assert r.status == 201
            slug = (await r.json())["slug"]
        async with as_user(app.base, alice) as client:
            hers = {p.name for p in (await client.list_prompts()).prompts}
        async with as_user(app.base, bob) as client:
            his = {p.name for p in (await client.list_prompts()).prompts}
            with pytest.raises(MCPError) as caught:
                await client.get_prompt(slug)  # (alice's)
        assert str(caught.value) == f"There is no skill '{slug}'."
        async with await app.post(MCP, INIT, headers=ACCEPT) as r:  # (no user named)
            assert r.status == 403
            assert "names no user (no comfy-user header)" in (await r.json())["error"]
    finally:
        await app.close()
    assert slug in hers and slug not in his
    assert hers - {slug} == his

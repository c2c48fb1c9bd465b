"""Several people on one ComfyUI (issue 39): who a request is from, as ComfyUI decides it; each
user's data in a folder of its own; who sets the provider; a single-user install unchanged, and
a used data folder taken into multi-user mode as the default user's, unmoved."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import shutil
from pathlib import Path

import pytest
from comfyui_assistant.core.base import USERS_FOLDER, UsersFile, user_dir_name
from comfyui_assistant.core.installs.download_checks import DownloadSpec
from comfyui_assistant.standalone import SERVICE

from .conftest import start_app
from .helpers import chat_body, sent, user
from .model_server import ModelServer, host_and_app
from .scripted_provider import ScriptedProvider, text_reply
from .team import Team, provider_env

BASE = "/api/assistant"
UNKNOWN = "ComfyUI runs with --multi-user and "


async def test_unknown_users_are_refused_as_comfyui_refuses_them_and_nothing_is_written(
    provider: ScriptedProvider, tmp_path: Path
) -> None:
    team = await Team.start(tmp_path / "data", provider_env(provider))
    users = json.loads(team.users.path.read_text())
    team.users.path.write_text(json.dumps({**users, "__system": "s"}))  # (0.33's system users)
    try:
        for who in ("mallory", None, "__system", team.alice.upper()):
            for method, path, body in (
                ("GET", "/threads", None),
                ("POST", "/chat", chat_body(user("hi"))),
                ("PUT", "/user-context/soul", {"text": "mine"}),
                ("GET", "/provider", None),
            ):
                status, text = await team.call(who, method, BASE + path, body)
                assert status == 403, (who, path, status, text)
                assert UNKNOWN in json.loads(text)["error"], text
        _, said = await team.call("mallory", "GET", BASE + "/threads")
        assert json.loads(said) == {
            "error": "ComfyUI runs with --multi-user and knows no user 'mallory': choose or "
            "create a user in ComfyUI (its frontend sends the comfy-user header with each "
            "request)"
        }
        assert provider.requests == []
        assert not (tmp_path / "data").exists()  # no store opened, no folder made
    finally:
        await team.close()


async def test_each_user_keeps_a_folder_of_their_own_and_the_default_user_the_data_dir(
    provider: ScriptedProvider, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    provider.responder = lambda _: text_reply("ok")
    team = await Team.start(data, provider_env(provider))
    try:
        for who, thread in ((team.alice, "ta"), (team.bob, "tb")):
            status, _ = await team.call(
                who, "POST", BASE + "/chat", chat_body(user("hi"), id=thread)
            )
            assert status == 200
            await team.json(who, "PUT", BASE + "/user-context/soul", {"text": f"soul of {thread}"})
        folders = sorted(p.name for p in (data / USERS_FOLDER).iterdir())
        assert folders == sorted(user_dir_name(u) for u in (team.alice, team.bob))
        for who, thread in ((team.alice, "ta"), (team.bob, "tb")):
            listed = await team.json(who, "GET", BASE + "/threads")
            assert [t["id"] for t in listed["threads"]] == [thread]
            mine = data / USERS_FOLDER / user_dir_name(who)
            assert (mine / "SOUL.md").read_text(encoding="utf-8") == f"soul of {thread}"
        # the default user's (the shared provider's settings are read from its store, which
        # installs the shipped defaults): neither user's
        assert "soul of" not in (data / "SOUL.md").read_text(encoding="utf-8")
    finally:
        await team.close()


def test_a_users_folder_name_is_safe_and_tells_apart_ids_that_differ_only_in_case() -> None:
    names = {user_dir_name(u) for u in ("Alice_1", "alice_1", "../x", "..", "a/b", "é", "")}
    assert len(names) == 7
    assert all(n.replace("-", "").replace("_", "").isalnum() and len(n) <= 57 for n in names)
    assert user_dir_name("alice_0d7c") == user_dir_name("alice_0d7c")


async def test_without_multi_user_mode_the_header_changes_nothing(
    provider: ScriptedProvider, tmp_path: Path
) -> None:
    provider.responder = lambda _: text_reply("ok")
    app = await start_app(tmp_path / "data", provider_env(provider))
    try:
        for who in ("bob", "mallory"):
            async with app.session.post(
                app.base + BASE + "/chat",
                json=chat_body(user("hi"), id=f"t-{who}"),
                headers={"comfy-user": who},
            ) as resp:
                assert resp.status == 200
        async with app.session.get(app.base + BASE + "/threads") as resp:
            listed = [t["id"] for t in (await resp.json())["threads"]]
        assert sorted(listed) == ["t-bob", "t-mallory"]
        assert not (tmp_path / "data" / USERS_FOLDER).exists()
    finally:
        await app.close()


async def test_the_shared_provider_is_the_operators_a_user_may_not_change_it(
    provider: ScriptedProvider, tmp_path: Path
) -> None:
    team = await Team.start(tmp_path / "data", provider_env(provider))
    try:
        shown = await team.json(team.alice, "GET", BASE + "/provider")
        assert shown["baseUrl"] == provider.base_url
        status, text = await team.call(team.alice, "PUT", BASE + "/provider", {"model": "x"})
        assert status == 403
        assert json.loads(text)["error"] == (
            "ComfyUI runs with --multi-user, so the provider everyone shares is set by whoever "
            "runs ComfyUI, through the LLM_* environment variables; whoever runs ComfyUI can let "
            "each user set their own by starting it with COMFY_ASSISTANT_PER_USER_PROVIDER=1"
        )
        form = {"baseUrl": "http://127.0.0.1:9/v1"}
        status, _ = await team.call(team.bob, "POST", BASE + "/provider/test", form)
        assert status == 403  # no form to try another address with
        status, text = await team.call(team.bob, "POST", BASE + "/provider/test", {})
        assert status == 200, text  # the settings in force may be tested
        assert await team.json(team.bob, "GET", BASE + "/provider") == shown
    finally:
        await team.close()


KEY = "sk-bob-own-key-5521"


async def test_with_per_user_providers_a_users_key_goes_only_to_their_provider_and_is_never_shown(
    provider: ScriptedProvider, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    own = await ScriptedProvider(api_key=KEY).start()
    provider.responder = own.responder = lambda _: text_reply("ok")
    env = provider_env(provider, COMFY_ASSISTANT_PER_USER_PROVIDER="1")
    team = await Team.start(tmp_path / "data", env)
    caplog.set_level(logging.DEBUG)
    try:
        update = {"baseUrl": own.base_url, "apiKey": KEY, "model": "scripted-model"}
        status, text = await team.call(team.bob, "PUT", BASE + "/provider", update)
        assert status == 200 and KEY not in text
        for who, thread in ((team.bob, "tb"), (team.alice, "ta")):
            status, text = await team.call(
                who, "POST", BASE + "/chat", chat_body(user(thread), id=thread)
            )
            assert status == 200 and KEY not in text
        assert [sent(own, 0)[-1]["content"], sent(provider, 0)[-1]["content"]] == ["tb", "ta"]
        assert len(own.requests) == len(provider.requests) == 1
        assert own.saw(KEY) and not provider.saw(KEY)
        alices = await team.json(team.alice, "GET", BASE + "/provider")
        assert alices["baseUrl"] == provider.base_url and alices["apiKeySet"] is False
        bobs = await team.json(team.bob, "GET", BASE + "/provider")
        assert bobs["baseUrl"] == own.base_url and bobs["apiKeySet"] is True
        for path in ("/provider", "/egress", "/threads", "/user-context"):
            _, text = await team.call(team.alice, "GET", BASE + path)
            assert KEY not in text and own.base_url.rsplit("/", 1)[0] not in text, path
        assert not [r for r in caplog.records if KEY in r.getMessage()]
    finally:
        await team.close()
        await own.stop()


def _files(root: Path) -> dict[str, str]:
    """Every file but the database's (its pages may be rewritten as it is opened), hashed."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".db" not in p.name
    }


async def test_a_used_data_folder_becomes_the_default_users_unmoved(
    tmp_path: Path,
) -> None:
    """A copy of a data folder a single-user install used (a thread, a rule, SOUL.md, a skill,
    a provider with its key saved in Settings), opened by ComfyUI in multi-user mode: the default
    user (when users.json lists one) has all of it; another user none of it and the shared
    provider; no file of it moved or changed."""
    shared = await ScriptedProvider(api_key=KEY).start()
    shared.responder = lambda _: text_reply("ok")
    used = tmp_path / "used"
    try:
        app = await start_app(used, {})
        for method, path, body in (
            (
                "PUT",
                "/provider",
                {"baseUrl": shared.base_url, "apiKey": KEY, "model": "scripted-model"},
            ),
            ("POST", "/chat", chat_body(user("an old question"), id="old-thread")),
            ("POST", "/user-context/rules", {"text": "Use metric units"}),
            ("PUT", "/user-context/soul", {"text": "Calm and brief."}),
            (
                "POST",
                "/user-context/skills",
                {"slug": "mine", "name": "M", "description": "d", "body": "b"},
            ),
        ):
            async with app.session.request(method, app.base + BASE + path, json=body) as resp:
                assert resp.status < 300, (path, await resp.text())
        before = {}
        for path in ("/threads/old-thread", "/user-context", "/user-context/skills", "/provider"):
            async with app.session.get(app.base + BASE + path) as resp:
                before[path] = await resp.json()
        await app.close()

        copy = tmp_path / "copy"
        shutil.copytree(used, copy)
        files = _files(copy)
        users = UsersFile(tmp_path / "users.json")
        users.path.write_text(json.dumps({"default": "default"}))
        alice = users.add("alice")
        team = Team(await start_app(copy, {}, users=users.as_users()), users, alice, alice)
        try:
            for path, was in before.items():
                assert await team.json("default", "GET", BASE + path) == was, path
            assert (await team.json(alice, "GET", BASE + "/threads"))["threads"] == []
            context = await team.json(alice, "GET", BASE + "/user-context")
            assert context["rules"] == [] and "Calm and brief." not in json.dumps(context)
            status, _ = await team.call(
                alice, "POST", BASE + "/chat", chat_body(user("new"), id="n")
            )
            assert status == 200 and sent(shared, len(shared.requests) - 1)[-1]["content"] == "new"
        finally:
            await team.close()
        after = _files(copy)
        assert {k: v for k, v in after.items() if not k.startswith(USERS_FOLDER + "/")} == files
        assert {k.split("/")[1] for k in after if k.startswith(USERS_FOLDER + "/")} == {
            user_dir_name(alice)
        }
    finally:
        await shared.stop()


host, _ = host_and_app(1 << 20)  # (a model host on 127.0.0.1: tests/model_server.py)


async def test_a_download_is_its_starters_and_its_file_everybodys(
    host: ModelServer, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    team = await Team.start(data, {"COMFY_ASSISTANT_MODEL_ORIGINS": host.origin})
    try:
        service = team.app.app[SERVICE]
        model = DownloadSpec(host.url(), "checkpoints", "m.safetensors", sha256=host.sha256)
        job = service.of_user(team.alice).downloads.start(model)
        assert job.task is not None
        await asyncio.wait_for(asyncio.shield(job.task), 30)
        path = f"{BASE}/installs/downloads"
        assert await team.json(team.bob, "GET", path) == {"jobs": []}
        for method in ("GET", "DELETE"):
            assert (await team.call(team.bob, method, f"{path}/{job.id}"))[0] == 404
        alices = await team.json(team.alice, "GET", path)
        assert [(j["id"], j["state"]) for j in alices["jobs"]] == [(job.id, "done")]
        assert (data / "models" / "checkpoints" / "m.safetensors").stat().st_size == 1 << 20
    finally:
        await team.close()

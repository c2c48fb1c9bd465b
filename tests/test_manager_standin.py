"""The ComfyUI-Manager stand-in (tests/manager_standin.py) answers as the recorded Manager 4.3 and
3.41 did (tests/fixtures/manager/recorded, copied from the recording), over real sockets: the
tests of what we build on Manager then test our code against what Manager does."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from comfyui_assistant.core.service import ServiceOptions
from comfyui_assistant.tests.comfy_standin import create_standin, frontend_versions

from .manager_standin import FIXTURES, ManagerStandin

RECORDED = FIXTURES / "recorded"
CLIENT = "f7f18fb6342d4e5788ac6d2ef0ae8889"
OTHER = "0123456789abcdef0123456789abcdef"
BEFORE = {"v4_queue_start_again": ["v4_queue_start"]}  # exchanges that need an earlier one
STATEFUL = {"v4_queue_history_by_ui_id", "v4_queue_status_client", "v4_normal_ws_queue_events"}


def recorded(name: str) -> dict[str, Any]:
    return json.loads((RECORDED / f"{name}.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def exchanges() -> list[str]:
    names = sorted(p.stem for p in RECORDED.glob("*.json"))
    return [n for n in names if n not in STATEFUL]


def standin_for(name: str) -> ManagerStandin:
    flavour = name.split("_")[0]
    flavour = "v4" if flavour in ("v4", "v4legacy") and not name.startswith("v4legacy") else flavour
    level = "strong" if name.startswith("v4_strong") else "normal"
    return ManagerStandin(flavour=flavour, security_level=level)


async def replay(session: aiohttp.ClientSession, url: str, ex: dict[str, Any]) -> tuple[int, Any]:
    body, headers = ex["request_body"], ex.get("request_headers") or {}
    kw: dict[str, Any] = {"params": ex.get("query") or {}, "headers": headers}
    if isinstance(body, dict):
        kw["data"] = json.dumps(body)
    elif body is not None:
        kw["data"] = body
    async with session.request(ex["method"], url + ex["path"], **kw) as r:
        text = await r.text()
        if ex["response_kind"] != "json":
            return r.status, text
        try:  # (the recorder kept no body of a 404)
            return r.status, json.loads(text) if text else None
        except ValueError:
            return r.status, None


def shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def assert_alike(recorded_body: Any, ours: Any, trimmed: bool) -> None:
    """The same body; where the recording was cut to its first entries, those entries."""
    if not trimmed:
        assert ours == recorded_body
        return
    for key, entry in recorded_body.items():
        names, meta = entry
        assert ours[key][0][: len(names)] == names and ours[key][1] == meta, key


@pytest.mark.parametrize("name", exchanges())
async def test_it_answers_the_recorded_exchanges_alike(name: str) -> None:
    ex = recorded(name)
    async with standin_for(name) as manager, aiohttp.ClientSession() as session:
        for before in BEFORE.get(name, []):
            await replay(session, manager.url, recorded(before))
        status, body = await replay(session, manager.url, ex)
    assert status == ex["status"], name
    if name.endswith("getlist_cache"):  # the recorded packs, and one more
        assert body["channel"] == ex["response_body"]["channel"]
        for key, pack in ex["response_body"]["node_packs"].items():
            assert body["node_packs"][key] == pack
    elif name.endswith("getmappings_cache"):
        assert_alike(ex["response_body"], body, trimmed=True)
    else:
        assert body == ex["response_body"], name


# --- the queue and its events -----------------------------------------------------------------


class Listener:
    """A ws client (`/ws?clientId=`) keeping every message it gets, and how its socket ended."""

    def __init__(self, session: aiohttp.ClientSession, url: str, client_id: str) -> None:
        self.session, self.url, self.client_id = session, url, client_id
        self.messages: list[dict[str, Any]] = []
        self.close_code: int | None = None

    async def __aenter__(self) -> Listener:
        self.ws = await self.session.ws_connect(f"{self.url}/ws?clientId={self.client_id}")
        self.reader = asyncio.ensure_future(self._read())
        await self.wait_for("status")
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.reader.cancel()
        await self.ws.close()

    async def _read(self) -> None:
        async for message in self.ws:
            if message.type == aiohttp.WSMsgType.TEXT:
                self.messages.append(json.loads(message.data))
        self.close_code = self.ws.close_code

    def types(self) -> list[str]:
        return [m["type"] for m in self.messages]

    async def wait_for(self, kind: str, timeout: float = 5.0) -> dict[str, Any]:
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            found = [m for m in self.messages if m["type"] == kind]
            if found:
                return found[-1]
            await asyncio.sleep(0.01)
        raise AssertionError(f"no {kind} within {timeout} s: {self.types()}")


@pytest.fixture
async def manager() -> AsyncIterator[ManagerStandin]:
    async with ManagerStandin(idle_seconds=0.2) as server:
        yield server


async def post(session: aiohttp.ClientSession, url: str, body: Any = None) -> int:
    async with session.post(url, json=body) as r:
        return r.status


async def get(session: aiohttp.ClientSession, url: str) -> Any:
    async with session.get(url) as r:
        assert r.status == 200, url
        return await r.json()


def task(ui_id: str, kind: str, params: dict[str, Any], client: str = CLIENT) -> dict[str, Any]:
    return {"ui_id": ui_id, "client_id": client, "kind": kind, "params": params}


INSTALL_IMPACT = {"id": "comfyui-impact-pack", "version": "latest", "selected_version": "latest",
                  "mode": "remote", "channel": "default"}  # fmt: skip
MODEL = recorded("v4_install_model_hf_url")["request_body"]


async def test_a_queue_runs_in_order_and_tells_only_its_client(manager: ManagerStandin) -> None:
    api = f"{manager.url}/api/v2/manager"
    async with (
        aiohttp.ClientSession() as session,
        Listener(session, manager.url, CLIENT) as mine,
        Listener(session, manager.url, OTHER) as other,
    ):
        install = task("t1", "install", INSTALL_IMPACT)
        assert await post(session, f"{api}/queue/task", install) == 200
        enable = task("t2", "enable", {"cnr_id": "comfyui-fakedisabled"})
        assert await post(session, f"{api}/queue/task", enable) == 200
        assert await post(session, f"{api}/queue/install_model", {**MODEL, "ui_id": "t3"}) == 200
        status = await get(session, f"{api}/queue/status?client_id={CLIENT}")
        assert (status["pending_count"], status["is_processing"]) == (3, False)
        assert status.keys() == recorded("v4_queue_status_client")["response_body"].keys()
        assert await post(session, f"{api}/queue/start") == 200
        assert await post(session, f"{api}/queue/start") == 201  # already running
        await mine.wait_for("cm-queue-status")
        await other.wait_for("cm-queue-status")  # all-done is broadcast
        status = await get(session, f"{api}/queue/status")
        history = await get(session, f"{api}/queue/history?ui_id=t3")
    events = [(m["type"], m["data"].get("ui_id")) for m in mine.messages[1:]]
    assert events == [
        ("cm-task-started", "t1"), ("cm-task-completed", "t1"),
        ("cm-task-started", "t2"), ("cm-task-completed", "t2"),
        ("cm-task-started", "t3"), ("cm-task-completed", "t3"),
        ("cm-queue-status", None),
    ]  # fmt: skip
    assert other.types() == ["status", "cm-queue-status"]
    assert mine.messages[-1]["data"] == {"status": "all-done"}
    rec = [e["msg"] for e in recorded("v4_normal_ws_queue_events")["events"] if "msg" in e]
    for ours, theirs in zip(mine.messages[1:3], rec[:2], strict=True):
        assert ours["type"] == theirs["type"]
        assert ours["data"].keys() == theirs["data"].keys()
        assert ours["data"]["state"].keys() == theirs["data"]["state"].keys()
    done = [m["data"] for m in mine.messages if m["type"] == "cm-task-completed"]
    assert [d["result"] for d in done] == ["success"] * 3
    assert shape(done[0]["status"]) == shape(rec[1]["data"]["status"])
    assert status == {"total_count": 0, "done_count": 3, "in_progress_count": 0,
                      "pending_count": 0, "is_processing": False}  # fmt: skip
    assert shape(history) == shape(recorded("v4_queue_history_by_ui_id")["response_body"])
    installed = manager.installed()
    assert installed["comfyui-impact-pack"]["enabled"] is True
    assert installed["comfyui-fakedisabled"]["enabled"] is True  # no longer "@1_2_0"
    assert manager.models[0]["url"] == MODEL["url"]


async def test_an_unknown_pack_fails_as_offline_manager_says(manager: ManagerStandin) -> None:
    api = f"{manager.url}/v2/manager"
    params = {**INSTALL_IMPACT, "id": "comfyui-nonexistent"}
    async with aiohttp.ClientSession() as session, Listener(session, manager.url, CLIENT) as ws:
        await post(session, f"{api}/queue/task", task("u", "install", params))
        await post(session, f"{api}/queue/start")
        done = (await ws.wait_for("cm-task-completed"))["data"]
    assert done["result"] == "Cannot resolve install target: 'comfyui-nonexistent@latest'"
    assert done["status"]["status_str"] == "error"
    assert "comfyui-nonexistent" not in manager.installed()


async def test_a_nightly_pack_the_channel_list_lacks_fails_with_managers_words(
    manager: ManagerStandin,
) -> None:
    # Manager 4.3's install_by_id: a `nightly` pack is found by name in the channel's node list
    # (`repository` is not read), else "not found in [channel, mode]" with the enums as Python
    # 3.12 formats them (issue 35, seen on the real one); the list is looked up without case
    api = f"{manager.url}/v2/manager"
    url = "https://github.com/someone/ComfyUI-NotListed"
    listed = {**INSTALL_IMPACT, "id": "comfyui_essentials", "version": "nightly",
              "selected_version": "nightly", "mode": "cache"}  # fmt: skip
    unlisted = {**listed, "id": "ComfyUI-NotListed", "repository": url}
    async with aiohttp.ClientSession() as session, Listener(session, manager.url, CLIENT) as ws:
        await post(session, f"{api}/queue/task", task("a", "install", unlisted))
        await post(session, f"{api}/queue/task", task("b", "install", listed))
        await post(session, f"{api}/queue/start")
        await ws.wait_for("cm-queue-status")
    results = [manager.history[ui_id]["result"] for ui_id in "ab"]
    assert results == [
        "Node 'ComfyUI-NotListed@nightly' not found in "
        "[ManagerChannel.default, ManagerDatabaseSource.cache]",
        "success",
    ]


@pytest.mark.parametrize(
    ("allow", "listen", "network_mode", "status"),
    [
        (False, "127.0.0.1", "public", 403),
        (True, "0.0.0.0", "public", 403),
        (True, "0.0.0.0", "personal_cloud", 200),
        (True, "127.0.0.1", "public", 200),
    ],
)
async def test_the_legacy_ui_installs_a_git_url_only_with_its_flag(
    allow: bool, listen: str, network_mode: str, status: int
) -> None:
    # Manager 4.3's legacy UI: allow_git_url_install AND (a loopback listener OR personal_cloud),
    # whatever the security level; the new UI has no such route
    standin = ManagerStandin(flavour="v4legacy", security_level="strong", listen=listen,
                             network_mode=network_mode, allow_git_url_install=allow)  # fmt: skip
    url = "https://github.com/cubiq/ComfyUI_essentials"
    async with standin as m, aiohttp.ClientSession() as session:
        route = f"{m.url}/api/v2/customnode/install/git_url"
        async with session.post(route, data=url) as r:
            assert r.status == status
            body = await r.text()
        if status == 403:
            assert json.loads(body) == {"reason": "allow_git_url_install"}
            return
        async with session.post(route, data="https://github.com/someone/Nowhere") as r:
            assert r.status == 400  # a clone that fails
        installed = await get(session, f"{m.url}/api/v2/customnode/installed")
    assert installed["ComfyUI_essentials"] == {
        "ver": "nightly", "cnr_id": "", "aux_id": "cubiq/ComfyUI_essentials", "enabled": True
    }  # fmt: skip
    async with ManagerStandin() as new_ui, aiohttp.ClientSession() as session:
        status = await post(session, f"{new_ui.url}/api/v2/customnode/install/git_url", url)
    assert status == 404


@pytest.mark.parametrize("how", ["invalid params", "crash switch"])
async def test_a_worker_failure_sends_no_all_done(manager: ManagerStandin, how: str) -> None:
    api = f"{manager.url}/v2/manager"
    if how == "invalid params":  # accepted with 200, as recorded (v4_queue_task_invalid)
        body = recorded("v4_queue_task_invalid")["request_body"]
    else:
        manager.crash, body = True, task("bad", "enable", {"cnr_id": "comfyui-fakedisabled"})
    async with aiohttp.ClientSession() as session, Listener(session, manager.url, CLIENT) as ws:
        assert await post(session, f"{api}/queue/task", body) == 200
        await post(session, f"{api}/queue/start")
        done = (await ws.wait_for("cm-task-completed"))["data"]
        await asyncio.sleep(manager.idle_seconds * 3)
        status = await get(session, f"{api}/queue/status")
    assert done["result"].startswith("Exception: ") and done["status"]["status_str"] == "error"
    assert "cm-queue-status" not in ws.types()
    assert status["is_processing"] is False


async def test_strong_refuses_reboot_and_installs_but_not_enable() -> None:
    async with (
        ManagerStandin(security_level="strong", idle_seconds=0.1) as manager,
        aiohttp.ClientSession() as session,
        Listener(session, manager.url, CLIENT) as ws,
    ):
        api = f"{manager.url}/api/v2/manager"
        assert await post(session, f"{api}/reboot") == 403
        await post(session, f"{api}/queue/task", task("i", "install", INSTALL_IMPACT))
        await post(session, f"{api}/queue/install_model", {**MODEL, "ui_id": "m"})
        enable = task("e", "enable", {"cnr_id": "comfyui-fakedisabled"})
        await post(session, f"{api}/queue/task", enable)
        await post(session, f"{api}/queue/start")
        await ws.wait_for("cm-queue-status")
    done = {m["data"]["ui_id"]: m["data"] for m in ws.messages if m["type"] == "cm-task-completed"}
    for refused in ("i", "m"):
        assert done[refused]["result"] == "failed"
        assert done[refused]["status"] == {"status_str": "error", "completed": True,
                                           "messages": ["failed"]}  # fmt: skip
    assert done["e"]["result"] == "success"
    assert "comfyui-impact-pack" not in manager.installed()


@pytest.mark.parametrize(
    ("listen", "network_mode", "model_allowed"),
    [("127.0.0.1", "public", True), ("0.0.0.0", "public", False),
     ("0.0.0.0", "personal_cloud", True)],
)  # fmt: skip
def test_middle_plus_needs_a_loopback_listener(
    listen: str, network_mode: str, model_allowed: bool
) -> None:
    manager = ManagerStandin(listen=listen, network_mode=network_mode)
    assert manager.allowed("middle") is True  # a CNR install: any listener at normal
    assert manager.allowed("middle+") is model_allowed  # a model or a nightly install


async def test_reboot_drops_everything_and_comes_back_with_the_new_packs() -> None:
    async with (
        ManagerStandin(idle_seconds=0.05, down_seconds=0.5) as manager,
        aiohttp.ClientSession() as session,
    ):
        api, url = f"{manager.url}/api/v2", manager.url
        async with Listener(session, url, CLIENT) as ws:
            await post(session, f"{api}/manager/queue/task", task("i", "install", INSTALL_IMPACT))
            await post(session, f"{api}/manager/queue/start")
            await ws.wait_for("cm-queue-status")
            imported = await get(session, f"{api}/customnode/installed?mode=imported")
            assert "comfyui-impact-pack" not in imported and "AddMask" not in manager.registered
            with pytest.raises(aiohttp.ServerDisconnectedError):
                await post(session, f"{api}/manager/reboot")
            await asyncio.wait_for(ws.reader, 2)
            assert ws.close_code == 1006
        with pytest.raises(aiohttp.ClientConnectorError):
            await get(session, f"{api}/manager/version")
        await asyncio.wait_for(manager.up.wait(), 5)
        assert manager.url == url  # the same port
        async with session.get(f"{api}/manager/version") as r:
            assert (r.status, await r.text()) == (200, "V4.3")
        imported = await get(session, f"{api}/customnode/installed?mode=imported")
        assert "comfyui-impact-pack" in imported
        assert (await get(session, f"{api}/manager/queue/history"))["history"] == {}
    assert "AddMask" in manager.registered and manager.reboots == 1


async def test_the_map_takes_registered_types_by_pattern_and_cnr_keys() -> None:
    manager = ManagerStandin(core_nodes={"DF_Float", "KSampler"}, key_style="cnr")
    async with manager, aiohttp.ClientSession() as session:
        mappings = await get(session, f"{manager.url}/api/v2/customnode/getmappings?mode=cache")
    assert mappings["https://github.com/Derfuu/Derfuu_ComfyUI_ModdedNodes"][0] == ["DF_Float"]
    assert "comfyui-impact-pack" in mappings  # the Registry's id, where it knows the pack
    assert "https://github.com/ltdrdata/ComfyUI-Impact-Pack" not in mappings
    assert not any("KSampler" in names for names, _ in mappings.values())


async def test_mounted_on_the_comfyui_standin_it_shares_its_ws_and_reboots_it(
    tmp_path: Path,
) -> None:
    manager = ManagerStandin(idle_seconds=0.05, down_seconds=0.2)
    environ = {"LLM_BASE_URL": "http://127.0.0.1:9/v1", "LLM_MODEL": "m"}
    options = ServiceOptions(data_dir=tmp_path, environ=environ)
    runner = web.AppRunner(create_standin(frontend_versions()[-1], options, manager))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    manager.adopt(runner)
    try:
        async with aiohttp.ClientSession() as session:
            stats = await get(session, f"{manager.url}/api/system_stats")
            features = await get(session, f"{manager.url}/api/features")
            async with Listener(session, manager.url, CLIENT) as ws:
                enable = task("e", "enable", {"cnr_id": "comfyui-fakedisabled"})
                await post(session, f"{manager.url}/api/v2/manager/queue/task", enable)
                await post(session, f"{manager.url}/api/v2/manager/queue/start")
                await ws.wait_for("cm-queue-status")
                with pytest.raises(aiohttp.ServerDisconnectedError):
                    await post(session, f"{manager.url}/api/v2/manager/reboot")
            await asyncio.wait_for(manager.up.wait(), 5)
            back = await get(session, f"{manager.url}/api/system_stats")
    finally:
        await runner.cleanup()
    assert "--enable-manager" in stats["system"]["argv"]
    assert features["extension"]["manager"]["supports_v4"] is True
    assert ws.types() == ["status", "cm-task-started", "cm-task-completed", "cm-queue-status"]
    assert ws.close_code == 1006 and back["system"]["argv"] == stats["system"]["argv"]


async def test_mounted_its_reboot_registers_the_installed_packs_node_types(tmp_path: Path) -> None:
    """What the panel's restartComfyUI reads back: /api/object_info/<type> of the ComfyUI
    stand-in has a pack's node types only once a reboot loaded the pack."""
    manager = ManagerStandin(idle_seconds=0.05, down_seconds=0.2)
    environ = {"LLM_BASE_URL": "http://127.0.0.1:9/v1", "LLM_MODEL": "m"}
    options = ServiceOptions(data_dir=tmp_path, environ=environ)
    runner = web.AppRunner(create_standin(frontend_versions()[-1], options, manager))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    manager.adopt(runner)
    one = f"{manager.url}/api/object_info/AddMask"
    try:
        async with aiohttp.ClientSession() as session:
            async with Listener(session, manager.url, CLIENT) as ws:
                await post(
                    session,
                    f"{manager.url}/api/v2/manager/queue/task",
                    task("i", "install", INSTALL_IMPACT),
                )
                await post(session, f"{manager.url}/api/v2/manager/queue/start")
                await ws.wait_for("cm-queue-status")
            before = await get(session, one)
            with pytest.raises(aiohttp.ServerDisconnectedError):
                await post(session, f"{manager.url}/api/v2/manager/reboot")
            await asyncio.wait_for(manager.up.wait(), 5)
            after = await get(session, one)
            everything = await get(session, f"{manager.url}/api/object_info")
            core = await get(session, f"{manager.url}/api/object_info/KSampler")
    finally:
        await runner.cleanup()
    assert before == {}
    assert after["AddMask"]["name"] == "AddMask" and "AddMask" in everything
    assert "KSampler" in core and "KSampler" in everything  # the shipped definitions stay


async def test_a_pack_installed_from_its_repository_is_listed_as_manager_43_lists_a_git_clone(
    manager: ManagerStandin,
) -> None:
    """Seen in the real Manager 4.3 (a pack of its channel list, installed `nightly` by URL): the
    installed entry has the clone's commit as `ver`, the id as `cnr_id`, owner/name as `aux_id`."""
    url = next(u for u in manager.catalog if u.startswith("https://github.com/"))
    name = url.rstrip("/").split("/")[-1]
    params = {"id": name, "version": "nightly", "selected_version": "nightly",
              "repository": url, "mode": "cache", "channel": "default"}  # fmt: skip
    api = f"{manager.url}/v2/manager"
    async with aiohttp.ClientSession() as session, Listener(session, manager.url, CLIENT) as ws:
        await post(session, f"{api}/queue/task", task("g", "install", params))
        await post(session, f"{api}/queue/start")
        done = (await ws.wait_for("cm-task-completed"))["data"]
    assert done["result"] == "success"
    entry = manager.installed()[name]
    assert re.fullmatch(r"[0-9a-f]{40}", entry["ver"]), entry
    owner = url.rstrip("/").split("/")[-2]
    assert entry | {"ver": "commit"} == {
        "ver": "commit",
        "cnr_id": name,
        "aux_id": f"{owner}/{name}",
        "enabled": True,
    }

"""The scan route asks the real lookups (core/installs/lookups.py): ComfyUI-Manager, here the
stand-in recorded from Manager 4.3 and 3.41 (tests/manager_standin.py), over real sockets.
Standalone it is the Manager of COMFYUI_URL; inside ComfyUI the one on ComfyUI's own server,
whose address ComfyUI sets only when it starts listening."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from comfyui_assistant.comfy_environment import comfyui_address
from comfyui_assistant.core.installs import manager_client
from comfyui_assistant.core.installs.lookups import NOT_LISTENING, manager_lookups
from comfyui_assistant.core.installs.node_map import MANAGER_MAP
from comfyui_assistant.core.installs.registry_client import REGISTRY_OFF
from comfyui_assistant.core.installs.scan import NO_LOOKUPS
from comfyui_assistant.core.service import ServiceOptions
from comfyui_assistant.tests.comfy_standin import create_standin, frontend_versions

from .conftest import App, start_app
from .manager_standin import ManagerStandin, recorded_packs
from .manager_standin import Pack as DiskPack
from .test_installs_scan import IMPACT, SCAN, post, template, with_node

TTN = "https://github.com/TinyTerra/ComfyUI_tinyterraNodes"
ENV = {
    "LLM_BASE_URL": "http://127.0.0.1:9/v1",
    "LLM_MODEL": "m",
    "COMFY_ASSISTANT_OFFLINE": "1",
}


@pytest.fixture(autouse=True)
def no_cached_answers() -> Iterator[None]:
    manager_client.forget()  # (a port a test frees may be the next test's)
    yield
    manager_client.forget()


def impact_disabled() -> ManagerStandin:
    """The recorded packs, and Impact Pack installed from the Registry but disabled."""
    disabled = DiskPack("comfyui-impact-pack", "8.22.2", "comfyui-impact-pack", enabled=False)
    return ManagerStandin(packs=[*recorded_packs(), disabled])


def workflow_with_custom_nodes() -> dict[str, Any]:
    workflow = template("default")
    with_node(workflow, 30, "AddMask")  # Impact Pack's
    with_node(workflow, 31, "ttN pipeLoader_v9")  # tinyterra's, by its nodename_pattern
    return workflow


async def scan_over(app: App, workflow: dict[str, Any]) -> dict[str, Any]:
    async with app.session.post(app.base + SCAN, json={"workflow": workflow}) as resp:
        assert resp.status == 200
        answer: dict[str, Any] = await resp.json()
    return answer


async def test_standalone_the_scan_asks_the_manager_of_comfyui_url(tmp_path: Path) -> None:
    async with impact_disabled() as manager:
        app = await start_app(tmp_path, {**ENV, "COMFYUI_URL": manager.url})
        try:
            answer = await scan_over(app, workflow_with_custom_nodes())
        finally:
            await app.close()
    missing = {m["type"]: m["packs"] for m in answer["missingNodes"]}
    assert missing == {"AddMask": [IMPACT], "ttN pipeLoader_v9": [TTN]}
    packs = {p["id"]: p for p in answer["packs"]}
    impact, ttn = packs[IMPACT], packs[TTN]
    assert (impact["state"], impact["note"], impact["version"]) == (
        "disabled",
        "installed but disabled",
        "8.22.2",
    )
    assert impact["registryId"] == "comfyui-impact-pack"
    assert (ttn["state"], ttn["title"]) == ("not-installed", "ComfyUI_tinyterraNodes")
    sources = answer["sources"]
    assert (sources["nodeMap"], sources["installedPacks"], sources["modelList"]) == (
        MANAGER_MAP,
        True,
        False,
    )
    # Manager 4's new UI serves no model list: a flag the panel words for the user (issue 35:
    # the raw reason was jargon on the card), not a fault among the notes
    assert sources["notes"] == [REGISTRY_OFF]
    assert sources["modelListLegacyUiOnly"] is True


async def test_managers_legacy_model_list_gives_a_missing_model_its_address(
    tmp_path: Path,
) -> None:
    workflow = template("default")
    workflow["nodes"][-1]["widgets_values"] = ["taef1_decoder.pth"]
    workflow["nodes"][-1]["properties"] = {}
    async with ManagerStandin(flavour="v3") as manager:
        app = await start_app(tmp_path, {**ENV, "COMFYUI_URL": manager.url})
        try:
            answer = await scan_over(app, workflow)
        finally:
            await app.close()
    [model] = answer["missingModels"]
    assert (model["source"], model["size"], model["host"]) == ("manager", 4_710_000, "github.com")
    assert answer["sources"]["modelList"] is True and answer["sources"]["notes"] == []


async def test_without_manager_the_scan_says_so(tmp_path: Path) -> None:
    async with ManagerStandin(flavour="none") as manager:
        app = await start_app(tmp_path, {**ENV, "COMFYUI_URL": manager.url})
        try:
            answer = await scan_over(app, workflow_with_custom_nodes())
        finally:
            await app.close()
    note, registry = answer["sources"]["notes"]  # one reason, not one per list
    assert note.startswith(f"ComfyUI at {manager.url} has no ComfyUI-Manager")
    assert "--enable-manager" in note and registry == REGISTRY_OFF
    assert answer["sources"]["nodeMap"] is None and answer["packs"] == []
    add_mask = answer["missingNodes"][0]
    assert (add_mask["provider"], add_mask["note"]) == (
        "unknown",
        f"unknown: {NO_LOOKUPS}: {note}; {REGISTRY_OFF}",
    )


async def test_inside_comfyui_the_scan_asks_manager_on_comfyuis_own_address(
    tmp_path: Path,
) -> None:
    prompt_server = types.SimpleNamespace()  # ComfyUI's, before it listens: no address yet
    lookups = manager_lookups(comfyui_address(prompt_server))
    options = ServiceOptions(data_dir=tmp_path, environ=ENV, install_lookups=lookups)
    manager = impact_disabled()
    runner = web.AppRunner(create_standin(frontend_versions()[-1], options, manager))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    manager.adopt(runner)
    app = App(runner.app, runner, manager.url)  # (its close cleans the runner up)
    try:
        before = await scan_over(app, workflow_with_custom_nodes())
        prompt_server.address, prompt_server.port = "0.0.0.0", runner.addresses[0][1]
        after = await scan_over(app, workflow_with_custom_nodes())
    finally:
        await app.close()
    assert before["sources"]["notes"] == [NOT_LISTENING, REGISTRY_OFF]
    assert {p["id"]: p["state"] for p in after["packs"]} == {
        IMPACT: "disabled",
        TTN: "not-installed",
    }


def test_comfyuis_address_follows_its_listen_and_tls_flags(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prompt_server = types.SimpleNamespace(address="::", port=8188)
    address = comfyui_address(prompt_server)
    assert address() == "http://[::1]:8188"
    args = types.SimpleNamespace(tls_keyfile="key.pem", tls_certfile="cert.pem")
    monkeypatch.setitem(sys.modules, "comfy.cli_args", types.SimpleNamespace(args=args))
    assert address() == "https://[::1]:8188"


async def test_the_route_answers_when_manager_is_not_there_at_all(tmp_path: Path) -> None:
    async with ManagerStandin() as manager:
        url = manager.url  # closed below: nothing listens there any more
    app = await start_app(tmp_path, {**ENV, "COMFYUI_URL": url})
    try:
        status, answer = await post(app, {"workflow": workflow_with_custom_nodes()})
    finally:
        await app.close()
    assert status == 200
    note, registry = answer["sources"]["notes"]
    assert url in note and "could not be reached" in note and registry == REGISTRY_OFF

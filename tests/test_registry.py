"""The Comfy Registry in the scan (core/installs/registry_*.py), against a stand-in serving the
Registry's endpoints in its shapes (tests/registry_standin.py), over real sockets: which pack
provides a type no map places, each pack's licence and details, and every way the Registry
can fail, each giving its reason instead of breaking the scan."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.installs import manager_client, registry_client
from comfyui_assistant.core.installs.lookups import NO_COMFYUI_URL
from comfyui_assistant.core.installs.manager_client import Unavailable
from comfyui_assistant.core.installs.node_map import REGISTRY_MAP
from comfyui_assistant.core.installs.registry_client import (
    REGISTRY_OFF,
    RegistryClient,
    registry_from_environ,
)
from comfyui_assistant.core.installs.registry_pack import RegistryPack, licence_text
from comfyui_assistant.core.installs.scan import NO_LOOKUPS

from .conftest import start_app
from .manager_standin import ManagerStandin
from .registry_standin import RegistryStandin
from .test_installs_manager import TTN, impact_disabled, scan_over
from .test_installs_scan import IMPACT, template, with_node

ENV = {"LLM_BASE_URL": "http://127.0.0.1:9/v1", "LLM_MODEL": "m"}
IMPACT_LICENCE = "https://github.com/ltdrdata/ComfyUI-Impact-Pack/blob/main/LICENSE.txt"


@pytest.fixture(autouse=True)
def no_cached_answers() -> Iterator[None]:
    registry_client.forget()  # (a port a test frees may be the next test's)
    manager_client.forget()
    yield
    registry_client.forget()
    manager_client.forget()


def workflow(*types: str) -> dict[str, Any]:
    flow = template("default")
    for number, node_type in enumerate(types, start=30):
        with_node(flow, number, node_type)
    return flow


async def scan(tmp_path: Path, env: dict[str, str], flow: dict[str, Any]) -> dict[str, Any]:
    app = await start_app(tmp_path, {**ENV, "COMFY_ASSISTANT_OFFLINE": "", **env})
    try:
        return await scan_over(app, flow)
    finally:
        await app.close()


# --- the client ---------------------------------------------------------------------------------


async def test_a_node_types_pack_and_a_pack_by_id_are_read_and_cached() -> None:
    async with RegistryStandin() as registry:
        client = RegistryClient(registry.url)
        impact = await client.pack_for_node("AddMask")
        ttn = await client.pack_for_node("ttN pipeLoader_v9")  # a space in the path
        kj = await client.pack("comfyui-kjnodes")
        unknown = await client.pack_for_node("NoPackHasThis")
        again = await client.pack_for_node("AddMask")
    assert isinstance(impact, RegistryPack) and isinstance(kj, RegistryPack)
    assert (impact.id, impact.name, impact.author, impact.license) == (
        "comfyui-impact-pack",
        "ComfyUI Impact Pack",
        "drltdata",  # no `author`: the publisher's name
        IMPACT_LICENCE,
    )
    assert (impact.downloads, impact.latest_version) == (2_100_000, "8.22.2")
    assert isinstance(ttn, RegistryPack) and ttn.id == "comfyui_tinyterranodes"
    assert (kj.license, unknown, again) == ("GPL-3.0", None, impact)
    assert registry.requests == [
        "/comfy-nodes/AddMask/node",
        "/comfy-nodes/ttN%20pipeLoader_v9/node",
        "/nodes/comfyui-kjnodes",
        "/comfy-nodes/NoPackHasThis/node",
    ]  # the second AddMask came from the cache


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("slow", "did not answer within 0.3 s"),
        ("500", "answered HTTP 500 for /comfy-nodes/AddMask/node"),
        ("html", "answer for /comfy-nodes/AddMask/node is not JSON"),
        ("huge", "answer for /comfy-nodes/AddMask/node is over 1,048,576 B"),
    ],
)
async def test_a_failing_registry_is_unavailable_with_its_reason(mode: str, why: str) -> None:
    async with RegistryStandin(mode=mode, delay=2.0) as registry:
        answer = await RegistryClient(registry.url, timeout=0.3).pack_for_node("AddMask")
    assert isinstance(answer, Unavailable) and why in answer.reason, answer


async def test_a_registry_that_does_not_answer_costs_one_timeout_per_scan() -> None:
    async with RegistryStandin(mode="slow", delay=2.0) as registry:
        client = RegistryClient(registry.url, timeout=0.3)
        started = time.monotonic()
        answers = await asyncio.gather(*(client.pack_for_node(f"Node{i}") for i in range(12)))
        took = time.monotonic() - started
    assert all(isinstance(a, Unavailable) for a in answers)
    assert len(registry.requests) == registry_client.PARALLEL  # the rest: taken as down
    assert took < 1.0, took


async def test_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_client, "CACHED", 8)
    async with RegistryStandin() as registry:
        client = RegistryClient(registry.url)
        for i in range(20):
            await client.pack_for_node(f"Node{i}")
    assert len(registry_client._cache) <= 8


def test_the_address_and_the_off_switch_come_from_the_environment() -> None:
    default = registry_from_environ({})
    assert isinstance(default, RegistryClient) and default.base_url == "https://api.comfy.org"
    mirror = registry_from_environ({"COMFY_ASSISTANT_REGISTRY_URL": "http://127.0.0.1:9/"})
    assert isinstance(mirror, RegistryClient) and mirror.base_url == "http://127.0.0.1:9"
    for off in ("1", "yes", "true"):
        offline = {"COMFY_ASSISTANT_OFFLINE": off, "COMFY_ASSISTANT_REGISTRY_URL": "http://h"}
        assert registry_from_environ(offline) == Unavailable(REGISTRY_OFF)
    assert isinstance(registry_from_environ({"COMFY_ASSISTANT_OFFLINE": "0"}), RegistryClient)
    bad = registry_from_environ({"COMFY_ASSISTANT_REGISTRY_URL": "api.comfy.org"})
    assert isinstance(bad, Unavailable) and "must be an http(s) address" in bad.reason


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("{}", None),
        ("", None),
        ('{"file": "LICENSE"}', "https://github.com/a/b/blob/main/LICENSE"),
        ('{"text": "MIT"}', "MIT"),
        ("license.md", "https://github.com/a/b/blob/main/license.md"),
        ("Apache-2.0", "Apache-2.0"),
        ("MIT License\n\nCopyright (c) 2024 someone", "MIT License"),
        ('{"file": "COPYING"}', "COPYING"),
        ("x" * 300, "x" * 119 + "…"),
    ],
)
def test_the_licence_is_shown_as_the_frontend_shows_it(raw: str, shown: str | None) -> None:
    assert licence_text(raw, "https://github.com/a/b/tree/dev") == shown


# --- the scan -------------------------------------------------------------------------------


async def test_without_manager_the_registry_names_the_packs(tmp_path: Path) -> None:
    flow = workflow("AddMask", "ttN pipeLoader_v9", "NoPackHasThis")
    async with RegistryStandin() as registry:
        answer = await scan(tmp_path, {"COMFY_ASSISTANT_REGISTRY_URL": registry.url}, flow)
    missing = {m["type"]: m for m in answer["missingNodes"]}
    assert missing["AddMask"]["packs"] == ["comfyui-impact-pack"]
    assert missing["AddMask"]["note"] == f"the pack {REGISTRY_MAP} names for it"
    assert missing["ttN pipeLoader_v9"]["packs"] == ["comfyui_tinyterranodes"]
    assert missing["NoPackHasThis"]["note"] == f"no pack in {REGISTRY_MAP} provides it"
    impact = {p["id"]: p for p in answer["packs"]}["comfyui-impact-pack"]
    assert {k: impact[k] for k in ("title", "author", "registryId", "state")} == {
        "title": "ComfyUI Impact Pack",
        "author": "drltdata",
        "registryId": "comfyui-impact-pack",
        "state": "not-installed",
    }
    assert (impact["license"], impact["size"], impact["downloads"]) == (
        IMPACT_LICENCE,
        None,  # the Registry has no size
        2_100_000,
    )
    assert (impact["latestVersion"], impact["detailsFrom"]) == ("8.22.2", REGISTRY_MAP)
    assert answer["sources"]["registry"] is True
    assert answer["sources"]["notes"] == [NO_COMFYUI_URL]


async def test_manager_first_and_the_registry_adds_the_details(tmp_path: Path) -> None:
    flow = workflow("AddMask", "ttN pipeLoader_v9", "BlockifyMask")
    async with impact_disabled() as manager, RegistryStandin() as registry:
        env = {"COMFYUI_URL": manager.url, "COMFY_ASSISTANT_REGISTRY_URL": registry.url}
        answer = await scan(tmp_path, env, flow)
    missing = {m["type"]: m["packs"] for m in answer["missingNodes"]}
    assert missing == {  # Manager's keys where its map has the type
        "AddMask": [IMPACT],
        "ttN pipeLoader_v9": [TTN],
        "BlockifyMask": ["comfyui-kjnodes"],  # not in the stand-in's map: the Registry's
    }
    packs = {p["id"]: p for p in answer["packs"]}
    impact, ttn, kj = packs[IMPACT], packs[TTN], packs["comfyui-kjnodes"]
    assert (impact["state"], impact["license"], impact["downloads"]) == (
        "disabled",  # Manager's
        IMPACT_LICENCE,  # the Registry's, by the id Manager's installed list gives
        2_100_000,
    )
    assert (ttn["title"], ttn["registryId"], ttn["license"]) == (
        "ComfyUI_tinyterraNodes",  # Manager's title stays
        "comfyui_tinyterranodes",  # found by its repository
        "GPL-3.0",
    )
    assert (kj["license"], kj["detailsFrom"]) == ("GPL-3.0", REGISTRY_MAP)
    assert sorted(registry.requests) == [  # a type Manager places is not asked by name...
        "/comfy-nodes/BlockifyMask/node",
        "/comfy-nodes/ttN%20pipeLoader_v9/node",  # ...but for a pack known by URL only
        "/nodes/comfyui-impact-pack",
    ]
    assert answer["sources"]["notes"][1:] == []  # (the first: Manager 4 has no model list)


async def test_with_neither_the_notes_give_both_reasons(tmp_path: Path) -> None:
    async with (
        ManagerStandin(flavour="none") as manager,
        RegistryStandin(mode="500") as registry,
    ):
        env = {"COMFYUI_URL": manager.url, "COMFY_ASSISTANT_REGISTRY_URL": registry.url}
        answer = await scan(tmp_path, env, workflow("AddMask", "BlockifyMask"))
    manager_reason, registry_reason = answer["sources"]["notes"]
    assert manager_reason.startswith(f"ComfyUI at {manager.url} has no ComfyUI-Manager")
    assert registry_reason == (  # one reason for the two types
        "the Comfy Registry answered HTTP 500 for /comfy-nodes/AddMask/node "
        "(and 1 other lookup failed)"
    )
    add_mask, _ = answer["missingNodes"]
    assert (add_mask["provider"], add_mask["note"]) == (
        "unknown",
        f"unknown: {NO_LOOKUPS}: {manager_reason}; {registry_reason}",
    )
    assert answer["sources"]["registry"] is False and answer["packs"] == []


async def test_a_scan_with_nothing_missing_needs_no_registry(tmp_path: Path) -> None:
    async with RegistryStandin() as registry:
        env = {"COMFY_ASSISTANT_REGISTRY_URL": registry.url}
        answer = await scan(tmp_path, env, template("default"))
        offline = await scan(tmp_path, {"COMFY_ASSISTANT_OFFLINE": "1"}, template("default"))
    assert registry.requests == [] and answer["sources"]["notes"] == [NO_COMFYUI_URL]
    assert offline["sources"]["notes"] == [NO_COMFYUI_URL]  # not "not asked": not needed


async def test_switched_off_the_registry_is_never_asked(tmp_path: Path) -> None:
    async with RegistryStandin() as registry:
        env = {"COMFY_ASSISTANT_REGISTRY_URL": registry.url, "COMFY_ASSISTANT_OFFLINE": "1"}
        answer = await scan(tmp_path, env, workflow("AddMask", "BlockifyMask"))
    assert registry.requests == []
    assert answer["sources"]["notes"] == [NO_COMFYUI_URL, REGISTRY_OFF]
    assert answer["missingNodes"][0]["note"] == (
        f"unknown: {NO_LOOKUPS}: {NO_COMFYUI_URL}; {REGISTRY_OFF}"
    )


async def test_switched_off_a_pack_manager_knows_by_url_only_is_not_looked_up(
    tmp_path: Path,
) -> None:
    """Online the Registry is asked for a pack Manager knows only by its repository (its id);
    with COMFY_ASSISTANT_OFFLINE=1 it is not, and the scan says the Registry was not asked."""
    async with impact_disabled() as manager, RegistryStandin() as registry:
        env = {
            "COMFYUI_URL": manager.url,
            "COMFY_ASSISTANT_REGISTRY_URL": registry.url,
            "COMFY_ASSISTANT_OFFLINE": "1",
        }
        answer = await scan(tmp_path, env, workflow("ttN pipeLoader_v9"))
    assert registry.requests == []
    (ttn,) = answer["packs"]
    assert (ttn["id"], ttn["registryId"], ttn["license"]) == (TTN, None, None)
    assert answer["sources"]["notes"][1:] == [REGISTRY_OFF]

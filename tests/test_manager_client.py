"""The server's read-only view of ComfyUI-Manager (core/installs/manager_client.py), against the
Manager stand-in (tests/manager_standin.py, recorded from Manager 4.3 and 3.41) over real
sockets: which Manager is there, its node map in both key styles, its installed packs, its
legacy lists, and a clear "unavailable" for every way it can fail."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import aiohttp
import pytest
from aiohttp import web
from comfyui_assistant.core.installs import manager_client
from comfyui_assistant.core.installs.manager_client import (
    Manager,
    ManagerClient,
    Unavailable,
    comfyui_loopback_url,
)
from comfyui_assistant.core.installs.node_map import NodeMap, Pack, parse_installed, parse_node_map

from .manager_standin import ManagerStandin

IMPACT = "https://github.com/ltdrdata/ComfyUI-Impact-Pack"
LIGHT = "https://github.com/KAVVATARE/ComfyUI-Light-N-Color"
TTN = "https://github.com/TinyTerra/ComfyUI_tinyterraNodes"
DERFUU = "https://github.com/Derfuu/Derfuu_ComfyUI_ModdedNodes"


def keys(nodes: NodeMap, node_type: str) -> list[str]:
    return [pack.key for pack in nodes.providers(node_type)]


def pack(key: str) -> Pack:
    return Pack.parse(key, {})


@pytest.fixture(autouse=True)
def no_cached_answers() -> Iterator[None]:
    manager_client.forget()  # (a port a test frees may be the next test's)
    yield
    manager_client.forget()


@pytest.fixture
async def v4() -> AsyncIterator[ManagerStandin]:
    async with ManagerStandin() as server:
        yield server


@pytest.mark.parametrize(
    ("flavour", "expected"),
    [
        ("v4", Manager("v4", "V4.3", legacy_ui=False)),
        ("v4legacy", Manager("v4", "V4.3", legacy_ui=True)),
        ("v3", Manager("v3", "V3.41", legacy_ui=True)),
    ],
)
async def test_it_tells_which_manager_is_there(flavour: str, expected: Manager) -> None:
    async with ManagerStandin(flavour=flavour) as server:
        assert await ManagerClient(server.url).detect() == expected


async def test_without_manager_it_says_why() -> None:
    async with ManagerStandin(flavour="none") as server:
        client = ManagerClient(server.url)
        found = await client.detect()
        mapped = await client.node_map()
    assert isinstance(found, Manager) and found.api == "none"
    assert "--enable-manager" in found.reason and server.url in found.reason
    assert mapped == Unavailable(found.reason)


async def test_the_node_map_finds_packs_by_name_and_by_pattern(v4: ManagerStandin) -> None:
    nodes = await ManagerClient(v4.url).node_map()
    assert not isinstance(nodes, Unavailable)
    assert keys(nodes, "AddMask") == [IMPACT]
    assert keys(nodes, " AddMask ") == [IMPACT]  # as Manager's UI: trimmed
    assert sorted(keys(nodes, "LatentSwitch")) == sorted([IMPACT, LIGHT])  # two provide it
    assert keys(nodes, "ttN pipeLoader_v9") == [TTN]  # listed nowhere: its pattern
    assert keys(nodes, "DF_Integer") == [DERFUU]  # a pack that lists no node at all
    assert keys(nodes, "KSampler") == []
    assert nodes.packs[IMPACT].title == "ComfyUI Impact Pack"
    assert nodes.packs[IMPACT].author == "Dr.Lt.Data"


async def test_the_node_map_with_registry_ids_as_keys() -> None:
    async with ManagerStandin(key_style="cnr") as server:
        nodes = await ManagerClient(server.url).node_map()
    assert not isinstance(nodes, Unavailable)
    assert keys(nodes, "AddMask") == ["comfyui-impact-pack"]
    assert nodes.packs["comfyui-impact-pack"].registry_id == "comfyui-impact-pack"
    assert sorted(keys(nodes, "LatentSwitch")) == sorted(["comfyui-impact-pack", LIGHT])


def test_a_preempting_pack_comes_first_and_a_bad_pattern_is_skipped() -> None:
    nodes = parse_node_map(
        {
            "a": [["SAMLoader"], {"title_aux": "A"}],
            "b": [["SAMLoader"], {"title_aux": "B", "preemptions": ["SAMLoader"]}],
            "c": [[], {"title_aux": "C", "nodename_pattern": "(unclosed"}],
            "d": "not a pack",
        }
    )
    assert nodes is not None
    assert keys(nodes, "SAMLoader") == ["b", "a"]
    assert sorted(nodes.packs) == ["a", "b", "c"] and nodes.patterns == ()


def test_a_pattern_only_finds_a_type_no_pack_lists() -> None:
    nodes = parse_node_map(
        {
            "lists": [["ttN Custom"], {"title_aux": "L"}],
            "pattern": [[], {"title_aux": "P", "nodename_pattern": "^ttN "}],
        }
    )
    assert nodes is not None
    assert keys(nodes, "ttN Custom") == ["lists"]  # as Manager: the pattern is the fallback
    assert keys(nodes, "ttN Other") == ["pattern"]


def test_an_installed_pack_is_its_repository_not_a_fork_and_an_enabled_copy_first() -> None:
    packs = parse_installed(
        {
            "ComfyUI-GitFake": {"ver": "a6fc", "aux_id": "example/ComfyUI-GitFake"},
            "comfyui-impact-pack@8_22_2": {"ver": "8.22.2", "cnr_id": "comfyui-impact-pack",
                                           "aux_id": None, "enabled": False},
            "ComfyUI-Impact-Pack": {"ver": "1f2e", "cnr_id": "",
                                    "aux_id": "ltdrdata/ComfyUI-Impact-Pack", "enabled": True},
        }
    )  # fmt: skip
    assert packs is not None and parse_installed([]) is None
    assert packs.find(pack("https://github.com/someone/ComfyUI-GitFake")) is None  # a fork
    assert packs.find(pack("https://github.com/example/ComfyUI-GitFake.git")) is not None
    found = packs.find(pack(IMPACT))  # both copies are Impact Pack's: the enabled one
    assert found is not None and (found.key, found.enabled) == ("ComfyUI-Impact-Pack", True)
    assert packs.find(pack("comfyui-impact-pack")) is found  # the Registry's key: the same


@pytest.mark.parametrize("flavour", ["v4", "v3"])
async def test_installed_packs_with_a_disabled_one(flavour: str) -> None:
    async with ManagerStandin(flavour=flavour) as server:
        packs = await ManagerClient(server.url).installed()
    assert not isinstance(packs, Unavailable)
    assert sorted(packs) == ["comfyui-fakedisabled", "comfyui-fakepack", "example/ComfyUI-GitFake"]
    disabled = packs["comfyui-fakedisabled"]
    assert (disabled.enabled, disabled.version, disabled.key) == (
        False,
        "1.2.0",
        "comfyui-fakedisabled@1_2_0",
    )
    assert packs["comfyui-fakepack"].enabled is True
    git = packs["example/ComfyUI-GitFake"]
    assert git.provides(pack("https://github.com/example/ComfyUI-GitFake"))
    assert not git.provides(pack(IMPACT))
    assert disabled.provides(pack("comfyui-fakedisabled"))


async def test_installed_follows_an_install_once_asked_fresh(v4: ManagerStandin) -> None:
    client = ManagerClient(v4.url)
    before = await client.installed()
    params = {"id": "comfyui-impact-pack", "version": "latest", "selected_version": "latest",
              "mode": "remote", "channel": "default"}  # fmt: skip
    task = {"ui_id": "i", "client_id": "c", "kind": "install", "params": params}
    api = f"{v4.url}/api/v2/manager"
    async with aiohttp.ClientSession() as session:
        await session.post(f"{api}/queue/task", json=task)
        await session.post(f"{api}/queue/start")
        assert v4.worker is not None
        await asyncio.wait_for(v4.worker, 5)  # done after its all-done
    cached, fresh = await client.installed(), await client.installed(fresh=True)
    assert not isinstance(before, Unavailable) and not isinstance(fresh, Unavailable)
    assert cached == before and "comfyui-impact-pack" not in before
    assert fresh["comfyui-impact-pack"].provides(pack(IMPACT))


async def test_legacy_handlers_give_pack_details_and_the_model_list() -> None:
    async with ManagerStandin(flavour="v3") as server:
        client = ManagerClient(server.url)
        packs, models = await client.pack_list(), await client.model_list()
    assert not isinstance(packs, Unavailable) and not isinstance(models, Unavailable)
    impact = packs[IMPACT]  # found by the node map's key
    assert (impact.author, impact.id) == ("Dr.Lt.Data", "comfyui-impact-pack")
    assert packs["comfyui-impact-pack"] is impact and packs["ComfyUI-Impact-Pack"] is impact
    assert list(models)[:1] == ["taef1_decoder.pth"]
    taef1 = models["taef1_decoder.pth"]
    assert (taef1.size, taef1.directory, taef1.source) == (4_710_000, "vae_approx", "manager")
    assert taef1.url == "https://github.com/madebyollin/taesd/raw/main/taef1_decoder.pth"


async def test_the_new_ui_has_no_lists_and_says_where_details_come_from(
    v4: ManagerStandin,
) -> None:
    client = ManagerClient(v4.url)
    packs, models = await client.pack_list(), await client.model_list()
    assert isinstance(packs, Unavailable) and "Comfy Registry" in packs.reason
    assert isinstance(models, Unavailable)


async def test_an_unreachable_comfyui_is_unavailable_with_the_reason() -> None:
    async with ManagerStandin() as server:
        url = server.url
    found = await ManagerClient(url).detect()  # the port is closed now
    assert isinstance(found, Unavailable)
    assert url in found.reason and "could not be reached" in found.reason


async def tiny_server(answers: dict[str, tuple[float, str]]) -> web.AppRunner:
    """A server answering each path with a text after a delay: a Manager gone wrong."""
    app = web.Application()
    for path, (delay, text) in answers.items():

        async def answer(
            request: web.Request, delay: float = delay, text: str = text
        ) -> web.Response:
            await asyncio.sleep(delay)
            return web.Response(text=text)

        app.router.add_get(path, answer)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner


async def test_a_slow_answer_times_out_as_unavailable() -> None:
    runner = await tiny_server({"/api/v2/manager/version": (2.0, "V4.3")})
    try:
        port = runner.addresses[0][1]
        client = ManagerClient(f"http://127.0.0.1:{port}", timeout=0.2)
        started = asyncio.get_running_loop().time()
        found = await client.node_map()
        elapsed = asyncio.get_running_loop().time() - started
    finally:
        await runner.cleanup()
    assert isinstance(found, Unavailable) and "within 0.2 s" in found.reason
    assert elapsed < 1.0


@pytest.mark.parametrize(
    ("body", "why"), [("[]", "shape"), ("<html>", "not JSON"), (None, "HTTP 404")]
)
async def test_a_map_that_cannot_be_read_is_unavailable(body: str | None, why: str) -> None:
    answers = {"/api/v2/manager/version": (0.0, "V4.3")}
    if body is not None:
        answers["/api/v2/customnode/getmappings"] = (0.0, body)
    runner = await tiny_server(answers)
    try:
        found = await ManagerClient(f"http://127.0.0.1:{runner.addresses[0][1]}").node_map()
    finally:
        await runner.cleanup()
    assert isinstance(found, Unavailable) and why in found.reason


async def test_a_page_for_any_path_is_not_a_manager() -> None:
    page = (0, "<!doctype html><title>ComfyUI</title>")
    runner = await tiny_server({"/api/v2/manager/version": page, "/api/manager/version": page})
    try:
        found = await ManagerClient(f"http://127.0.0.1:{runner.addresses[0][1]}").detect()
    finally:
        await runner.cleanup()
    assert isinstance(found, Unavailable) and "HTTP 200" in found.reason


async def test_answers_are_reused_until_asked_fresh(v4: ManagerStandin) -> None:
    client = ManagerClient(v4.url)
    first = await client.node_map()
    await v4.stop()
    assert await ManagerClient(v4.url).node_map() is first  # per process, not per client
    again = await client.node_map(fresh=True)
    assert isinstance(again, Unavailable)


@pytest.mark.parametrize(
    ("address", "tls", "url"),
    [
        ("127.0.0.1", False, "http://127.0.0.1:8188"),
        ("0.0.0.0", False, "http://127.0.0.1:8188"),
        ("", False, "http://127.0.0.1:8188"),
        ("::", False, "http://[::1]:8188"),
        ("192.168.1.5,127.0.0.1", True, "https://192.168.1.5:8188"),
    ],
)
def test_comfyui_is_reached_on_its_own_address(address: str, tls: bool, url: str) -> None:
    assert comfyui_loopback_url(address, 8188, tls) == url

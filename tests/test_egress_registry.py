"""The one list of where the server sends requests (core/base/egress.py): every outgoing HTTP
client in the code is opened under one of its entries, each entry names the code that sends it,
the README's list is the one it writes, and Settings' statement (`/api/assistant/egress`) is it
for each mode. (tests/test_egress.py: the connections a whole session makes, per mode.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from comfyui_assistant.core.base import egress

from .conftest import start_app

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"
SKIP = {"tests", "scripts", "bench", "ui", "node_modules", ".venv", ".frontends", ".git"}
# every way Python code here could open a connection of its own
OPENS = re.compile(
    r"\b(ClientSession|AsyncOpenAI|OpenAI|DefaultAioHttpClient|DefaultAsyncHttpxClient|"
    r"AsyncClient|urlopen|create_connection|open_connection|HTTPConnection|"
    r"HTTPSConnection)\(|\baiohttp\.request\(|\brequests\.(get|post|head|request)\("
)
ALLOWED = {  # where each may be opened: under its entry
    "core/base/egress.py": {"ClientSession"},
    "core/provider/provider.py": {"AsyncOpenAI", "DefaultAioHttpClient", "DefaultAsyncHttpxClient"},
    # the stdio MCP relay: a process of its own (not the server), started by an MCP client,
    # that connects only to the --comfyui address it is given
    "mcp_server/stdio.py": {"AsyncClient"},
}


def sources() -> list[Path]:
    return [
        path for path in ROOT.rglob("*.py") if not SKIP & set(path.relative_to(ROOT).parts[:-1])
    ]


def test_every_outgoing_client_is_opened_under_an_entry():
    found = {}
    for path in sources():
        name = path.relative_to(ROOT).as_posix()
        opened = {m.group(1) or "aiohttp.request" for m in OPENS.finditer(path.read_text())}
        if opened - ALLOWED.get(name, set()):
            found[name] = sorted(opened - ALLOWED.get(name, set()))
    assert found == {}, "open the client with core/base/egress.client_session(<its entry>)"
    assert len(sources()) > 100  # (the walk saw the code)


def test_each_entry_names_the_code_that_sends_it_and_no_other_code_sends():
    """An entry's modules open their clients under it; every client opened names an entry
    that lists its module."""
    calls = re.compile(r"\b(?:client_session|named)\(\s*([A-Z_]+)\b")
    used: dict[str, set[str]] = {}
    for path in CORE.rglob("*.py"):
        for constant in calls.findall(path.read_text()):
            kind = getattr(egress, constant)
            used.setdefault(kind, set()).add(path.relative_to(CORE).as_posix())
    listed = {d.kind: set(d.modules) for d in egress.DESTINATIONS}
    assert used == listed
    assert set(listed) == {"provider", "comfyui", "manager", "registry", "modelSizes", "downloads"}


def test_the_readme_lists_what_the_registry_lists():
    """README.md's "What leaves your machine" list is what scripts/gen_panel_types.py writes
    from core/base/egress.py (run it after changing an entry)."""
    readme = (ROOT / "README.md").read_text()
    begin = "<!-- egress list: written by scripts/gen_panel_types.py -->\n"
    section = readme.split(begin, 1)[1].split("<!-- end -->\n", 1)[0]
    assert section == egress.readme_list()
    off = [d.kind for d in egress.DESTINATIONS if d.offline_off]
    assert off == ["registry", "modelSizes"]
    assert section.count("`COMFY_ASSISTANT_OFFLINE=1` turns it off.") == 2


def entry(kind: str, hosts: list[str], unused: str | None = None) -> dict:
    return {
        "kind": kind,
        "hosts": hosts,
        "offlineOff": kind in ("registry", "modelSizes"),
        "unused": unused,
    }


@pytest.mark.parametrize("offline", [False, True])
async def test_settings_statement_standalone(tmp_path, offline):
    env = {
        "LLM_BASE_URL": "http://127.0.0.1:8080/v1/secret-in-path",
        "COMFYUI_URL": "http://127.0.0.1:8190",
        "COMFY_ASSISTANT_MODEL_ORIGINS": "http://127.0.0.1:9099",
        "COMFY_ASSISTANT_OFFLINE": "1" if offline else "0",
    }
    app = await start_app(tmp_path, env)
    try:
        async with app.session.get(app.base + "/api/assistant/egress") as resp:
            assert resp.status == 200
            statement = await resp.json()
    finally:
        await app.close()
    models = ["https://huggingface.co:443", "https://civitai.com:443", "http://127.0.0.1:9099"]
    off = "offline" if offline else None
    assert statement == {
        "offline": offline,
        "offlineEnv": "COMFY_ASSISTANT_OFFLINE",
        "entries": [
            entry("provider", ["http://127.0.0.1:8080"]),
            entry("comfyui", ["http://127.0.0.1:8190"]),
            entry("manager", ["http://127.0.0.1:8190"]),
            entry("registry", ["https://api.comfy.org:443"], off),
            entry("modelSizes", models, off),
            entry("downloads", models),
        ],
    }


async def test_settings_statement_inside_comfyui_and_without_comfyui_url(tmp_path):
    """Inside ComfyUI: no /view (its folders are read), Manager on its own address; standalone
    without COMFYUI_URL: nothing of ComfyUI is asked; a refused Registry address: not asked."""
    env = {"COMFY_ASSISTANT_OFFLINE": "0", "COMFY_ASSISTANT_REGISTRY_URL": "ftp://mirror"}
    inside = await start_app(tmp_path / "a", env, inside_comfyui=True)
    alone = await start_app(tmp_path / "b", env)
    try:
        statements = []
        for app in (inside, alone):
            async with app.session.get(app.base + "/api/assistant/egress") as resp:
                entries = (await resp.json())["entries"]
            statements.append([(e["kind"], e["hosts"], e["unused"]) for e in entries])
    finally:
        await inside.close()
        await alone.close()
    default = ["http://127.0.0.1:11434"]
    models = ["https://huggingface.co:443", "https://civitai.com:443"]
    assert statements == [
        [("provider", default, None), ("manager", [], None), ("registry", [], "badSetting"),
         ("modelSizes", models, None), ("downloads", models, None)],
        [("provider", default, None), ("comfyui", [], "noComfyUI"),
         ("manager", [], "noComfyUI"), ("registry", [], "badSetting"),
         ("modelSizes", models, None), ("downloads", models, None)],
    ]  # fmt: skip


def test_addresses_per_mode_are_those_in_use():
    where = egress.Addresses(
        provider="http://127.0.0.1:1", comfyui="http://127.0.0.1:2",
        registry="http://127.0.0.1:3", models=("http://127.0.0.1:4",), offline=False,
    )  # fmt: skip
    assert egress.addresses(where) == {f"http://127.0.0.1:{p}" for p in (1, 2, 3, 4)}
    offline = egress.Addresses(**{**where.__dict__, "offline": True})
    # the offline switch leaves the model host: a download you approve still goes there
    assert egress.addresses(offline) == {f"http://127.0.0.1:{p}" for p in (1, 2, 4)}

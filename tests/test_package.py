"""The package as ComfyUI and pip see it: no import side effects, routes mounted onto
ComfyUI's route table when its server exists, the folder importable under any name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from comfyui_assistant.tools_definitions import TOOLS

ROOT = Path(__file__).resolve().parent.parent


def loaded_in_comfyui(tmp_path: Path, *, with_app: bool = False) -> str:
    """Python that does what ComfyUI does: `server` (PromptServer.instance with its route table,
    and its aiohttp app when `with_app`) and `folder_paths` imported first, then this folder by
    its path and its own name (one line: it goes into an indented f-string)."""
    app = ", app=web.Application()" if with_app else ""
    lines = [
        'server = types.ModuleType("server")',
        "PromptServer = type('PromptServer', (), {})",
        f"PromptServer.instance = types.SimpleNamespace(routes=web.RouteTableDef(){app})",
        "server.PromptServer = PromptServer",
        'sys.modules["server"] = server',
        'folder_paths = types.ModuleType("folder_paths")',
        f"folder_paths.get_user_directory = lambda: {str(tmp_path)!r}",
        f"folder_paths.get_output_directory = lambda: {str(tmp_path / 'output')!r}",
        f"folder_paths.get_temp_directory = lambda: {str(tmp_path / 'temp')!r}",
        'sys.modules["folder_paths"] = folder_paths',
        "spec = importlib.util.spec_from_file_location("
        f'"ComfyUI-Assistant", {str(ROOT / "__init__.py")!r}, '
        f"submodule_search_locations=[{str(ROOT)!r}])",
        "module = importlib.util.module_from_spec(spec)",
        'sys.modules["ComfyUI-Assistant"] = module',
        "spec.loader.exec_module(module)",
    ]
    return "; ".join(lines)


def run_python(code: str, cwd: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env={**os.environ, "COMFY_ASSISTANT_OFFLINE": "1"},  # (no test asks the Comfy Registry)
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_importing_outside_comfyui_has_no_side_effects(tmp_path):
    out = run_python(
        """
        import os, sys, json
        before = set(sys.modules)
        import comfyui_assistant as pkg
        print(json.dumps({
            "web": pkg.WEB_DIRECTORY,
            "nodes": pkg.NODE_CLASS_MAPPINGS,
            "server_imported": "server" in sys.modules,
            "aiohttp_imported": "aiohttp" in sys.modules,
            "files": os.listdir("."),
        }))
        """,
        tmp_path,
    )
    assert json.loads(out) == {
        "web": "./ui/dist",
        "nodes": {},
        "server_imported": False,
        "aiohttp_imported": False,
        "files": [],
    }


def test_comfyui_loads_the_folder_by_its_own_name_and_gets_the_routes(tmp_path):
    # What ComfyUI does: `server` (with PromptServer.instance.routes, a RouteTableDef) and
    # `folder_paths` are imported first, then the custom node folder by its path and name.
    out = run_python(
        f"""
        import asyncio, importlib.util, json, sys, types
        from aiohttp import web
        from aiohttp.test_utils import TestClient, TestServer

        {loaded_in_comfyui(tmp_path)}

        routes = PromptServer.instance.routes
        async def main():
            app = web.Application()
            app.add_routes(routes)
            async with TestClient(TestServer(app)) as client:
                tools = await (await client.get("/api/assistant/tools")).json()
                provider = await (await client.get("/api/assistant/provider")).json()
                egress = await (await client.get("/api/assistant/egress")).json()
                provider["egress"] = [(e["kind"], e["hosts"]) for e in egress["entries"]]
                put = "/api/assistant/provider"
                refused = [
                    (await client.put(put, json={{}}, headers=headers)).status
                    for headers in ({{"Origin": "http://evil.example"}},
                                    {{"Host": "evil.example"}})
                ] + [(await client.post("/api/assistant/environment/scan")).status]
                mcp = await client.post("/api/assistant/mcp", json={{
                    "jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {{"protocolVersion": "2025-11-25", "capabilities": {{}},
                               "clientInfo": {{"name": "t", "version": "1"}}}}}},
                    headers={{"Accept": "application/json, text/event-stream"}})
                served = [mcp.status, "serverInfo" in await mcp.text()]
            return tools, provider, refused, served
        tools, provider, refused, served = asyncio.run(main())
        print(json.dumps({{
            "paths": sorted({{(r.method, r.path) for r in routes}}),
            "tools": [t["name"] for t in tools["tools"]],
            "baseUrl": provider["baseUrl"],
            "egress": provider["egress"],
            "refused": refused,
            "mcp": served,
        }}))
        """,
        tmp_path,
    )
    result = json.loads(out)
    assert result == {
        "paths": [
            ["DELETE", "/api/assistant/attachments/{id}"],
            ["DELETE", "/api/assistant/installs/downloads/{id}"],
            ["DELETE", "/api/assistant/mcp"],
            ["DELETE", "/api/assistant/mcp/tokens/{token_id}"],
            ["DELETE", "/api/assistant/projects/{pid}"],
            ["DELETE", "/api/assistant/projects/{pid}/documents/{did}"],
            ["DELETE", "/api/assistant/threads/{id}"],
            ["DELETE", "/api/assistant/user-context/personas/{id}"],
            ["DELETE", "/api/assistant/user-context/reminders/{id}"],
            ["DELETE", "/api/assistant/user-context/rules/{id}"],
            ["DELETE", "/api/assistant/user-context/skills/{slug}"],
            ["GET", "/api/assistant/attachments/{id}"],
            ["GET", "/api/assistant/attachments/{id}/workflow"],
            ["GET", "/api/assistant/egress"],
            ["GET", "/api/assistant/environment/models"],
            ["GET", "/api/assistant/environment/nodes"],
            ["GET", "/api/assistant/environment/summary"],
            ["GET", "/api/assistant/installs/downloads"],
            ["GET", "/api/assistant/installs/downloads/{id}"],
            ["GET", "/api/assistant/installs/scan/{id}"],
            ["GET", "/api/assistant/mcp"],
            ["GET", "/api/assistant/mcp/panel"],
            ["GET", "/api/assistant/mcp/tokens"],
            ["GET", "/api/assistant/projects"],
            ["GET", "/api/assistant/projects/{pid}"],
            ["GET", "/api/assistant/projects/{pid}/documents/{did}"],
            ["GET", "/api/assistant/provider"],
            ["GET", "/api/assistant/system-context/skills"],
            ["GET", "/api/assistant/system-context/skills/{slug}"],
            ["GET", "/api/assistant/threads"],
            ["GET", "/api/assistant/threads/{id}"],
            ["GET", "/api/assistant/threads/{id}/branches"],
            ["GET", "/api/assistant/threads/{id}/checkpoints"],
            ["GET", "/api/assistant/threads/{id}/checkpoints/{message}"],
            ["GET", "/api/assistant/threads/{id}/context"],
            ["GET", "/api/assistant/threads/{id}/delegations/{call}"],
            ["GET", "/api/assistant/threads/{id}/summary"],
            ["GET", "/api/assistant/tools"],
            ["GET", "/api/assistant/user-context"],
            ["GET", "/api/assistant/user-context/goals"],
            ["GET", "/api/assistant/user-context/personas"],
            ["GET", "/api/assistant/user-context/preferences"],
            ["GET", "/api/assistant/user-context/reminders"],
            ["GET", "/api/assistant/user-context/rules"],
            ["GET", "/api/assistant/user-context/skills"],
            ["GET", "/api/assistant/user-context/skills/{slug}"],
            ["GET", "/api/assistant/user-context/soul"],
            ["GET", "/api/assistant/user-context/system-prompt"],
            ["PATCH", "/api/assistant/projects/{pid}"],
            ["PATCH", "/api/assistant/projects/{pid}/documents/{did}"],
            ["PATCH", "/api/assistant/threads/{id}"],
            ["PATCH", "/api/assistant/user-context/personas/{id}"],
            ["PATCH", "/api/assistant/user-context/reminders/{id}"],
            ["PATCH", "/api/assistant/user-context/rules/{id}"],
            ["POST", "/api/assistant/attachments"],
            ["POST", "/api/assistant/chat"],
            ["POST", "/api/assistant/environment/scan"],
            ["POST", "/api/assistant/installs/downloads"],
            ["POST", "/api/assistant/installs/scan"],
            ["POST", "/api/assistant/mcp"],
            ["POST", "/api/assistant/mcp/panel/allow"],
            ["POST", "/api/assistant/mcp/panel/disconnect"],
            ["POST", "/api/assistant/mcp/panel/results"],
            ["POST", "/api/assistant/mcp/panel/state"],
            ["POST", "/api/assistant/mcp/tokens"],
            ["POST", "/api/assistant/outputs/look"],
            ["POST", "/api/assistant/projects"],
            ["POST", "/api/assistant/projects/{pid}/documents"],
            ["POST", "/api/assistant/provider/test"],
            ["POST", "/api/assistant/threads"],
            ["POST", "/api/assistant/threads/rebind"],
            ["POST", "/api/assistant/threads/{id}/branches/{number}/restore"],
            ["POST", "/api/assistant/threads/{id}/checkpoints"],
            ["POST", "/api/assistant/threads/{id}/compact"],
            ["POST", "/api/assistant/threads/{id}/rewind"],
            ["POST", "/api/assistant/user-context/personas"],
            ["POST", "/api/assistant/user-context/reminders"],
            ["POST", "/api/assistant/user-context/rules"],
            ["POST", "/api/assistant/user-context/skills"],
            ["POST", "/api/chat"],
            ["PUT", "/api/assistant/provider"],
            ["PUT", "/api/assistant/user-context/goals"],
            ["PUT", "/api/assistant/user-context/personas/active"],
            ["PUT", "/api/assistant/user-context/preferences"],
            ["PUT", "/api/assistant/user-context/skills/{slug}"],
            ["PUT", "/api/assistant/user-context/soul"],
            ["PUT", "/api/assistant/user-context/system-prompt"],
        ],
        "tools": [t.name for t in TOOLS],
        "baseUrl": "http://127.0.0.1:11434/v1",
        # inside ComfyUI: a run's images are read from its folders (no /view), Manager is on
        # ComfyUI's own address
        "egress": [
            ["provider", ["http://127.0.0.1:11434"]],
            ["manager", []],
            ["registry", ["https://api.comfy.org:443"]],
            ["modelSizes", ["https://huggingface.co:443", "https://civitai.com:443"]],
            ["downloads", ["https://huggingface.co:443", "https://civitai.com:443"]],
        ],
        # our guard holds inside ComfyUI too: another site's origin, a rebound host name, a
        # POST without a JSON content type
        "refused": [403, 403, 415],
        # the MCP endpoint answers inside ComfyUI too (an initialize, from this machine)
        "mcp": [200, True],
    }
    # the data directory lives in ComfyUI's user directory
    assert (tmp_path / "comfyui-assistant" / "assistant.sqlite3").is_file()


async def test_tools_endpoint_serves_the_registry(assistant):
    async with assistant.session.get(assistant.base + "/api/assistant/tools") as resp:
        assert resp.status == 200
        body = await resp.json()
    assert body == {"tools": [spec.as_json() for spec in TOOLS]}
    assert {t["runs"] for t in body["tools"]} == {"panel", "server"}


def _relative_imports(root: Path, folder: str) -> list[tuple[str, str]]:
    """(file, the package path it imports from, from the repository's root: "core.base.json_text")
    for every relative import of the Python files under `folder`."""
    return [(path, target) for path, _line, target, _names in _relative_imports_at(root, folder)]


def _relative_imports_at(root: Path, folder: str) -> list[tuple[str, int, str, list[str]]]:
    """(file, line, the package path it imports from, the names) for every relative import of
    the Python files under `folder` (as scripts/border_names.py, which counts them, reads them)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("border_names", root / "scripts/border_names.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found: list[tuple[str, int, str, list[str]]] = module.imports(folder)
    return found


def test_layers_import_one_way():
    # core imports nothing above it (routes, the top-level adapters); routes import only core
    root = Path(__file__).resolve().parent.parent
    wrong = [
        f"{path}: from {target}"
        for layer, allowed in (("core", ("core",)), ("routes", ("core", "routes")))
        for path, target in _relative_imports(root, layer)
        if target.split(".")[0] not in allowed
    ]
    assert wrong == []


def test_wings_import_only_what_their_docstring_allows():
    """core/ is a set of wings (subpackages); each one's docstring ends with "May import: …",
    the wings it may import from. A module of a wing imports its own wing and those;
    service.py, the module that puts them together, imports any wing and no wing imports it;
    nothing is left at core's top but service.py."""
    import re

    root = Path(__file__).resolve().parent.parent
    allowed: dict[str, set[str]] = {}
    for init in sorted((root / "core").glob("*/__init__.py")):
        doc = init.read_text(encoding="utf-8")
        may = re.search(r"May import: (.*?)\.\n", doc, re.DOTALL)
        assert may, f"{init}: its docstring says what the wing may import"
        names = may[1].replace("\n", " ")
        allowed[init.parent.name] = (
            set() if names == "nothing of core" else {n.strip() for n in names.split(",")}
        )
    assert len(allowed) >= 10
    assert {p.name for p in (root / "core").glob("*.py")} == {"__init__.py", "service.py"}
    for wing, names in allowed.items():
        assert names <= set(allowed) - {wing}, f"{wing} may import unknown {names}"
    allowed["service"] = set(allowed)
    floors: list[str] = []  # the wings from the ground up: none may import one above it
    while len(floors) < len(allowed):
        ready = sorted(w for w in allowed if w not in floors and allowed[w] <= set(floors))
        assert ready, f"the wings' allowed imports go round: {set(allowed) - set(floors)}"
        floors += ready
    wrong = []
    for path, target in _relative_imports(root, "core"):
        parts = Path(path).parts  # core/<wing>/<module>.py or core/service.py
        wing = parts[1] if len(parts) == 3 else "service"
        other = target.split(".")[1] if target.count(".") else "core"
        if other not in (wing, *allowed[wing]):
            wrong.append(f"{path}: from {target}")
    assert wrong == []


def test_other_wings_and_routes_come_in_through_a_wings_door():
    """Each wing's `__init__` names its public face (`__all__`); service.py, the other wings and
    routes/ import a wing only through it (`from ..provider import Provider`), and the modules
    inside a wing import their siblings directly, never their own door (it imports them)."""
    import ast

    root = Path(__file__).resolve().parent.parent
    wings = {init.parent.name for init in (root / "core").glob("*/__init__.py")}
    wrong = []
    for folder in ("core", "routes"):
        for path, line, target, names in _relative_imports_at(root, folder):
            parts, here = target.split("."), Path(path).parts
            own = here[1] if here[0] == "core" and len(here) == 3 else None
            if parts[0] != "core" or len(parts) < 2 or parts[1] not in wings:
                continue
            if parts[1] != own and len(parts) > 2:
                wrong.append(f"{path}:{line}: from {target} (import from core.{parts[1]})")
            siblings = {p.stem for p in (root / "core" / parts[1]).glob("*.py")}
            if parts[1] == own and len(parts) == 2 and not set(names) <= siblings:
                wrong.append(f"{path}:{line}: from {target} (its own door: import the module)")
    assert wrong == []
    for wing in sorted(wings):
        init = root / "core" / wing / "__init__.py"
        tree = ast.parse(init.read_text(encoding="utf-8"))
        names = [
            ast.literal_eval(node.value)
            for node in tree.body
            if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["__all__"]
        ]
        assert names, f"{init}: names its public face in __all__"


def test_requirements_txt_and_pyproject_pin_the_same_dependencies():
    """Users install requirements.txt (ComfyUI's convention), pip and the Registry read
    pyproject.toml: one list, the same pins."""
    import tomllib

    root = Path(__file__).resolve().parent.parent
    declared = tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]
    listed = [
        line.split("#")[0].strip()
        for line in (root / "requirements.txt").read_text().splitlines()
        if line.split("#")[0].strip()
    ]

    def norm(spec: str) -> str:
        return spec.replace(" ", "").lower()

    assert sorted(map(norm, listed)) == sorted(map(norm, declared))


def test_registry_metadata_is_complete_and_points_at_files_that_exist():
    import tomllib

    root = Path(__file__).resolve().parent.parent
    meta = tomllib.loads((root / "pyproject.toml").read_text())
    comfy, project = meta["tool"]["comfy"], meta["project"]
    assert comfy["PublisherId"] and comfy["DisplayName"] and comfy["requires-comfyui"]
    prefix = "https://raw.githubusercontent.com/comfyui-assistant/comfyui-assistant/main/"
    assert comfy["Icon"].startswith(prefix)
    assert (root / comfy["Icon"].removeprefix(prefix)).is_file()
    assert project["license"] == "MIT" and "MIT License" in (root / "LICENSE").read_text()
    assert all((root / name).is_file() for name in project["license-files"])
    assert project["urls"]["Repository"].startswith("https://github.com/")


def test_every_folder_of_shipped_data_is_listed_as_a_package():
    """setuptools warns (some 470 lines at install) for each importable folder of package data
    that `packages` leaves out."""
    import tomllib

    root = Path(__file__).resolve().parent.parent
    listed = set(
        tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    wanted = set()
    for top in ("data", "system_context", "user_context", "ui/dist", "ui/playground"):
        for folder in [root / top, *(p for p in (root / top).rglob("*") if p.is_dir())]:
            parts = folder.relative_to(root).parts
            if all(part.isidentifier() for part in parts) and "__pycache__" not in parts:
                wanted.add(".".join(("comfyui_assistant", *parts)))
    assert wanted - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"


def test_comfyui_says_at_start_which_provider_and_model_without_the_key(tmp_path):
    """Inside ComfyUI, one line at start: the provider, its address and the model."""
    out = run_python(
        f"""
        import asyncio, importlib.util, logging, os, sys, types
        from aiohttp import web
        from aiohttp.test_utils import TestServer

        logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
        os.environ.update(LLM_BASE_URL="https://api.openai.com/v1", LLM_MODEL="gpt-4.1-mini",
                          LLM_API_KEY="sk-start-line-SECRET")
        {loaded_in_comfyui(tmp_path, with_app=True)}

        async def main():
            app = PromptServer.instance.app
            app.add_routes(PromptServer.instance.routes)
            async with TestServer(app):
                await asyncio.sleep(0.2)
        asyncio.run(main())
        """,
        tmp_path,
    )
    lines = [line for line in out.splitlines() if line.startswith("ComfyUI Assistant:")]
    assert lines == [
        "ComfyUI Assistant: OpenAI at https://api.openai.com:443, model: gpt-4.1-mini, "
        "with an API key"
    ]
    assert "SECRET" not in out


def test_inside_comfyui_the_scan_asks_manager_on_comfyuis_own_address(tmp_path):
    """The mounted service's lookups are ComfyUI-Manager's at the address ComfyUI's server sets
    when it starts listening (here a wildcard one: reached on loopback), with Manager's routes
    (the stand-in's) on the same server."""
    out = run_python(
        f"""
        import asyncio, importlib.util, json, sys, types
        import aiohttp
        from aiohttp import web
        from aiohttp.test_utils import TestServer
        # (imported before `server` exists: that copy of our package mounts nothing)
        from comfyui_assistant.tests.manager_standin import ManagerStandin

        {loaded_in_comfyui(tmp_path, with_app=True)}
        nodes = types.ModuleType("nodes"); nodes.NODE_CLASS_MAPPINGS = {{}}
        sys.modules["nodes"] = nodes
        folder_paths.folder_names_and_paths = {{}}
        PromptServer.instance.node_info = lambda name: {{}}

        async def main():
            app = PromptServer.instance.app
            app.add_routes(PromptServer.instance.routes)
            ManagerStandin().mount(app, {{}})
            body = {{"workflow": {{"nodes": [{{"id": 1, "type": "AddMask", "mode": 0}}]}}}}
            async with TestServer(app, host="127.0.0.1") as server, aiohttp.ClientSession() as s:
                url = f"http://127.0.0.1:{{server.port}}/api/assistant/installs/scan"
                before = await (await s.post(url, json=body)).json()
                PromptServer.instance.address = "0.0.0.0"
                PromptServer.instance.port = server.port
                after = await (await s.post(url, json=body)).json()
            return before, after
        before, after = asyncio.run(main())
        print(json.dumps({{"before": before["sources"]["notes"],
                          "packs": after["missingNodes"][0]["packs"]}}))
        """,
        tmp_path,
    )
    assert json.loads(out) == {
        "before": [
            "ComfyUI-Manager is not reachable yet: ComfyUI is not listening",
            "the Comfy Registry is not asked (COMFY_ASSISTANT_OFFLINE is set)",
        ],
        "packs": ["https://github.com/ltdrdata/ComfyUI-Impact-Pack"],
    }

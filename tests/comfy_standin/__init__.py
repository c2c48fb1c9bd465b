"""A test-only stand-in for the HTTP and WebSocket API that ComfyUI's frontend needs.

It serves the real frontend (the `static/` folder of the PyPI package
`comfyui-frontend-package`, which `scripts/setup` installs into `.frontends/<version>/`) with
our panel mounted as ComfyUI mounts a custom node, so the browser suite runs the panel inside
the real frontend without ComfyUI, torch or models:

| route | what |
| --- | --- |
| `/` and every other file | the frontend's static folder (ComfyUI's web root) |
| `/extensions/comfyui-assistant/*` | our `ui/dist`, ComfyUI's `WEB_DIRECTORY` of this node |
| `GET /api/extensions` | the web root's `extensions/**/*.js`, then ours, as ComfyUI lists them |
| `GET /api/object_info` | our shipped node definitions (`data/object_info.json.gz`)(*) |
| `GET /api/object_info/{type}` | that one type(*), `{}` when it is not registered |
| `/api/users`, `/api/settings`, `/api/userdata`, `/api/v2/userdata` | `userdata.py`(**) |
| `/ws`, `/api/prompt`, `/api/queue`, `/api/history`, `/api/jobs` | `queue.py`, `validation.py` |
| `/view` (and `/api/view`) | a run's files from the stand-in's folders: `view.py` |
| `GET /api/i18n` | the `locales/` of the custom nodes it hosts (ours): `locales.py` |
| `GET /templates/index.json`, `/templates/<name>.json` | a few real templates: `templates.py` |
| `/api/system_stats`, `/api/embeddings`, ... | fixed answers (`STATIC_ANSWERS`) |
| `/api/assistant/...` (and `/api/chat`) | ours: `api_handlers.add_routes`, as in ComfyUI |
| `/v2/...`, `/api/v2/...` (with `manager=`) | ComfyUI-Manager: `tests/manager_standin.py` |

(*) with `manager=`, also a bare definition of each node type of the packs Manager's stand-in
loaded (its `registered`, which a reboot updates).
(**) multi-user mode, as ComfyUI's `--multi-user`: `ServiceOptions(users=multi_user_standin(dir))`
(users in `<data dir>/comfy-user/users.json`; `POST /api/users` adds one, every request names
its user with the `comfy-user` header, as the frontend sends it).

Every request the frontend makes that nothing answers is logged (`missing`), so a newer
frontend that asks for something new shows up in the suite's output. `returning.py` fills a data
directory as earlier sessions leave it (saved workflows, threads of an older version).
"""

from __future__ import annotations

import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from aiohttp import web

from ...api_handlers import add_routes
from ...core.base import Users, UsersFile
from ...core.files.run_outputs import FolderOutputs
from ...core.service import AssistantService, ServiceOptions
from ...routes.guard import HostPolicy
from ...standalone import EXTENSION_PREFIX, PANEL_DIST, object_info_response, panel_scripts
from ..manager_standin import ManagerStandin
from .locales import add_i18n_route
from .queue import Queue, add_queue_routes
from .returning import user_folder
from .templates import add_template_routes
from .userdata import StandinUsers, UserData, add_user_routes
from .view import add_view_route, standin_folders

ROOT = Path(__file__).resolve().parents[2]
FRONTENDS_DIR = ROOT / ".frontends"
FRONTENDS_FILE = Path(__file__).with_name("frontends.txt")
log = logging.getLogger("comfy_standin")

STATIC_ANSWERS: dict[str, Any] = {
    "/api/embeddings": [],
    "/api/workflow_templates": {},
    "/api/models": ["checkpoints", "loras", "vae", "text_encoders", "diffusion_models"],
    "/api/experiment/models": [],
    "/api/features": {"supports_preview_metadata": True, "max_upload_size": 100 * 1024 * 1024},
    "/api/global_subgraphs": {},
    "/templates/index_logo.json": {},
}


def multi_user_standin(data_dir: Path) -> Users:
    """The users of a stand-in in multi-user mode: `<data dir>/comfy-user/users.json`."""
    return UsersFile(user_folder(data_dir).parent / "users.json").as_users()


def frontend_versions() -> list[str]:
    lines = FRONTENDS_FILE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def frontend_root(version: str) -> Path:
    """The installed frontend's web root, or a one-line reason it is not there."""
    root = FRONTENDS_DIR / version / "comfyui_frontend_package" / "static"
    if not (root / "index.html").is_file():
        raise FileNotFoundError(
            f"ComfyUI frontend {version} is not installed at {root}: run scripts/setup"
        )
    return root


def system_stats(version: str) -> dict[str, Any]:
    return {
        "system": {
            "os": "posix",
            "ram_total": 8 << 30,
            "ram_free": 4 << 30,
            "comfyui_version": "0.3.64 (stand-in)",
            "required_frontend_version": version,
            "python_version": sys.version,
            "pytorch_version": "none (stand-in)",
            "embedded_python": False,
            "argv": ["main.py"],
        },
        "devices": [
            {
                "name": "cpu",
                "type": "cpu",
                "index": None,
                "vram_total": 0,
                "vram_free": 0,
                "torch_vram_total": 0,
                "torch_vram_free": 0,
            }
        ],
    }


@web.middleware
async def refuse_bad_paths(request: web.Request, handler: Any) -> web.StreamResponse:
    try:
        return await handler(request)  # type: ignore[no-any-return]
    except OSError as exc:  # a name the file system refuses (too long, say): not a 500
        raise web.HTTPBadRequest(text=f"bad path: {exc.strerror}") from None


async def log_missing(request: web.Request, response: web.StreamResponse) -> None:
    if response.status == 404:
        log.warning("missing: %s %s", request.method, request.path_qs)


def create_standin(
    version: str,
    options: ServiceOptions,
    manager: ManagerStandin | None = None,
    listen: tuple[str, ...] = (),
) -> web.Application:
    web_root = frontend_root(version)
    folders = standin_folders(options.data_dir)
    if options.outputs is None:  # a run's files, read as inside ComfyUI (its folder_paths)
        options = replace(options, outputs=FolderOutputs(folders))
    options = replace(options, inside_comfyui=True)  # (Settings' egress list says so too)
    service = AssistantService(options)
    queue = Queue(lambda: _definitions(service), folders)
    app = web.Application(
        client_max_size=options.chat_body_limit + 1, middlewares=[refuse_bad_paths]
    )
    routes = web.RouteTableDef()
    # as __init__.py mounts them inside ComfyUI (`listen`: more addresses, as its --listen)
    add_routes(routes, service, HostPolicy.listening_on(["127.0.0.1", *listen]))
    users_file = options.users.resolve if isinstance(options.users.resolve, UsersFile) else None
    default_user = UserData.returning_user(user_folder(options.data_dir))
    add_user_routes(routes, StandinUsers(default_user, users_file))
    add_queue_routes(routes, queue)
    add_view_route(routes, folders)
    add_i18n_route(routes, [ROOT])  # the one custom node it hosts: this repository
    if manager is not None:  # its events go to this /ws's clients; `manager.adopt(runner)`
        manager.mount(app, queue.sockets)

    @routes.get("/")
    async def index(request: web.Request) -> web.FileResponse:
        return web.FileResponse(web_root / "index.html", headers={"Cache-Control": "no-cache"})

    @routes.get("/user.css")  # the page links it; ComfyUI's web root has none
    async def user_css(request: web.Request) -> web.Response:
        return web.Response(text="", content_type="text/css")

    @routes.get("/api/extensions")
    async def extensions(request: web.Request) -> web.Response:
        core = sorted(
            p.relative_to(web_root).as_posix() for p in web_root.glob("extensions/**/*.js")
        )
        return web.json_response([f"/{p}" for p in core] + panel_scripts())

    @routes.get("/api/object_info")
    async def object_info(request: web.Request) -> web.Response:
        if manager is None:
            return await object_info_response(service)
        return web.json_response(await _with_packs(service, manager))

    @routes.get("/api/object_info/{node_class}")
    async def one_type(request: web.Request) -> web.Response:
        name = request.match_info["node_class"]
        nodes = await _with_packs(service, manager) if manager else await _definitions(service)
        return web.json_response({name: nodes[name]} if name in nodes else {})

    @routes.get("/api/system_stats")
    async def stats(request: web.Request) -> web.Response:
        stats = system_stats(version)
        stats["system"]["argv"] += manager.argv() if manager else []
        return web.json_response(stats)

    for path, answer in STATIC_ANSWERS.items():
        extra = manager.features() if manager and path == "/api/features" else {}
        routes.get(path)(_fixed({**answer, **extra} if extra else answer))
    add_template_routes(routes)  # after index_logo.json: comfyui-workflow-templates' folder

    routes.static(EXTENSION_PREFIX, PANEL_DIST)
    routes.static("/", web_root)  # last: ComfyUI's web root takes whatever is left
    app.add_routes(routes)
    app.on_response_prepare.append(log_missing)

    app.on_shutdown.append(lambda app: queue.close())
    app.on_cleanup.append(lambda app: service.close())
    return app


async def _definitions(service: AssistantService) -> dict[str, Any]:
    return dict((await service.environment.get()).nodes)


async def _with_packs(service: AssistantService, manager: ManagerStandin) -> dict[str, Any]:
    """The definitions, plus a bare one for each node type of a pack Manager's stand-in loaded."""
    nodes = await _definitions(service)
    for name in sorted(manager.registered - set(nodes)):
        nodes[name] = {
            "input": {"required": {}}, "input_order": {"required": []}, "output": [],
            "output_is_list": [], "output_name": [], "name": name, "display_name": name,
            "description": "", "python_module": "custom_nodes.standin_pack",
            "category": "stand-in pack", "output_node": False,
        }  # fmt: skip
    return nodes


def _fixed(answer: Any) -> Any:
    async def handler(request: web.Request) -> web.Response:
        return web.json_response(answer)

    return handler

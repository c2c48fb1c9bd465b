"""ComfyUI's user routes (`app/user_manager.py`) on a directory of real files:
`/api/users`, `/api/settings[/{id}]` (kept in `comfy.settings.json`, as ComfyUI keeps them),
`/api/userdata` (list), `/api/userdata/{file}` (get, post, delete, move; `file` is one
URL-encoded path such as `workflows%2Fa.json`) and `/api/v2/userdata` (a folder's entries).
A path that leaves the user's directory is refused with 400; nothing here raises on bad input.

Multi-user mode (`StandinUsers` with a users file, as ComfyUI's `--multi-user`): `GET /api/users`
lists `{"storage": "server", "users": {id: name}}`, `POST /api/users {"username"}` adds a user
and answers its id (400 "Duplicate username."), and every other route serves the files of the
user the `comfy-user` header names (`<root>/<id>/`, as ComfyUI's `user/<id>/`); a user missing
from the file, or none named, is refused with 403 as ComfyUI refuses one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from aiohttp import web

from ...core.base import UsersFile

SETTINGS_FILE = "comfy.settings.json"


class UserData:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    @classmethod
    def returning_user(cls, root: Path) -> UserData:
        """The files of a user who has used ComfyUI before (no 404 on the first page load): a
        workflows and a subgraphs folder, no templates, an empty user.css. Their settings are
        theirs to set (`POST /api/settings`)."""
        data = cls(root)
        for folder in ("workflows", "subgraphs"):
            (data.root / folder).mkdir(exist_ok=True)
        for name, text in (("comfy.templates.json", "[]"), ("user.css", "")):
            if not (data.root / name).exists():
                (data.root / name).write_text(text, encoding="utf-8")
        return data

    # ---- settings ----

    def settings(self) -> dict[str, Any]:
        try:
            data = json.loads((self.root / SETTINGS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save_settings(self, changes: dict[str, Any]) -> None:
        merged = {**self.settings(), **changes}
        (self.root / SETTINGS_FILE).write_text(json.dumps(merged, indent=2), encoding="utf-8")

    # ---- files ----

    def path(self, relative: str) -> Path:
        """The file a request names, or HTTP 400 when it is not inside the user's directory."""
        target = (self.root / unquote(relative)).resolve()
        if target == self.root or not target.is_relative_to(self.root):
            raise web.HTTPBadRequest(text="the path leaves the user directory")
        return target

    def info(self, path: Path) -> dict[str, Any]:
        stat = path.stat()
        return {
            "path": path.relative_to(self.root).as_posix(),
            "size": stat.st_size,
            "modified": int(stat.st_mtime * 1000),
            "created": int(stat.st_ctime * 1000),
        }

    def answer(self, request: web.Request, path: Path) -> web.Response:
        full = request.query.get("full_info", "false").lower() == "true"
        return web.json_response(
            self.info(path) if full else path.relative_to(self.root).as_posix()
        )


class StandinUsers:
    """Whose files a request reads: the one user's, or with a users file the named user's."""

    def __init__(self, default: UserData, users_file: UsersFile | None = None) -> None:
        self.default, self.users_file = default, users_file
        self._folders: dict[str, UserData] = {}

    def of(self, request: web.Request, settings: bool = False) -> UserData:
        """The user's files; an unknown user refused as ComfyUI 0.3.64 and 0.33 refuse one:
        401 on the settings routes (AppSettings), 403 here (where a real 0.3.64 answers some
        routes with a 500, its KeyError unhandled)."""
        if self.users_file is None:
            return self.default
        try:
            user = self.users_file(request)
        except KeyError:
            if settings:
                raise web.HTTPUnauthorized() from None
            raise web.HTTPForbidden(text="Invalid user specified in request") from None
        folder = (self.default.root.parent / user).resolve()
        if not folder.is_relative_to(self.default.root.parent):  # (as ComfyUI's commonpath)
            raise web.HTTPForbidden(text="Invalid user specified in request")
        if user not in self._folders:
            self._folders[user] = UserData.returning_user(folder)
        return self._folders[user]


def add_user_routes(routes: web.RouteTableDef, users: StandinUsers) -> None:
    @routes.get("/api/users")
    async def list_users(request: web.Request) -> web.Response:
        if users.users_file is None:
            return web.json_response({"storage": "server", "migrated": True})
        return web.json_response({"storage": "server", "users": users.users_file.users()})

    @routes.post("/api/users")
    async def add_user(request: web.Request) -> web.Response:
        body = await json_body(request)
        name = body.get("username") if isinstance(body, dict) else None
        if users.users_file is None or not isinstance(name, str) or not name.strip():
            raise web.HTTPBadRequest(text='send {"username": NAME} (multi-user mode only)')
        if name in users.users_file.users().values():
            return web.json_response({"error": "Duplicate username."}, status=400)
        return web.json_response(users.users_file.add(name))

    @routes.get("/api/settings")
    async def all_settings(request: web.Request) -> web.Response:
        data = users.of(request, settings=True)
        return web.json_response(data.settings())

    @routes.post("/api/settings")
    async def post_settings(request: web.Request) -> web.Response:
        data = users.of(request, settings=True)
        changes = await json_body(request)
        if not isinstance(changes, dict):
            raise web.HTTPBadRequest(text="send a JSON object of settings")
        data.save_settings(changes)
        return web.Response(status=200)

    @routes.get("/api/settings/{id}")
    async def one_setting(request: web.Request) -> web.Response:
        data = users.of(request, settings=True)
        return web.json_response(data.settings().get(request.match_info["id"]))

    @routes.post("/api/settings/{id}")
    async def post_one_setting(request: web.Request) -> web.Response:
        data = users.of(request, settings=True)
        data.save_settings({request.match_info["id"]: await json_body(request)})
        return web.Response(status=200)

    @routes.get("/api/userdata")
    async def list_userdata(request: web.Request) -> web.Response:
        data = users.of(request)
        folder = request.query.get("dir", "")
        if not folder:
            raise web.HTTPBadRequest(text="Directory not provided")
        base = data.path(folder)
        if not base.is_dir():  # (as 0.3.64: a new user's workflows folder does not exist yet)
            raise web.HTTPNotFound(text="Directory not found")
        pattern = "**/*" if request.query.get("recurse", "").lower() == "true" else "*"
        files = sorted(p for p in base.glob(pattern) if p.is_file())
        if request.query.get("full_info", "").lower() == "true":
            return web.json_response(
                [{**data.info(p), "path": p.relative_to(base).as_posix()} for p in files]
            )
        names = [p.relative_to(base).as_posix() for p in files]
        if request.query.get("split", "").lower() == "true":
            return web.json_response([[n, *n.split("/")] for n in names])
        return web.json_response(names)

    @routes.get("/api/v2/userdata")
    async def list_folder(request: web.Request) -> web.Response:
        """As 0.3.64's: the folder walked whole (os.walk), directories first, each sorted by
        name; paths from the user's folder; `modified` in seconds. The user's folder itself
        answers [] even before it exists; a missing folder under it 404."""
        data = users.of(request)
        relative = request.query.get("path", "")
        base = data.path(relative) if relative else data.root
        if not base.exists():
            raise web.HTTPNotFound(text="Requested path not found")
        if not base.is_dir():
            raise web.HTTPBadRequest(text="Requested path is not a directory")
        entries: list[dict[str, Any]] = []
        for p in base.rglob("*"):
            entry = {"name": p.name, "path": p.relative_to(data.root).as_posix()}
            if p.is_dir():
                entries.append({**entry, "type": "directory"})
            else:
                stat = p.stat()
                entries.append(
                    {**entry, "type": "file", "size": stat.st_size, "modified": stat.st_mtime}
                )
        entries.sort(key=lambda e: (e["type"] != "directory", e["name"].lower()))
        return web.json_response(entries)

    @routes.get("/api/userdata/{file}")
    async def get_file(request: web.Request) -> web.StreamResponse:
        data = users.of(request)
        path = data.path(request.match_info["file"])
        if not path.is_file():
            raise web.HTTPNotFound()
        return web.FileResponse(path)

    @routes.post("/api/userdata/{file}")
    async def post_file(request: web.Request) -> web.Response:
        data = users.of(request)
        path = data.path(request.match_info["file"])
        overwrite = request.query.get("overwrite", "true").lower() != "false"
        if path.is_dir() or (path.exists() and not overwrite):
            raise web.HTTPConflict()
        body = await request.read()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
        return data.answer(request, path)

    @routes.delete("/api/userdata/{file}")
    async def delete_file(request: web.Request) -> web.Response:
        data = users.of(request)
        path = data.path(request.match_info["file"])
        if not path.is_file():
            raise web.HTTPNotFound()
        path.unlink()
        return web.Response(status=204)

    @routes.post("/api/userdata/{file}/move/{dest}")
    async def move_file(request: web.Request) -> web.Response:
        data = users.of(request)
        source = data.path(request.match_info["file"])
        dest = data.path(request.match_info["dest"])
        if not source.is_file():
            raise web.HTTPNotFound()
        overwrite = request.query.get("overwrite", "true").lower() != "false"
        if dest.exists() and not overwrite:
            raise web.HTTPConflict()
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(source, dest)
        return data.answer(request, dest)


async def json_body(request: web.Request) -> Any:
    try:
        return await request.json()
    except ValueError:
        raise web.HTTPBadRequest(text="the body is not JSON") from None

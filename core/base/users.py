"""Who a request is from, as ComfyUI decides it, and where that user's assistant keeps its data.

ComfyUI (`app/user_manager.py`, `UserManager.get_request_user_id`, the same in 0.3.64 and 0.33)
answers every request as the user "default" unless it runs with `--multi-user`; then the
`comfy-user` header its frontend sends names the user, a name starting with "__" (its system
users, 0.33) is refused, and a user missing from `<user directory>/users.json` is refused
(`KeyError("Unknown user: ...")`). Inside ComfyUI we ask ComfyUI's own resolver
(`comfyui_resolver`); standalone and in the stand-in, `UsersFile` applies the same rule to a
users file. `request_user` (in `routes/users.py`) is the one function routes use.

The user "default" keeps the data directory as it always was (a single-user install stores
exactly as before, and data from before is the default user's without any move); every other
user has `<data dir>/users/<user_dir_name(id)>/`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_USER = "default"
USER_HEADER = "comfy-user"  # what ComfyUI's frontend sends (`api.fetchApi`)
SYSTEM_PREFIX = "__"  # ComfyUI's `folder_paths.SYSTEM_USER_PREFIX` (0.33)
USERS_FOLDER = "users"
PER_USER_PROVIDER_ENV = "COMFY_ASSISTANT_PER_USER_PROVIDER"

# (request) -> user id; KeyError for a user ComfyUI does not know, as ComfyUI's own.
UserResolver = Callable[[Any], str]


def single_user(request: Any) -> str:
    """Without --multi-user every request is the user "default"."""
    return DEFAULT_USER


@dataclass(frozen=True)
class Users:
    """How requests are told apart: ComfyUI's resolver or an equivalent, and whether
    ComfyUI's multi-user mode is on."""

    resolve: UserResolver = single_user
    multi_user: bool = False

    def per_user_provider(self, environ: Mapping[str, str]) -> bool:
        """Whether each user may set their own provider (only the operator decides: the
        environment ComfyUI was started with)."""
        return self.multi_user and environ.get(PER_USER_PROVIDER_ENV, "").strip() == "1"


SINGLE_USER = Users()


class UsersFile:
    """ComfyUI's rule on a users file (`users.json`: {id: name}), re-read when it changes;
    for the standalone server and the ComfyUI stand-in."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[float, int] | None = None
        self._users: dict[str, str] = {}

    def users(self) -> dict[str, str]:
        try:
            stat = self.path.stat()
        except OSError:
            return {}
        if self._seen != (stat.st_mtime, stat.st_size):
            try:
                loaded = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                loaded = {}
            self._users = (
                {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}
            )
            self._seen = (stat.st_mtime, stat.st_size)
        return dict(self._users)

    def add(self, name: str) -> str:
        """A new user, as ComfyUI's `POST /api/users` makes one: its id."""
        import uuid

        user_id = re.sub("[^a-zA-Z0-9-_]+", "-", name.strip()) + "_" + str(uuid.uuid4())
        users = {**self.users(), user_id: name.strip()}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(users), encoding="utf-8")
        return user_id

    def __call__(self, request: Any) -> str:
        user = request.headers.get(USER_HEADER, DEFAULT_USER)
        if user.startswith(SYSTEM_PREFIX) or user not in self.users():
            raise KeyError("Unknown user: " + user)
        return str(user)

    def as_users(self) -> Users:
        return Users(self, multi_user=True)


def comfyui_users(prompt_server: Any) -> Users:
    """ComfyUI's own resolver (`PromptServer.instance.user_manager`) and its --multi-user flag;
    a ComfyUI without a user manager has one user."""
    manager = getattr(prompt_server, "user_manager", None)
    resolve = getattr(manager, "get_request_user_id", None)
    try:
        from comfy.cli_args import args  # type: ignore[import-not-found]  # ComfyUI's module

        multi = bool(getattr(args, "multi_user", False))
    except Exception:
        multi = False
    if not callable(resolve):
        return SINGLE_USER
    return Users(resolve, multi_user=multi)


_SAFE = re.compile(r"[^A-Za-z0-9_-]+")


def user_dir_name(user: str) -> str:
    """A folder name for a user id: readable, safe on every file system (case-insensitive ones
    too: the hash of the exact id tells apart ids that differ in case or in refused
    characters), at most 57 characters."""
    digest = hashlib.sha256(user.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    readable = _SAFE.sub("-", user)[:40].strip("-") or "user"
    return f"{readable}-{digest}"


def user_data_dir(data_dir: Path, user: str) -> Path:
    if user == DEFAULT_USER:
        return data_dir
    return data_dir / USERS_FOLDER / user_dir_name(user)

"""The composition root above the wings: the long-lived state behind the routes (options, the
store, the provider client, skills, the environment, where a run's outputs are read), and the
parts of each chat turn handed to the chat wing, which never imports it.

Created without I/O (inside ComfyUI it is built at import time, before any event loop); the
store opens on first use. One instance per user serves that user's requests: the default
user's, built at start, and, with ComfyUI's --multi-user, each other user's, built on first use
(`of_user`; routes/users.py picks it for each request).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .base import (
    DEFAULT_USER,
    SINGLE_USER,
    Addresses,
    EgressStatement,
    RequestError,
    Users,
    offline,
    origin_of,
    statement,
    user_data_dir,
)
from .chat import TURN_WAIT_SECONDS, TurnOptions, TurnParts
from .files import MAX_BYTES, OutputSource, standalone_outputs
from .installs import (
    InstallParts,
    LookupProvider,
    ModelFolders,
    ScanStore,
    UserDownloads,
    registry_origin,
)
from .knowledge import (
    SYSTEM_CONTEXT_DIR,
    SYSTEM_SKILLS_DIR,
    EnvironmentService,
    SkillDirectory,
    user_skills_dir,
)
from .memory import look_back
from .provider import (
    Provider,
    ProviderSettings,
    apply_update,
    environment_problems,
    origin,
    settings_of,
    stored_bound,
)
from .store import Store, StoreUnavailable, Threads, UserData, install_defaults
from .stream import PumpOptions, install_log_filter
from .summary import Compactor
from .tokens import counter_for

log = logging.getLogger("comfyui_assistant")


class ProviderLocked(RequestError):
    """A user who may not change the provider settings asked to (403, with why and who can)."""

    status = 403


PROVIDER_NAMESPACE = "provider"
CORRECTION_NAMESPACE = "token_correction"
SHARED_PARTS = (
    "environment", "outputs", "install_lookups", "registry", "all_downloads", "model_sizes",
    "system_skills",
)  # fmt: skip


@dataclass(frozen=True)
class ServiceOptions:
    data_dir: Path
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    pump: PumpOptions = field(default_factory=PumpOptions)
    chat_body_limit: int = 32 * 1024 * 1024  # images arrive as data URLs
    json_body_limit: int = 1024 * 1024
    attachment_max_bytes: int = MAX_BYTES  # one attached file
    partial_save_seconds: float = 0.25  # a streaming answer is written at most this often
    turn_wait: float = TURN_WAIT_SECONDS  # a turn waits this long for its busy thread
    environment: EnvironmentService | None = None  # default: the shipped object_info.json
    outputs: OutputSource | None = None  # a run's files; default: COMFYUI_URL's /view, if set
    install_lookups: LookupProvider | None = None  # default: COMFYUI_URL's Manager, if set
    model_folders: ModelFolders | None = None  # default: <data_dir>/models/<folder>
    system_context_dir: Path = SYSTEM_CONTEXT_DIR
    system_skills_dir: Path = SYSTEM_SKILLS_DIR
    inside_comfyui: bool = False  # (a run's images are read from its folders, not /view)
    users: Users = SINGLE_USER  # who a request is from (core/users.py)


class AssistantService:
    """One user's assistant. The default user's is built from the options; another user's
    (`for_user`) has its own data directory, store and skills, and shares with the default
    user's what is the whole ComfyUI's: the environment, a run's files, installs and the
    downloader, the system skills, and the provider unless it has its own."""

    def __init__(self, options: ServiceOptions, shared: AssistantService | None = None) -> None:
        self.options = options
        self.shared = shared  # the default user's assistant, or None for that one
        if shared is None:
            self._build_shared_parts(options)
        else:
            for name in SHARED_PARTS:
                setattr(self, name, getattr(shared, name))
        self.compactor = Compactor()  # summaries made after answers (by thread id: a user's)
        self.install_scans = ScanStore()  # a user's scans and downloads are theirs
        self.downloads = UserDownloads(self.all_downloads)
        self.user_skills = SkillDirectory(user_skills_dir(options.data_dir), writable=True)
        self._store: Store | None = None
        self._store_lock = asyncio.Lock()
        self._provider: Provider | None = None
        self._retired: list[Provider] = []  # replaced clients still serving a stream
        self._stored_provider: dict[str, Any] | None = None
        self._corrections: dict[str, Any] | None = None
        self._users: dict[str, AssistantService] = {}  # the other users' (the default's only)
        # what routes started and the service's close ends (the MCP endpoint's sessions)
        self.on_close: list[Callable[[], Awaitable[None]]] = []

    def _build_shared_parts(self, options: ServiceOptions) -> None:
        install_log_filter(logging.getLogger("comfyui_assistant"))  # no key in any log line
        for problem in environment_problems(options.environ):  # (Settings shows them too)
            log.warning("%s", problem)
        self.environment = options.environment or EnvironmentService.standalone(options.data_dir)
        self.outputs = options.outputs or standalone_outputs(options.environ)
        installs = InstallParts.build(
            options.environ, options.data_dir, options.install_lookups, options.model_folders
        )
        self.install_lookups = installs.lookups
        self.registry = installs.registry  # or why it is not asked
        self.all_downloads = installs.downloads
        self.model_sizes = installs.model_sizes
        self.system_skills = SkillDirectory(options.system_skills_dir, writable=False)

    def of_user(self, user: str) -> AssistantService:
        """The assistant of a user the resolver accepted: the default user's is this one,
        another's is built on first use (without I/O; its store opens when first used) and
        kept while the process runs (one per user ComfyUI knows)."""
        if self.shared is not None:
            return self.shared.of_user(user)
        if user == DEFAULT_USER:
            return self
        found = self._users.get(user)
        if found is None:
            options = replace(self.options, data_dir=user_data_dir(self.options.data_dir, user))
            found = self._users[user] = AssistantService(options, shared=self)
        return found

    async def store(self) -> Store:
        if self._store is None:
            async with self._store_lock:
                if self._store is None:
                    store = await Store.open(self.options.data_dir)
                    try:
                        await asyncio.to_thread(install_defaults, self.options.data_dir)
                    except OSError as exc:
                        await store.close()
                        raise StoreUnavailable(
                            f"cannot write the default files into {self.options.data_dir} "
                            f"({exc.strerror or exc}) — fix its permissions, or choose another "
                            f"data directory"
                        ) from exc
                    self._store = store
        return self._store

    async def threads(self) -> Threads:
        return Threads(await self.store())

    async def user_data(self) -> UserData:
        return UserData(await self.store(), self.options.data_dir)

    async def turn_parts(self) -> TurnParts:
        """What one chat turn is made of (core/chat/turn_parts.py): the store opened, the
        provider client of the current settings."""
        store, options = await self.store(), self.options
        return TurnParts(
            threads=Threads(store),
            provider=await self.provider(),
            user_data=UserData(store, options.data_dir),
            system_skills=self.system_skills,
            user_skills=self.user_skills,
            environment=self.environment,
            outputs=self.outputs,
            compactor=self.compactor,
            options=TurnOptions(
                options.environ, options.system_context_dir, options.partial_save_seconds
            ),
            corrections=self.corrections,
            save_corrections=self.save_corrections,
            look_back=functools.partial(look_back, store),
        )

    async def store_settings(self, namespace: str) -> dict[str, Any]:
        return await (await self.store()).get_settings(namespace)

    async def egress(self) -> EgressStatement:
        """Settings' "Where your requests go", as core/base/egress.py lists it for now."""
        environ = self.options.environ
        comfyui = environ.get("COMFYUI_URL", "").strip()
        where = Addresses(
            provider=origin((await self.provider_settings()).base_url),
            comfyui=None if self.options.inside_comfyui else origin_of(comfyui) or "",
            registry=registry_origin(environ),
            models=self.downloads.origins.listed(),
            offline=offline(environ),
        )
        return statement(where)

    async def provider_settings(
        self, overrides: Mapping[str, Any] | None = None
    ) -> ProviderSettings:
        return settings_of(await self._provider_values(), self.options.environ, overrides)

    async def _provider_values(self) -> dict[str, Any]:
        """The provider settings this user's chats use: their own, or the shared ones."""
        if await self._uses_shared_provider():
            assert self.shared is not None
            return await self.shared._provider_values()
        return await self._own_provider_values()

    async def _uses_shared_provider(self) -> bool:
        """Another user uses the default user's provider unless the operator lets each user set
        their own and this one has."""
        if self.shared is None:
            return False
        return not (self._may_own_provider() and await self._own_provider_values())

    def _may_own_provider(self) -> bool:
        return self.options.users.per_user_provider(self.options.environ)

    def provider_locked(self) -> str | None:
        """Why this user may not change the provider settings, or None. With --multi-user,
        the shared provider is the operator's: the LLM_* environment ComfyUI started with (and
        what was saved in Settings before multi-user mode, which no request changes now)."""
        if not self.options.users.multi_user:
            return None
        if self.shared is not None and self._may_own_provider():
            return None
        allow = (
            "the shared provider is everyone's: sign in as your own ComfyUI user to set yours"
            if self._may_own_provider()
            else "whoever runs ComfyUI can let each user set their own by starting it with "
            "COMFY_ASSISTANT_PER_USER_PROVIDER=1"
        )
        return (
            "ComfyUI runs with --multi-user, so the provider everyone shares is set by whoever "
            f"runs ComfyUI, through the LLM_* environment variables; {allow}"
        )

    async def _own_provider_values(self) -> dict[str, Any]:
        """The stored provider settings (read once; update_provider keeps them current). A key
        stored before keys were bound to an origin is bound to where it was being sent."""
        if self._stored_provider is None:
            stored = await self.store_settings(PROVIDER_NAMESPACE)
            bound = stored_bound(stored, self.options.environ)
            if bound != stored:
                await (await self.store()).update_settings(PROVIDER_NAMESPACE, bound)
            self._stored_provider = {k: v for k, v in bound.items() if v is not None}
        return self._stored_provider

    async def corrections(self) -> dict[str, Any]:
        """The learned per-model token corrections (read once, then kept current)."""
        if self._corrections is None:
            self._corrections = await self.store_settings(CORRECTION_NAMESPACE)
        return self._corrections

    async def save_corrections(self, values: dict[str, Any]) -> None:
        await (await self.store()).update_settings(CORRECTION_NAMESPACE, values)
        self._corrections = {**(self._corrections or {}), **values}

    async def provider(self) -> Provider:
        """The client for the current settings; a settings change replaces it."""
        if await self._uses_shared_provider():
            assert self.shared is not None
            return await self.shared.provider()
        settings = await self.provider_settings()
        current = self._provider
        if current is not None and current.settings == settings:
            return current
        self._provider = fresh = Provider(settings)
        if current is not None:
            self._retired.append(current)
        await self._close_idle_retired()
        return fresh

    async def _close_idle_retired(self) -> None:
        idle = [p for p in self._retired if p.active == 0]
        self._retired = [p for p in self._retired if p.active > 0]
        for old in idle:
            await old.close()

    async def update_provider(
        self, update: Mapping[str, Any]
    ) -> tuple[ProviderSettings, str | None]:
        """Save a settings change; the new settings and, when the key no longer applies, a
        notice that says so (see `provider_config.apply_update`); ProviderLocked when this
        user may not set it."""
        locked = self.provider_locked()
        if locked is not None:
            raise ProviderLocked(locked)
        store = await self.store()
        own = await self._own_provider_values()
        changes, notice = apply_update(own, update, self.options.environ)
        await store.update_settings(PROVIDER_NAMESPACE, changes)
        self._stored_provider = await store.get_settings(PROVIDER_NAMESPACE)
        return (await self.provider()).settings, notice

    async def warm(self) -> None:
        """Load, off the event loop, the tokenizer's tables (about 0.7 s), which the first chat
        after a start would otherwise wait for before its first byte. Started in the
        background at start-up; touches neither the store nor the data directory (the node
        data loads with the first chat, or with ComfyUI's scan); never raises."""
        try:
            await asyncio.to_thread(lambda: counter_for(None).text("warm"))
        except Exception as exc:  # the first chat will meet it and say so
            log.debug("warming up failed: %r", exc)

    async def close(self) -> None:
        for closer in self.on_close:
            await closer()
        for other in self._users.values():
            await other.close()
        self._users.clear()
        await self.compactor.close()
        if self.shared is None:  # (the shared parts are the default user's to close)
            await self.all_downloads.close()
        for provider in [*self._retired, *([self._provider] if self._provider else [])]:
            await provider.close()
        self._provider, self._retired = None, []
        if self._store is not None:
            await self._store.close()
            self._store = None

"""What one chat turn is made of, handed to it by the service (core/service.py, the composition
root above the wings): the chat wing works with these parts and never reaches back into the
service that made them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import OutputSource
from ..knowledge import EnvironmentService, SkillDirectory
from ..provider import Provider
from ..store import Store, Threads, UserData
from ..summary import Compactor
from ..tools import LookBack


@dataclass(frozen=True)
class TurnOptions:
    """The service's options a turn reads."""

    environ: Mapping[str, str]
    system_context_dir: Path  # the shipped guidance (or the user's own)
    partial_save_seconds: float  # a streaming answer is written at most this often


@dataclass(frozen=True)
class TurnParts:
    threads: Threads  # the store's threads (the store opened)
    provider: Provider  # the client for the current settings
    user_data: UserData  # the user's rules, reminders, personas and files
    system_skills: SkillDirectory
    user_skills: SkillDirectory
    environment: EnvironmentService  # the installed nodes and models
    outputs: OutputSource  # where a run's images are read
    compactor: Compactor  # summaries made in the background
    options: TurnOptions
    # the learned per-model token corrections: read (kept current by the service), saved
    corrections: Callable[[], Awaitable[dict[str, Any]]]
    save_corrections: Callable[[dict[str, Any]], Awaitable[None]]
    look_back: Callable[[str], LookBack]  # a thread's searchConversation (core/memory)

    @property
    def store(self) -> Store:
        return self.threads.store

"""The MCP clients connected to this server, as the user's panels list them, and the ones the
user disconnected there.

**What identifies a client**: its MCP session, the `Mcp-Session-Id` the SDK gives it at
`initialize`, shown with the name and version it gave there (`clientInfo`). A client joins when
its handshake completes (`notifications/initialized`) and leaves when its session ends (the
client's DELETE, the idle timeout, the server closing it). A client of the 2026-07-28 era has no
session and no handshake: it is not listed, but a disconnect by name applies to it too.

**Disconnect** (the panel's) is the user's decision about that client, not about one session:
its session is closed (as the client's own DELETE would, through the SDK's session manager,
endpoint.py), its calls waiting on the panel end with `DISCONNECTED`, and its name is refused
from then on: a new `initialize` by that name, and any request of a 2026-era client of that
name, gets `DISCONNECTED`, until the user allows it again in the panel (an agent that simply
reconnected would make the button pointless). Kept per user in memory while the server runs.
A name is what a client says it is: this stops a well-behaved agent, it is not a security
boundary (whatever can reach the endpoint may give another name; for other machines the token,
revoked in Settings, is the boundary).

**To the panels** (each of the user's streams, panel_routes.py): a `clients` event with the
whole list, `{"clients": [{"id", "name", "version", "since"}], "disconnected": [name, ...]}`,
when a panel connects and whenever it changes.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DISCONNECTED = (
    "The user disconnected {name} in ComfyUI's Assistant panel: it takes no requests from "
    "{name} until the user allows it again there."
)
NAME_LIMIT, VERSION_LIMIT = 100, 40
UNNAMED = "an MCP client"

Publish = Callable[[str, dict[str, Any]], None]  # (user, the `clients` event's data)


@dataclass(frozen=True)
class Client:
    id: str  # the session id
    user: str
    name: str
    version: str
    since: str  # when it connected (UTC, ISO 8601)
    via: str  # how it got in (access.py's Caller.via): its session is bound to that

    def listing(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "version": self.version, "since": self.since}


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def client_name(name: str | None) -> str:
    return (name or "")[:NAME_LIMIT] or UNNAMED


class McpClients:
    def __init__(self, publish: Publish, now: Callable[[], str] = _now) -> None:
        self._publish, self._now = publish, now
        self._connected: dict[str, Client] = {}
        self._disconnected: dict[str, list[str]] = {}  # user: names, in the order disconnected

    def joined(
        self, session: str, user: str, via: str, name: str | None, version: str | None
    ) -> None:
        if session in self._connected:
            return
        version = (version or "")[:VERSION_LIMIT]
        info = Client(session, user, client_name(name), version, self._now(), via)
        self._connected[session] = info
        self._tell(user)

    def left(self, session: str) -> None:
        gone = self._connected.pop(session, None)
        if gone is not None:
            self._tell(gone.user)

    def named(self, user: str, name: str) -> list[Client]:
        """The connected clients of `user` called `name` (one agent may hold several sessions)."""
        return [c for c in self._connected.values() if c.user == user and c.name == name]

    def refused(self, user: str, name: str | None) -> str | None:
        """DISCONNECTED for a client of `user` the user disconnected, else None."""
        name = client_name(name)
        return DISCONNECTED.format(name=name) if name in self._disconnected.get(user, ()) else None

    def disconnect(self, user: str, session: str) -> Client | None:
        """The user disconnected the client of `session` (one of theirs): its name is refused
        from now on. The client, or None for a session that is not one of the user's."""
        found = self._connected.get(session)
        if found is None or found.user != user:
            return None
        names = self._disconnected.setdefault(user, [])
        if found.name not in names:
            names.append(found.name)
        self._tell(user)
        return found

    def allow(self, user: str, name: str) -> bool:
        """The user allows a disconnected client again; False when it was not disconnected."""
        names = self._disconnected.get(user, [])
        if name not in names:
            return False
        names.remove(name)
        self._tell(user)
        return True

    def snapshot(self, user: str) -> dict[str, Any]:
        mine = [c.listing() for c in self._connected.values() if c.user == user]
        return {"clients": mine, "disconnected": list(self._disconnected.get(user, ()))}

    def _tell(self, user: str) -> None:
        self._publish(user, self.snapshot(user))

"""The open workflow as an MCP resource, and its change notifications.

| URI | what |
| --- | --- |
| `comfyui-assistant://workflow` | the workflow of the panel the user was last active in |
| `comfyui-assistant://workflow/{panel}` | one panel's (ids: `comfyui-assistant://panels`) |

A read is the panel tool `getWorkflow` relayed to that panel (panel_relay.py): the same compact
text it gives in a chat and to a tool call (listed in the panel's external agent line, as a call
is). With no panel connected: a resource error that says to open ComfyUI in a browser.

**Change notifications** (sessions of the handshake era: `resources/subscribe`, then
`notifications/resources/updated`): a panel reports a change of its graph (debounced, on its
state route) and every session of the same user subscribed to that panel's URI, or to the
workflow URI while that panel is the one last active, is told. A 2026-07-28-era client has no
session to tell (its `subscriptions/listen` is not served: the SDK's bus is not per user).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from .panel_relay import NO_PANEL, PanelRelay, RelayError

SCHEME = "comfyui-assistant://"
WORKFLOW = SCHEME + "workflow"
TEXT = "text/plain"

Notify = Callable[[str], Awaitable[None]]  # sends `notifications/resources/updated` for a URI


def listed() -> list[types.Resource]:
    return [
        types.Resource(
            uri=WORKFLOW,
            name="workflow",
            description="The workflow open in the ComfyUI panel the user was last active in, as "
            "compact text (what getWorkflow gives). Subscribe to hear when the user edits it.",
            mime_type=TEXT,
        )
    ]


def templates() -> list[types.ResourceTemplate]:
    return [
        types.ResourceTemplate(
            uri_template=WORKFLOW + "/{panel}",
            name="workflow-of-panel",
            description="The workflow open in one panel (ids: comfyui-assistant://panels).",
            mime_type=TEXT,
        )
    ]


def is_workflow(uri: str) -> bool:
    return uri == WORKFLOW or (uri.startswith(WORKFLOW + "/") and len(uri) > len(WORKFLOW) + 1)


def panel_of(uri: str) -> str | None:
    """The panel a workflow URI names (None: the one last active)."""
    return uri[len(WORKFLOW) + 1 :] if uri != WORKFLOW else None


async def read(
    uri: str, wanted: str | None, relay: PanelRelay, user: str, client: dict[str, Any]
) -> types.ReadResourceResult:
    async def waiting(_seconds: float) -> None:
        return None

    try:
        panel = relay.pick(user, wanted)
        if panel is None:
            raise RelayError(NO_PANEL.format(name="Reading the workflow"))
        text, failed = await relay.call(panel, "getWorkflow", {}, client, waiting)
    except RelayError as exc:
        raise MCPError(types.INTERNAL_ERROR, str(exc)) from None
    if failed:
        raise MCPError(types.INTERNAL_ERROR, text)
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=TEXT, text=text)]
    )


@dataclass
class _Subscriber:
    user: str
    notify: Notify
    uris: set[str] = field(default_factory=set)


class Subscriptions:
    """Which sessions subscribed to which workflow URIs."""

    def __init__(self) -> None:
        self._by_session: dict[str, _Subscriber] = {}

    def add(self, session: str, user: str, uri: str, notify: Notify) -> None:
        held = self._by_session.setdefault(session, _Subscriber(user, notify))
        held.uris.add(uri)

    def remove(self, session: str, uri: str | None = None) -> None:
        held = self._by_session.get(session)
        if held is not None and uri is not None:
            held.uris.discard(uri)
        if held is not None and (uri is None or not held.uris):
            del self._by_session[session]

    async def changed(self, user: str, panel: str, latest: bool) -> int:
        """Panel `panel` of `user` reports its graph changed (`latest`: it is the one last
        active). Tells the subscribed sessions; how many notifications went out."""
        uris = {f"{WORKFLOW}/{panel}"} | ({WORKFLOW} if latest else set())
        sent = 0
        for held in list(self._by_session.values()):
            if held.user != user:
                continue
            for uri in sorted(held.uris & uris):
                await held.notify(uri)
                sent += 1
        return sent

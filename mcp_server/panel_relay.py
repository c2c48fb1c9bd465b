"""Panel tools for MCP clients: relayed to the user's open panel, which runs them exactly as in
a chat, and the answer goes back to the MCP client. This module is the server's half; the
panel's half is ui/src/runtime/mcpRelay.ts (every page with the extension connects).

The design:

- **Channel**: a stream of our own, `GET /api/assistant/mcp/panel?panel=<id>&workflow=<name>`
  (server-sent events), which works inside ComfyUI and in the standalone server alike
  (ComfyUI's websocket, `PromptServer.send_sync`, exists only inside ComfyUI). Each browser tab
  that shows the panel opens one, under an id of its own (kept in the tab's sessionStorage, so
  a reload is the same panel). The stream sends `call` events (`{callId, name, input,
  client}`: the client's name and version from its `initialize`) and `cancel` events
  (`{callId}`), with a comment every `KEEPALIVE_SECONDS`. The panel answers each call with
  `POST /api/assistant/mcp/panel/results` (`{panel, callId}` and one of `output`, `errorText`,
  `denied` (the user's words, or "")), and says which of its tabs it shows with
  `POST /api/assistant/mcp/panel/state` (`{panel, workflow, active}`), e.g. when the browser tab
  becomes visible.
- **Which panel**: the one a call names (its `_meta` key `PANEL_META`), else the one the user
  was last active in. A client lists the connected panels (id, workflow, whether active) with
  the MCP resource `comfyui-assistant://panels` (to come with resources). With none
  connected: `NO_PANEL`, a tool error that says to open ComfyUI in a browser.
- **In the panel** (ui/src/runtime/mcpRelay.ts, panel/ExternalAgent.tsx): a call runs
  through the panel's own tool runner as a chat's does: each edit one undo step, the graph kept
  before the first edit of a call group (an MCP client's calls with no pause over a minute),
  and the approval card for whatever asks first, marked with the client's name; the calls and
  their results are listed under an "external agent" line (shown while a client is connected:
  the stream's `clients` events, clients.py; its Disconnect ends that client's session and
  refuses it until the user allows it again), never in the user's chat threads.
- **A server tool that asks first** (`asks` in the registry: saving or changing a skill): the
  panel shows the same card for an `ask` event (`{callId, name, input, client, action}`: what
  the tool will do, the registry's `asks` text); on Allow the tool runs on the server, on Deny
  the client gets the user's words, as in a chat.
- **While it waits** (on the user's approval, or a long run): the server sends the MCP client a
  progress notification every `PROGRESS_SECONDS` (when the call asked for progress), and gives
  up after `CALL_SECONDS`. A panel that closes fails its calls (`PANEL_CLOSED`); an MCP client
  that disconnects or cancels mid-call sends the panel a `cancel`, and the panel's card ends.
  So does a client whose connection drops while its call waits (its process killed, say): the
  server keeps no events to resume a stream from, so the answer could never reach it
  (`end_request`, called by endpoint.py when the call's POST loses its client).
- **Per user**: a panel connects as the ComfyUI user of its page and an MCP caller reaches only
  its own user's panels (both keyed by `Caller.user`, access.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.base import tool_result_text

PANEL_META = "comfyui-assistant/panel"
KEEPALIVE_SECONDS = 15.0
PROGRESS_SECONDS = 10.0
CALL_SECONDS = 600.0

NO_PANEL = (
    "{name} runs in the ComfyUI panel in the user's browser, and no panel is connected to take "
    "it: the user needs ComfyUI open in a browser tab."
)
NO_SUCH_PANEL = "There is no connected panel {wanted!r}; connected: {listed}."
PANEL_CLOSED = (
    "The panel closed before {name} finished; it may have done part of it: read the workflow "
    "again before going on."
)
TIMED_OUT = "{name} got no answer from the panel in {seconds:.0f} s; it may still be waiting."


Answer = tuple[str, bool]  # what the model reads, and whether the call failed (or was denied)


@dataclass
class Panel:
    id: str
    user: str
    workflow: str
    active_at: float
    events: asyncio.Queue[tuple[str, dict[str, Any]]] = field(default_factory=asyncio.Queue)
    # call id: (tool name, the MCP session that made the call, its JSON-RPC request id, its answer)
    pending: dict[str, tuple[str, str, Any, asyncio.Future[Answer]]] = field(default_factory=dict)

    def listing(self, active: bool) -> dict[str, Any]:
        return {"panel": self.id, "workflow": self.workflow, "active": active}


def outcome_text(outcome: Any) -> Answer | None:
    """What the model reads for a panel's answer (as it would in a chat), or None for an answer
    of no known shape."""
    if not isinstance(outcome, dict):
        return None
    if "output" in outcome:
        output = outcome["output"]
        return tool_result_text({"state": "output-available", "output": output}), False
    if isinstance(outcome.get("errorText"), str):
        return tool_result_text({"state": "output-error", "errorText": outcome["errorText"]}), True
    if isinstance(outcome.get("denied"), str):
        approval = {"approved": False, "reason": outcome["denied"]}
        return tool_result_text({"state": "output-denied", "approval": approval}), True
    return None


class RelayError(Exception):
    """A relayed call that could not be answered; the message is its tool error."""


Waiting = Callable[[float], Awaitable[None]]  # told the seconds waited, every PROGRESS_SECONDS


class PanelRelay:
    def __init__(
        self, clock: Callable[[], float] = time.monotonic, progress_every: float = PROGRESS_SECONDS
    ) -> None:
        self.clock, self.progress_every = clock, progress_every
        self.panels: dict[str, Panel] = {}
        self._order = itertools.count()

    def connect(self, panel_id: str, user: str, workflow: str) -> Panel:
        """A panel's stream opened (a second stream of the same id replaces the first)."""
        old = self.panels.get(panel_id)
        if old is not None:
            self.disconnect(old)
        panel = Panel(panel_id, user, workflow, self.clock())
        self.panels[panel_id] = panel
        return panel

    def disconnect(self, panel: Panel) -> None:
        if self.panels.get(panel.id) is panel:
            del self.panels[panel.id]
        for name, _session, _request, answer in panel.pending.values():
            if not answer.done():
                answer.set_exception(RelayError(PANEL_CLOSED.format(name=name)))
        panel.pending.clear()

    def publish(self, user: str, kind: str, data: dict[str, Any]) -> None:
        """An event for every panel of `user` (e.g. the connected MCP clients, clients.py)."""
        for panel in self.panels.values():
            if panel.user == user:
                panel.events.put_nowait((kind, data))

    def end_calls(self, session: str, message: str, request: Any = None) -> None:
        """The waiting calls of MCP session `session` (only the one of JSON-RPC request id
        `request`, when given) end with `message` as their tool error (the panels are told to
        stop them)."""
        for panel in self.panels.values():
            for _name, caller, asked, answer in panel.pending.values():
                if caller != session or (request is not None and asked != request):
                    continue
                if not answer.done():
                    answer.set_exception(RelayError(message))

    def update(self, panel_id: str, workflow: str, active: bool) -> bool:
        panel = self.panels.get(panel_id)
        if panel is None:
            return False
        panel.workflow = workflow
        if active:
            panel.active_at = self.clock()
        return True

    def listed(self, user: str) -> list[dict[str, Any]]:
        mine = [p for p in self.panels.values() if p.user == user]
        latest = max(mine, key=lambda p: p.active_at, default=None)
        return [p.listing(p is latest) for p in mine]

    def pick(self, user: str, wanted: str | None) -> Panel | None:
        mine = [p for p in self.panels.values() if p.user == user]
        if wanted is None:
            return max(mine, key=lambda p: p.active_at, default=None)
        found = next((p for p in mine if p.id == wanted), None)
        if found is None:
            listed = ", ".join(p.id for p in mine) or "none"
            raise RelayError(NO_SUCH_PANEL.format(wanted=wanted[:80], listed=listed))
        return found

    def answer(self, panel_id: str, call_id: str, outcome: Any) -> bool:
        """A panel's answer to one of its calls; False for a call it does not have (ended)."""
        panel = self.panels.get(panel_id)
        pending = panel.pending.get(call_id) if panel is not None else None
        if panel is None or pending is None:
            return False
        text = outcome_text(outcome)
        if text is None:  # (not an answer: the call still waits for one)
            raise ValueError("send one of 'output', 'errorText' (a string), 'denied' (a string)")
        del panel.pending[call_id]
        if not pending[3].done():
            pending[3].set_result(text)
        return True

    async def call(
        self,
        panel: Panel,
        name: str,
        args: dict[str, Any],
        client: dict[str, Any],
        waiting: Waiting,
        limit: float = CALL_SECONDS,
        session: str = "",
        asks: str | None = None,
        request: Any = None,
    ) -> Answer:
        """Run `name` in `panel` for MCP session `session` (its request `request`): the text the
        model would read; RelayError when the panel cannot answer. A cancelled call tells the
        panel to stop.
        With `asks` (what a server tool will do): the panel only asks the user (an `ask` event,
        the same card) and answers `{"output": {"approved": true}}` or the user's denial."""
        call_id = f"mcp_{uuid.uuid4().hex}"
        answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        panel.pending[call_id] = (name, session, request, answer)
        event = {"callId": call_id, "name": name, "input": args, "client": client}
        if asks is None:
            panel.events.put_nowait(("call", event))
        else:
            panel.events.put_nowait(("ask", {**event, "action": asks}))
        started = self.clock()
        try:
            while True:
                waited = self.clock() - started
                if waited >= limit:
                    raise RelayError(TIMED_OUT.format(name=name, seconds=limit))
                step = min(self.progress_every, limit - waited)
                with contextlib.suppress(asyncio.TimeoutError):
                    return await asyncio.wait_for(asyncio.shield(answer), step)
                await waiting(self.clock() - started)
        finally:
            if panel.pending.pop(call_id, None) is not None:  # (ended without an answer)
                panel.events.put_nowait(("cancel", {"callId": call_id}))

from __future__ import annotations

import contextlib
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def user(text: str, id: str = "u1") -> dict[str, Any]:
    return {"id": id, "role": "user", "parts": [{"type": "text", "text": text}]}


def summary_text(*goals: str) -> str:
    """A model summary with the sections the summarizer asks for (summary_checks)."""
    lines = "\n".join(f"- {g}" for g in goals) or "- none"
    return (
        f"## Goals\n{lines}\n## Workflow\n- none\n## Decisions\n- none\n"
        "## Preferences the user stated\n- none\n## Open requests\n- none"
    )


def assistant_message(text: str, id: str = "a1") -> dict[str, Any]:
    """An answer as the panel resends it."""
    parts = [{"type": "step-start"}, {"type": "text", "text": text}]
    return {"id": id, "role": "assistant", "parts": parts}


def chat_body(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "thread-1", "messages": list(messages), "trigger": "submit-message", **extra}


def sse_events(body: str) -> list[dict[str, Any]]:
    """Split an SSE body into chunks, checking the framing our protocol promises."""
    events = [e for e in body.split("\n\n") if e]
    assert events and events[-1] == "data: [DONE]", f"stream must end with [DONE]: {body[-200:]}"
    out = []
    for event in events[:-1]:
        if event.startswith(":"):
            continue  # keep-alive comment
        assert event.startswith("data: ") and "\n" not in event, event
        out.append(json.loads(event[6:]))
    return out


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def normalize_ids(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replace generated ids (msg_…, txt_…, rsn_…, call_…) by stable placeholders in order."""
    seen: dict[str, str] = {}

    def fix(value: Any) -> Any:
        if isinstance(value, str) and "_" in value:
            prefix, _, rest = value.partition("_")
            if prefix in ("msg", "txt", "rsn", "call") and len(rest) == 16:
                count = sum(1 for k in seen if k.startswith(prefix + "_"))
                seen.setdefault(value, f"<{prefix}_{count}>")
                return seen[value]
        return value

    return [{k: fix(v) for k, v in e.items()} for e in events]


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def chunk_from_payload(payload: dict[str, Any]) -> Any:
    """Our chunk object for a wire payload (to replay a stream through our own assembler)."""
    from dataclasses import fields

    from comfyui_assistant.core.stream import ui_stream as ui

    kind = payload["type"]
    if kind.startswith("data-"):
        return ui.Data(kind[5:], payload["data"], payload.get("id"), payload.get("transient"))
    cls = next(
        c for c in vars(ui).values() if isinstance(c, type) and getattr(c, "TYPE", None) == kind
    )
    names = {f.name for f in fields(cls)}
    return cls(**{_snake(k): v for k, v in payload.items() if _snake(k) in names})


def assemble(chunks: list[dict[str, Any]], base: dict[str, Any] | None = None) -> dict[str, Any]:
    from comfyui_assistant.core.stream.ui_assembler import MessageAssembler

    assembler = MessageAssembler(base)
    for payload in chunks:
        if payload["type"] != "error":
            assembler.apply(chunk_from_payload(payload))
    return assembler.message


REMINDER = re.compile(
    r"(\n\n)?(?:<system-reminder>\n.*?\n</system-reminder>(?:\n\n<recalled>\n.*?\n</recalled>)?"
    r"|<recalled>\n.*?\n</recalled>)\Z",
    re.DOTALL,
)


def without_reminders(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A request's messages without the trailing <system-reminder> (it carries the time) and
    the passages recalled for them."""
    out = []
    for m in messages:
        content = m.get("content")
        if m["role"] == "user" and isinstance(content, str) and REMINDER.search(content):
            content = REMINDER.sub("", content)
            if not content:
                continue
            m = {**m, "content": content}
        elif m["role"] == "user" and isinstance(content, list):
            parts = [p for p in content if not REMINDER.fullmatch(p.get("text", "") or "x")]
            m = {**m, "content": parts}
        out.append(m)
    return out


def sent(provider: Any, i: int = 0) -> list[dict[str, Any]]:
    """What request `i` sent the model, reminders aside."""
    return without_reminders(provider.requests[i]["messages"])


def without_context(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] != "data-context"]


def content_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A UI message's parts without the context report (a data-context part)."""
    return [p for p in message["parts"] if not p["type"].startswith("data-")]


def context_report(body: str) -> dict[str, Any]:
    """The last context report of a response body."""
    data: dict[str, Any] = [e for e in sse_events(body) if e["type"] == "data-context"][-1]["data"]
    return data


async def serve_routes(routes: Any) -> tuple[Any, str]:
    """An aiohttp app of `routes` on a free port of 127.0.0.1: (its runner to clean up, its URL)."""
    from aiohttp import web

    app = web.Application()
    app.add_routes(routes)
    return await serve_app(app)


async def serve_app(app: Any) -> tuple[Any, str]:
    """The aiohttp `app` on a free port of 127.0.0.1: (its runner to clean up, its URL)."""
    from aiohttp import web

    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


def error_said(error_text: str) -> str:
    """The English text of a stream's `errorText`: a coded error sends `{"error": text,
    "code": ..., "params": ...}` as a string (core/base/error_codes.py), others the text."""
    if error_text.startswith("{"):
        said: str = json.loads(error_text)["error"]
        return said
    return error_text


@contextlib.contextmanager
def small_file_system(tmp_path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` ("2m", "32m") of its own (mounting one needs root, which the test
    machines and CI run as); skips the test where it cannot be mounted."""
    import pytest

    disk = tmp_path / "small-disk"
    disk.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(disk)]
    done = subprocess.run(mount, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {done.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)

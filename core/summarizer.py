"""The running summary: the model condenses the oldest part of a long thread, building on the
summary it wrote before; if it fails or takes too long, a deterministic digest stands in.

Summaries are rare by design (the engine asks for one only above its high watermark, and
summarizes down to the low one), so the request prefix stays unchanged between them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from .context_blocks import build_blocks, flatten
from .context_engine import Summary
from .context_steps import digest_rounds
from .fallback_summary import fallback_summary
from .provider import Provider
from .think_tags import visible_text
from .ui_messages import to_openai_messages
from .wire_types import OpenAIMessage, UIMessage

log = logging.getLogger("comfyui_assistant")

SUMMARY_PROMPT = """You keep the running summary of a conversation between a ComfyUI user and \
ComfyUI Assistant (an assistant that edits and runs ComfyUI workflows with tools). Write the \
new summary from the previous summary (if any) and the new part of the conversation. Keep \
every fact the assistant may need later, verbatim: file names, model names, seeds, sizes, \
steps, cfg, node ids and node types, values the user chose. Drop small talk.

Use exactly these sections, each a few short bullet points (write "none" if empty):
## Goals
## Workflow (what was built or changed, with node ids)
## Decisions
## Preferences the user stated
## Open requests

At most 350 words. Output only the summary."""

SUMMARY_TIMEOUT = 120.0  # a local model may take a while to summarize a long stretch
TRANSCRIPT_CHARS = 60_000


def transcript(messages: Sequence[OpenAIMessage]) -> str:
    """The conversation as plain text for the summarizer (tool results already digested)."""
    lines = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(p.get("text", "[image]") for p in content)
        if m["role"] == "tool":
            lines.append(f"Tool result: {content}")
        elif m["role"] == "assistant":
            calls = [
                f"{c['function']['name']}({c['function']['arguments']})"
                for c in m.get("tool_calls") or []
            ]
            text = content or ""
            lines.append(f"Assistant: {text}" + (f" [calls: {'; '.join(calls)}]" if calls else ""))
        else:
            lines.append(f"User: {content}")
    text = "\n".join(lines)
    return text if len(text) <= TRANSCRIPT_CHARS else "…" + text[-TRANSCRIPT_CHARS:]


async def model_summary(
    provider: Provider, model: str, previous: str | None, messages: Sequence[OpenAIMessage]
) -> str:
    user = (f"Previous summary:\n{previous}\n\n" if previous else "") + (
        f"New part of the conversation:\n{transcript(messages)}"
    )
    messages = [
        {"role": "system", "content": SUMMARY_PROMPT},
        {"role": "user", "content": user},
    ]
    completed = await provider.complete(model, messages, max_tokens=800, temperature=0.2)
    text = visible_text(completed.text).strip()
    if not text:
        raise ValueError("the summarizer returned no text")
    return text


async def summarize(
    provider: Provider,
    model: str,
    previous: Summary | None,
    ui_messages: Sequence[UIMessage],
    ids: list[str],
    timeout: float = SUMMARY_TIMEOUT,
    max_chars: int = 4000,
) -> Summary:
    """Summarize the UI messages named in `ids` (oldest first) on top of `previous`."""
    wanted = set(ids)
    part = [m for m in ui_messages if str(m.get("id") or "") in wanted]
    digested = flatten(digest_rounds(build_blocks(part), keep_last=0, batch=1))
    before = previous.text if previous else None
    try:
        text = await asyncio.wait_for(model_summary(provider, model, before, digested), timeout)
        return Summary(text, until=ids[-1], fallback=False)
    except Exception as exc:  # any failure: the deterministic digest stands in
        log.warning("summarizing failed (%s); using the deterministic digest", exc)
        whole = to_openai_messages(part)  # it digests the full results itself
        text = fallback_summary(whole, before, max_chars=max_chars)
        return Summary(text, until=ids[-1], fallback=True)

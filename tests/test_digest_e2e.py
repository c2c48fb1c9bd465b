"""The deterministic digest through /api/assistant/chat (a real app on a socket, its SQLite
store, the scripted provider whose summary calls fail): at a small window it holds only the
lines that earn their tokens (issue 36 item 3), and the room it leaves goes to the newest
messages."""

from __future__ import annotations

import itertools
import re

from comfyui_assistant.core.context.context_steps import SUMMARY_CLOSE, SUMMARY_OPEN
from comfyui_assistant.core.summary.fallback_summary import DIGEST_TITLE

from .conftest import start_app
from .helpers import context_report, user
from .scripted_provider import Status, error_body, text_reply
from .test_context_e2e import env_for, with_a_failing_summarizer

INSTRUCTION = "Never use the Kalomi LoRA on portraits, it ruins faces."
REMINDER = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.S)
NAMED = "My cousin Wilhelmina lends me her old camera on weekends."


def everyday(k: int) -> str:
    """A distinct sentence of everyday talk that names, dates or counts nothing."""
    who = ("the kids", "my neighbour", "my sister", "the whole family", "our friends")
    did = ("walked along the river", "baked bread", "painted the fence", "watched a film")
    when = ("after lunch", "in the rain", "before dinner", "late at night", "this morning")
    combos = list(itertools.product(who, did, when))
    w, d, t = combos[k % len(combos)]
    return f"Yesterday {w} {d} {t}, which was lovely."


def prose_thread(messages: int) -> list[dict]:
    """`messages` UI messages of everyday talk, the instruction and the name early on."""
    out = []
    for i in range(messages):
        text = INSTRUCTION if i == 4 else NAMED if i == 8 else everyday(i)
        if i % 2 == 0:
            out.append(user(text, f"u{i}"))
        else:
            parts = [{"type": "step-start"}, {"type": "text", "text": text}]
            out.append({"id": f"a{i}", "role": "assistant", "parts": parts})
    return out


async def test_at_4k_the_digest_keeps_only_what_earns_and_the_newest_messages_get_the_room(
    provider, tmp_path, sdk
):
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW="4096"))
    thread = [*prose_thread(120), user("Continue.", "u_last")]
    # (the thread does not fit: its summary is asked before its request, and fails)
    failed = Status(500, error_body("summarizer down"))
    body = await with_a_failing_summarizer(app, provider, sdk, thread, failed, text_reply("ok"))
    report = context_report(body)
    assert report["summary"] == {"covers": report["counts"]["summarized"], "fallback": True}
    request = provider.requests[-1]["messages"]
    covered = report["counts"]["summarized"]  # one sentence, one line each
    digest, _, first = request[1]["content"].partition(f"{SUMMARY_CLOSE}\n\n")
    assert request[1]["role"] == "user"
    assert digest == (
        f"{SUMMARY_OPEN}{DIGEST_TITLE} ({covered - 2} weaker lines left out):\n"
        f"- user: {INSTRUCTION}\n- user: {NAMED}"
    )
    # the digest is a few dozen tokens, not its share of the budget (a fifth: ~500 at 4K)
    assert report["tokens"]["summary"] <= 80
    # after it (the first merged into its message), the newest messages in order, through
    # the question
    sent = [first, *(m["content"] for m in request[2:])]
    written = [p["text"] for m in thread for p in m["parts"] if p.get("type") == "text"]
    texts = [*written, "ok", "More."]  # (the answer to the thread, the new message)
    said = [REMINDER.sub("", t) for t in sent]
    assert said == texts[-len(sent) :] and len(said) > 60

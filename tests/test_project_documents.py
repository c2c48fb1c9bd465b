"""The project's documents in the request: whole when they fit their share of the budget, else
the passages retrieved for the question within theirs; placed at the head of the latest user
message, resent byte for byte while the documents do not change, counted in the report; and
through /api/assistant/chat with the scripted provider."""

from __future__ import annotations

import itertools
import json
from typing import Any

from comfyui_assistant.core.context.context_cache import BlockCache
from comfyui_assistant.core.context.context_engine import build_context
from comfyui_assistant.core.context.context_validate import problems
from comfyui_assistant.core.files.project_documents import (
    DOCUMENTS_SHARE,
    MOVE_EVERY,
    RETRIEVAL_SHARE,
    anchor,
    question_of,
)
from comfyui_assistant.core.files.projects import DocumentText, Passage, ProjectContext
from comfyui_assistant.core.store.sent_turns import SentTurn, turn_note

from .helpers import chat_body, user
from .scripted_provider import text_reply
from .test_context_engine import COUNTER, NOW, inputs
from .test_context_engine import assistant as answer
from .test_context_engine import user as ui_user

REMINDED = SentTurn(turn_note([], NOW))
STYLE = "Palette: muted teal and amber. Film grain 0.3. Never use lens flares."
CARD = "Flux dev: euler sampler, simple scheduler, 20 to 28 steps, guidance 3.5."


def project(*texts: str, passages: tuple[Passage, ...] = ()) -> ProjectContext:
    docs = tuple(
        DocumentText(i + 1, f"Doc {i + 1}", t, COUNTER.text(t)) for i, t in enumerate(texts)
    )
    return ProjectContext(7, "Harbour film", len(docs), sum(d.tokens for d in docs), docs, passages)


def passage(pid: int, text: str, doc: int = 1, position: int = 0) -> Passage:
    return Passage(pid, doc, f"Doc {doc}", position, text, COUNTER.text(text))


def build(ui: list[dict[str, Any]], window: int = 32_000, **kw: Any) -> Any:
    # every user message as first sent (its reminder), as the chat turn records them
    kw.setdefault("sent", {m["id"]: REMINDED for m in ui if m["role"] == "user"})
    assembled = build_context(inputs(ui, window, **kw), COUNTER, BlockCache())
    assert problems(assembled.messages) == []
    return assembled


def conversation(turns: int) -> list[dict[str, Any]]:
    ui: list[dict[str, Any]] = []
    for i in range(turns):
        ui += [ui_user(f"Question {i} about the grade?", f"u{i}"), answer(f"Answer {i}.", f"a{i}")]
    return [*ui, ui_user(f"Question {turns} about the grade?", f"u{turns}")]


def test_small_documents_go_whole_at_the_head_of_the_latest_user_message() -> None:
    ui = conversation(MOVE_EVERY)  # the turn they move on
    assembled = build(ui, project=project(STYLE, CARD))
    last = assembled.messages[-1]
    assert last["role"] == "user"
    head, _, rest = str(last["content"]).partition("</project-documents>")
    assert head.startswith("<project-documents>") and "Harbour film" in head
    payload = json.loads(head[head.index("{") :])
    assert payload == {
        "documents": [
            {"citation_id": "doc-1", "title": "Doc 1", "contents": STYLE, "metadata": {}},
            {"citation_id": "doc-2", "title": "Doc 2", "contents": CARD, "metadata": {}},
        ]
    }
    assert rest.lstrip().startswith(f"Question {MOVE_EVERY} about the grade?")
    assert all("project-documents" not in str(m["content"]) for m in assembled.messages[:-1])
    report = assembled.report["documents"]
    assert report["mode"] == "whole" and report["passages"] == 0 and report["documents"] == 2
    assert [d["citationId"] for d in report["sent"]] == ["doc-1", "doc-2"]
    assert report["sent"][0]["tokens"] == COUNTER.text(STYLE)
    assert assembled.report["tokens"]["documents"] == report["tokens"] > 0
    assert assembled.exact == COUNTER.messages(assembled.messages)  # counted exactly


def test_whole_documents_stay_put_and_move_every_few_turns() -> None:
    docs = project(STYLE, CARD)
    requests = [build(conversation(turn), project=docs).messages for turn in range(MOVE_EVERY + 1)]
    block = str(requests[0][-1]["content"]).split("</project-documents>")[0]
    assert block.startswith("<project-documents>")
    for before, after in itertools.pairwise(requests[:MOVE_EVERY]):
        assert after[: len(before)] == before  # append-only: the previous request, then more
    moved = requests[MOVE_EVERY]
    assert str(moved[-1]["content"]).startswith(block)  # the same bytes, on the latest message
    assert all("project-documents" not in str(m["content"]) for m in moved[:-1])
    # within a turn (an answer in progress after the latest user message) nothing moves
    during = build([*conversation(MOVE_EVERY), answer("Looking it up…", "a-step")], project=docs)
    assert during.messages[: len(moved)] == moved


def test_the_anchor_skips_messages_under_the_summary() -> None:
    ui = conversation(MOVE_EVERY + 2)  # the block's anchor: u4
    assert anchor(ui, whole=True) == f"u{MOVE_EVERY}"
    assert anchor(ui, whole=True, summarized=frozenset({"u4", "a4"})) == "u5"
    assert anchor(ui, whole=False) == f"u{MOVE_EVERY + 2}"


def test_a_changed_document_changes_the_block() -> None:
    first = build(conversation(1), project=project(STYLE, CARD)).messages
    second = build(conversation(1), project=project(STYLE + " Also no vignettes.", CARD)).messages
    assert first[1] != second[1] and "no vignettes" in str(second[1]["content"])


def test_large_documents_are_retrieved_best_first_within_their_share() -> None:
    big = "The harbour scene. " * 4000  # ~16K tokens: over 20% of a 32K budget
    ranked = (
        passage(1, CARD, doc=2),
        passage(2, "Shot 4: close-up of hands mending a net. " * 10, doc=3, position=3),
        passage(3, "Lens notes. " * 2000, doc=1, position=9),  # larger than the share: skipped
        passage(4, STYLE, doc=1, position=1),
    )
    docs = project(big, passages=ranked)
    assembled = build(conversation(1), project=docs)
    report = assembled.report
    sent = report["documents"]
    assert sent["mode"] == "retrieved"
    assert [d["citationId"] for d in sent["sent"]] == ["doc-2-p0", "doc-3-p3", "doc-1-p1"]
    assert sent["passages"] == 3
    assert sent["tokens"] <= RETRIEVAL_SHARE * report["budget"]
    assert any("passages retrieved" in line for line in report["limits"])
    content = str(assembled.messages[-1]["content"])
    assert content.index("euler sampler") < content.index("mending a net") < content.index("teal")
    assert assembled.exact == COUNTER.messages(assembled.messages)


def test_whole_or_retrieved_follows_the_window() -> None:
    text = "Style rule: keep the horizon on the lower third. " * 120  # ~1,300 tokens
    docs = project(text, passages=(passage(1, text[:400]),))
    assert build(conversation(1), 32_000, project=docs).report["documents"]["mode"] == "whole"
    small = build(conversation(1), 4_096, project=docs).report
    assert small["documents"]["mode"] == "retrieved"
    whole_room = DOCUMENTS_SHARE * small["budget"]
    assert COUNTER.text(text) > whole_room


def test_no_project_no_block() -> None:
    assembled = build(conversation(1))
    assert assembled.report["documents"] is None
    assert assembled.report["tokens"]["documents"] == 0


def test_the_question_is_the_latest_message_then_the_one_before() -> None:
    ui = [ui_user("shot four lighting", "u1"), answer("ok", "a1"), ui_user("and lens?", "u2")]
    assert question_of(ui) == "and lens?\nshot four lighting"


async def test_through_chat_the_documents_reach_the_model(assistant, provider) -> None:
    base = "/api/assistant/projects"
    async with assistant.session.post(assistant.base + base, json={"name": "Harbour"}) as r:
        pid = (await r.json())["id"]
    for title, text in (("Style guide", STYLE), ("Model card", CARD)):
        async with assistant.session.post(
            f"{assistant.base}{base}/{pid}/documents", json={"title": title, "text": text}
        ) as r:
            assert r.status == 201
    async with assistant.session.post(
        assistant.base + "/api/assistant/threads", json={"id": "t1"}
    ) as r:
        assert r.status == 201
    async with assistant.session.patch(
        assistant.base + "/api/assistant/threads/t1", json={"project": pid}
    ) as r:
        assert r.status == 200
    provider.enqueue(text_reply("Euler, 20 steps."), text_reply("Teal and amber."))
    status, _ = await assistant.chat(chat_body(user("Which sampler?", "u1"), id="t1"))
    assert status == 200
    first = provider.requests[-1]["messages"][-1]["content"]
    assert "<project-documents>" in first and CARD in first and STYLE in first
    messages = [
        user("Which sampler?", "u1"),
        {"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": "Euler, 20 steps."}]},
        user("Which palette?", "u2"),
    ]
    status, body = await assistant.chat(chat_body(*messages, id="t1"))
    assert status == 200
    earlier = provider.requests[-2]["messages"]
    second = provider.requests[-1]["messages"]
    assert second[: len(earlier)] == earlier  # the block stays with the first message
    assert "project-documents" not in str(second[-1]["content"])
    assert '"mode":"whole"' in body.replace(" ", "")

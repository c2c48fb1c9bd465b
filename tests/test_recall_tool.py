"""`searchConversation` through /api/assistant/chat: the scripted model calls it and gets the
thread's earlier messages as documents to cite, numbered on from the thread's citation ids,
without the question being asked; it reads around a result; a time it cannot read is an error
the model can act on; the offer follows the prompt profile."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from comfyui_assistant.core.chat.chat_plan import offered_names
from comfyui_assistant.core.context.prompt_profile import MEDIUM, SMALL
from comfyui_assistant.core.memory.recall_tool import AROUND_NOTE, title
from comfyui_assistant.core.store.embeddings import NO_EMBEDDINGS

from .helpers import assistant_message, chat_body, content_parts, sent, user
from .scripted_provider import Stream, call_piece, chunk, text_reply
from .test_documents import doc_part


@pytest.fixture(autouse=True)
def by_words_only(monkeypatch) -> None:
    """Search by words: these tests are about the tool (by meaning too: tests/
    test_semantic_recall.py)."""
    monkeypatch.setenv(NO_EMBEDDINGS, "1")


def call(args: dict[str, Any], id: str, index: int = 0) -> dict[str, Any]:
    return call_piece(index, id=id, name="searchConversation", arguments=json.dumps(args))


def calls_reply(*calls: dict[str, Any]) -> Stream:
    return Stream([chunk(tool_calls=list(calls)), chunk(finish_reason="tool_calls")])


def searches(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in message["parts"] if p["type"] == "tool-searchConversation"]


HISTORY = [
    user("Which upscaler should I use for old family photos?", "u1"),
    {
        "id": "a1",
        "role": "assistant",
        "parts": [doc_part("d1", 1), {"type": "text", "text": "Use 4x-UltraSharp [1]."}],
    },
    user("My daughter started painting again.", "u2"),
    assistant_message("Lovely! Watercolours?", "a2"),
]


async def test_the_model_searches_the_thread_and_gets_documents_to_cite(assistant, provider, sdk):
    provider.enqueue(
        calls_reply(call({"query": "upscaler for photos"}, "s1")),
        text_reply("We chose 4x-UltraSharp [2]."),
    )
    question = user("What did we decide about the upscaler?", "u3")
    status, body = await assistant.chat(chat_body(*HISTORY, question))
    assert status == 200
    message = sdk.check(body)["message"]
    (part,) = searches(message)
    assert part["state"] == "output-available"
    docs = part["output"]["documents"]
    # numbered on from the thread's documents ([1] is readDocumentation's); the match with
    # the message after it
    assert [d["citation_id"] for d in docs] == [2, 3]
    assert [(d["metadata"]["messageId"], d["metadata"]["matched"]) for d in docs] == [
        ("u1", True), ("a1", False)
    ]  # fmt: skip
    doc = docs[0]
    assert doc["contents"] == "Which upscaler should I use for old family photos?"
    now = datetime.fromisoformat(doc["metadata"]["createdAt"]).timestamp()
    assert doc["title"] == title("user", now, now)
    assert doc["title"].startswith("You, ")
    assert doc["metadata"]["source"] == "conversation"
    assert (doc["metadata"]["messageId"], doc["metadata"]["position"]) == ("u1", 0)
    assert doc["metadata"]["createdAt"][:4].isdigit()  # an ISO time
    assert docs[1]["contents"] == (
        'readDocumentation KSampler -> documents [1] "Doc 1" (recall: d1) Use 4x-UltraSharp [1].'
    )
    assert part["output"]["cite"].endswith("like [2].")
    assert part["output"]["note"] == AROUND_NOTE
    # the model got the same result as the tool message
    tool_message = sent(provider, 1)[-1]
    assert (
        tool_message["role"] == "tool" and json.loads(tool_message["content"]) == (part["output"])
    )
    assert content_parts(message)[-1]["text"] == "We chose 4x-UltraSharp [2]."


async def test_a_time_is_preferred_and_the_result_says_when_nothing_then_matched(
    assistant, provider, sdk
):
    provider.enqueue(
        calls_reply(
            call({"query": "painting", "when": "2024-03"}, "w1"),
            call({"query": "painting", "when": "today"}, "w2", 1),
        ),
        text_reply("She paints [2]."),
    )
    status, body = await assistant.chat(chat_body(*HISTORY, user("What does she do?", "u3")))
    assert status == 200
    wrong, right = searches(sdk.check(body)["message"])
    for part in (wrong, right):
        docs = part["output"]["documents"]
        assert [(d["metadata"]["messageId"], d["metadata"]["matched"]) for d in docs] == [
            ("a1", False), ("u2", True), ("a2", False)
        ]  # fmt: skip
        assert docs[1]["contents"] == "My daughter started painting again."
    assert wrong["output"]["note"] == (
        "Nothing said in '2024-03' matches 'painting'; these matches are from other times. "
        + AROUND_NOTE
    )
    assert right["output"]["note"] == AROUND_NOTE


async def test_reading_around_a_result_and_a_time_it_cannot_read(assistant, provider, sdk):
    provider.enqueue(
        calls_reply(
            call({"around": "u2"}, "r1"),
            call({"query": "painting", "when": "next week"}, "r2", 1),
            call({"query": "painting", "when": "today"}, "r3", 2),
            call({}, "r4", 3),
        ),
        text_reply("She paints watercolours [3]."),
    )
    status, body = await assistant.chat(chat_body(*HISTORY, user("What does she paint?", "u3")))
    assert status == 200
    around, unread, today, empty = searches(sdk.check(body)["message"])
    docs = around["output"]["documents"]
    assert [d["metadata"]["messageId"] for d in docs] == ["u1", "a1", "u2", "a2", "u3"]
    assert [d["citation_id"] for d in docs] == [2, 3, 4, 5, 6]
    assert docs[3]["title"].startswith("Assistant, ")
    assert docs[1]["contents"].startswith("readDocumentation KSampler -> documents [1]")
    assert unread["state"] == "output-error"
    assert "when: 'next week' is not a time I can read" in unread["errorText"]
    assert 'Use forms like "today"' in unread["errorText"]
    found = today["output"]["documents"]
    # the match and the messages around it, not the question (u3)
    assert [d["metadata"]["messageId"] for d in found] == ["a1", "u2", "a2"]
    assert [d["citation_id"] for d in found] == [7, 8, 9]
    assert empty["state"] == "output-error" and "query (words)" in empty["errorText"]


def test_offered_from_the_medium_profile_up() -> None:
    assert "searchConversation" not in offered_names(SMALL, False)
    assert "searchConversation" in offered_names(MEDIUM, False)

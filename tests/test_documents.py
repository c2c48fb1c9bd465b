"""Document results with citation ids (core/tools/documents.py): their shape, ids numbered
thread-wide (unique across the lookups of a turn and across turns, stored with the output so a
resent request is byte-identical), and digests that keep ids and titles."""

from __future__ import annotations

import json

from comfyui_assistant.core.tools.digests import digest_tool_part, digest_tool_result
from comfyui_assistant.core.tools.documents import (
    Citations,
    cite_note,
    document,
    documents_of,
    documents_result,
    next_citation_id,
)

from .helpers import chat_body, content_parts, sent, user
from .scripted_provider import Stream, call_piece, chunk, text_reply


def call(name: str, args: dict, id: str, index: int = 0) -> dict:
    return call_piece(index, id=id, name=name, arguments=json.dumps(args))


def calls_reply(*calls: dict) -> Stream:
    return Stream([chunk(tool_calls=list(calls)), chunk(finish_reason="tool_calls")])


def doc_part(call_id: str, *ids: int) -> dict:
    docs = [document(i, f"Doc {i}", "text", {"source": "node docs"}) for i in ids]
    return {
        "type": "tool-readDocumentation",
        "toolCallId": call_id,
        "state": "output-available",
        "input": {"nodeType": "KSampler"},
        "output": documents_result(docs),
        "providerExecuted": True,
    }


def test_a_document_result_has_the_shape_the_model_and_the_panel_read() -> None:
    doc = document(3, "KSampler", "It denoises.", {"source": "node docs", "node_type": "KSampler"})
    assert documents_result([doc]) == {
        "documents": [
            {
                "citation_id": 3,
                "title": "KSampler",
                "contents": "It denoises.",
                "metadata": {"source": "node docs", "node_type": "KSampler"},
            }
        ],
        "cite": "Cite what you use from these by citation_id, like [3].",
    }
    assert cite_note([]) == "Cite what you use from these by citation_id, like [1]."


def test_the_next_id_follows_the_largest_in_the_thread() -> None:
    assert next_citation_id([]) == 1
    assert next_citation_id([user("hi")]) == 1
    history = [
        user("a"),
        {"id": "a1", "role": "assistant", "parts": [doc_part("d1", 1, 2), doc_part("d2", 5)]},
        user("b", "u2"),
        {"id": "a2", "role": "assistant", "parts": [doc_part("d3", 3)]},
    ]
    assert next_citation_id(history) == 6
    counter = Citations(next_citation_id(history))
    assert [counter.take(), counter.take()] == [6, 7]


def test_malformed_documents_are_ignored() -> None:
    bad = [
        None,
        "documents",
        {"documents": "x"},
        {"documents": [1, {"citation_id": "2", "title": "t"}, {"citation_id": 0, "title": "t"}]},
        {"documents": [{"citation_id": True, "title": "t"}, {"citation_id": 4}]},
    ]
    assert all(documents_of(value) == [] for value in bad)
    message = {
        "id": "a",
        "role": "assistant",
        "parts": [{"type": "tool-x", "output": v} for v in bad],
    }
    assert next_citation_id([message, {"role": "assistant", "parts": "nope"}]) == 1


def test_a_digest_keeps_the_citation_ids_and_titles() -> None:
    part = doc_part("d1", 3)
    line = digest_tool_part("readDocumentation", {"nodeType": "KSampler"}, part, "d1")
    assert line == '[digest] readDocumentation KSampler -> documents [3] "Doc 3" (recall: d1)'
    text = json.dumps(part["output"])
    assert digest_tool_result("readDocumentation", {"nodeType": "KSampler"}, text, "d1") == line
    many = doc_part("d2", 1, 2, 3, 4, 5, 6)
    line = digest_tool_part("readDocumentation", {}, many, "d2")
    assert '[1] "Doc 1", [2] "Doc 2", [3] "Doc 3", [4] "Doc 4", +2 more' in line


def _docs(message: dict) -> list[dict]:
    return [
        d
        for p in message["parts"]
        if p["type"] == "tool-readDocumentation"
        for d in p["output"]["documents"]
    ]


async def test_ids_are_unique_across_lookups_and_turns_and_resent_unchanged(
    assistant, provider, sdk
):
    provider.enqueue(
        calls_reply(
            call("readDocumentation", {"nodeType": "KSampler"}, "d1", 0),
            call("readDocumentation", {"nodeType": "VAEDecode"}, "d2", 1),
        ),
        calls_reply(call("readDocumentation", {"nodeType": "CheckpointLoaderSimple"}, "d3")),
        text_reply("KSampler denoises the latent [1]; VAEDecode decodes it [2]."),
    )
    status, body = await assistant.chat(chat_body(user("explain sampling")))
    assert status == 200
    first = sdk.check(body)["message"]
    docs = _docs(first)
    assert [d["citation_id"] for d in docs] == [1, 2, 3]
    assert [d["metadata"]["node_type"] for d in docs] == [
        "KSampler",
        "VAEDecode",
        "CheckpointLoaderSimple",
    ]
    assert all(d["metadata"]["source"] == "node docs" and d["contents"] for d in docs)
    assert docs[0]["title"] == "KSampler"
    # the model sees the documents and the note to cite them, with the tool result
    tool_message = sent(provider, 1)[-2]
    assert tool_message["role"] == "tool"
    assert json.loads(tool_message["content"])["cite"].endswith("like [1].")
    assert json.loads(sent(provider, 1)[-1]["content"])["documents"][0]["citation_id"] == 2

    # the next turn numbers on from the thread's documents
    provider.enqueue(
        calls_reply(call("readDocumentation", {"nodeType": "KSampler"}, "d4")),
        text_reply("Again [4]."),
    )
    history = [user("explain sampling"), {**first, "parts": content_parts(first)}]
    status, body = await assistant.chat(chat_body(*history, user("and again?", "u2")))
    assert status == 200
    second = sdk.check(body)["message"]
    assert [d["citation_id"] for d in _docs(second)] == [4]
    # the first turn goes out again byte for byte: its ids are stored in its outputs
    before, after = sent(provider, 2), sent(provider, 3)
    assert after[: len(before)] == before


async def test_an_unknown_node_type_is_an_error_not_a_document(assistant, provider, sdk):
    provider.enqueue(
        calls_reply(call("readDocumentation", {"nodeType": "NoSuchNodeAtAll"}, "d1")),
        text_reply("No docs."),
    )
    status, body = await assistant.chat(chat_body(user("docs?")))
    assert status == 200
    part = next(p for p in sdk.check(body)["message"]["parts"] if p["type"].startswith("tool-"))
    assert part["state"] == "output-error"
    assert "There is no installed node type" in part["errorText"]

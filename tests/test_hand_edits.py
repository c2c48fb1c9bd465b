"""The user's own edits, told with their next message (ui/src/tools/handEdits.ts): the panel adds
one text part to that message; the server stores it as sent and resends it byte for byte, so
every later request only appends to the one before and the note is in each of them once."""

from __future__ import annotations

import json

from .helpers import chat_body, content_parts, user
from .scripted_provider import text_reply

NOTE = (
    "[Since your last answer the user changed the workflow by hand (keep these changes unless "
    "asked): link 14.MODEL → 3.model; removed link 4.MODEL → 3.model; 3 KSampler: steps 20 → 28, "
    "cfg 7 → 5.5; 9 SaveImage bypassed]"
)


def with_note(text: str, id: str) -> dict:
    message = user(text, id)
    message["parts"].append({"type": "text", "text": NOTE})
    return message


async def test_a_note_on_the_second_message_is_resent_as_sent_and_requests_only_append(
    assistant, provider, sdk
):
    provider.enqueue(
        text_reply("Hi."), text_reply("Kept your LoRA."), text_reply("You're welcome.")
    )
    thread = [user("hello", "u1")]
    for text, id in (("I wired a LoRA in", "u2"), ("thanks", "u3")):
        status, body = await assistant.chat(chat_body(*thread))
        assert status == 200
        answer = content_parts(sdk.check(body)["message"])
        thread.append({"id": f"a{id}", "role": "assistant", "parts": answer})
        thread.append(with_note(text, id) if id == "u2" else user(text, id))
    status, body = await assistant.chat(chat_body(*thread))
    assert status == 200
    sdk.check(body)

    first, second, third = (r["messages"] for r in provider.requests)
    assert second[: len(first)] == first
    assert third[: len(second)] == second  # the message with the note too, byte for byte
    # as the model gets it: the user's words, then the note
    (with_it,) = [
        m for m in second if m["role"] == "user" and NOTE in json.dumps(m, ensure_ascii=False)
    ]
    assert with_it["content"] == f"I wired a LoRA in\n\n{NOTE}"
    for request in (second, third):
        assert json.dumps(request, ensure_ascii=False).count(NOTE) == 1

    # stored as sent: the thread's message has both parts, byte for byte
    async with assistant.session.get(assistant.base + "/api/assistant/threads/thread-1") as r:
        stored = [m for m in (await r.json())["messages"] if m["id"] == "u2"]
    assert [p for p in stored[0]["parts"] if p["type"] == "text"] == [
        {"type": "text", "text": "I wired a LoRA in"},
        {"type": "text", "text": NOTE},
    ]

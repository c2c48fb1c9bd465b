"""The context engine through /api/assistant/chat: long threads in small windows, summaries
(once, and the fallback), overflow recovery, personas, /compact, the report and the learned
correction."""

from __future__ import annotations

import asyncio
import json
import time

from comfyui_assistant.core.context.context_steps import SUMMARY_CLOSE, SUMMARY_OPEN
from comfyui_assistant.core.context.context_validate import problems
from comfyui_assistant.core.provider.budget import compute_budget, resolve_window
from comfyui_assistant.core.provider.provider_config import resolve
from comfyui_assistant.core.summary.summarizer import IN_PLACE_PROMPT, SUMMARY_PROMPT
from comfyui_assistant.core.tokens.tokens import counter_for
from comfyui_assistant.standalone import SERVICE

from .conftest import start_app
from .helpers import (
    assistant_message,
    chat_body,
    content_parts,
    context_report,
    error_said,
    sent,
    sse_events,
    summary_text,
    user,
)
from .scripted_provider import Completion, Raw, Status, Stream, chunk, error_body, text_reply

WORKFLOW = {
    "nodes": [{"id": i, "type": "KSampler", "widgets_values": [i, 20, 7.0]} for i in range(40)]
}


def long_thread(messages: int = 300, rounds: int = 40) -> list[dict]:
    """`messages` UI messages, alternating user/assistant, `rounds` of them with a tool round."""
    out = []
    with_tools = set(range(1, messages, max(1, messages // rounds))[:rounds])
    for i in range(messages):
        if i % 2 == 0:
            out.append(
                user(f"Request {i}: make the image warmer and use seed {1000 + i}.", f"u{i}")
            )
            continue
        parts: list[dict] = [{"type": "step-start"}]
        if i in with_tools:
            parts.append(
                {
                    "type": "tool-getWorkflow",
                    "toolCallId": f"call_{i}",
                    "state": "output-available",
                    "input": {"detail": "compact"},
                    "output": WORKFLOW,
                }
            )
            parts.append({"type": "step-start"})
        parts.append({"type": "text", "text": f"Answer {i}: I changed node {i % 40} as asked."})
        out.append({"id": f"a{i}", "role": "assistant", "parts": parts})
    return out


def is_summary_request(body: dict) -> bool:
    last = body["messages"][-1]["content"]
    return "stream" not in body and last.startswith((SUMMARY_PROMPT, IN_PLACE_PROMPT[:40]))


def env_for(provider, **extra) -> dict:
    return {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "scripted-model", **extra}


async def summaries_done(app) -> None:
    """Wait until no summary is being made in the background."""
    compactor = app.app[SERVICE].compactor
    for _ in range(200):
        if compactor.running("thread-1") is None:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the background summary did not finish")


async def test_a_thread_that_does_not_fit_is_summarized_once_before_its_request(
    provider, tmp_path, sdk
):
    # a long thread in an 8K window: room is made once, by the summary, before the request
    # (not by leaving old messages out now and summarizing on the next turn: each would be a
    # request re-read from its start); the user sees that it is being made; later turns stay
    # under the watermark: summarized once
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW="8192"))
    thread = long_thread()
    thread.append(user("Now make it a portrait.", "u_last"))
    provider.enqueue(text_reply("Done.", usage=(5000, 2)))
    provider.summaries.append(Completion(summary_text("warm images", "node 3 changed")))
    try:
        status, body = await app.chat(chat_body(*thread))
        assert status == 200
        sdk.check(body)
        statuses = [e["data"] for e in sse_events(body) if e["type"] == "data-status"]
        assert [s["done"] for s in statuses] == [False, True]
        assert statuses[0]["text"] == "Summarizing earlier messages…"
        await summaries_done(app)
        streamed = [i for i, r in enumerate(provider.requests) if "stream" in r]
        summary_call, *more = provider.requests[: streamed[0]]
        chat_call = provider.requests[streamed[0]]
        assert len(streamed) == 1 and is_summary_request(summary_call)
        assert all(is_summary_request(r) for r in more)  # (long stretches: in pieces)
        # it begins as the chat does (a local server keeps their shared prefix cached)
        assert summary_call["messages"][0] == chat_call["messages"][0]
        assert summary_call["tools"] == chat_call["tools"]
        assert summary_call["tool_choice"] == "none"
        messages = chat_call["messages"]
        assert problems(messages) == []
        counter = counter_for("scripted-model")
        settings = resolve({}, {"LLM_CONTEXT_WINDOW": "8192"})
        window = resolve_window(
            thread_setting=None, settings=settings, model="scripted-model", provider=None
        )
        budget = compute_budget(window, None, counter.tools(chat_call["tools"]))
        assert counter.messages(messages) <= budget.available
        assert sent(provider, streamed[0])[-1]["content"] == "Now make it a portrait."
        assert messages[1]["content"].startswith(f"{SUMMARY_OPEN}## Goals\n- warm images")
        report = context_report(body)
        assert report["summary"] == {"covers": report["counts"]["summarized"], "fallback": False}
        assert report["counts"]["dropped"] == 0  # the summary made the room, nothing left out
        assert report["window"]["tokens"] == 8192 and report["reported"] == 5000

        # the next turns: a summary opens the history; the next one is made ahead, in the
        # background, so no later turn waits for one
        answer = content_parts(sdk.check(body)["message"])
        thread.append({"id": "a_last", "role": "assistant", "parts": answer})
        for turn in range(3):
            provider.enqueue(text_reply(f"ok {turn}"))
            thread.append(user(f"One more change {turn}.", f"u_more{turn}"))
            status, body = await app.chat(chat_body(*thread))
            assert status == 200
            await summaries_done(app)
            thread.append(
                {
                    "id": f"a_more{turn}",
                    "role": "assistant",
                    "parts": content_parts(sdk.check(body)["message"]),
                }
            )
            chat = [r for r in provider.requests if "stream" in r][-1]
            opening = chat["messages"][1]["content"]
            assert opening.startswith(f"{SUMMARY_OPEN}## Goals\n- warm images")
            assert "Kept verbatim:" in opening  # the facts beside the model's summary
            assert not [e for e in sse_events(body) if e["type"] == "data-status"]
            report = context_report(body)
            assert report["summary"] == {
                "covers": report["counts"]["summarized"],
                "fallback": False,
            }
        async with app.session.get(app.base + "/api/assistant/threads/thread-1/summary") as r:
            stored = (await r.json())["summary"]
        assert stored["text"].startswith("## Goals") and stored["fallback"] is False
    finally:
        await app.close()


async def test_on_a_llama_server_with_slots_a_thread_and_its_summaries_keep_one_slot(
    provider, tmp_path, sdk
):
    # llama-server picks the slot whose cached prompt is most alike; after a summary the
    # chat's prompt shares only the system prompt and tools (under its 10% threshold) and
    # took an empty slot: everything processed again (measured on a real server). Pinned to
    # the thread's slot, the chat finds that prefix where the summary left it.
    from comfyui_assistant.core.provider import provider_probes

    provider_probes.clear_caches()
    provider.props = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 4}
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW="8192"))
    thread = [*long_thread(), user("Now make it a portrait.", "u_last")]
    provider.enqueue(text_reply("Done.", usage=(5000, 2)), text_reply("And again."))
    provider.summaries.append(Completion(summary_text("warm images", "node 3 changed")))
    try:
        await app.chat(chat_body(*thread))
        await summaries_done(app)
        answer = {"id": "a_last", "role": "assistant", "parts": [{"type": "text", "text": "Done."}]}
        await app.chat(chat_body(*thread, answer, user("and wider", "u_more")))
        slots = [r.get("id_slot") for r in provider.requests]
        assert any(is_summary_request(r) for r in provider.requests)
        assert len(set(slots)) == 1 and slots[0] in range(4), slots
        # another thread may use another slot; a server with one slot is not told any
        provider.props["total_slots"] = 1
        provider_probes.clear_caches()
        provider.enqueue(text_reply("ok"))
        await app.chat({**chat_body(user("hi")), "id": "thread-2"})
        assert "id_slot" not in provider.requests[-1]
    finally:
        provider_probes.clear_caches()
        await app.close()


async def stored_summaries(app) -> dict:
    async with app.session.get(app.base + "/api/assistant/threads/thread-1/summary") as r:
        assert r.status == 200
        return await r.json()


async def test_a_summary_made_ahead_is_sent_only_once_the_thread_no_longer_fits(
    provider, tmp_path, sdk
):
    # past the high watermark the next summary is made after the answer, in the background;
    # while the thread still fits it is sent whole (nothing forgotten, the request unchanged
    # for the prefix cache); the request that would leave messages out takes the summary
    # instead, without waiting, and from then on it is the one in use
    env = env_for(provider, LLM_CONTEXT_WINDOW="8192", LLM_HISTORY_HIGH_WATERMARK="0.3")
    app = await start_app(tmp_path, {**env, "LLM_HISTORY_LOW_WATERMARK": "0.1"})
    thread = [*long_thread(120, 14), user("Now make it a portrait.", "u_last")]
    provider.enqueue(text_reply("Done."), text_reply("Next."), text_reply("Wide."))
    provider.summaries.append(Completion(summary_text("warm")))
    try:
        _, body = await app.chat(chat_body(*thread))
        report = context_report(body)
        assert report["summary"] is None and report["counts"]["dropped"] == 0
        await summaries_done(app)
        stored = await stored_summaries(app)
        assert stored["summary"] is None and stored["next"]["text"].startswith("## Goals")
        made = len(provider.requests)
        thread += [assistant_message("Done.", "a_last"), user("And now?", "u_next")]
        _, body = await app.chat(chat_body(*thread))
        report = context_report(body)
        assert report["summary"] is None and report["counts"]["dropped"] == 0  # still whole
        first = provider.requests[made]["messages"]
        assert first[1]["content"] == provider.requests[0]["messages"][1]["content"]
        assert not [e for e in sse_events(body) if e["type"] == "data-status"]  # no wait
        # the summary was asked for after the chat's own request (a server reads only the
        # instruction; its cache still holds the chat for the next request), up to the
        # message its summary stops before
        (ahead,) = [r for r in provider.requests[:made] if "stream" not in r]
        assert ahead["messages"][:-1] == first[:-1]
        instruction = ahead["messages"][-1]["content"]
        assert instruction.startswith("Do not answer the conversation or call tools now")
        assert "up to (not including) the message that begins “Request " in instruction
        await summaries_done(app)
        # a paste the thread cannot take whole any more
        thread += [assistant_message("Next.", "a_next"), user("log " * 2400, "u_paste")]
        _, body = await app.chat(chat_body(*thread))
        sdk.check(body)
        report = context_report(body)
        assert report["summary"] == {"covers": report["counts"]["summarized"], "fallback": False}
        assert report["counts"]["dropped"] == 0
        opening = provider.requests[-1]["messages"][1]["content"]
        assert opening.startswith(f"{SUMMARY_OPEN}## Goals\n- warm")
        assert not [e for e in sse_events(body) if e["type"] == "data-status"]  # made ahead
        stored = await stored_summaries(app)
        assert stored["summary"]["text"].startswith("## Goals")  # in use now
    finally:
        await app.close()


async def test_a_request_that_needs_a_summary_still_being_made_waits_and_says_so(
    provider, tmp_path, sdk
):
    # the summary prepared after the first answer is still being made when a paste arrives
    # that does not fit without it: the response starts at once and says it is waiting
    env = env_for(provider, LLM_CONTEXT_WINDOW="8192", LLM_HISTORY_HIGH_WATERMARK="0.3")
    app = await start_app(tmp_path, {**env, "LLM_HISTORY_LOW_WATERMARK": "0.1"})
    thread = [*long_thread(120, 14), user("Now make it a portrait.", "u_last")]
    provider.enqueue(text_reply("Done."), text_reply("Read it."))
    provider.summaries.append(Completion(summary_text("warm"), delay=0.8))
    try:
        _, body = await app.chat(chat_body(*thread))
        assert context_report(body)["summary"] is None
        assert app.app[SERVICE].compactor.running("thread-1") is not None  # being made
        thread += [assistant_message("Done.", "a_last"), user("log " * 2400, "u_paste")]
        started = time.monotonic()
        async with app.session.post(
            app.base + "/api/assistant/chat", json=chat_body(*thread)
        ) as response:
            first = await response.content.readline()
            first_byte = time.monotonic() - started
            body = first.decode() + await response.text()
        assert first_byte < 0.4  # the response starts at once, before the summary is ready
        events = sse_events(body)
        statuses = [e["data"] for e in events if e["type"] == "data-status"]
        assert [s["done"] for s in statuses] == [False, True]
        assert statuses[0]["text"] == "Summarizing earlier messages…"
        assert sdk.check(body)["message"]["parts"][-1]["text"] == "Read it."
        opening = provider.requests[-1]["messages"][1]["content"]
        assert opening.startswith(f"{SUMMARY_OPEN}## Goals\n- warm")  # it waited for it
        assert context_report(body)["counts"]["dropped"] == 0
    finally:
        await app.close()


async def with_a_failing_summarizer(app, provider, sdk, thread: list[dict], *first) -> str:
    """`thread` sent (the provider answering `first` in turn: the chat's reply and the
    summary's failure, in the order they are asked), its answer appended and "More." sent:
    the second response's body (the app closed)."""
    provider.enqueue(*first)
    provider.enqueue(text_reply("ok again"))
    try:
        _, body = await app.chat(chat_body(*thread))
        await summaries_done(app)
        answer = {
            "id": "a_last",
            "role": "assistant",
            "parts": content_parts(sdk.check(body)["message"]),
        }
        _, body = await app.chat(chat_body(*thread, answer, user("More.", "u_more")))
    finally:
        await app.close()
    sdk.check(body)
    return body


async def test_a_failing_summarizer_falls_back_to_the_deterministic_digest(provider, tmp_path, sdk):
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW="8192"))
    thread = [*long_thread(), user("Continue.", "u_last")]
    failed = Status(500, error_body("summarizer down"))
    body = await with_a_failing_summarizer(app, provider, sdk, thread, text_reply("ok"), failed)
    report = context_report(body)
    assert report["summary"]["fallback"] is True
    opening = provider.requests[-1]["messages"][1]["content"]
    assert opening.startswith(f"{SUMMARY_OPEN}Digest (oldest first)")
    # facts from the summarized part survive (newest first): the request just before the
    # first one kept is in the digest
    summary, _, kept = opening.partition(SUMMARY_CLOSE)
    first_kept = int(kept.split("Request ", 1)[1].split(":", 1)[0])
    assert f"seed {1000 + first_kept - 2}" in summary


async def test_context_overflow_is_retried_once_with_the_reported_window(assistant, provider, sdk):
    overflow = error_body(
        "This model's maximum context length is 4096 tokens. However, your messages resulted "
        "in 9000 tokens.",
        "context_length_exceeded",
    )
    provider.enqueue(Status(400, overflow), text_reply("fits now"))
    thread = [*long_thread(40, 6), user("go on", "u_last")]
    status, body = await assistant.chat(chat_body(*thread))
    assert status == 200
    assert content_parts(sdk.check(body)["message"])[-1]["text"] == "fits now"
    first, second = provider.requests
    counter = counter_for("scripted-model")
    assert counter.messages(second["messages"]) < counter.messages(first["messages"])
    assert counter.messages(second["messages"]) + counter.tools(second["tools"]) <= 4096
    # planned for 32K with every tool in full (about 3,100 tokens); the retry at 4K carries the
    # small profile's brief tools, as the next turns do
    assert counter.tools(second["tools"]) < 1200 < counter.tools(first["tools"])
    report = context_report(body)
    assert report["window"]["tokens"] == 4096 and "retried: overflow" in report["limits"]
    # the next turn plans with the window the provider stated: no second overflow, and the
    # response's headers and its report say the same
    provider.enqueue(Completion(summary_text("a warmer image")), text_reply("still fits"))
    thread += [{"id": "a_last", "role": "assistant", "parts": [{"type": "text", "text": "ok"}]}]
    async with assistant.session.post(
        assistant.base + "/api/assistant/chat", json=chat_body(*thread, user("more", "u_more"))
    ) as response:
        headers, body = response.headers, await response.text()
    chats = [r for r in provider.requests if r.get("stream")]  # (a summary may be made too)
    assert len(chats) == 3
    report = context_report(body)
    assert headers["X-Context-Window"] == "4096" == str(report["window"]["tokens"])
    assert report["window"]["source"] == "provider error"
    assert "retried: overflow" not in report["limits"]


async def test_an_overflow_retry_that_cannot_fit_says_why(assistant, provider, sdk):
    overflow = error_body("maximum context length is 256 tokens", "context_length_exceeded")
    provider.enqueue(Status(400, overflow))
    _, body = await assistant.chat(chat_body(user("describe this: " + "word " * 400)))
    (chunk_text,) = sdk.check(body)["errors"]
    error = error_said(chunk_text)
    assert error.startswith("The latest message needs "), error
    assert "ContextBudgetError" not in error
    assert json.loads(chunk_text)["code"] == "context.message_too_long"


async def test_a_message_too_large_for_the_window_is_refused_without_a_model_call(
    provider, tmp_path, sdk
):
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW="4096"))
    try:
        _, body = await app.chat(chat_body(user("describe this: " + "word " * 6000)))
    finally:
        await app.close()
    (error,) = sdk.check(body)["errors"]
    error = error_said(error)
    assert error.startswith("The latest message needs ")
    assert "fit in scripted-model's context (window 4,096" in error
    assert provider.requests == []


async def test_personas_join_the_system_message_or_replace_the_role(assistant, provider):
    # a persona is part of the system message (which changes only when the persona does), so
    # the conversation's prefix stays byte-identical from turn to turn
    async def persona(body):
        async with assistant.session.post(
            assistant.base + "/api/assistant/user-context/personas", json=body
        ) as r:
            created = await r.json()
        async with assistant.session.put(
            assistant.base + "/api/assistant/user-context/personas/active",
            json={"id": created["id"]},
        ) as r:
            assert r.status == 200

    await persona({"name": "Pirate", "instructions": "Talk like a pirate."})
    provider.enqueue(text_reply("Arr."), text_reply("Aye."))
    await assistant.chat(chat_body(user("hi")))
    system = provider.requests[0]["messages"][0]["content"]
    assert '<persona name="Pirate">\nTalk like a pirate.\n</persona>\n\n' in system
    assert sent(provider)[-1]["content"] == "hi"
    await persona(
        {"name": "Tutor", "instructions": "You teach ComfyUI.", "replacesSystemPrompt": True}
    )
    await assistant.chat(chat_body(user("hi")))
    system = provider.requests[1]["messages"][0]["content"]
    assert system.startswith("You teach ComfyUI.\n\n# Tools") and "# Role" not in system
    assert sent(provider, 1)[-1]["content"] == "hi"


async def test_compact_endpoint_summarizes_everything_before_the_last_exchange(
    assistant, provider, sdk
):
    thread = long_thread(20, 3)
    provider.enqueue(text_reply("ok"))
    await assistant.chat(chat_body(*thread, user("last question", "u_last")))
    provider.enqueue(Completion(summary_text("compacted")))
    async with assistant.session.post(
        assistant.base + "/api/assistant/threads/thread-1/compact", json={}
    ) as r:
        assert r.status == 200
        answer = await r.json()
    assert answer["compacted"] == 20
    assert answer["summary"]["text"].startswith(summary_text("compacted"))
    assert answer["summary"]["until"] == "a19"
    provider.enqueue(text_reply("ok"))
    await assistant.chat(chat_body(*thread, user("last question", "u_last")))
    (opening,) = [m["content"] for m in sent(provider, 2)[1:]]
    assert opening.startswith(f"{SUMMARY_OPEN}{summary_text('compacted')}")
    assert opening.endswith(f"{SUMMARY_CLOSE}\n\nlast question")


async def test_the_report_headers_debug_request_and_learned_correction(assistant, provider, sdk):
    provider.enqueue(
        Stream(
            [
                chunk("hi"),
                chunk(finish_reason="stop"),
                chunk(
                    usage={
                        "prompt_tokens": 9999,
                        "completion_tokens": 1,
                        "total_tokens": 10000,
                        "prompt_tokens_details": {"cached_tokens": 4000},
                    }
                ),
            ]
        )
    )
    resp = await assistant.post("/api/assistant/chat?debug=context", chat_body(user("hello")))
    body = await resp.text()
    sdk.check(body)
    events = sse_events(body)
    first_report = next(e for e in events if e["type"] == "data-context")["data"]
    assert resp.headers["X-Context-Tokens"] == str(first_report["estimated"])
    assert resp.headers["X-Context-Window"] == "32768"
    assert resp.headers["X-Context-Budget"] == str(first_report["budget"])
    (debug,) = [e for e in events if e["type"] == "data-context-request"]
    assert debug["transient"] is True
    assert debug["data"]["messages"] == provider.requests[0]["messages"]
    final = context_report(body)
    assert (final["reported"], final["cachedTokens"]) == (9999, 4000)
    async with assistant.session.get(
        assistant.base + "/api/assistant/threads/thread-1/context"
    ) as r:
        assert (await r.json())["report"] == final
    # the provider counts ~N× what we estimated: the next request's estimate follows
    ratio = 9999 / final["exact"]
    provider.enqueue(text_reply("again"))
    _, body = await assistant.chat(chat_body(user("hello")))
    corrected = context_report(body)
    assert abs(corrected["correction"] - min(2.0, ratio)) < 0.01
    assert corrected["estimated"] > corrected["exact"]


async def test_the_window_comes_from_the_providers_metadata(provider, tmp_path, sdk):
    provider.model_metadata = {"max_model_len": 6144}  # what vLLM reports
    provider.enqueue(text_reply("ok"))
    app = await start_app(tmp_path, env_for(provider))
    try:
        _, body = await app.chat(chat_body(user("hi")))
    finally:
        await app.close()
    report = context_report(body)
    assert (report["window"]["tokens"], report["window"]["source"]) == (6144, "provider")
    assert json.dumps(report)  # plain JSON all the way


async def test_each_request_is_the_previous_one_plus_new_messages(assistant, provider):
    # through /api/assistant/chat: a turn, a /skill turn and a third: every request begins with the
    # whole previous request byte for byte (its reminder blocks and the skill's expansion
    # included), so a server's prefix cache reuses all of it
    provider.enqueue(text_reply("One."), text_reply("Two."), text_reply("Three."))
    thread = [user("Make the image warmer.", "u1")]
    await assistant.chat(chat_body(*thread))
    thread += [assistant_message("One.", "a1"), user("/skill txt2img a cat in a hat", "u2")]
    await assistant.chat(chat_body(*thread))
    thread += [assistant_message("Two.", "a2"), user("Now make it bigger.", "u3")]
    await assistant.chat(chat_body(*thread))
    first, second, third = (r["messages"] for r in provider.requests)
    assert second[: len(first)] == first and third[: len(second)] == second
    assert second[-1]["content"].startswith('The user activated the skill "')
    assert first[-1]["content"].endswith("</system-reminder>")
    # the same reminders, the same hour: the block is not repeated with every message
    assert not third[-1]["content"].endswith("</system-reminder>")
    assert len(third) == len(first) + 4  # each turn added its answer and the next message


async def test_a_message_that_failed_is_never_merged_into_the_next_one(assistant, provider):
    provider.enqueue(Status(500, error_body("the server fell over")), text_reply("Done."))
    _, body = await assistant.chat(chat_body(user("Make it blue.", "u1")))
    assert any(e.get("type") == "error" for e in sse_events(body))
    await assistant.chat(chat_body(user("Make it blue.", "u1"), user("Make it red.", "u2")))
    roles = [m["role"] for m in provider.requests[-1]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    messages = provider.requests[-1]["messages"]
    assert messages[1]["content"].startswith("Make it blue.")
    assert messages[2]["content"].startswith("[No answer:")
    assert messages[3]["content"].startswith("Make it red.")


async def test_a_llama_cpp_template_without_tools_is_not_offered_any_and_the_user_is_told_once(
    assistant, provider, sdk, monkeypatch
):
    # llama-server drops `tools` silently when its chat template cannot render them: we send
    # none (and count none), say so once, and ask for its prompt progress, which the panel
    # shows while a long prompt is read
    from comfyui_assistant.core.provider import provider_probes
    from comfyui_assistant.core.stream import stream_translate

    provider_probes.clear_caches()
    monkeypatch.setattr(stream_translate, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(stream_translate, "PROGRESS_EVERY", 0.0)
    provider.props = {
        "default_generation_settings": {"n_ctx": 8192},
        "chat_template_caps": {"supports_tools": False},
    }
    progress = [
        {"choices": [], "prompt_progress": {"total": 900, "processed": n, "cache": 0}}
        for n in (300, 900)
    ]
    provider.enqueue(Stream([*progress, chunk("Hello."), chunk(finish_reason="stop")]))
    provider.enqueue(text_reply("Again."))
    _, body = await assistant.chat(chat_body(user("hi")))
    request = provider.requests[0]
    assert "tools" not in request and request["return_progress"] is True
    report = context_report(body)
    assert report["tokens"]["tools"] == 0
    statuses = [e for e in sse_events(body) if e["type"] == "data-status"]
    assert statuses[0]["id"] == "tools" and "cannot use tools" in statuses[0]["data"]["text"]
    shown = [s["data"]["text"] for s in statuses if s["id"] == "status"]
    assert shown == ["Reading the conversation… 33% of 900 tokens", ""]
    assert sdk.check(body)["message"]["parts"][-1]["text"] == "Hello."
    _, body = await assistant.chat(chat_body(user("hi"), user("again", "u2")))
    assert not [e for e in sse_events(body) if e.get("id") == "tools"]  # told once
    provider_probes.clear_caches()


async def test_an_overflow_reported_mid_stream_is_retried_smaller(assistant, provider, sdk):
    # a server that streams its prompt progress, then says the prompt overflowed as an error
    # event: nothing of the answer was shown, so the step is sent again, smaller, and the
    # smaller window is remembered. (llama-server's "Context size has been exceeded." there is
    # its shared cache filling, not the window: tests/test_shared_cache.py)
    progress = {"choices": [], "prompt_progress": {"total": 9000, "processed": 2048, "cache": 0}}
    overflow = b'data: {"error": {"message": "Context length exceeded.", "code": 400}}\n\n'
    error = b'data: {"error": {"message": "Context size has been exceeded.", "code": 500}}\n\n'
    provider.enqueue(Stream([progress, Raw(overflow)], done=False), text_reply("fits now"))
    thread = [*long_thread(40, 6), user("go on", "u_last")]
    status, body = await assistant.chat(chat_body(*thread))
    assert status == 200
    result = sdk.check(body)
    assert result["errors"] == []
    assert content_parts(result["message"])[-1]["text"] == "fits now"
    _, second = provider.requests
    counter = counter_for("scripted-model")
    report = context_report(body)
    # (the error states no window: 75% of ours, 32,768)
    assert report["window"]["tokens"] == 24_576 and "retried: overflow" in report["limits"]
    assert counter.messages(second["messages"]) + counter.tools(second["tools"]) <= 24_576
    # an error after part of the answer was shown is not retried: it says so
    provider.enqueue(Stream([chunk("Partial"), Raw(error)], done=False))
    _, body = await assistant.chat(chat_body(*thread, user("again", "u_again")))
    (message,) = sdk.check(body)["errors"]
    assert "Context size has been exceeded" in message


async def test_a_busy_slot_past_a_few_seconds_does_not_trap_its_thread(
    provider, tmp_path, sdk, monkeypatch
):
    # behind a proxy that does not pass on disconnects, an abandoned summary held a thread's
    # slot for 720 s; llama-server queues a request for a busy slot, and the thread's next
    # turns failed after 300 s. Busy past BUSY_WAIT, the request goes to a free slot.
    from comfyui_assistant.core.provider import provider_probes, slots
    from comfyui_assistant.core.provider.provider_probes import Capabilities, thread_slot

    monkeypatch.setattr(slots, "BUSY_WAIT", 0.3)  # (3 s in use)
    provider_probes.clear_caches()
    provider.props = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 4}
    own = thread_slot(Capabilities(slots=4), "thread-1")
    provider.busy_slots = {own, (own + 1) % 4}
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW="8192"))
    try:
        provider.enqueue(text_reply("ok"))
        status, body = await app.chat(chat_body(user("hi")))
        assert status == 200
        free = min({0, 1, 2, 3} - provider.busy_slots)
        assert provider.requests[-1]["id_slot"] == free
        limits = context_report(body)["limits"]
        assert f"slot {own}, this thread's, busy for 0.3 s: sent to slot {free}" in limits[-1]
        provider.busy_slots = set()  # free again: back to its own (its cache)
        provider.enqueue(text_reply("ok"))
        await app.chat(chat_body(user("hi"), assistant_message("ok", "a1"), user("more", "u2")))
        assert provider.requests[-1]["id_slot"] == own
    finally:
        provider_probes.clear_caches()
        await app.close()


async def test_a_paste_that_does_not_fit_has_the_summary_asked_after_the_request_before_it(
    provider, tmp_path, sdk
):
    # the thread fit until this message: the summary it needs is asked after the previous
    # request (in place: a server reads the instruction only), waited for, and sent with it
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW="8192"))
    thread = [*long_thread(120, 14), user("Now make it a portrait.", "u_last")]
    provider.enqueue(text_reply("Done."), text_reply("Read it."))
    provider.summaries.append(Completion(summary_text("warm")))
    try:
        _, body = await app.chat(chat_body(*thread))
        assert context_report(body)["counts"]["dropped"] == 0
        await summaries_done(app)
        made = len(provider.requests)
        thread += [assistant_message("Done.", "a_last"), user("log " * 2600, "u_paste")]
        _, body = await app.chat(chat_body(*thread))
        sdk.check(body)
        summary_call, chat_call = provider.requests[made:]
        assert is_summary_request(summary_call) and "stream" in chat_call
        assert summary_call["messages"][:-1] == [
            *provider.requests[made - 1]["messages"],
            {"role": "assistant", "content": "Done."},
        ]  # the previous request and its answer, as a server's cache holds them
        statuses = [e["data"] for e in sse_events(body) if e["type"] == "data-status"]
        assert [s["done"] for s in statuses] == [False, True]
        report = context_report(body)
        assert report["summary"] is not None and report["counts"]["dropped"] == 0
    finally:
        await app.close()


async def test_on_a_llama_server_the_next_request_stops_a_summary_made_ahead(
    provider, tmp_path, sdk
):
    # the summary holds the thread's slot; a request that does not need it yet would queue
    # behind it (or move to a cold slot): it is stopped, and made again after the answer
    from comfyui_assistant.core.provider import provider_probes

    provider_probes.clear_caches()
    provider.props = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 4}
    env = env_for(provider, LLM_CONTEXT_WINDOW="8192", LLM_HISTORY_HIGH_WATERMARK="0.3")
    app = await start_app(tmp_path, {**env, "LLM_HISTORY_LOW_WATERMARK": "0.1"})
    thread = [*long_thread(120, 14), user("Now make it a portrait.", "u_last")]
    provider.enqueue(text_reply("Done."), text_reply("Next."))
    provider.summaries.append(Completion(summary_text("warm"), delay=5.0))
    try:
        await app.chat(chat_body(*thread))
        compactor = app.app[SERVICE].compactor
        assert compactor.running("thread-1") is not None  # being made ahead
        thread += [assistant_message("Done.", "a_last"), user("And now?", "u_next")]
        started = time.monotonic()
        _, body = await app.chat(chat_body(*thread))
        assert time.monotonic() - started < 2.0  # it did not wait for the summary
        assert sdk.check(body)["message"]["parts"][-1]["text"] == "Next."
        assert context_report(body)["summary"] is None  # (it fits: not needed yet)
        assert compactor.running("thread-1") is not None  # made again after the answer
    finally:
        provider_probes.clear_caches()
        await app.close()


async def test_with_summaries_off_a_thread_that_does_not_fit_is_not_said_to_be_summarized(
    provider, tmp_path, sdk
):
    env = env_for(provider, LLM_CONTEXT_WINDOW="8192", LLM_HISTORY_SUMMARIZE="0")
    app = await start_app(tmp_path, env)
    provider.enqueue(text_reply("Done."))
    try:
        _, body = await app.chat(chat_body(*long_thread(), user("Now a portrait.", "u_last")))
        sdk.check(body)
        assert not [e for e in sse_events(body) if e["type"] == "data-status"]
        assert context_report(body)["counts"]["dropped"] > 0  # the oldest left out instead
        assert not any(is_summary_request(r) for r in provider.requests)
    finally:
        await app.close()

"""The `delegate` tool: a child model with a fresh context, its own tool loop and budget, only
its result in the parent's context, its trace stored and served, its failures returned as
results the parent can act on, and stopped with the parent. Parent and child both talk to the
scripted provider (their requests come in order: the parent's step, the child's steps, the
parent's next step); every stream is checked by the real AI SDK client."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from comfyui_assistant.core.chat.delegate_result import parse_answer
from comfyui_assistant.core.chat.delegation import CHILD_TOOLS, helper_prompt

from .conftest import start_app
from .helpers import chat_body, sse_events, user
from .scripted_provider import (
    Hang,
    Pause,
    ScriptedProvider,
    Status,
    Stream,
    chunk,
    error_body,
    text_reply,
    usage_chunk,
)
from .test_chat_cancel import wait_for
from .test_chat_tools import call, calls_reply, tool_parts

TASK = {"task": "Which upscale nodes are installed and what do they take?", "context": "SDXL"}
ANSWER = {"answer": "Use ImageUpscaleWithModel.", "facts": ["ImageUpscaleWithModel: image"]}


def delegate_call(id: str = "d1", args: dict[str, Any] | None = None) -> Stream:
    return calls_reply(call("delegate", args or TASK, id))


def tool_names(request: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools", [])}


def preliminary_outputs(body: str) -> list[dict[str, Any]]:
    return [
        e["output"]
        for e in sse_events(body)
        if e["type"] == "tool-output-available" and e.get("preliminary")
    ]


async def env_app(tmp_path, provider, **env: str):
    base = {
        "LLM_BASE_URL": provider.base_url,
        "LLM_MODEL": "scripted-model",
        "LLM_CONTEXT_WINDOW": "32768",
    }
    return await start_app(tmp_path / "data", {**base, **env})


async def test_the_child_runs_afresh_and_only_its_result_enters_the_parent(
    assistant, provider, sdk
):
    provider.enqueue(
        delegate_call(),
        calls_reply(call("searchInstalledNodes", {"query": "upscale"}, "c1")),
        calls_reply(call("getNodeDefinition", {"nodeType": "ImageUpscaleWithModel"}, "c2")),
        text_reply("Found it.\n```json\n" + json.dumps(ANSWER) + "\n```"),
        text_reply("Use ImageUpscaleWithModel."),
    )
    status, body = await assistant.chat(chat_body(user("how do I upscale?")))
    assert status == 200
    result = sdk.check(body)
    assert result["autoResubmit"] is False
    (part,) = tool_parts(result["message"])
    output = part["output"]
    assert part["state"] == "output-available" and "preliminary" not in part
    assert output["ok"] is True and output["format"] == "json"
    assert (output["answer"], output["facts"]) == (ANSWER["answer"], ANSWER["facts"])
    assert output["sources"] == [
        "searchInstalledNodes: upscale",
        "getNodeDefinition: ImageUpscaleWithModel",
    ]
    assert output["usage"]["steps"] == 3 and output["usage"]["tokens"] > 0

    parent_first, child_first, child_second, _, parent_next = provider.requests
    # the child's context: its own prompt and the task, never the parent's messages
    child_messages = child_first["messages"]
    assert [m["role"] for m in child_messages] == ["system", "user"]
    assert child_messages[0]["content"].startswith(helper_prompt())
    assert child_messages[1]["content"] == f"Task: {TASK['task']}\n\nFrom the conversation:\nSDXL"
    assert "how do I upscale?" not in json.dumps(child_messages)
    # the child's tools: lookups only (no graph tools, no delegate), as the registry has them
    assert tool_names(child_first) <= CHILD_TOOLS and "searchInstalledNodes" in tool_names(
        child_first
    )
    assert "delegate" in tool_names(parent_first) and "addNode" in tool_names(parent_first)
    # the child's own loop: each step extends its previous request
    assert child_second["messages"][:2] == child_messages
    # the parent's next step gets the result only, as its tool message
    added = parent_next["messages"][len(parent_first["messages"]) :]
    assert [m["role"] for m in added] == ["assistant", "tool"]
    assert json.loads(added[1]["content"]) == output
    assert "ImageUpscaleWithModel" not in json.dumps(parent_next["messages"][:-2])

    # progress streamed as preliminary outputs: the tools as they ran, the steps
    progress = preliminary_outputs(body)
    assert progress[0] == {
        "status": "running",
        "task": TASK["task"],
        "steps": 0,
        "tools": [],
        "usage": progress[0]["usage"],
    }
    assert {"name": "getNodeDefinition", "args": "ImageUpscaleWithModel", "state": "done"} in (
        progress[-1]["tools"]
    )


async def test_a_child_that_answers_in_prose_still_returns_a_result(assistant, provider, sdk):
    provider.enqueue(
        delegate_call(),
        text_reply("ImageUpscaleWithModel is installed; it takes an image and a model."),
        text_reply("Done."),
    )
    _, body = await assistant.chat(chat_body(user("upscale?")))
    (part,) = tool_parts(sdk.check(body)["message"])
    assert part["output"]["ok"] is True and part["output"]["format"] == "text"
    assert part["output"]["answer"].startswith("ImageUpscaleWithModel is installed")
    assert part["output"]["facts"] == []


async def test_what_the_child_cites_reaches_the_parent_renumbered(assistant, provider, sdk):
    # the child reads two docs (its [1] and [2]) and cites [2]; the parent's thread already
    # has [1] of its own: the cited document comes with the result as [2] of the parent's
    # numbering, its text cut, and the answer says [2]; what it read but did not cite stays out
    provider.enqueue(
        calls_reply(call("readDocumentation", {"nodeType": "KSampler"}, "p1")),
        delegate_call("d1"),
        calls_reply(
            call("readDocumentation", {"nodeType": "KSampler"}, "c1"),
            call("readDocumentation", {"nodeType": "VAEDecode"}, "c2"),
        ),
        text_reply(json.dumps({"answer": "VAEDecode turns latents into images [2].", "facts": [
            "VAEDecode needs a VAE [2]; see also [7]"]})),
        text_reply("VAEDecode decodes the latent [2]."),
    )  # fmt: skip
    _, body = await assistant.chat(chat_body(user("what decodes latents?")))
    message = sdk.check(body)["message"]
    outputs = [p["output"] for p in tool_parts(message)]
    assert [d["citation_id"] for d in outputs[0]["documents"]] == [1]  # the parent's own
    result = outputs[1]
    assert result["answer"] == "VAEDecode turns latents into images [2]."
    assert result["facts"] == ["VAEDecode needs a VAE [2]; see also [7]"]  # [7]: none of its
    (doc,) = result["documents"]
    assert doc["citation_id"] == 2 and doc["title"].startswith("VAE Decode")
    assert doc["metadata"]["node_type"] == "VAEDecode" and len(doc["contents"]) <= 600
    # the parent's next request carries the result with its documents, numbered on
    assert json.loads(provider.requests[-1]["messages"][-1]["content"]) == result


def test_the_answer_is_read_from_json_wherever_the_child_put_it():
    assert parse_answer('{"answer": "a", "facts": ["x", 3]}') == ("a", ["x", "3"], "json")
    assert parse_answer('I found: {"answer": "b"} ok') == ("b", [], "json")
    assert parse_answer("```json\n{not json\n```") == ("{not json", [], "text")
    assert parse_answer('{"other": 1} plain') == ('{"other": 1} plain', [], "text")
    long = parse_answer("x" * 5000)[0]
    assert len(long) == 3000 and long.endswith("…")


async def test_the_step_budget_makes_the_last_step_answer(provider, tmp_path, sdk):
    app = await env_app(tmp_path, provider, LLM_DELEGATE_MAX_STEPS="2")
    try:
        provider.enqueue(
            delegate_call(),
            calls_reply(call("searchInstalledNodes", {"query": "upscale"}, "c1")),
            calls_reply(call("searchInstalledNodes", {"query": "more"}, "c2")),  # not offered
            text_reply("I will do the lookups myself."),
        )
        _, body = await app.chat(chat_body(user("upscale?")))
        (part,) = tool_parts(sdk.check(body)["message"])
        assert tool_names(provider.requests[2]) == set()  # the child's last step: no tools
        output = part["output"]
        assert output["ok"] is False and "limit of 2 steps" in output["error"]
        assert "do the remaining lookups yourself" in output["error"]
        assert len(provider.requests) == 4  # the parent went on
    finally:
        await app.close()


async def test_the_token_budget_wraps_up_then_stops(provider, tmp_path, sdk):
    app = await env_app(tmp_path, provider, LLM_DELEGATE_MAX_TOKENS="1000")
    try:
        search = call("searchInstalledNodes", {"query": "upscale"}, "c1")
        provider.enqueue(
            delegate_call("d1"),
            # 800 of 1,000 tokens spent: past 75%, the next step offers no tools
            Stream([*calls_reply(search).chunks, usage_chunk(790, 10)]),
            text_reply(json.dumps(ANSWER), usage=(900, 50)),  # over the budget on its answer
            text_reply("ok"),
        )
        _, body = await app.chat(chat_body(user("upscale?")))
        (part,) = tool_parts(sdk.check(body)["message"])
        assert tool_names(provider.requests[2]) == set()
        output = part["output"]
        assert output["ok"] is False and "over its budget of 1,000" in output["error"]
        assert output["answer"] == ANSWER["answer"]  # what it found is kept
        assert output["usage"]["tokens"] == 1750
    finally:
        await app.close()


async def test_a_child_out_of_time_is_stopped_and_the_parent_recovers(provider, tmp_path, sdk):
    app = await env_app(tmp_path, provider, LLM_DELEGATE_TIMEOUT_SECONDS="1")
    try:
        provider.enqueue(delegate_call(), Hang(), text_reply("I looked it up myself."))
        started = time.monotonic()
        _, body = await app.chat(chat_body(user("upscale?")))
        assert time.monotonic() - started < 3
        assert provider.disconnects  # the child's request was closed
        message = sdk.check(body)["message"]
        (part,) = tool_parts(message)
        assert part["output"]["ok"] is False
        assert "ran out of time (1 s)" in part["output"]["error"]
        assert message["parts"][-1]["text"] == "I looked it up myself."
    finally:
        await app.close()


async def test_a_provider_error_in_the_child_is_a_result_not_a_crash(assistant, provider, sdk):
    provider.enqueue(
        delegate_call(),
        Status(500, error_body("model crashed")),
        text_reply("The helper failed; here is what I know."),
    )
    _, body = await assistant.chat(chat_body(user("upscale?")))
    message = sdk.check(body)["message"]
    (part,) = tool_parts(message)
    assert part["output"]["ok"] is False
    assert "HTTP 500" in part["output"]["error"] and "model crashed" in part["output"]["error"]
    assert sse_events(body)[-1] == {**sse_events(body)[-1], "finishReason": "stop"}


async def test_the_trace_is_stored_and_served_without_the_key(tmp_path, sdk):
    secret = "sk-delegate-secret-123456"
    provider = await ScriptedProvider(api_key=secret).start()
    app = await env_app(tmp_path, provider, LLM_API_KEY=secret)
    try:
        provider.enqueue(
            delegate_call("d7"),
            calls_reply(call("getAvailableModels", {"category": "upscale_models"}, "c1")),
            text_reply(json.dumps(ANSWER)),
            text_reply("ok"),
        )
        _, body = await app.chat(chat_body(user("upscale?")))
        sdk.check(body)
        base = app.base + "/api/assistant/threads/thread-1/delegations/"
        async with app.session.get(base + "d7") as resp:
            assert resp.status == 200
            text = await resp.text()
        trace = json.loads(text)["trace"]
        assert secret not in text
        assert (trace["threadId"], trace["toolCallId"], trace["status"]) == (
            "thread-1",
            "d7",
            "done",
        )
        assert trace["messageId"] == sse_events(body)[0]["messageId"]
        assert trace["task"] == TASK["task"] and trace["system"].startswith(helper_prompt())
        task, answer = trace["messages"]
        assert task["parts"][0]["text"].startswith("Task: ")
        assert [p["type"] for p in answer["parts"] if p["type"] != "step-start"] == [
            "tool-getAvailableModels",
            "text",
        ]
        assert trace["result"]["answer"] == ANSWER["answer"]
        assert trace["budget"] == {"steps": 6, "tokens": 40000, "seconds": 180.0}
        for path, status in (("nope", 404), ("x" * 201, 400)):
            async with app.session.get(base + path) as resp:
                assert resp.status == status, path
                assert "does not exist" in await resp.text() or status == 400
        async with app.session.get(app.base + "/api/assistant/threads/none/delegations/d7") as r:
            assert r.status == 404
    finally:
        await app.close()
        await provider.stop()


def slow_child() -> Stream:
    items: list[Any] = [chunk("thinking")]
    for i in range(100):
        items += [Pause(0.05), chunk(f" {i}")]
    return Stream([*items, chunk(finish_reason="stop")])


async def test_stop_cancels_the_parent_and_its_child_at_once(assistant, provider):
    provider.enqueue(
        delegate_call(),
        calls_reply(call("searchInstalledNodes", {"query": "upscale"}, "c1")),
        slow_child(),
    )
    resp = await assistant.post("/api/assistant/chat", chat_body(user("upscale?")))
    async for line in resp.content:  # the child's progress: its search ran
        if b'"preliminary":true' in line and b'"state":"done"' in line:
            break
    await wait_for(lambda: len(provider.requests) == 3)  # the child's second step is talking
    await asyncio.sleep(0.1)
    stopped = time.monotonic()
    resp.close()
    await wait_for(lambda: provider.disconnects)
    assert provider.disconnects[0] - stopped < 0.5
    assert provider.finished_streams == 2  # the parent's step and the child's first
    assert len(provider.requests) == 3  # nothing more was asked after the stop

    async def trace() -> Any:
        url = assistant.base + "/api/assistant/threads/thread-1/delegations/d1"
        async with assistant.session.get(url) as r:
            return (await r.json()).get("trace") if r.status == 200 else None

    for _ in range(100):
        if (found := await trace()) is not None:
            break
        await asyncio.sleep(0.02)
    assert found["status"] == "cancelled" and found["result"] is None


async def test_the_panel_resends_an_interrupted_delegation_as_unfinished(assistant, provider):
    # a stop leaves the part with its last interim output: the model reads it as unfinished
    part = {
        "type": "tool-delegate",
        "toolCallId": "d1",
        "state": "output-available",
        "input": TASK,
        "output": {"status": "running", "task": "t", "steps": 1, "tools": [], "usage": {}},
        "preliminary": True,
        "providerExecuted": True,
    }
    stopped = {"id": "a1", "role": "assistant", "parts": [{"type": "step-start"}, part]}
    provider.enqueue(text_reply("ok"))
    status, _ = await assistant.chat(chat_body(user("q"), stopped, user("again", "u2")))
    assert status == 200
    tool = next(m for m in provider.requests[0]["messages"] if m["role"] == "tool")
    assert tool["content"].startswith("The tool was stopped before it finished")


def test_delegate_is_offered_from_the_medium_profile_up():
    # (its definition does not fit the small profile's 1,200-token budget: test_prompt_profile)
    from comfyui_assistant.core.chat.chat_plan import offered_names
    from comfyui_assistant.core.context.prompt_profile import FULL, MEDIUM, SMALL

    assert "delegate" not in offered_names(SMALL, False)
    assert "delegate" in offered_names(MEDIUM, False) and "delegate" in offered_names(FULL, False)
    assert "delegate" not in CHILD_TOOLS and "createUserSkill" not in CHILD_TOOLS
    assert "searchConversation" not in CHILD_TOOLS  # (the helper sees only what it is given)

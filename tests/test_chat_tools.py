"""Server-side tools run inside the same /api/assistant/chat response, in a loop with a step limit;
`/skill` injects a skill for one turn. Everything checked by the real AI SDK client."""

from __future__ import annotations

import json
from typing import Any

from comfyui_assistant.core.chat.chat_plan import offered_names, registry_tools
from comfyui_assistant.core.context.prompt_profile import FULL, PROFILES
from comfyui_assistant.core.knowledge.skills import SYSTEM_SKILLS_DIR
from comfyui_assistant.tools_definitions import TOOLS

from .conftest import start_app
from .helpers import chat_body, content_parts, sent, sse_events, types, user
from .scripted_provider import Stream, call_piece, chunk, text_reply


def call(name: str, args: dict, id: str, index: int = 0) -> dict:
    return call_piece(index, id=id, name=name, arguments=json.dumps(args))


def calls_reply(*calls: dict) -> Stream:
    return Stream([chunk(tool_calls=list(calls)), chunk(finish_reason="tool_calls")])


def tool_parts(message: dict) -> list[dict]:
    return [p for p in message["parts"] if p["type"].startswith("tool-")]


async def test_server_tools_loop_inside_one_response(assistant, provider, sdk):
    provider.enqueue(
        calls_reply(call("searchInstalledNodes", {"query": "upscale with model"}, "s1")),
        calls_reply(call("getNodeDefinition", {"nodeType": "ImageUpscaleWithModel"}, "s2")),
        text_reply("Use ImageUpscaleWithModel with an UpscaleModelLoader."),
    )
    status, body = await assistant.chat(chat_body(user("how do I upscale?")))
    assert status == 200
    result = sdk.check(body)
    assert result["autoResubmit"] is False  # nothing left for the panel: no endless resubmit
    message = result["message"]
    assert [p["type"] for p in content_parts(message)] == [
        "step-start",
        "tool-searchInstalledNodes",
        "step-start",
        "tool-getNodeDefinition",
        "step-start",
        "text",
    ]
    search, definition = tool_parts(message)
    assert (search["state"], search["providerExecuted"]) == ("output-available", True)
    assert search["output"]["results"][0]["type"] == "ImageUpscaleWithModel"
    assert definition["output"]["type"] == "ImageUpscaleWithModel"
    assert [i["name"] for i in definition["output"]["inputs"]] == ["upscale_model", "image"]
    assert sse_events(body)[-1]["finishReason"] == "stop"

    # Each step's request extends the previous one: the same prefix, then the new round.
    first, second, third = (sent(provider, i) for i in range(3))
    assert second[: len(first)] == first
    assert third[: len(second)] == second
    round_two = second[len(first) :]
    assert round_two[0]["tool_calls"][0]["function"] == {
        "name": "searchInstalledNodes",
        "arguments": '{"query":"upscale with model"}',
    }
    assert round_two[1]["role"] == "tool" and round_two[1]["tool_call_id"] == "s1"
    assert json.loads(round_two[1]["content"]) == search["output"]

    # The stored thread holds the same message the client assembled.
    async with assistant.session.get(assistant.base + "/api/assistant/threads/thread-1") as r:
        stored = (await r.json())["messages"]
    assert stored[1]["parts"] == message["parts"]  # the context report included


async def test_a_panel_call_ends_the_response_after_the_server_calls_ran(assistant, provider, sdk):
    provider.enqueue(
        calls_reply(
            call("getAvailableModels", {}, "m1"),
            call("addNode", {"nodeType": "CheckpointLoaderSimple"}, "p1", index=1),
        ),
        text_reply("Added the loader."),
    )
    _, body = await assistant.chat(chat_body(user("add a checkpoint loader")))
    result = sdk.check(body)
    models, add = tool_parts(result["message"])
    assert (models["state"], models["providerExecuted"]) == ("output-available", True)
    assert (add["state"], add.get("providerExecuted")) == ("input-available", None)
    assert sse_events(body)[-1]["finishReason"] == "tool-calls"
    assert result["autoResubmit"] is False  # waits for the panel to run addNode
    assert len(provider.requests) == 1

    # The panel runs addNode, adds its output, and the client resubmits automatically.
    add.update(state="output-available", output={"nodeId": 4})
    assert sdk.check("data: [DONE]\n\n", result["message"])["autoResubmit"] is True
    _, body = await assistant.chat(
        chat_body(user("add a checkpoint loader"), result["message"], messageId="x")
    )
    final = sdk.check(body, result["message"])
    assert content_parts(final["message"])[-1]["text"] == "Added the loader."
    assert final["autoResubmit"] is False
    results = [m for m in sent(provider, 1) if m["role"] == "tool"]
    assert [(m["tool_call_id"], json.loads(m["content"])) for m in results] == [
        ("m1", models["output"]),
        ("p1", {"nodeId": 4}),
    ]


async def test_tool_errors_go_back_to_the_model(assistant, provider, sdk):
    provider.enqueue(
        calls_reply(call("getNodeDefinition", {"nodeType": "KSamplr"}, "e1")),
        text_reply("I meant KSampler."),
    )
    _, body = await assistant.chat(chat_body(user("what does KSamplr take?")))
    (part,) = tool_parts(sdk.check(body)["message"])
    assert part["state"] == "output-error"
    assert part["errorText"].startswith("There is no installed node type 'KSamplr'. Did you mean")
    assert "KSampler" in part["errorText"]
    tool_message = sent(provider, 1)[-1]
    assert tool_message == {
        "role": "tool",
        "tool_call_id": "e1",
        "content": f"Error: {part['errorText']}",
    }


async def test_the_step_limit_forces_a_final_answer_without_tools(provider, tmp_path, sdk):
    env = {
        "LLM_BASE_URL": provider.base_url,
        "LLM_MODEL": "scripted-model",
        "LLM_MAX_TOOL_STEPS": "2",
    }
    provider.enqueue(
        calls_reply(call("listSystemSkills", {}, "l1")),
        text_reply("Here is what I found."),
    )
    app = await start_app(tmp_path, env)
    try:
        _, body = await app.chat(chat_body(user("loop forever")))
    finally:
        await app.close()
    result = sdk.check(body)
    assert len(provider.requests) == 2
    assert "tools" in provider.requests[0] and "tools" not in provider.requests[1]
    assert content_parts(result["message"])[-1]["text"] == "Here is what I found."
    assert result["autoResubmit"] is False


LORA_SKILL = "1. Add LoraLoader after the checkpoint.\n2. Set strength 0.8."


async def _asked_to_save_a_skill(assistant, provider, sdk) -> dict[str, Any]:
    """The model calls createUserSkill: the answer ends with the call waiting for the user's
    approval (the AI SDK's own approval part, as its client parser reads our stream)."""
    args = {"name": "My LoRA setup", "description": "Add my usual LoRA", "body": LORA_SKILL}
    provider.enqueue(calls_reply(call("createUserSkill", args, "c1")))
    _, body = await assistant.chat(chat_body(user("remember how I add a lora")))
    answer = sdk.check(body)["message"]
    (part,) = tool_parts(answer)
    assert part["state"] == "approval-requested" and "output" not in part
    assert part["approval"] == {
        "id": "approval_c1",
        "requestReason": "Save a new skill “My LoRA setup” to your user skills "
        f"({len(LORA_SKILL)} characters of instructions).",
    }
    assert len(provider.requests) == 1  # the answer waits for the user
    return answer


def _answered(answer: dict[str, Any], approved: bool) -> dict[str, Any]:
    """The answer as the panel resends it once the user answered (addToolApprovalResponse)."""
    parts = [
        {**p, "state": "approval-responded", "approval": {**p["approval"], "approved": approved}}
        if p.get("toolCallId") == "c1"
        else p
        for p in answer["parts"]
    ]
    return {**answer, "parts": parts}


async def test_saving_a_user_skill_waits_for_the_user_and_runs_when_allowed(
    assistant, provider, sdk, tmp_path
):
    answer = await _asked_to_save_a_skill(assistant, provider, sdk)
    skill = tmp_path / "data" / "skills" / "my-lora-setup" / "SKILL.md"
    assert not skill.exists()  # nothing saved before the user allows it
    provider.enqueue(text_reply("Saved."))
    thread = [user("remember how I add a lora"), _answered(answer, True)]
    _, body = await assistant.chat(chat_body(*thread))
    (part,) = tool_parts(sdk.check(body, thread[-1])["message"])
    assert part["state"] == "output-available" and part["output"] == {
        "created": {
            "slug": "my-lora-setup",
            "name": "My LoRA setup",
            "description": "Add my usual LoRA",
        }
    }
    assert skill.read_text().rstrip().endswith(LORA_SKILL)
    tool = [m for m in sent(provider, 1) if m["role"] == "tool"]
    assert json.loads(tool[0]["content"])["created"]["slug"] == "my-lora-setup"
    # append-only: the request after the approval is the one before, plus the call and its result
    before, after = provider.requests[0]["messages"], provider.requests[1]["messages"]
    assert after[: len(before)] == before and [m["role"] for m in after[len(before) :]] == [
        "assistant",
        "tool",
    ]


async def test_a_denied_skill_is_not_saved_and_the_model_hears_it(
    assistant, provider, sdk, tmp_path
):
    answer = await _asked_to_save_a_skill(assistant, provider, sdk)
    provider.enqueue(text_reply("All right, I won't save it."))
    thread = [user("remember how I add a lora"), _answered(answer, False)]
    _, body = await assistant.chat(chat_body(*thread))
    (part,) = tool_parts(sdk.check(body, thread[-1])["message"])
    assert part["state"] == "output-denied"
    assert not (tmp_path / "data" / "skills" / "my-lora-setup").exists()
    tool = [m for m in sent(provider, 1) if m["role"] == "tool"]
    assert tool[0]["content"] == "The user denied this tool call; it did not run."


async def test_skill_command_injects_the_skill_for_that_turn(assistant, provider, sdk):
    provider.enqueue(text_reply("Building it."))
    _, body = await assistant.chat(chat_body(user("/skill txt2img a cat in a hat")))
    sdk.check(body)
    skill_body = (SYSTEM_SKILLS_DIR / "txt2img" / "SKILL.md").read_text().split("---", 2)[2]
    assert sent(provider)[-1] == {
        "role": "user",
        "content": 'The user activated the skill "Text to image" (txt2img) with /skill. Follow '
        'its instructions for this request.\n\n<skill name="txt2img">\n'
        f"{skill_body.strip()}\n</skill>\n\nThe user's request: a cat in a hat",
    }
    # what the user typed is what the thread keeps
    async with assistant.session.get(assistant.base + "/api/assistant/threads/thread-1") as r:
        stored = (await r.json())["messages"][0]
    assert stored["parts"] == [{"type": "text", "text": "/skill txt2img a cat in a hat"}]


async def test_skill_command_by_name_and_without_a_request(assistant, provider, sdk):
    provider.enqueue(text_reply("ok"))
    _, body = await assistant.chat(chat_body(user("/skill Image to image")))
    sdk.check(body)
    content = sent(provider)[-1]["content"]
    assert content.startswith('The user activated the skill "Image to image" (img2img)')
    assert content.endswith("The user's request: Apply this skill to the current workflow.")


async def test_unknown_skill_answers_without_the_model(assistant, provider, sdk):
    _, body = await assistant.chat(chat_body(user("/skill txt2im please")))
    result = sdk.check(body)
    assert provider.requests == []
    assert types(sse_events(body))[1:] == [
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
    ]
    text = content_parts(result["message"])[-1]["text"]
    assert text.startswith("There is no skill called 'txt2im'. Closest: txt2img")
    assert "Skills: img2img, inpaint, model-loading, model_flux" in text


async def test_the_shared_tool_definitions_stay_as_the_registry_renders_them(assistant, provider):
    """Requests share one rendering of the registry's tools: a panel's extra tool joins only
    its own request, and nothing on the way to the model edits a shared definition."""
    provider.enqueue(text_reply("one"), text_reply("two"))
    extra = {"panelExtra": {"description": "only in the first request", "parameters": {}}}
    status, _ = await assistant.chat(chat_body(user("hi"), id="t1", tools=extra))
    assert status == 200
    status, _ = await assistant.chat(chat_body(user("hi"), id="t2"))
    assert status == 200

    def names(i: int) -> list[str]:
        return [t["function"]["name"] for t in provider.requests[i]["tools"]]

    assert names(0) == [*names(1), "panelExtra"]
    for profile in PROFILES:
        for cut in (False, True):
            offered = offered_names(profile, cut)
            shared, _ = registry_tools(offered, profile.compact)
            assert list(shared) == [
                spec.openai_tool(profile.compact) for spec in TOOLS if spec.name in offered
            ]
    # (a 32K window: the full profile)
    assert provider.requests[1]["tools"] == list(registry_tools(offered_names(FULL, False))[0])


async def test_a_step_runs_at_most_its_limit_of_tool_calls_and_answers_the_rest(
    assistant, provider, sdk
):
    """A model calling a tool 40 times in one step: 32 run, the other 8 are answered "not
    run" with the limit, so every call has a result and the model may go on next step."""
    many = [call("listSystemSkills", {}, f"c{i}", index=i) for i in range(40)]
    provider.enqueue(calls_reply(*many), text_reply("Done."))
    _, body = await assistant.chat(chat_body(user("list the skills, many times")))
    result = sdk.check(body)
    parts = tool_parts(result["message"])
    assert [p["state"] for p in parts] == ["output-available"] * 32 + ["output-error"] * 8
    assert parts[32]["errorText"] == (
        "Not run: a step may make at most 32 tool calls and this was call 33. Make the calls "
        "still needed in the next step."
    )
    assert content_parts(result["message"])[-1]["text"] == "Done."
    answered = [m["tool_call_id"] for m in sent(provider, 1) if m["role"] == "tool"]
    assert answered == [f"c{i}" for i in range(40)]  # every call has its result

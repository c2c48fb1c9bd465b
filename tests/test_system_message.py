"""The system message as the provider receives it: its sections, their caps, the user's edits,
continuation mode, and byte-identical output while the inputs do not change."""

from __future__ import annotations

from comfyui_assistant.core.context.system_prompt import (
    UserContext,
    UserContextLimits,
    user_context_block,
)
from comfyui_assistant.core.tools.server_tools import ToolContext
from comfyui_assistant.core.tools.tool_registry import run_server_tool
from comfyui_assistant.standalone import SERVICE

from .conftest import start_app
from .helpers import chat_body, content_parts, user
from .scripted_provider import Stream, call_piece, chunk, text_reply


async def put(app, path, body):
    async with app.session.put(app.base + path, json=body) as resp:
        assert resp.status == 200, await resp.text()


async def post(app, path, body):
    async with app.session.post(app.base + path, json=body) as resp:
        assert resp.status == 201, await resp.text()
        return await resp.json()


async def system_of(app, provider, *messages) -> str:
    provider.enqueue(text_reply("ok"))
    status, _ = await app.chat(chat_body(*messages))
    assert status == 200
    return str(provider.requests[-1]["messages"][0]["content"])


async def test_the_default_system_message_has_every_section(assistant, provider):
    system = await system_of(assistant, provider, user("hi"))
    headings = [line for line in system.splitlines() if line.startswith(("# ", "## "))]
    assert headings == [
        "# Role",
        "## Identity",
        "## Style",
        "## Reporting",
        "# Tools",
        "## Start from a template",
        "## Read first",
        "## Adding nodes",
        "## Widgets",
        "## Connections",
        "## Common edits",
        "## Verify and run",
        "## Common errors",
        "## Skills",
        "## Old results",
        "# Guardrails",
        "## Protect the graph",
        "## No invention",
        "## Missing pieces",
        "## Heavy jobs",
        "## Skill index",
        "## Environment",
        "## Tools this request",
    ]
    assert "## Environment\n478 node types in 2 packages, 0 models" in system
    assert "- txt2img: " in system and "model_flux" in system
    assert "Wan 2.1" not in system  # model-family skills are read on demand, never inlined
    assert "- Lookup tools (getAvailableModels, getNodeDefinition, readDocumentation," in system
    assert "## The user" not in system and "## Citations" not in system
    assert len(system) < 8000


async def test_user_context_is_included_within_its_caps(assistant, provider, tmp_path):
    for i in range(15):
        await post(assistant, "/api/assistant/user-context/rules", {"text": f"Rule number {i}."})
    await put(assistant, "/api/assistant/user-context/soul", {"text": "You are calm and precise."})
    await put(assistant, "/api/assistant/user-context/goals", {"text": "Learn Flux. " * 200})
    await put(
        assistant, "/api/assistant/user-context/preferences", {"language": "en", "units": "px"}
    )
    system = await system_of(assistant, provider, user("hi"))
    block = system[system.index("## The user") :].split("\n## ")[0]
    lines = block.splitlines()
    assert lines[:2] == ["## The user", "Rules (always follow):"]
    assert lines[2:14] == [f"- Rule number {i}." for i in range(12)]
    assert lines[14] == "- (3 more rules omitted)"
    assert lines[15:17] == ["About you (SOUL.md):", "You are calm and precise."]
    assert lines[17] == "The user's goals (goals.md):"
    assert lines[18].endswith("[…cut]") and len(lines[18]) <= 600
    assert lines[19] == "Preferences: language: en; units: px"
    assert len(block) <= 2500 + len("## The user\n")


def test_the_user_block_total_cap_cuts_at_a_line_end():
    user = UserContext(rules=[f"Keep rule {i} in mind at all times." for i in range(12)])
    assert user_context_block(user, UserContextLimits(total=200)) == (
        "## The user\nRules (always follow):\n"
        + "".join(f"- Keep rule {i} in mind at all times.\n" for i in range(3))
        + "- Keep rule 3 in mind at all times. […cut]"
    )


async def test_the_users_system_prompt_replaces_the_shipped_role(assistant, provider):
    await put(
        assistant, "/api/assistant/user-context/system-prompt", {"text": "You are Ada, terse."}
    )
    system = await system_of(assistant, provider, user("hi"))
    assert system.startswith("You are Ada, terse.\n\n# Tools\n")
    assert "# Role" not in system and "## Guardrails" not in system
    assert "# Guardrails" in system  # only the role text is replaced
    await put(assistant, "/api/assistant/user-context/system-prompt", {"text": None})
    assert (await system_of(assistant, provider, user("hi"))).startswith("# Role")


async def test_a_small_cap_keeps_whole_sections_and_offers_the_rest_on_demand(
    provider, tmp_path, sdk
):
    env = {
        "LLM_BASE_URL": provider.base_url,
        "LLM_MODEL": "scripted-model",
        "LLM_SYSTEM_CONTEXT_MAX_CHARS": "1500",
        "LLM_CONTEXT_WINDOW": "32768",  # (the full guidance: a small window gets the compact)
    }
    app = await start_app(tmp_path, env)
    try:
        system = await system_of(app, provider, user("hi"))
        note = [line for line in system.splitlines() if line.startswith("Sections not loaded")]
        assert len(note) == 1 and "Guardrails › Heavy jobs" in note[0]
        names = [t["function"]["name"] for t in provider.requests[-1]["tools"]]
        assert "readSystemContext" in names
        args = '{"section": "Guardrails › Heavy jobs"}'
        provider.enqueue(
            Stream(
                [
                    chunk(
                        tool_calls=[
                            call_piece(0, id="r1", name="readSystemContext", arguments=args)
                        ]
                    ),
                    chunk(finish_reason="tool_calls"),
                ]
            ),
            text_reply("noted"),
        )
        _, body = await app.chat(chat_body(user("what about video jobs?")))
        part = content_parts(sdk.check(body)["message"])[1]
        assert part["output"]["text"].startswith("## Heavy jobs\n")
    finally:
        await app.close()


async def test_continuation_mode_sends_a_short_message_after_the_first_turn(provider, tmp_path):
    env = {
        "LLM_BASE_URL": provider.base_url,
        "LLM_MODEL": "scripted-model",
        "LLM_SYSTEM_PROMPT_MODE": "continuation",
        "LLM_CONTEXT_WINDOW": "32768",
    }
    app = await start_app(tmp_path, env)
    try:
        await post(app, "/api/assistant/user-context/rules", {"text": "Never use SDXL."})
        first = await system_of(app, provider, user("hi"))
        later = await system_of(
            app,
            provider,
            user("hi"),
            {"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": "ok"}]},
            user("and now?", id="u2"),
        )
    finally:
        await app.close()
    assert first.startswith("# Role") and "Never use SDXL." in first
    assert len(later) < len(first) // 3
    assert later.startswith("You are ComfyUI Assistant; continue this conversation")
    assert "Tool rules: read the workflow before editing" in later
    assert "The user's rules: Never use SDXL." in later


async def test_a_lookup_changes_nothing_before_it_and_its_result_asks_for_citations(
    assistant, provider
):
    # the request before a lookup stays byte-identical (no system section appears later):
    # the result of a tool to cite carries the request to cite it
    lookup = {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {
                "type": "tool-readDocumentation",
                "toolCallId": "d1",
                "state": "output-available",
                "input": {"nodeType": "KSampler"},
                "output": {"text": "KSampler denoises."},
                "providerExecuted": True,
            },
            {"type": "text", "text": "It denoises."},
        ],
    }
    before = await system_of(assistant, provider, user("what is KSampler?"))
    after = await system_of(assistant, provider, user("what is KSampler?"), lookup, user("and?"))
    assert before == after
    service = assistant.app[SERVICE]
    ctx = ToolContext(
        thread_id="t", threads=await service.threads(), system_skills=service.system_skills,
        user_skills=service.user_skills, environment=service.environment,
        read_context_section=lambda _: None,
    )  # fmt: skip
    docs = await run_server_tool("readDocumentation", {"nodeType": "KSampler"}, ctx)
    assert docs["cite"] == "Cite what you use from these by citation_id, like [1]."
    assert docs["documents"][0]["citation_id"] == 1
    # node search results are structured data to build with, not documents to cite
    found = await run_server_tool("searchInstalledNodes", {"query": "sampler"}, ctx)
    assert "cite" not in found and found["results"]
    models = await run_server_tool("getAvailableModels", {}, ctx)
    assert "cite" not in models


async def test_shipped_defaults_are_installed_and_their_comments_never_sent(
    assistant, provider, tmp_path
):
    system = await system_of(assistant, provider, user("hi"))
    soul = (tmp_path / "data" / "SOUL.md").read_text()
    assert soul.startswith("<!--\nSOUL.md: who the assistant is for you.")
    assert (tmp_path / "data" / "goals.md").is_file()
    assert "SOUL.md" not in system and "## The user" not in system
    await put(
        assistant, "/api/assistant/user-context/soul", {"text": soul + "\nI have 8 GB of VRAM.\n"}
    )
    system = await system_of(assistant, provider, user("hi"))
    assert "About you (SOUL.md):\nI have 8 GB of VRAM." in system
    assert "<!--" not in system

"""Prompt profiles: a small window gets the compact instructions and brief tool definitions
within the issue's targets, the profile depends on the window alone (stable through a thread),
and the brief definitions accept the same arguments as the full ones."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from comfyui_assistant.core.chat.chat_plan import (
    SkillUse,
    build_plan,
    offered_names,
    registry_tools,
)
from comfyui_assistant.core.chat.chat_request import parse_chat_request
from comfyui_assistant.core.chat.chat_sources import Sources, list_skills, load_context
from comfyui_assistant.core.context.prompt_profile import FULL, MEDIUM, PROFILES, SMALL, profile_for
from comfyui_assistant.core.context.system_prompt import UserContext
from comfyui_assistant.core.knowledge.context_files import SYSTEM_CONTEXT_DIR
from comfyui_assistant.core.knowledge.skills import SkillDirectory
from comfyui_assistant.core.tokens.tokens import counter_for
from comfyui_assistant.tools_definitions import TOOLS

from .conftest import start_app
from .helpers import chat_body, user
from .scripted_provider import ScriptedProvider, text_reply

COUNTER = counter_for("gpt-4o")
SKILLS = list_skills(SkillDirectory(SYSTEM_CONTEXT_DIR / "skills", False))


def sources(directory: Path = SYSTEM_CONTEXT_DIR, **kw: Any) -> Sources:
    return Sources(
        system_context=load_context(directory, {}, False),
        compact_context=load_context(directory, {}, False, compact=True),
        custom_system_prompt=None,
        system_skills=SKILLS,
        user_skills=kw.pop("user_skills", []),
        environment_line="2,416 node types in 31 packages, 42 models",
        user=kw.pop("user", UserContext()),
        environ=kw.pop("environ", {}),
    )


def plan_for(profile: Any, src: Sources | None = None, tools_usable: bool = True) -> Any:
    req = parse_chat_request(chat_body(user("Add a KSampler.", "u1")))
    return build_plan(req, src or sources(), True, SkillUse("u1"), profile, tools_usable)


def prompt_tokens(plan: Any) -> int:
    return COUNTER.text(plan.system) + COUNTER.tools(plan.tools)


def test_the_window_picks_the_profile_and_the_setting_overrides_it(caplog):
    assert [profile_for(w, {}) for w in (2048, 4096, 6144)] == [SMALL] * 3
    assert [profile_for(w, {}) for w in (6145, 8192, 12_288)] == [MEDIUM] * 3
    assert [profile_for(w, {}) for w in (12_289, 32_768, 1_000_000)] == [FULL] * 3
    assert profile_for(200_000, {"LLM_PROMPT_PROFILE": "small"}) is SMALL
    assert profile_for(4096, {"LLM_PROMPT_PROFILE": " Full "}) is FULL
    assert profile_for(4096, {"LLM_PROMPT_PROFILE": "auto"}) is SMALL
    with caplog.at_level(logging.WARNING, logger="comfyui_assistant"):
        assert profile_for(4096, {"LLM_PROMPT_PROFILE": "tiny"}) is SMALL
    assert "LLM_PROMPT_PROFILE='tiny'" in caplog.text


def test_system_prompt_and_tools_fit_the_targets_of_each_window_class():
    # the targets: at most 1,200 tokens at 4K and 2,000 at 8K (shipped guidance and
    # skills, an empty user context)
    small, medium, full = (prompt_tokens(plan_for(p)) for p in PROFILES)
    assert small <= 1200 and medium <= 2000
    assert small < medium < full
    assert full > 3000  # (what a 4K window paid before)


def test_each_profiles_tool_definitions_keep_within_its_stated_budget():
    # counted as the engine counts them (context_stages.fit_tools: the counter's `tools`),
    # with every tool the profile may offer (the reader of left-out guidance included);
    # a tool or description that passes the budget must make room first
    for profile in PROFILES:
        names = offered_names(profile, context_cut=True)
        tools, _ = registry_tools(names, profile.compact)
        tokens = counter_for("scripted-model").tools(list(tools))
        assert tokens <= profile.tool_budget, (profile.name, tokens, profile.tool_budget)
        assert len(tools) == len(names)  # (every offered tool counted)
    assert [p.tool_budget for p in PROFILES] == [1050, 1600, 3200]  # as the README states


def test_the_small_profile_offers_the_graph_and_lookup_tools_in_brief_form():
    plan = plan_for(SMALL)
    names = [t["function"]["name"] for t in plan.tools]
    assert {"getWorkflow", "addNode", "connectNodes", "setWidgetValues", "removeNodes"} <= set(
        names
    )
    assert {"searchInstalledNodes", "getNodeDefinition", "getAvailableModels"} <= set(names)
    assert "loadWorkflow" not in names and "createUserSkill" not in names
    by_name = {spec.name: spec for spec in TOOLS}
    for tool in plan.tools:
        function = tool["function"]
        assert function["description"] == by_name[function["name"]].brief
        assert "description" not in str(function["parameters"]) or function["name"] == (
            "createUserSkill"  # (a parameter of that name)
        )
    # the compact guidance, the skills by name, no per-group tool notes
    assert "Inside subgraphs ids are paths" in plan.system
    assert "Skills (getSystemSkill): img2img" in plan.system
    assert "## Tools this request" not in plan.system and "## Skill index" not in plan.system
    assert plan.profile == "small"


def test_brief_definitions_take_the_same_arguments_as_the_full_ones():
    def shape(schema: Any) -> Any:
        if isinstance(schema, dict):
            return {
                k: shape(v)
                for k, v in schema.items()
                # (the compact form leaves out words and lower bounds on lengths and counts:
                # tool_spec._BRIEF_DROPS; types, choices and numeric ranges stay)
                if k
                not in (
                    "description",
                    "additionalProperties",
                    "required",
                    "default",
                    "minLength",
                    "minItems",
                    "minProperties",
                )
            }
        if isinstance(schema, list):
            return [shape(v) for v in schema]
        return schema

    for spec in TOOLS:
        full, brief = spec.openai_tool()["function"], spec.openai_tool(True)["function"]
        assert shape(brief["parameters"]) == shape(full["parameters"]), spec.name
        assert brief["parameters"].get("required", []) == full["parameters"]["required"]
        assert len(brief["description"]) <= len(full["description"]), spec.name
        assert COUNTER.tools([brief]) < COUNTER.tools([full]), spec.name


def test_a_model_without_tools_gets_no_tools_and_no_tool_list():
    for profile in PROFILES:
        plan = plan_for(profile, tools_usable=False)
        assert plan.tools == [] and plan.server_tools == frozenset()
        assert "## Tools this request" not in plan.system


def test_the_user_context_is_capped_tighter_in_smaller_profiles():
    rules = [
        f"Rule number {i}: always keep the seed {i * 1111} unless I say otherwise."
        for i in range(12)
    ]
    src = sources(user=UserContext(rules=rules, soul="I make posters. " * 80))
    sizes = [len(plan_for(p, src).system) - len(plan_for(p).system) for p in PROFILES]
    assert sizes[0] < sizes[1] < sizes[2]
    assert sizes[0] <= SMALL.user_context_chars + 20


def test_a_system_context_folder_without_compact_guidance_uses_the_shipped_one(tmp_path):
    (tmp_path / "01_role.md").write_text("# Role\n\n## Me\nI am the user's own assistant.\n")
    plan = plan_for(SMALL, sources(tmp_path))
    assert "Inside subgraphs ids are paths" in plan.system
    assert "the user's own assistant" in plan_for(FULL, sources(tmp_path)).system
    own = tmp_path / "compact"
    own.mkdir()
    (own / "01_role.md").write_text("Tiny own guidance.\n")
    assert "Tiny own guidance." in plan_for(SMALL, sources(tmp_path)).system


@pytest.mark.parametrize(("window", "profile"), [(4096, "small"), (8192, "medium")])
async def test_a_thread_keeps_its_profile_while_the_correction_is_learned(
    tmp_path, window, profile
):
    # through /api/assistant/chat: the provider reports usage far from our count, the learned
    # correction changes, and every request of the thread still has the same system message
    # and tools (a changing prefix would be re-processed every turn)
    provider = await ScriptedProvider().start()
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_CONTEXT_WINDOW": str(window)}
    app = await start_app(tmp_path / "data", env)
    try:
        history: list[dict[str, Any]] = []
        for turn, reported in enumerate((3000, 900, 2500)):
            provider.enqueue(text_reply(f"answer {turn}", usage=(reported, 5)))
            history.append(user(f"question {turn}", f"u{turn}"))
            status, body = await app.chat(chat_body(*history))
            assert status == 200, body
            history.append(
                {
                    "id": f"a{turn}",
                    "role": "assistant",
                    "parts": [{"type": "text", "text": f"answer {turn}"}],
                }
            )
        requests = provider.requests
        assert len({str(r["messages"][0]) for r in requests}) == 1
        assert len({str(r["tools"]) for r in requests}) == 1
        names = [t["function"]["name"] for t in requests[0]["tools"]]
        assert ("loadWorkflow" in names) == (profile == "medium")
        # the context report the panel shows says so
        assert f"{profile} prompt profile for a {window:,}-token window" in body
    finally:
        await app.close()
        await provider.stop()


def test_every_profile_tells_the_model_to_answer_in_the_users_language():
    # (issue 27: a Chinese or Arabic user gets replies in it, at 4K too; the budgets above hold)
    for profile in PROFILES:
        assert "reply in the language the user writes in" in plan_for(profile).system.lower()

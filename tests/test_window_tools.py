"""What each window offers (issue 35, item 8): the README's table is the profiles' own, at 8K
the provider is offered findMissing and a scripted call to it runs end to end (the panel's scan
through our route, its result back to the model), and a tool the window lacks answers which
windows have it and what to do instead."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from comfyui_assistant.core.context.window_tools import (
    TABLE_END,
    TABLE_START,
    not_offered_note,
    offered_at,
    window_table,
)
from comfyui_assistant.core.installs.scan import Lookups

from .conftest import start_app
from .helpers import chat_body, sent, user
from .scripted_provider import ScriptedProvider, Stream, call_piece, chunk, text_reply
from .test_installs_scan import IMPACT, manager_lookups, template, with_node

README = Path(__file__).resolve().parent.parent / "README.md"
INSTALLS = ["findMissing", "installNodePacks", "downloadModels", "restartComfyUI"]


def test_the_readme_table_is_generated_from_the_profiles():
    text = README.read_text(encoding="utf-8")
    start, end = text.index(TABLE_START), text.index(TABLE_END) + len(TABLE_END)
    assert text[start:end] == window_table()
    assert "| 6,145 to 12,288 | medium | `loadWorkflow`, `findMissing`, `installNodePacks`" in text


def test_which_install_tools_each_window_offers():
    assert [name for name in INSTALLS if name in offered_at(4096)] == []
    assert [name for name in INSTALLS if name in offered_at(8192)] == [
        "findMissing",
        "installNodePacks",
        "restartComfyUI",
    ]
    assert [name for name in INSTALLS if name in offered_at(32_768)] == INSTALLS


def test_a_tool_the_window_lacks_is_named_with_the_windows_that_have_it():
    assert not_offered_note("downloadModels", "medium") == (
        "Not run: downloadModels is not offered at this model's context window (the medium tool "
        "set, for windows of 6,145 to 12,288 tokens); it comes with windows above 12,288 tokens. "
        "Instead: findMissing's cards show each missing model's download address and models "
        "folder: the user can download the file into that folder and press Refresh in ComfyUI. "
        "To have it, the user can give the model a larger context window (LLM_CONTEXT_WINDOW, "
        "when the model supports one) or set LLM_PROMPT_PROFILE=full (its instructions and "
        "tools then take more of the window)."
    )
    assert "it comes with windows of 6,145 to 12,288 tokens" in str(
        not_offered_note("findMissing", "small")
    )
    assert not_offered_note("findMissing", "medium") is None  # offered there
    assert not_offered_note("deleteEverything", "small") is None  # not a tool at all
    assert not_offered_note("readSystemContext", "small") is None  # offered by need


def calls(*pieces: dict[str, Any]) -> Stream:
    return Stream([chunk(tool_calls=list(pieces)), chunk(finish_reason="tool_calls")])


def call(name: str, args: dict[str, Any], id: str, index: int = 0) -> dict[str, Any]:
    return call_piece(index, id=id, name=name, arguments=json.dumps(args))


def events(body: str) -> list[dict[str, Any]]:
    lines = [line[6:] for line in body.splitlines() if line.startswith("data: {")]
    return [json.loads(line) for line in lines]


async def test_at_8k_find_missing_is_offered_and_runs_end_to_end(tmp_path):
    async def lookups() -> Lookups:
        return manager_lookups()

    provider = await ScriptedProvider().start()
    env = {"LLM_BASE_URL": provider.base_url, "LLM_MODEL": "m", "LLM_CONTEXT_WINDOW": "8192"}
    app = await start_app(tmp_path / "data", env, install_lookups=lookups)
    try:
        provider.enqueue(
            calls(
                call("findMissing", {}, "f1"),
                call("downloadModels", {"scan": "s", "models": ["a.safetensors"]}, "d1", 1),
            ),
            text_reply("AddMask comes from the Impact Pack."),
        )
        ask = user("install what this workflow is missing")
        status, body = await app.chat(chat_body(ask))
        assert status == 200, body
        offered = [t["function"]["name"] for t in provider.requests[0]["tools"]]
        assert [name for name in INSTALLS if name in offered] == INSTALLS[:2] + INSTALLS[3:]
        found = [e for e in events(body) if e.get("toolCallId") in ("f1", "d1")]
        available = [e for e in found if e["type"] == "tool-input-available"]
        assert [(e["toolCallId"], e["toolName"]) for e in available] == [("f1", "findMissing")]
        (error,) = [e for e in found if e["type"] == "tool-input-error"]
        assert error["errorText"] == not_offered_note("downloadModels", "medium")

        # The panel runs findMissing: the scan through our route, its answer to the model.
        workflow = template("default")
        with_node(workflow, 30, "AddMask")
        async with app.session.post(
            app.base + "/api/assistant/installs/scan", json={"workflow": workflow}
        ) as resp:
            assert resp.status == 200
            scan = await resp.json()
        assert scan["missingNodes"][0]["packs"] == [IMPACT]
        output = {"ok": True, "scan": scan["scan"], "missingNodeTypes": scan["missingNodes"]}
        answer = {
            "id": "a1",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {
                    "type": "tool-findMissing",
                    "toolCallId": "f1",
                    "state": "output-available",
                    "input": {},
                    "output": output,
                },
                {
                    "type": "tool-downloadModels",
                    "toolCallId": "d1",
                    "state": "output-error",
                    "input": {"scan": "s", "models": ["a.safetensors"]},
                    "errorText": error["errorText"],
                },
            ],
        }
        status, body = await app.chat(chat_body(ask, answer, messageId="a1"))
        assert status == 200, body
        assert "AddMask comes from the Impact Pack." in body
        results = [m for m in sent(provider, 1) if m["role"] == "tool"]
        assert [(m["tool_call_id"], m["content"]) for m in results] == [
            ("f1", json.dumps(output, separators=(",", ":"), ensure_ascii=False)),
            ("d1", f"Error: {error['errorText']}"),
        ]
    finally:
        await app.close()
        await provider.stop()

from __future__ import annotations

import json
from typing import Any

import pytest
from comfyui_assistant.core.base.ui_messages import DENIED, NOT_RUN, tool_result_text
from comfyui_assistant.core.tools.digests import (
    LINE_MAX,
    digest_tool_part,
    digest_tool_result,
    one_line,
)
from comfyui_assistant.core.tools.json_cut import cut_json
from hypothesis import given, settings
from hypothesis import strategies as st


def dumps(value: Any) -> str:
    return json.dumps(value)


# --- digest_tool_result ----------------------------------------------------------------------

SEARCH_HITS = [{"type": t, "inputs": {}} for t in ("ImageUpscaleWithModel", "UpscaleModelLoader")]
SEARCH_HITS += [{"type": f"Upscale{i}"} for i in range(10)]
QUEUED = {
    "promptId": "p-7",
    "outputs": {"9": {"images": [{"filename": "ComfyUI_00001_.png", "type": "output"}]}},
    "executionTime": 4.2,
}

DIGESTS = [
    # panel tools
    (
        "getWorkflow",
        {"detail": "compact"},
        dumps({"nodes": [{"id": i} for i in range(14)], "links": [[i] for i in range(17)]}),
        "[digest] getWorkflow compact -> 14 nodes, 17 links (recall: call_x)",
    ),
    (
        "getWorkflow",
        {},
        "Error: The canvas is not ready.",
        "[digest] getWorkflow -> error: The canvas is not ready. (recall: call_x)",
    ),
    (
        "addNode",
        '{"nodeType":"KSampler","widgets":{"steps":30}}',
        '{"nodeId":12,"type":"KSampler"}',
        "[digest] addNode KSampler -> node 12 (recall: call_x)",
    ),
    (
        "addNode",
        {"nodeType": "KSamplr"},
        "Error: Unknown node type 'KSamplr'. Did you mean: KSampler?\nSearch first.",
        "[digest] addNode KSamplr -> error: Unknown node type 'KSamplr'. Did you mean: KSampler? "
        "(recall: call_x)",
    ),
    (
        "removeNodes",
        {"nodeIds": [3, 4]},
        dumps({"removed": [3, 4]}),
        "[digest] removeNodes nodes 3,4 -> removed 2 (recall: call_x)",
    ),
    (
        "connectNodes",
        {"fromNodeId": 4, "fromOutput": "MODEL", "toNodeId": 3, "toInput": "model"},
        '{"ok":true}',
        "[digest] connectNodes 4.MODEL -> 3.model -> ok (recall: call_x)",
    ),
    (
        "connectNodes",
        {"fromNodeId": 4, "fromOutput": 0, "toNodeId": 3, "toInput": "clip"},
        dumps({"ok": False, "message": "Slot types differ: MODEL -> CLIP"}),
        "[digest] connectNodes 4.0 -> 3.clip -> error: Slot types differ: MODEL -> CLIP "
        "(recall: call_x)",
    ),
    (
        "setWidgetValues",
        {"nodeId": 7, "values": {"steps": 30}},
        dumps({"nodeId": 7, "changed": {"steps": 30}}),
        "[digest] setWidgetValues node 7 -> node 7 (recall: call_x)",
    ),
    (
        "setWidgetValues",
        {"nodeId": 7, "values": {"sampler_name": "eulr"}},
        dumps({"error": {"message": "sampler_name must be one of: euler, dpmpp_2m"}}),
        "[digest] setWidgetValues node 7 -> error: sampler_name must be one of: euler, dpmpp_2m "
        "(recall: call_x)",
    ),
    (
        "queueWorkflow",
        {},
        dumps(QUEUED),
        "[digest] queueWorkflow -> prompt p-7, files: ComfyUI_00001_.png (recall: call_x)",
    ),
    (
        "queueWorkflow",
        {"waitForResult": True},
        "Error: Required input is missing: clip (node 6)\nnode 6: CLIPTextEncode",
        "[digest] queueWorkflow -> error: Required input is missing: clip (node 6) "
        "(recall: call_x)",
    ),
    (
        "loadWorkflow",
        {"workflow": {"nodes": []}},
        dumps({"nodes": [{"id": 1}], "links": []}),
        "[digest] loadWorkflow -> 1 node, 0 links (recall: call_x)",
    ),
    ("loadWorkflow", {}, DENIED, "[digest] loadWorkflow -> denied (recall: call_x)"),
    ("queueWorkflow", {}, NOT_RUN, "[digest] queueWorkflow -> not run (recall: call_x)"),
    # server tools
    (
        "searchInstalledNodes",
        {"query": "upscale", "limit": 15},
        dumps({"query": "upscale", "results": SEARCH_HITS}),
        '[digest] searchInstalledNodes "upscale" -> 12 results: ImageUpscaleWithModel, '
        "UpscaleModelLoader, Upscale0, … (recall: call_x)",
    ),
    (
        "searchInstalledNodes",
        {"query": "teleport"},
        "Error: No installed node matches 'teleport'. Try fewer or other words.",
        "[digest] searchInstalledNodes \"teleport\" -> error: No installed node matches 'teleport'."
        " Try fewer or other words. (recall: call_x)",
    ),
    (
        "getNodeDefinition",
        {"nodeType": "KSampler"},
        dumps(
            {"type": "KSampler", "inputs": [{"name": f"i{i}"} for i in range(10)], "outputs": [{}]}
        ),
        "[digest] getNodeDefinition KSampler -> 10 inputs, 1 output (recall: call_x)",
    ),
    (
        "getAvailableModels",
        {"category": "checkpoints"},
        dumps({"category": "checkpoints", "models": ["dreamshaper_8.safetensors", "sdxl.ckpt"]}),
        "[digest] getAvailableModels checkpoints -> 2 models: dreamshaper_8.safetensors, sdxl.ckpt "
        "(recall: call_x)",
    ),
    (
        "createUserSkill",
        {"name": "My portraits", "description": "d", "body": "b"},
        dumps({"created": {"slug": "my-portraits", "name": "My portraits", "description": "d"}}),
        '[digest] createUserSkill "My portraits" -> created my-portraits (recall: call_x)',
    ),
    (
        "readSystemContext",
        {"section": "models"},
        dumps({"section": "models", "text": "x" * 500}),
        "[digest] readSystemContext models -> ok (533 chars) (recall: call_x)",
    ),
    (
        "recallToolResult",
        {"toolCallId": "call_abc"},
        "Error: No stored result has the id 'call_abc' in this thread.",
        "[digest] recallToolResult call_abc -> error: No stored result has the id 'call_abc' in "
        "this thread. (recall: call_x)",
    ),
    # an unknown tool: its first two scalar arguments
    (
        "mysteryTool",
        {"mode": "fast", "nested": {"a": 1}, "label": "two words", "count": 3},
        "plain text result",
        '[digest] mysteryTool mode=fast label="two words" -> ok (17 chars) (recall: call_x)',
    ),
]


@pytest.mark.parametrize(("name", "arguments", "result", "expected"), DIGESTS)
def test_digest(name: str, arguments: Any, result: str, expected: str) -> None:
    assert digest_tool_result(name, arguments, result, "call_x") == expected


def test_digest_takes_json_string_or_dict_arguments_alike() -> None:
    args = {"nodeType": "KSampler"}
    assert digest_tool_result("addNode", json.dumps(args), '{"nodeId":1}', "c") == (
        digest_tool_result("addNode", args, '{"nodeId":1}', "c")
    )
    assert digest_tool_result("addNode", "{not json", "{}", "c") == (
        "[digest] addNode -> ok (2 chars) (recall: c)"
    )


def test_digest_is_one_capped_line_that_keeps_the_call_id() -> None:
    line = digest_tool_result(
        "addNode", {"nodeType": "K\nS" * 50}, "Error: " + "bad\tthing " * 100, "call_" + "9" * 30
    )
    assert "\n" not in line
    assert len(line) <= 200
    assert line.endswith(" (recall: call_" + "9" * 30 + ")")


def test_digest_is_deterministic() -> None:
    for name, arguments, result, _ in DIGESTS:
        first = digest_tool_result(name, arguments, result, "id1")
        assert all(digest_tool_result(name, arguments, result, "id1") == first for _ in range(3))


PARTS = [
    {"state": "output-available", "output": QUEUED},
    {"state": "output-available", "output": {"nodes": [{"id": 1}], "links": []}},
    {"state": "output-available", "output": [1, 2, {"a": None}]},
    {"state": "output-available", "output": 42},
    {"state": "output-available", "output": None},
    {"state": "output-available", "output": {}},
    {"state": "output-available", "output": "plain text, not JSON"},
    {"state": "output-available", "output": '{"nodeId": 4}'},
    {"state": "output-available", "output": {"ok": False, "error": {"message": "no such node"}}},
    {"state": "output-available", "output": {"images": ["a.png", "b.png"], "file": "c.txt"}},
    {"state": "output-error", "errorText": "boom", "input": {"nodeType": "X"}},
    {"state": "output-error", "errorText": "bad args", "rawInput": "{oops"},
    {"state": "output-denied"},
    {"state": "input-available"},
    {"state": "input-streaming"},
]


@pytest.mark.parametrize("name", ["queueWorkflow", "getWorkflow", "addNode", "mysteryTool"])
@pytest.mark.parametrize("part", PARTS)
def test_digest_of_a_part_is_the_digest_of_its_rendered_result(
    name: str, part: dict[str, Any]
) -> None:
    """The engine digests old rounds from their UI parts (never rendering their results):
    the line must be the one the rendered text gives."""
    args = {"nodeType": "KSampler", "detail": "full"}
    expected = digest_tool_result(name, args, tool_result_text(part), "call_p")
    assert digest_tool_part(name, args, part, "call_p") == expected


def test_file_names_are_read_only_from_tools_whose_results_hold_outputs() -> None:
    result = dumps({"nodes": [{"id": 1, "widgets": {"filename": "in.png"}}], "links": []})
    assert "in.png" not in digest_tool_result("getWorkflow", {}, result, "c")
    assert "files: in.png" in digest_tool_result("queueWorkflow", {}, result, "c")
    assert "files: in.png" in digest_tool_result("someCustomTool", {}, result, "c")


# --- cut_json --------------------------------------------------------------------------------


def ui_workflow(n: int) -> dict[str, Any]:
    nodes = [
        {
            "id": i,
            "type": "KSampler" if i % 3 else "CLIPTextEncode",
            "pos": [i * 12.5, i * 3],
            "size": [315, 262],
            "flags": {},
            "order": i,
            "mode": 0,
            "inputs": [
                {"name": "model", "type": "MODEL", "link": 2 * i},
                {"name": "positive", "type": "CONDITIONING", "link": 2 * i + 1},
            ],
            "outputs": [
                {"name": "LATENT", "type": "LATENT", "links": [2 * i + 2], "slot_index": 0}
            ],
            "properties": {"Node name for S&R": "KSampler"},
            "widgets_values": (
                [1000 + i, "randomize", 20, 7.5, "euler", "normal", 1.0]
                if i % 3
                else ["a detailed photo of a red fox in the snow, " * 8]
            ),
        }
        for i in range(1, n + 1)
    ]
    links = [[i, i, 0, i + 1, 0, "LATENT"] for i in range(1, 2 * n)]
    return {
        "last_node_id": n,
        "last_link_id": 2 * n,
        "nodes": nodes,
        "links": links,
        "groups": [],
        "config": {},
        "extra": {"ds": {"scale": 1, "offset": [0, 0]}},
        "version": 0.4,
    }


def api_workflow(n: int) -> dict[str, Any]:
    return {
        str(i): {
            "class_type": "KSampler",
            "inputs": {"seed": i, "steps": 20, "cfg": 7, "model": [str(i - 1), 0]},
            "_meta": {"title": f"Sampler {i}"},
        }
        for i in range(1, n + 1)
    }


def test_cut_ui_workflow_keeps_structure() -> None:
    text = json.dumps(ui_workflow(260), indent=1)
    assert 195_000 < len(text) < 260_000
    out = cut_json(text, 8000)
    assert len(out) <= 8000
    cut = json.loads(out)
    assert list(cut) == [*ui_workflow(1), "_truncated"]
    assert cut["nodes"][0]["widgets_values"] == [1001, "randomize", 20, 7.5, "euler", "normal", 1.0]
    assert cut["nodes"][-1] == f"… {260 - len(cut['nodes']) + 1} more items"
    assert cut["links"][-1].endswith(" more items")
    assert cut["nodes"][2]["widgets_values"][0].endswith(" chars]")  # a long prompt, shortened
    assert cut["_truncated"] == (
        f"result cut from {len(text):,} to {len(out):,} chars; "
        "call recallToolResult for the full text"
    )
    assert len(out) > 6000  # it uses the room it has


def test_cut_api_workflow_keeps_first_keys() -> None:
    text = json.dumps(api_workflow(1500))
    assert len(text) > 200_000
    out = cut_json(text, 8000)
    assert len(out) <= 8000
    cut = json.loads(out)
    kept = [k for k in cut if k not in ("…", "_truncated")]
    assert kept == [str(i) for i in range(1, len(kept) + 1)]
    assert cut["1"] == api_workflow(1)["1"]
    assert cut["…"] == f"{1500 - len(kept)} more keys"
    assert cut["_truncated"].startswith(f"result cut from {len(text):,} to {len(out):,} chars")


def test_cut_top_level_array_is_wrapped() -> None:
    out = cut_json(json.dumps(list(range(100_000))), 300)
    cut = json.loads(out)
    assert len(out) <= 300
    assert list(cut) == ["items", "_truncated"]
    assert cut["items"][:3] == [0, 1, 2]
    assert cut["items"][-1] == f"… {100_000 - len(cut['items']) + 1} more items"


def test_cut_deep_structure_collapses_levels() -> None:
    deep: Any = "leaf"
    for i in range(200):
        deep = {f"level{i}": deep, "pad": "p" * 20}
    out = cut_json(json.dumps(deep), 400)
    assert len(out) <= 400
    assert "{…}" in out
    assert "_truncated" in json.loads(out)


def test_cut_json_that_fits_is_unchanged_or_only_compacted() -> None:
    assert cut_json('{"a": 1}', 100) == '{"a": 1}'
    pretty = json.dumps({"a": list(range(30))}, indent=4)
    assert cut_json(pretty, 120) == json.dumps({"a": list(range(30))}, separators=(",", ":"))


def test_cut_plain_text_keeps_head_and_tail_at_line_boundaries() -> None:
    text = "\n".join(f"line {i} " + "x" * 30 for i in range(2000))
    out = cut_json(text, 500)
    assert len(out) <= 500
    head, marker, tail = out.partition("\n…[cut ")
    assert marker
    assert head.startswith("line 0 ") and head.endswith("x")
    assert tail.endswith("line 1999 " + "x" * 30)
    cut_chars = int(tail.split(" chars]…\n", 1)[0].replace(",", ""))
    kept_tail = tail.split(" chars]…\n", 1)[1]
    assert kept_tail.startswith("line ")
    assert len(head) + len(kept_tail) + cut_chars == len(text)


def test_cut_is_deterministic() -> None:
    text = json.dumps(ui_workflow(300))
    assert len({cut_json(text, 8000) for _ in range(3)}) == 1


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=300),
    lambda children: (
        st.lists(children, max_size=40)
        | st.dictionaries(st.text(max_size=30), children, max_size=40)
    ),
    max_leaves=300,
)


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES, limit=st.integers(min_value=200, max_value=5000))
def test_cut_json_property_valid_and_within_limit(value: Any, limit: int) -> None:
    text = json.dumps(value, ensure_ascii=False)
    out = cut_json(text, limit)
    assert len(out) <= limit
    json.loads(out)
    if len(text) <= limit:
        assert out == text


@settings(max_examples=200, deadline=None)
@given(text=st.text(min_size=1, max_size=3000), limit=st.integers(min_value=200, max_value=2000))
def test_cut_text_property_within_limit(text: str, limit: int) -> None:
    out = cut_json(text, limit)
    assert len(out) <= limit


_SPACES = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000"


@settings(max_examples=3000, deadline=None)
@given(
    st.one_of(st.text(), st.text(alphabet=_SPACES + "ab.")),
    st.integers(min_value=1, max_value=60),
)
def test_one_line_returns_single_line_text_as_is_and_flattens_the_rest(
    text: str, limit: int
) -> None:
    flat = " ".join(text.split())  # the definition: whitespace runs become one space
    expected = flat if len(flat) <= limit else flat[: limit - 1] + "…"
    assert one_line(text, limit) == expected


_ARGS = st.dictionaries(
    st.sampled_from(["nodeType", "nodeId", "query", "x"]), JSON_VALUES, max_size=3
)


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(["queueWorkflow", "getWorkflow", "addNode", "connectNodes", "mystery"]),
    args=_ARGS,
    output=JSON_VALUES,
    state=st.sampled_from(["output-available", "output-error", "input-available"]),
)
def test_any_result_digests_to_one_line_the_same_from_its_part_or_its_text(
    name: str, args: dict[str, Any], output: Any, state: str
) -> None:
    """Every tool part of a new message is digested when it is first seen (sent whole or
    not), so no output may make the digest fail."""
    part = {"type": f"tool-{name}", "toolCallId": "c9", "state": state, "input": args}
    part |= {"output": output} if state == "output-available" else {"errorText": str(output)}
    line = digest_tool_part(name, args, part, "c9")
    assert line == digest_tool_result(name, args, tool_result_text(part), "c9")
    assert "\n" not in line and line.startswith("[digest] ") and line.endswith(" (recall: c9)")
    assert len(line) <= LINE_MAX

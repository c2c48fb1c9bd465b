"""A ComfyUI workflow as a few lines a model reads: one line per node with its type, its set
values and where its inputs come from. Used for attached workflows (a workflow JSON, or the
metadata of an image ComfyUI made), where the raw JSON would cost several times the tokens
(positions, sizes, colors, link tables).

    API format (the "prompt" ComfyUI ran):  3 KSampler: seed=42, steps=20, model←4, positive←6
    UI format (the "workflow" it showed):   3 KSampler: [42, "fixed", 20, 8], model←4, positive←6
"""

from __future__ import annotations

import json
from typing import Any

VALUE_CHARS = 600  # one value's characters (a long prompt text keeps its start)


def workflow_format(value: Any) -> str | None:
    """ "ui" (nodes and links), "api" (node id -> class_type and inputs), or None."""
    if not isinstance(value, dict) or not value:
        return None
    if isinstance(value.get("nodes"), list):
        return "ui"
    if all(isinstance(n, dict) and isinstance(n.get("class_type"), str) for n in value.values()):
        return "api"
    return None


def node_count(value: Any) -> int:
    kind = workflow_format(value)
    if kind == "ui":
        return sum(isinstance(n, dict) for n in value["nodes"])
    return len(value) if kind == "api" else 0


def workflow_lines(value: Any, limit: int) -> str:
    """The workflow's lines, at most `limit` characters (a note says how many nodes were left
    out). "" when it is not a workflow."""
    kind = workflow_format(value)
    if kind == "api":
        lines = [_api_line(nid, node) for nid, node in sorted(value.items(), key=_by_id)]
    elif kind == "ui":
        lines = _ui_lines(value)
    else:
        return ""
    out, used = [], 0
    for i, line in enumerate(lines):
        if used + len(line) + 1 > limit:
            out.append(f"… and {len(lines) - i} more nodes (load the workflow to see them)")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


def _by_id(item: tuple[str, Any]) -> tuple[int, str]:
    key = item[0]
    return (int(key), key) if key.isdigit() else (1 << 62, key)


def _value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 2] + '…"'


def _api_line(node_id: str, node: dict[str, Any]) -> str:
    raw = node.get("inputs")
    inputs: dict[str, Any] = raw if isinstance(raw, dict) else {}
    values, links = [], []
    for name, value in inputs.items():
        if isinstance(value, list) and len(value) == 2 and isinstance(value[1], int):
            links.append(f"{name}←{value[0]}")  # [source node id, output slot]
        else:
            values.append(f"{name}={_value(value)}")
    title = node.get("_meta", {}).get("title") if isinstance(node.get("_meta"), dict) else None
    named = f" ({title})" if isinstance(title, str) and title != node["class_type"] else ""
    return f"{node_id} {node['class_type']}{named}: {', '.join(values + links)}".rstrip(": ")


def _ui_lines(workflow: dict[str, Any]) -> list[str]:
    sources: dict[Any, Any] = {}  # link id -> source node id
    for link in workflow.get("links") or []:
        if isinstance(link, list) and len(link) >= 3:
            sources[link[0]] = link[1]
        elif isinstance(link, dict):
            sources[link.get("id")] = link.get("origin_id")
    lines = []
    for node in workflow["nodes"]:
        if not isinstance(node, dict):
            continue
        parts = []
        widgets = node.get("widgets_values")
        if isinstance(widgets, (list, dict)) and widgets:
            parts.append(_value(widgets))
        for slot in node.get("inputs") or []:
            if isinstance(slot, dict) and slot.get("link") in sources:
                parts.append(f"{slot.get('name')}←{sources[slot['link']]}")
        title = node.get("title")
        named = f" ({title})" if isinstance(title, str) and title != node.get("type") else ""
        muted = {2: " [muted]", 4: " [bypassed]"}.get(node.get("mode"), "")  # type: ignore[arg-type]
        lines.append(f"{node.get('id')} {node.get('type')}{named}{muted}: {', '.join(parts)}")
    subgraphs = (workflow.get("definitions") or {}).get("subgraphs") or []
    if subgraphs:
        names = ", ".join(str(s.get("name") or s.get("id")) for s in subgraphs[:10])
        lines.append(f"(subgraphs inside: {names})")
    return [line.rstrip(": ") for line in lines]

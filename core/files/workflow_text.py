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
    return (int(key), key) if key.isascii() and key.isdigit() and len(key) < 19 else (1 << 62, key)


def _value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 2] + '…"'


def _label(value: Any) -> str:
    """A node's id, type or a link's source as written: a name, a number, or (in a workflow
    of another shape) its JSON, cut."""
    return value if isinstance(value, str) else _value(value)


def _ref(value: Any) -> int | str | None:
    """A link id or node id, when it is one (a list or an object is not: it cannot be looked
    up)."""
    return value if isinstance(value, (int, str)) else None


def _api_line(node_id: str, node: dict[str, Any]) -> str:
    raw = node.get("inputs")
    inputs: dict[str, Any] = raw if isinstance(raw, dict) else {}
    values, links = [], []
    for name, value in inputs.items():
        if isinstance(value, list) and len(value) == 2 and isinstance(value[1], int):
            links.append(f"{name}←{_label(value[0])}")  # [source node id, output slot]
        else:
            values.append(f"{name}={_value(value)}")
    title = node.get("_meta", {}).get("title") if isinstance(node.get("_meta"), dict) else None
    named = f" ({title})" if isinstance(title, str) and title != node["class_type"] else ""
    return f"{node_id} {node['class_type']}{named}: {', '.join(values + links)}".rstrip(": ")


def _ui_lines(workflow: dict[str, Any]) -> list[str]:
    sources: dict[int | str, Any] = {}  # link id -> source node id
    for link in _list(workflow.get("links")):
        if isinstance(link, list) and len(link) >= 3 and _ref(link[0]) is not None:
            sources[link[0]] = link[1]
        elif isinstance(link, dict) and _ref(link.get("id")) is not None:
            sources[link["id"]] = link.get("origin_id")
    lines = [_ui_line(node, sources) for node in workflow["nodes"] if isinstance(node, dict)]
    definitions = workflow.get("definitions")
    subgraphs = _list(definitions.get("subgraphs") if isinstance(definitions, dict) else None)
    names = [_label(s.get("name") or s.get("id")) for s in subgraphs if isinstance(s, dict)]
    if names:
        lines.append(f"(subgraphs inside: {', '.join(names[:10])})")
    return [line.rstrip(": ") for line in lines]


def _ui_line(node: dict[str, Any], sources: dict[int | str, Any]) -> str:
    parts = []
    widgets = node.get("widgets_values")
    if isinstance(widgets, (list, dict)) and widgets:
        parts.append(_value(widgets))
    for slot in _list(node.get("inputs")):
        link = _ref(slot.get("link")) if isinstance(slot, dict) else None
        if link is not None and link in sources:
            parts.append(f"{_label(slot.get('name'))}←{_label(sources[link])}")
    title, kind, mode = node.get("title"), node.get("type"), node.get("mode")
    named = f" ({title})" if isinstance(title, str) and title != kind else ""
    muted = {2: " [muted]", 4: " [bypassed]"}.get(mode, "") if isinstance(mode, int) else ""
    return f"{_label(node.get('id'))} {_label(kind)}{named}{muted}: {', '.join(parts)}"


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []

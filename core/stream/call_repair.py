"""Nearly-right tool calls, read the way the model meant them (issue 40).

Small local models write a call slightly wrong: arguments in a code fence, a trailing comma,
single quotes, Python's `True`/`None`, the object inside a JSON string; `add_node` for
`addNode`; `"20"` where the schema wants 20. Each is read as meant, and every such reading is
kept as a note ("read `add_node` as addNode") that goes back to the model with the result, so it
learns the right form (`repair_notes_of` below; `ui_messages.tool_result_text` says them).

Nothing is guessed beyond that: a name is repaired only when exactly one offered tool fits, a
value only where the schema says what it must be.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any

Schema = dict[str, Any]

_FENCE = re.compile(r"^\s*```[\w-]*[ \t]*\n?(.*?)\n?```\s*$", re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_LITERALS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


@dataclass
class Repaired:
    """A call as meant: its tool name, its arguments, and what was read differently."""

    name: str
    value: Any = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)


def loads_lenient(text: str, notes: list[str]) -> Any:
    """JSON text as meant; raises ValueError when no reading fits. Each reading other than
    plain JSON adds a note."""
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
        notes.append("read the arguments out of a code fence")
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = _fixed(text, notes)
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        inner = loads_lenient(value.strip(), [])
        notes.append("read the arguments out of a JSON string")
        return inner
    return value


def _fixed(text: str, notes: list[str]) -> Any:
    if "\\n" in text:  # a literal \n between values (Qwen3.5: `"a": \n[1, 2]`)
        try:
            value = json.loads(text.replace("\\n", "\n"), strict=False)
        except json.JSONDecodeError:
            pass
        else:
            notes.append("read a literal \\n between values as a line break")
            return value
    no_commas = _TRAILING_COMMA.sub(r"\1", text)
    if no_commas != text:
        try:
            value = json.loads(no_commas)
        except json.JSONDecodeError:
            pass
        else:
            notes.append("dropped a trailing comma")
            return value
    value = python_literal(text)
    said = []
    if re.search(r"(?<![\w\"])'|'(?![\w\"])", text):
        said.append("single quotes")
    if re.search(r"\b(True|False|None)\b", text):
        said.append("Python's True/False/None")
    if no_commas != text:
        said.append("a trailing comma")
    notes.append(f"read {' and '.join(said) or 'Python syntax'} as JSON")
    return value


def python_literal(text: str) -> Any:
    """A Python or JSON literal (dicts, lists, strings, numbers, true/True, null/None);
    ValueError when the text is anything else."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise ValueError(f"not JSON: {exc}") from None
    return literal_of(node)


def literal_of(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and not isinstance(node.value, (bytes, complex)):
        return node.value
    if isinstance(node, ast.Name) and node.id in _LITERALS:
        return _LITERALS[node.id]
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        pairs = zip(node.keys, node.values, strict=True)
        return {_key(literal_of(k)): literal_of(v) for k, v in pairs if k is not None}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal_of(e) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = literal_of(node.operand)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    raise ValueError("not a literal")


def _key(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise ValueError("a key that is not a string")


# --- names --------------------------------------------------------------------------------


def normalized(name: str) -> str:
    return re.sub(r"[\s_\-.]", "", name).lower()


def resolve_name(name: str, offered: dict[str, Schema]) -> tuple[str | None, str | None]:
    """The offered tool `name` means, and the note when it was written otherwise; (None,
    None) when no single offered tool fits."""
    if name in offered:
        return name, None
    bare = re.sub(r"^(functions|default_api|tools?)[.:]", "", name.strip())
    if bare in offered:
        return bare, f"read `{name}` as {bare}"
    by_norm: dict[str, list[str]] = {}
    for tool in offered:
        by_norm.setdefault(normalized(tool), []).append(tool)
    same = by_norm.get(normalized(bare), [])
    if len(same) == 1:
        return same[0], f"read `{name}` as {same[0]}"
    close = difflib.get_close_matches(normalized(bare), list(by_norm), n=2, cutoff=0.85)
    if len(close) == 1 and len(by_norm[close[0]]) == 1:
        tool = by_norm[close[0]][0]
        return tool, f"read `{name}` as {tool} (the closest tool name)"
    return None, None


# --- values by the schema -----------------------------------------------------------------


def coerce(value: Any, schema: Schema, path: str, notes: list[str]) -> Any:
    """`value` as the schema wants it, where the wanted form is unambiguous."""
    kind = schema.get("type")
    if isinstance(kind, list):
        return value
    if kind == "array" and not isinstance(value, list) and value is not None:
        notes.append(f"read `{path}` as a list of one")
        value = [value]
    if kind == "array" and isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [coerce(v, schema["items"], f"{path}[{i}]", notes) for i, v in enumerate(value)]
    if kind == "object" and isinstance(value, str) and value.strip().startswith("{"):
        try:
            value = loads_lenient(value.strip(), [])
        except ValueError:
            return value
        notes.append(f"read `{path}` out of a JSON string")
    if kind == "object" and isinstance(value, dict):
        return coerce_object(value, schema, notes, f"{path}.")
    return _scalar(value, kind, path, notes)


def coerce_object(args: dict[str, Any], schema: Schema, notes: list[str], prefix: str = "") -> Any:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return args
    return {
        k: coerce(v, props[k], f"{prefix}{k}", notes) if isinstance(props.get(k), dict) else v
        for k, v in args.items()
    }


_NUMBER = re.compile(r"^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$")


def _scalar(value: Any, kind: Any, path: str, notes: list[str]) -> Any:
    if kind in ("integer", "number") and isinstance(value, str) and _NUMBER.match(value):
        number = float(value)
        out: Any = int(number) if kind == "integer" and number.is_integer() else number
        if kind == "number" and "." not in value and "e" not in value.lower():
            out = int(value)
        if kind == "integer" and not float(out).is_integer():
            return value
        notes.append(f'read `{path}` "{value.strip()}" as the number {out}')
        return out
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind == "boolean" and isinstance(value, str) and value.strip().lower() in ("true", "false"):
        notes.append(f'read `{path}` "{value}" as {value.strip().lower()}')
        return value.strip().lower() == "true"
    if kind == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
        notes.append(f'read `{path}` {value} as the text "{value}"')
        return str(value)
    return value


def missing_or_unknown(args: dict[str, Any], schema: Schema) -> list[str]:
    """What makes `args` invalid for the schema at its top level (required keys missing,
    keys it does not know); empty when it fits."""
    props, required = schema.get("properties"), schema.get("required")
    props = props if isinstance(props, dict) else None
    required = required if isinstance(required, list) else []
    wrong = [f"missing {k}" for k in required if k not in args]
    if props is not None:
        wrong += [f"unknown {k}" for k in args if k not in props]
    return wrong


def repair_arguments(name: str, raw: Any, schema: Schema | None) -> Repaired:
    """A call's arguments (text as streamed, or a value a text call held) as meant."""
    out = Repaired(name)
    value = raw
    if isinstance(raw, str):
        text = raw.strip() or "{}"
        try:
            value = loads_lenient(text, out.notes)
        except ValueError as exc:
            out.error = str(exc)
            return out
    if value is None:
        value = {}
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        out.notes.append("read a list holding one object as that object")
        value = value[0]
    if isinstance(value, dict) and schema is not None:
        value = coerce_object(value, schema, out.notes)
    out.value = value
    return out


def schemas_of(tools: list[dict[str, Any]]) -> dict[str, Schema]:
    """Offered tools (OpenAI `tools` entries) by name: their parameters' schema."""
    out: dict[str, Schema] = {}
    for tool in tools:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            params = fn.get("parameters")
            out[fn["name"]] = params if isinstance(params, dict) else {}
    return out

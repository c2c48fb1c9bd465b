"""The shapes one call's body takes in text (`call_text.py` finds where calls are): JSON
objects and lists of them, Qwen3-Coder's `<function=…><parameter=…>`, Python call syntax,
DeepSeek's markers. Each returns the calls it read, or None: not this shape."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from .call_repair import literal_of, loads_lenient


@dataclass
class TextCall:
    name: str  # as written
    arguments: Any  # the value read (a dict when well formed)
    notes: list[str] = field(default_factory=list)


@dataclass
class Found:
    before: str  # text before the first call: stays text
    calls: list[TextCall]
    after: str  # text after the last one
    form: str  # which format


# DeepSeek's markers (V2.5, V3, V3.1)
DS_BEGIN, DS_SEP, DS_END = "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"
DS_ALL_BEGIN, DS_ALL_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
_NAME_KEYS = ("name", "tool", "tool_name", "function", "method")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input", "params")
_OTHER_KEYS = ("type", "id", "jsonrpc")
CALL_KEYS = frozenset((*_NAME_KEYS, *_ARG_KEYS, *_OTHER_KEYS))  # a call's JSON has only these
FENCE_RE = re.compile(r"```[ \t]*([\w-]*)[ \t]*\n(.*?)\n?[ \t]*```", re.S)
# (a parameter's closing tag is often left out: the next parameter or the function's end ends it)
_PARAM_RE = re.compile(
    r"<parameter=([^>\n]+)>\n?(.*?)\s*(?:</parameter>|(?=<parameter=)|(?=</function>)|$)", re.S
)


def call_of(value: Any, notes: list[str]) -> TextCall | None:
    """A JSON value shaped like one call: {"name", "arguments"|"parameters"} (or OpenAI's
    {"function": {...}}); None for anything else."""
    if not isinstance(value, dict):
        return None
    fn = value.get("function")
    if isinstance(fn, dict) and "name" in fn:
        return call_of(fn, notes)
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    args_key = next((k for k in _ARG_KEYS if k in value), None)
    extra = set(value) - CALL_KEYS
    if not name or args_key is None or extra:
        return None
    args = value[args_key]
    if isinstance(args, str) and args.strip()[:1] in ("{", "["):
        try:
            args = loads_lenient(args.strip(), notes)
        except ValueError:
            return None
        if "read the arguments out of a JSON string" not in notes:
            notes.append("read the arguments out of a JSON string")
    return TextCall(name, args, notes)


def json_calls(text: str) -> list[TextCall] | None:
    """One JSON value holding one call or a list of calls (lenient: single quotes, Python
    literals, a trailing comma)."""
    notes: list[str] = []
    try:
        value = loads_lenient(text.strip(), notes)
    except ValueError:
        return _separated(text)
    items = value if isinstance(value, list) else [value]
    calls = [call_of(v, list(notes)) for v in items]
    if not items or any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None]


def _separated(text: str) -> list[TextCall] | None:
    """Several JSON calls in a row (Llama: `;` between them, or lines)."""
    decoder, calls, pos = json.JSONDecoder(), [], 0
    text = text.strip()
    while pos < len(text):
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return None
        call = call_of(value, [])
        if call is None:
            return None
        calls.append(call)
        pos = end
        while pos < len(text) and text[pos] in " \t\r\n;,":
            pos += 1
    return calls or None


def xml_function(body: str) -> list[TextCall] | None:
    """`<function=name>` with `<parameter=k>v</parameter>` (Qwen3-Coder) or a JSON body
    (Llama's `<function=name>{…}</function>`)."""
    calls = []
    for match in re.finditer(r"<function=([^>\n]+)>(.*?)(?:</function>|$)", body, re.S):
        name, inner = match.group(1).strip(), match.group(2).strip()
        params = _PARAM_RE.findall(inner)
        if params:
            calls.append(TextCall(name, {k.strip(): _param_value(v) for k, v in params}))
        elif inner.startswith("{"):
            notes: list[str] = []
            try:
                calls.append(TextCall(name, loads_lenient(inner, notes), notes))
            except ValueError:
                return None
        elif not inner:
            calls.append(TextCall(name, {}))
        else:
            return None
    return calls or None


def _param_value(text: str) -> Any:
    """A parameter's text: a JSON value when it is one, else the text itself (one line
    trimmed; several lines keep their indentation)."""
    text = text.strip() if "\n" not in text.strip("\n") else text.strip("\n")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def python_calls(code: str) -> list[TextCall] | None:
    """Python call syntax: `name(k=v, ...)`, `name({...})`, `print(default_api.name(...))`,
    one per line."""
    try:
        tree = ast.parse(code.strip())
    except (SyntaxError, ValueError, RecursionError):
        return None
    calls = []
    body = tree.body
    if len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.List):
        body = [ast.Expr(e) for e in body[0].value.elts]  # Llama 3.2, LFM: [f(a=1), g(b=2)]
    for stmt in body:
        node = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(node, ast.Call) and _dotted(node.func) == "print" and len(node.args) == 1:
            node = node.args[0]
        call = _python_call(node) if isinstance(node, ast.Call) else None
        if call is None:
            return None
        calls.append(call)
    return calls or None


def _python_call(node: ast.Call) -> TextCall | None:
    name = _dotted(node.func)
    if name is None:
        return None
    try:
        if not node.args:
            args = {k.arg: literal_of(k.value) for k in node.keywords if k.arg}
            return TextCall(name, args) if len(args) == len(node.keywords) else None
        if len(node.args) == 1 and not node.keywords:
            value = literal_of(node.args[0])
            return TextCall(name, value) if isinstance(value, dict) else None
    except ValueError:
        return None
    return None


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def deepseek_calls(body: str) -> list[TextCall] | None:
    calls = []
    for chunk in body.split(DS_BEGIN)[1:]:
        chunk = chunk.split(DS_END)[0]
        if DS_SEP not in chunk:
            return None
        head, rest = chunk.split(DS_SEP, 1)
        if head.strip() == "function":  # V2.5/V3: function<sep>name\n```json\n{…}\n```
            name, _, rest = rest.partition("\n")
        else:  # V3.1: name<sep>{…}
            name = head
        notes: list[str] = []
        fenced = FENCE_RE.search(rest)
        try:
            args = loads_lenient(fenced.group(2) if fenced else rest.strip(), notes)
        except ValueError:
            return None
        calls.append(TextCall(name.strip(), args, notes))
    return calls or None

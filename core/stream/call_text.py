"""Tool calls a model wrote as text, in the formats models are trained on (issue 40).

When a server does not parse a model's call (a chat template without tool support, a quantized
model drifting from its format, a model the server does not know), the call arrives as text in
`content`. `find_calls` reads the complete ones back:

- Qwen/Hermes `<tool_call>{"name": …, "arguments": …}</tool_call>` (and the Qwen3-Coder form
  `<function=name><parameter=k>v</parameter></function>` inside it, or alone);
- Llama 3.x `{"name": …, "parameters": …}`, after `<|python_tag|>` or alone (`;`-separated, or
  a list), and Llama 4's `<|python_start|>…<|python_end|>`;
- Mistral `[TOOL_CALLS][{…}]` and `[TOOL_CALLS]name[ARGS]{…}`;
- fenced ```` ```tool_code ```` (Gemma: `name(k=v)`), ```` ```tool_call ````, ```` ```json ````;
- DeepSeek's `<｜tool▁call▁begin｜>…<｜tool▁sep｜>…<｜tool▁call▁end｜>` (V2.5/V3 and V3.1);
- a call in prose, `addNode({...})` or `addNode(k=v)`.

Tagged forms are calls by their markers. The unmarked ones (bare JSON, a ```json fence, a call
in prose) are calls only when they end the text, name an offered tool and their arguments fit
its schema: prose that mentions a tool, shows JSON or quotes code stays text.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from .call_repair import Schema, literal_of, loads_lenient, missing_or_unknown, resolve_name


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


# Markers that make a call by themselves (a model writes them only to call).
DS_BEGIN, DS_SEP, DS_END = "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"
DS_ALL_BEGIN, DS_ALL_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
TAGS = (
    "<tool_call>",
    "<|tool_call>",
    "<|tool_call_start|>",
    "[TOOL_CALL]",
    "[TOOL_REQUEST]",
    "<|python_tag|>",
    "<|python_start|>",
    "[TOOL_CALLS]",
    DS_ALL_BEGIN,
    DS_BEGIN,
    "<function=",
    "<|channel|>",
)
_NAME_KEYS = ("name", "tool", "tool_name", "function", "method")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input", "params")
_OTHER_KEYS = ("type", "id", "jsonrpc")
CALL_KEYS = frozenset((*_NAME_KEYS, *_ARG_KEYS, *_OTHER_KEYS))  # a call's JSON has only these
_FENCE_RE = re.compile(r"```[ \t]*([\w-]*)[ \t]*\n(.*?)\n?[ \t]*```", re.S)
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


def _json_calls(text: str) -> list[TextCall] | None:
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


def _xml_function(body: str) -> list[TextCall] | None:
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


def _python_calls(code: str) -> list[TextCall] | None:
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


def _deepseek(body: str) -> list[TextCall] | None:
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
        fenced = _FENCE_RE.search(rest)
        try:
            args = loads_lenient(fenced.group(2) if fenced else rest.strip(), notes)
        except ValueError:
            return None
        calls.append(TextCall(name.strip(), args, notes))
    return calls or None


def in_code(text: str, pos: int) -> bool:
    """Whether `pos` is inside a fenced block or inline code: a marker there is quoted (an
    answer showing what a call looks like), not a call."""
    before = text[:pos]
    if before.count("```") % 2:
        return True
    line = before[before.rfind("\n") + 1 :].replace("```", "")
    return line.count("`") % 2 == 1


def first_marker(text: str, start: int = 0, context: str = "") -> tuple[int, str] | None:
    """The first marker in `text` from `start` on that is outside code (`context`: the text
    before `text`, which may open a block), and where it is."""
    found = []
    for tag in TAGS:
        pos = text.find(tag, start)
        while pos >= 0 and in_code(context + text[:pos], len(context) + pos):
            pos = text.find(tag, pos + 1)
        if pos >= 0:
            found.append((pos, tag))
    return min(found) if found else None


def _tagged(text: str, context: str) -> Found | None:
    """The first marker in the text and the calls it starts."""
    first = first_marker(text, 0, context)
    if first is None:
        return None
    pos, tag = first
    before, body = text[:pos], text[pos:]
    if tag == "<tool_call>":
        return _hermes(before, body)
    if tag in _WRAPPED:
        return _wrapped(before, body, tag)
    if tag == "<function=":
        end = body.rfind("</function>")
        tail = body[end + len("</function>") :] if end >= 0 else ""
        calls = _xml_function(body[: end + len("</function>")] if end >= 0 else body)
        return Found(before, calls, tail, "function-tag") if calls else None
    if tag in ("<|python_tag|>", "<|python_start|>"):
        inner = body[len(tag) :].replace("<|python_end|>", "").replace("<|eom_id|>", "")
        calls = _json_calls(inner) or _python_calls(inner)
        return Found(before, calls, "", "llama-python-tag") if calls else None
    if tag == "[TOOL_CALLS]":
        return _mistral(before, body[len(tag) :])
    if tag == "<|channel|>":
        return _harmony(before, body)
    end = body.find(DS_ALL_END)
    tail = body[end + len(DS_ALL_END) :] if end >= 0 else ""
    calls = _deepseek(body)
    return Found(before, calls, tail, "deepseek") if calls else None


_WRAPPED = {  # marker: (its end, the format)
    "<|tool_call>": ("<tool_call|>", "gemma"),
    "<|tool_call_start|>": ("<|tool_call_end|>", "lfm"),
    "[TOOL_CALL]": ("[/TOOL_CALL]", "minimax"),
    "[TOOL_REQUEST]": ("[END_TOOL_REQUEST]", "lmstudio"),
}


def _wrapped(before: str, body: str, tag: str) -> Found | None:
    """Calls between a start and an end marker (the end may be missing at the text's end):
    JSON, Python call syntax, or Gemma's `call:name{key:<|"|>v<|"|>}`."""
    end, form = _WRAPPED[tag]
    calls: list[TextCall] = []
    rest = body
    while rest.lstrip().startswith(tag):
        inner, _, rest = rest.lstrip()[len(tag) :].partition(end)
        found = _gemma(inner) if inner.lstrip().startswith("call:") else None
        found = found or _json_calls(inner) or _python_calls(inner)
        if not found:
            return None
        calls += found
    return Found(before, calls, rest, form) if calls else None


def _gemma(inner: str) -> list[TextCall] | None:
    """Gemma 4: `call:name{key:<|"|>text<|"|>,n:42}` or `call:name(key="text")`."""
    match = re.match(r"\s*call:([\w.\-]+)\s*([{(].*)$", inner, re.S)
    if match is None:
        return None
    name, args = match.group(1), match.group(2).strip()
    if args.startswith("("):
        return _python_calls(name + args)
    text = re.sub(r'<\|"\|>', '"', args)
    text = re.sub(r"([{,]\s*)([A-Za-z_][\w\-]*)\s*:", r'\1"\2":', text)
    notes: list[str] = []
    try:
        return [TextCall(name, loads_lenient(text, notes), notes)]
    except ValueError:
        return None


def _bracketed(text: str) -> Found | None:
    """LM Studio's own form for a model it has no parser for: `[name]` on a line, the
    arguments as JSON, then `[END_TOOL_REQUEST]`."""
    match = re.search(r"(?m)^\[([\w.\-]+)\]\s*\n(.*?)\n?\s*\[END_TOOL_REQUEST\]", text, re.S)
    if match is None:
        return None
    notes: list[str] = []
    try:
        args = loads_lenient(match.group(2).strip(), notes)
    except ValueError:
        return None
    tail = text[match.end() :]
    return Found(text[: match.start()], [TextCall(match.group(1), args, notes)], tail, "lmstudio")


_HARMONY = re.compile(r"<\|channel\|>commentary to=functions\.([\w.\-]+)[^<]*<\|message\|>")


def _harmony(before: str, body: str) -> Found | None:
    """gpt-oss (Harmony): `<|channel|>commentary to=functions.name json<|message|>{…}`; what
    follows the arguments is channel markup, not words for the user."""
    match = _HARMONY.search(body)
    if match is None:
        return None
    head = body[: match.start()].removesuffix("<|start|>assistant")
    name = match.group(1)
    name = name.removesuffix("json") if name.endswith("json") and len(name) > 4 else name
    try:
        args, end = json.JSONDecoder().raw_decode(body, match.end())
    except json.JSONDecodeError:
        return None
    rest = body[end:]
    return Found(before + head, [TextCall(name, args)], "" if "<|" in rest else rest, "harmony")


def _hermes(before: str, body: str) -> Found | None:
    calls: list[TextCall] = []
    rest = body
    while rest.lstrip().startswith("<tool_call>"):
        rest = rest.lstrip()[len("<tool_call>") :]
        inner, closed, rest = rest.partition("</tool_call>")
        if not closed:
            inner, rest = inner, ""
        found = _xml_function(inner) if "<function=" in inner else _json_calls(inner)
        if not found:
            return None
        calls += found
    return Found(before, calls, rest, "hermes") if calls else None


def _mistral(before: str, body: str) -> Found | None:
    body = body.replace("[/TOOL_CALLS]", "").replace("</s>", "")
    if "[ARGS]" in body:  # v11: name[ARGS]{…}, repeated after each [TOOL_CALLS]
        calls = []
        for piece in body.split("[TOOL_CALLS]"):
            name, _, args = piece.partition("[ARGS]")
            notes: list[str] = []
            try:
                calls.append(TextCall(name.strip(), loads_lenient(args.strip(), notes), notes))
            except ValueError:
                return None
        return Found(before, calls, "", "mistral") if calls else None
    calls_ = _json_calls(body)
    return Found(before, calls_, "", "mistral") if calls_ else None


def _unmarked(text: str, tools: dict[str, Schema]) -> Found | None:
    """A call without a marker, which must end the text: bare JSON, a fenced block, or a
    call in prose on a line of its own."""
    stripped = text.rstrip()
    fences = list(_FENCE_RE.finditer(stripped))
    if fences and fences[-1].end() == len(stripped):
        last = fences[-1]
        lang, code = last.group(1).lower(), last.group(2)
        if lang in ("json", "tool_call", "tool_code", "", "python", "javascript", "js"):
            calls = _json_calls(code) if code.strip()[:1] in "{[" else _python_calls(code)
            if calls and _fits(calls, tools):
                return Found(stripped[: last.start()], calls, "", f"fence-{lang or 'plain'}")
        return None
    tries = 0
    for start in line_starts(stripped):
        piece = stripped[start:]
        lead = piece.lstrip()[:1]
        if lead not in "{[" and not _CALL_LINE.match(piece.lstrip()):
            continue
        tries += 1
        if tries > MAX_TRIES:  # (a long JSON document: its inner lines are no calls)
            return None
        calls = _json_calls(piece) if lead in "{[" else _python_calls(piece)
        if calls and _fits(calls, tools):
            return Found(stripped[:start], calls, "", "json" if lead in "{[" else "prose-call")
    return None


MAX_TRIES = 3  # lines that open like a call tried, from the first
_CALL_LINE = re.compile(r"[A-Za-z_][\w.]*\(")


def line_starts(text: str) -> list[int]:
    """Where each line starts, from the first: the call is the text from one of them on."""
    return [0, *(m.end() for m in re.finditer(r"\n", text))]


def _fits(calls: list[TextCall], tools: dict[str, Schema]) -> bool:
    """Every call names an offered tool (maybe written otherwise) with arguments its schema
    takes (required ones present, none it does not know)."""
    for call in calls:
        name, _ = resolve_name(call.name, tools)
        if name is None or not isinstance(call.arguments, dict):
            return False
        if missing_or_unknown(call.arguments, tools[name]):
            return False
    return True


def find_calls(text: str, tools: dict[str, Schema], context: str = "") -> Found | None:
    """The complete calls written in `text` (a step's text from where a call may begin; the
    text before it is `context`), or None: it stays text."""
    if not tools or not text.strip():
        return None
    found = _tagged(text, context) or (_bracketed(text) if "[END_TOOL_REQUEST]" in text else None)
    if found is not None:
        named = all(resolve_name(c.name, tools)[0] is not None for c in found.calls)
        return found if named else None
    return _unmarked(text, tools)

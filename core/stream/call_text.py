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

import json
import re

from .call_repair import Schema, loads_lenient, missing_or_unknown, resolve_name
from .call_shapes import (
    CALL_KEYS,
    DS_ALL_BEGIN,
    DS_ALL_END,
    DS_BEGIN,
    FENCE_RE,
    Found,
    TextCall,
    deepseek_calls,
    json_calls,
    python_calls,
    xml_function,
)

__all__ = ["CALL_KEYS", "TAGS", "Found", "TextCall", "find_calls", "first_marker", "in_code"]

# Markers that make a call by themselves (a model writes them only to call).
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
        calls = xml_function(body[: end + len("</function>")] if end >= 0 else body)
        return Found(before, calls, tail, "function-tag") if calls else None
    if tag in ("<|python_tag|>", "<|python_start|>"):
        inner = body[len(tag) :].replace("<|python_end|>", "").replace("<|eom_id|>", "")
        calls = json_calls(inner) or python_calls(inner)
        return Found(before, calls, "", "llama-python-tag") if calls else None
    if tag == "[TOOL_CALLS]":
        return _mistral(before, body[len(tag) :])
    if tag == "<|channel|>":
        return _harmony(before, body)
    end = body.find(DS_ALL_END)
    tail = body[end + len(DS_ALL_END) :] if end >= 0 else ""
    calls = deepseek_calls(body)
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
        found = found or json_calls(inner) or python_calls(inner)
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
        return python_calls(name + args)
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
        found = xml_function(inner) if "<function=" in inner else json_calls(inner)
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
    calls_ = json_calls(body)
    return Found(before, calls_, "", "mistral") if calls_ else None


def _unmarked(text: str, tools: dict[str, Schema]) -> Found | None:
    """A call without a marker, which must end the text: bare JSON, a fenced block, or a
    call in prose on a line of its own."""
    stripped = text.rstrip()
    fences = list(FENCE_RE.finditer(stripped))
    if fences and fences[-1].end() == len(stripped):
        last = fences[-1]
        lang, code = last.group(1).lower(), last.group(2)
        if lang in ("json", "tool_call", "tool_code", "", "python", "javascript", "js"):
            calls = json_calls(code) if code.strip()[:1] in "{[" else python_calls(code)
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
        calls = json_calls(piece) if lead in "{[" else python_calls(piece)
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

"""What a delegated task shows while it runs and what it returns, from the child's stream.

Pure: `ChildRun` follows the child's UI message chunks (the tools it calls, the steps it takes,
the tokens it spends) and builds the interim outputs the panel's card draws and the result the
parent model reads. The result is small by design — only it enters the parent's context: the
answer and facts the child was asked to give as a JSON object (a small model that answers in
prose gets its text taken as the answer), the lookups it made, and what it cost.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from ..base import (
    CitedDocument,
    DelegateProgress,
    DelegateResult,
    DelegateTool,
    DelegateUsage,
)
from ..stream import Usage
from ..stream import ui_stream as ui
from ..tools import Citations, documents_of

ANSWER_CHARS = 3000  # the longest answer passed back (about 700 tokens)
FACTS = 12  # the most facts passed back
FACT_CHARS = 300
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _json_object(text: str) -> dict[str, Any] | None:
    """The last JSON object in `text` that has an "answer" (fenced or not), or None."""
    decoder = json.JSONDecoder()
    found = None
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict) and "answer" in value:
            found = value
    return found


def parse_answer(text: str) -> tuple[str, list[str], Literal["json", "text"]]:
    """(answer, facts, format) from the child's final text: the JSON object it was asked for,
    or else its text as the answer, with no facts."""
    data = _json_object(text)
    if data is not None:
        answer = data.get("answer")
        facts = data.get("facts")
        facts = facts if isinstance(facts, list) else []
        return (
            _cut(answer if isinstance(answer, str) else json.dumps(answer), ANSWER_CHARS),
            [_cut(str(f), FACT_CHARS) for f in facts if str(f).strip()][:FACTS],
            "json",
        )
    return _cut(_FENCE.sub("", text.strip()), ANSWER_CHARS), [], "text"


def _args_line(args: Any) -> str:
    if not isinstance(args, dict):
        return ""
    values = [v for v in args.values() if isinstance(v, (str, int, float)) and str(v).strip()]
    return _cut(" ".join(str(v) for v in values), 80)


@dataclass
class ChildRun:
    """The child's progress, as its chunks arrive."""

    task: str
    started: float = field(default_factory=time.monotonic)
    steps: int = 0
    tools: dict[str, DelegateTool] = field(default_factory=dict)  # by call id
    error: str | None = None  # the child's stream ended with this error
    stopped: str | None = None  # why the run was stopped (a budget spent, its time up)
    estimated_tokens: int = 0  # prompts as counted here, for providers that report no usage
    usage: Usage | None = None
    _step_text: list[str] = field(default_factory=list)  # the text of the step in progress
    answer_text: str = ""  # the text of the last step that said something
    documents: dict[int, CitedDocument] = field(default_factory=dict)  # by the child's ids

    @property
    def tokens(self) -> int:
        return self.usage.total_tokens if self.usage is not None else self.estimated_tokens

    def apply(self, chunk: ui.Chunk) -> bool:
        """Follow one chunk; True when the card should show something new."""
        if isinstance(chunk, ui.StartStep):
            self._step_text = []
        elif isinstance(chunk, ui.TextDelta):
            self._step_text.append(chunk.delta)
        elif isinstance(chunk, ui.ToolInputAvailable):
            name, args = chunk.tool_name, _args_line(chunk.input)
            self.tools[chunk.tool_call_id] = {"name": name, "args": args, "state": "running"}
            return True
        elif isinstance(chunk, ui.ToolInputError):  # (a tool it may not call, bad arguments)
            tool: DelegateTool = {"name": chunk.tool_name, "args": "", "state": "failed"}
            self.tools[chunk.tool_call_id] = tool
            return True
        elif isinstance(chunk, (ui.ToolOutputAvailable, ui.ToolOutputError)):
            if isinstance(chunk, ui.ToolOutputAvailable) and not chunk.preliminary:
                for doc in documents_of(chunk.output):
                    self.documents[doc["citation_id"]] = doc  # type: ignore[assignment]
            known = self.tools.get(chunk.tool_call_id)
            if known is not None:
                known["state"] = "done" if isinstance(chunk, ui.ToolOutputAvailable) else "failed"
            return True
        elif isinstance(chunk, ui.FinishStep):
            text = "".join(self._step_text).strip()
            if text:
                self.answer_text = text
            return True
        elif isinstance(chunk, ui.Error):
            self.error = chunk.error_text
        return False

    def step_done(self, steps: int, prompt_tokens: int, usage: Usage | None) -> None:
        """After a model call: the calls so far, its prompt as counted, the usage reported."""
        if steps > self.steps:
            self.estimated_tokens += prompt_tokens
        self.steps, self.usage = steps, usage

    def usage_now(self) -> DelegateUsage:
        seconds = round(time.monotonic() - self.started, 2)
        return {"steps": self.steps, "tokens": self.tokens, "seconds": seconds}

    def progress(self) -> DelegateProgress:
        return {
            "status": "running",
            "task": self.task,
            "steps": self.steps,
            "tools": [dict(t) for t in self.tools.values()],  # type: ignore[misc]
            "usage": self.usage_now(),
        }

    def sources(self) -> list[str]:
        """The lookups it made, one line each ("searchInstalledNodes: upscale image")."""
        tools = self.tools.values()
        lines = [f"{t['name']}: {t['args']}" if t["args"] else t["name"] for t in tools]
        return list(dict.fromkeys(lines))

    def result(self, citations: Citations | None = None) -> DelegateResult:
        """The result for the parent model; an error result when the run was stopped or the
        child failed, with what it found so far. The documents the answer cites go with it,
        renumbered into the parent's citation ids (`citations`), so `[n]` in the parent's
        answer names them and the panel opens them."""
        answer, facts, form = parse_answer(self.answer_text)
        cited = self._cited(citations, [answer, *facts])
        if cited:
            answer = _renumber(answer, cited)
            facts = [_renumber(fact, cited) for fact in facts]
        out: DelegateResult = {
            "ok": True,
            "answer": answer,
            "facts": facts,
            "sources": self.sources(),
            "usage": self.usage_now(),
            "format": form,
        }
        if cited:
            out["documents"] = [
                {**self.documents[child], "citation_id": mine, "contents": _cut(
                    self.documents[child]["contents"], CITED_CHARS)}
                for child, mine in cited.items()
            ]  # fmt: skip
        why = self.stopped or self.error or (None if answer else "the helper gave no answer")
        if why is not None:
            out["ok"] = False
            out["error"] = (
                f"The delegated task did not finish: {why}. Its partial answer and the lookups "
                f"it made are here; do the remaining lookups yourself, or delegate a smaller task."
            )
        return out

    def _cited(self, citations: Citations | None, texts: list[str]) -> dict[int, int]:
        """The child's ids the texts cite, each with a new id from the parent's `citations`."""
        if citations is None or not self.documents:
            return {}
        found = (int(n) for text in texts for n in CITE.findall(text))
        return {n: citations.take() for n in dict.fromkeys(found) if n in self.documents}


CITE = re.compile(r"\[(\d{1,4})\]")
CITED_CHARS = 600  # of each cited document the parent gets (the helper read it whole)


def _renumber(text: str, ids: dict[int, int]) -> str:
    def swap(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return f"[{ids[n]}]" if n in ids else match.group(0)

    return CITE.sub(swap, text)

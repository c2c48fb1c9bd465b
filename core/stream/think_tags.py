"""Split `<think>...</think>` reasoning out of streamed content, across chunk boundaries.

Reasoning models served without a reasoning parser (Qwen3, DeepSeek-R1 on many local servers)
put their thoughts inside `<think>` tags in the content. A `<think>` opening is honoured only
before any visible text, so a model that writes the tag in prose or code is left alone.
"""

from __future__ import annotations

from typing import Literal

Kind = Literal["text", "reasoning"]
OPEN, CLOSE = "<think>", "</think>"


def _partial_suffix(data: str, tag: str) -> int:
    """Length of the longest suffix of `data` that is a proper prefix of `tag`."""
    for n in range(min(len(tag) - 1, len(data)), 0, -1):
        if data.endswith(tag[:n]):
            return n
    return 0


class ThinkTagSplitter:
    def __init__(self) -> None:
        self._pending = ""
        self._in_think = False
        self._seen_text = False
        self._after_close = False

    def _emit(self, kind: Kind, text: str, out: list[tuple[Kind, str]]) -> None:
        if kind == "text":
            if self._after_close:
                text = text.lstrip()
                if not text:
                    return
                self._after_close = False
            if not self._seen_text and text.strip():
                self._seen_text = True
        if text:
            out.append((kind, text))

    def feed(self, chunk: str) -> list[tuple[Kind, str]]:
        out: list[tuple[Kind, str]] = []
        data = self._pending + chunk
        self._pending = ""
        while data:
            if self._in_think:
                idx = data.find(CLOSE)
                if idx < 0:
                    hold = _partial_suffix(data, CLOSE)
                    self._emit("reasoning", data[: len(data) - hold], out)
                    self._pending = data[len(data) - hold :]
                    return out
                self._emit("reasoning", data[:idx], out)
                data = data[idx + len(CLOSE) :]
                self._in_think, self._after_close = False, True
            elif self._seen_text:
                self._emit("text", data, out)
                return out
            else:
                head = data.lstrip()
                if OPEN.startswith(head):  # only whitespace or a partial "<think>" so far
                    self._pending = data
                    return out
                if not head.startswith(OPEN):
                    self._emit("text", data, out)
                    return out
                data = head[len(OPEN) :]
                self._in_think = True
        return out

    def flush(self) -> list[tuple[Kind, str]]:
        out: list[tuple[Kind, str]] = []
        if self._pending and (self._in_think or self._seen_text or self._pending.strip()):
            self._emit("reasoning" if self._in_think else "text", self._pending, out)
            self._pending = ""
        return out


def visible_text(content: str) -> str:
    """A whole answer's text without its leading `<think>` reasoning (the same rule as the
    streamed split: a tag after visible text is left alone)."""
    splitter = ThinkTagSplitter()
    parts = [*splitter.feed(content), *splitter.flush()]
    return "".join(text for kind, text in parts if kind == "text")

"""The block cache's message key: equal exactly when what the model would see is equal."""

from __future__ import annotations

from typing import Any

from comfyui_assistant.core.context.context_cache import signature
from hypothesis import given, settings
from hypothesis import strategies as st

# Small alphabets (with the tags themselves) so that different
# messages often share strings and a key that merged two of them would be found.
_s = st.text(alphabet="at\x00cnu", max_size=3)
_value = st.one_of(st.none(), _s, st.just(True))
_part = st.one_of(
    st.just({"type": "step-start"}),
    st.builds(lambda t, x: {"type": t, "text": x}, st.sampled_from(["text", "reasoning", "t"]), _s),
    st.builds(
        lambda t, c, s, p: {"type": t, "toolCallId": c, "state": s, "preliminary": p},
        st.sampled_from(["tool-a", "dynamic-tool"]),
        _s,
        _value,
        st.sampled_from([None, True, False]),
    ),
    st.builds(lambda t, u: {"type": t, "url": u}, st.sampled_from(["file", "c"]), _value),
    st.builds(lambda d: {"type": "data-context", "data": d}, st.integers()),
)
_message = st.builds(
    lambda i, r, parts: {"id": i, "role": r, "parts": parts},
    _value,
    st.sampled_from(["user", "assistant", "t"]),
    st.lists(_part, max_size=4),
)


def _visible(message: dict[str, Any], scope: str) -> tuple[Any, ...]:
    """What the key stands for, as nested tuples (unambiguous by construction)."""
    parts = []
    for p in message["parts"]:
        if p["type"] == "step-start":
            parts.append(("step-start",))
        elif p.get("text") is not None:
            parts.append((p["type"], "text", p["text"]))
        elif p.get("toolCallId") is not None:
            parts.append((p["type"], "call", p["toolCallId"], p["state"], p.get("preliminary")))
        else:
            parts.append((p["type"], "url", p.get("url")))
    return (scope, message["id"], message["role"], tuple(parts))


@settings(max_examples=3000, deadline=None)
@given(_message, _message, st.sampled_from(["", "t1", "t\x00"]))
def test_keys_are_equal_exactly_when_the_visible_content_is(a: Any, b: Any, scope: str) -> None:
    same = _visible(a, scope) == _visible(b, scope)
    assert (signature(a, scope) == signature(b, scope)) is same
    assert (signature(a, scope) == signature(a, "other")) is (scope == "other")


def test_a_plain_message_is_keyed_by_one_string() -> None:
    message = {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "tool-addNode", "toolCallId": "c1", "state": "output-available"},
            {"type": "text", "text": "Done."},
            {"type": "data-context", "data": {"tokens": 3}},
        ],
    }
    assert signature(message, "t1") == (
        "t1", "a1", "assistant",
        "step-start",
        "tool-addNode", "c", "c1", "output-available", None,
        "text", "t", "Done.",
        "data-context", "n",
    )  # fmt: skip
    with_nul = {**message, "parts": [{"type": "text", "text": "a\0b"}]}
    assert signature(with_nul) != signature({**message, "parts": [{"type": "text", "text": "a"}]})

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from comfyui_assistant.core.base.json_text import compact_json
from hypothesis import given, settings
from hypothesis import strategies as st

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=30,
)


def _reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@settings(max_examples=600, deadline=None)
@given(_values)
def test_compact_json_is_json_dumps_compact(value: Any) -> None:
    assert compact_json(value) == _reference(value)


def test_compact_json_edge_values() -> None:
    for value in ['é\n"\\', "", 0, -0.0, 1e300, math.inf, {"k": math.nan}, [], {}, (1, 2)]:
        assert compact_json(value) == _reference(value)
    assert compact_json({"b": 1, "a": [None, True]}) == '{"b":1,"a":[null,true]}'  # key order kept


def test_compact_json_refuses_what_json_refuses() -> None:
    with pytest.raises(TypeError):
        compact_json({"a": {1, 2}})
    with pytest.raises(TypeError):  # and the next call is not affected
        compact_json([object()])
    assert compact_json({"a": [1]}) == '{"a":[1]}'


def test_strict_json_refuses_numbers_past_a_float_and_keeps_the_rest() -> None:
    from comfyui_assistant.core.base.json_text import NotStrictJSON, strict_json

    past = "beyond the range of a 64-bit float (about 1.8e308), which a browser reads as Infinity"
    for text, number in [
        ("1e400", "1e400"),
        ('{"a": [[[-1e999]]]}', "-1e999"),
        ('[{"x": 1E+309}]', "1E+309"),
        ("[" + "9" * 309 + "]", "999999999999… (309 digits)"),
        ("-1" + "0" * 400, "-10000000000… (401 digits)"),
        ("[" + "1" * 5000 + "]", "111111111111… (5000 digits)"),  # (past Python's int limit)
    ]:
        with pytest.raises(NotStrictJSON) as refused:
            strict_json(text)
        assert str(refused.value) == f"it holds the number {number}, {past}: write a smaller number"
        assert not refused.value.syntax  # (JSON, but not a browser's: a .json file is refused)
    largest = "1.7976931348623157e308"
    kept = strict_json(f"[{largest}, -{largest}, 1e-400, {'9' * 308}]")
    assert kept == [1.7976931348623157e308, -1.7976931348623157e308, 0.0, int("9" * 308)]
    assert json.loads(compact_json(kept)) == kept

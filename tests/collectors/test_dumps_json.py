"""`dumps_json` (the steps' extra and info_json text) is exactly `json.dumps` with its options."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from deskscore.collectors.osworld import dumps_json

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # NaN and infinities too: both write them as Python's json does
    st.text(),  # any code point, lone surrogates included
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(_JSON)
def test_dumps_json_writes_what_json_dumps_writes(value):
    assert dumps_json(value) == json.dumps(value, sort_keys=True, ensure_ascii=False)


def test_dumps_json_refuses_what_json_dumps_refuses():
    for value in ({1: "a", "b": 2}, {"x": object()}, [b"bytes"]):
        try:
            want: object = json.dumps(value, sort_keys=True, ensure_ascii=False)
        except TypeError as e:
            want = type(e)
        try:
            got: object = dumps_json(value)
        except TypeError as e:
            got = type(e)
        assert got == want is TypeError

"""The JSON writers of steps: `dumps_json` is exactly `json.dumps` with its options; the compact
writers of info and extra agree with each other and with Python's json."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from deskscore.collectors.json_text import compact_json_writers
from deskscore.collectors.osworld import dumps_json

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # NaN and infinities too: both write them as Python's json does
    st.text(),  # any code point, lone surrogates included
)


def _json_values(scalars, keys):
    """Values JSON holds: `scalars`, in lists and objects with `keys`."""
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
        max_leaves=20,
    )


_JSON = _json_values(_SCALARS, st.text())


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


_TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)))  # no lone surrogates
_ORJSON = _json_values(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**63), max_value=2**64 - 1),
        st.floats(allow_nan=False, allow_infinity=False),
        _TEXT,
    ),
    keys=_TEXT,
)


@given(_ORJSON)
def test_the_fast_writer_writes_what_orjson_reads_as_the_compact_writer_does(value):
    import orjson

    fast, compact = compact_json_writers()
    assert compact(value) == json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    parsed = orjson.loads(json.dumps(value))  # what a trajectory line holds
    assert json.loads(fast(parsed)) == json.loads(compact(parsed))
    if not any(isinstance(v, float) for v in _leaves(parsed)):
        assert fast(parsed) == compact(parsed)  # floats may be spelt apart (1e16, 1e+16)


def test_the_compact_writer_keeps_what_only_pythons_json_reads():
    _, compact = compact_json_writers()
    value = json.loads('{"b": NaN, "a": [Infinity, 123456789012345678901234567890]}')
    assert compact(value) == '{"a":[Infinity,123456789012345678901234567890],"b":NaN}'


def test_the_fast_writer_hands_values_nested_past_orjson_to_pythons_json():
    fast, compact = compact_json_writers()
    deep = json.loads('{"a":' * 300 + "1" + "}" * 300)
    assert fast(deep) == compact(deep) == '{"a":' * 300 + "1" + "}" * 300


def _leaves(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value

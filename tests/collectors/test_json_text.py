"""A `json_writer` writes, and refuses, exactly what `json.dumps` with the same options does."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deskscore.collectors.json_text import json_writer

_KEYS = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none())
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(), st.binary(max_size=3)
)  # bytes: only a `default` writes them
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(_KEYS, inner, max_size=4)
    ),
    max_leaves=20,
)
_OPTIONS = [
    {"sort_keys": True},
    {"separators": (",", ":"), "default": str},
    {"sort_keys": True, "default": str},
    {},
]


def _outcome(write, value):
    try:
        return write(value)
    except (TypeError, ValueError) as e:
        return type(e)


@pytest.mark.parametrize("options", _OPTIONS, ids=lambda o: ",".join(sorted(o)) or "plain")
@given(value=_VALUES)
def test_a_writer_gives_the_text_or_the_error_json_dumps_gives(options, value):
    want = _outcome(lambda v: json.dumps(v, ensure_ascii=False, **options), value)
    assert _outcome(json_writer(**options), value) == want


def test_a_top_level_string_is_written_as_json_dumps_writes_it():
    write = json_writer(sort_keys=True)
    for text in ("", 'é\n"\\', "\ud800", "a" * 10_000):
        assert write(text) == json.dumps(text, ensure_ascii=False, sort_keys=True)

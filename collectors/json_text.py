"""JSON text of parsed values: exactly as `json.dumps` writes it, with its encoder built once,
or compact with sorted keys (`compact_json_writers`, the text of a step's info and extra).

`json.dumps` with any option builds a `JSONEncoder`, whose `encode` builds a C encoder, on
every call: about 1 us, more than encoding the `{}` or few keys a step's `info` and leftover
keys usually are, twice per trajectory line. A writer made here builds the C encoder once
for its options and then only calls it. It skips the circular-reference check: the values
come from parsed JSON, which cannot hold a cycle (one would raise RecursionError, not
ValueError)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring
from typing import Any


def json_writer(
    *,
    sort_keys: bool = False,
    separators: tuple[str, str] = (", ", ": "),
    default: Callable[[Any], Any] | None = None,
) -> Callable[[Any], str]:
    """A function writing what `json.dumps(value, ensure_ascii=False, sort_keys=sort_keys,
    separators=separators, default=default)` writes, and raising what it raises (TypeError
    for a value it cannot write)."""
    encoder = json.JSONEncoder(
        ensure_ascii=False,
        check_circular=False,
        sort_keys=sort_keys,
        separators=separators,
        default=default,
    )
    if c_make_encoder is None:  # an interpreter without json's C accelerator
        return encoder.encode
    item_sep, key_sep = separators
    write = c_make_encoder(
        None, encoder.default, encode_basestring, None, key_sep, item_sep, sort_keys, False, True
    )

    def encode(value: Any) -> str:
        if isinstance(value, str):  # a fast path, as in JSONEncoder.encode
            return encode_basestring(value)
        return "".join(write(value, 0))

    return encode


def compact_json_writers() -> tuple[Callable[[Any], str], Callable[[Any], str]]:
    """Two functions writing compact JSON text with sorted keys (`{"a":1,"b":[2]}`), the form
    of a step's info and leftover keys: the first for values orjson parsed, the second for
    any parsed value.

    The first is orjson's (a tenth of the time of Python's encoder, once per trajectory
    line), exact for what orjson parses: strings without lone surrogates, finite floats,
    integers within 64 bits (a value nested deeper than orjson writes goes to Python's
    encoder). A value Python's json parsed may hold NaN, an infinity or a larger integer,
    which orjson writes as null or refuses; the second writes them as Python's json does.
    Floats may be spelt differently by the two (1e16, 1e+16): the same number either way."""
    compact = json_writer(sort_keys=True, separators=(",", ":"))
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a declared dependency
        return compact, compact
    dumps, sort = orjson.dumps, orjson.OPT_SORT_KEYS

    def fast(value: Any) -> str:
        try:
            return dumps(value, option=sort).decode()
        except TypeError:  # nested deeper than orjson writes (it reads deeper): Python's json
            return compact(value)

    return fast, compact


def parse_error(e: BaseException) -> str:
    """Why a parser refused a text, in words its user can act on: for an integer past
    Python's digit limit, its own advice (`sys.set_int_max_str_digits`) is no user's to
    follow."""
    text = str(e)
    if "integer string conversion" in text:
        return f"an integer of more than {sys.get_int_max_str_digits()} digits, which is not read"
    return text or type(e).__name__


def scrub_surrogates(obj: Any) -> Any:
    """Replace lone surrogates (legal in JSON escapes, illegal in UTF-8) so Arrow can store them."""
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError:
            return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in obj)
        return obj
    if isinstance(obj, list):
        return [scrub_surrogates(v) for v in obj]
    if isinstance(obj, dict):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in obj.items()}
    return obj

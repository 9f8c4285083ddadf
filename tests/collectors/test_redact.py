"""`redact`: an API key echoed as it is, escaped, encoded or cut is replaced; nothing else."""

from __future__ import annotations

import base64
import json
import re
import urllib.parse

import pytest

from deskscore.collectors.redact import MIN_PREFIX, REDACTED, redact

KEY = "sk-proj/Zt4-qL0_wV9mB2x-Hc7rN1kY8pE3sJ6dA5fG"


@pytest.mark.parametrize(
    "echo",
    [
        KEY,
        json.dumps(KEY).replace("-", "\\u002d")[1:-1],  # JSON escapes, as a body may write it
        json.dumps(KEY, ensure_ascii=True).replace("/", "\\/")[1:-1],
        "".join(f"\\u{ord(c):04X}" for c in KEY),  # every character escaped, upper case
        repr(json.dumps(KEY).replace("-", "\\u002d"))[2:-2],  # a repr: backslashes doubled
        urllib.parse.quote(KEY, safe=""),
        "".join(f"%{ord(c):02x}" for c in KEY),
        KEY[:MIN_PREFIX],  # what an excerpt cut leaves of it
        KEY[: MIN_PREFIX + 5],
    ],
)
def test_every_form_of_the_key_is_replaced(echo: str) -> None:
    assert redact(f"reply: {echo}; end", KEY) == f"reply: {REDACTED}; end"


def _base64_decodings(text: str) -> list[bytes]:
    """Every run of base64 characters in `text` decoded from each of its first 4 offsets."""
    out = []
    for run in re.findall(r"[A-Za-z0-9+/_-]{4,}", text):
        for start in range(4):
            chunk = run[start:][: (len(run) - start) // 4 * 4]
            out.append(base64.urlsafe_b64decode(chunk.replace("+", "-").replace("/", "_")))
    return out


@pytest.mark.parametrize("before", ["", "A", "Bearer ", "Authorization: Bearer "])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_the_key_inside_base64_text_is_replaced_at_any_alignment(before: str, encode) -> None:
    encoded = encode(f"{before}{KEY} and more".encode()).decode()
    assert any(KEY.encode() in d for d in _base64_decodings(encoded))
    text = redact(encoded, KEY)
    assert REDACTED in text
    assert not any(KEY[:MIN_PREFIX].encode() in d for d in _base64_decodings(text))


def test_other_text_and_short_or_missing_keys_change_nothing() -> None:
    text = "sk-proj is a prefix too short to say anything; the verdict is pass"
    assert redact(text, KEY) == text
    assert redact(text, None) == text
    assert redact("abc1234", "abc1234") == "abc1234"  # below MIN_PREFIX: ordinary words


def test_a_prefix_followed_by_more_of_the_key_is_replaced_whole() -> None:
    assert redact(f"{KEY[:20]}zzz {KEY}", KEY) == f"{REDACTED}zzz {REDACTED}"

"""Keeping a secret (an API key) out of every text that is stored or printed.

A server may echo the key it was sent, and not always as it was sent: in a JSON body a
character may be written as a `\\u002d` escape (and in the repr of such a body, with its
backslash doubled), in a URL as `%2D`, in a header dump base64-encoded; and an excerpt cut
at a fixed length may keep only the key's first characters. `redact` replaces all of these:

- the key, and any prefix of it of at least `MIN_PREFIX` characters (what is left of a key
  an excerpt cut), each character as itself, as a JSON `\\uXXXX` escape (any number of
  backslashes, any case) or percent-encoded (`%XX`, any case), mixed freely;
- the base64 of the key, at each of the three alignments it can have inside a longer
  encoded text (the characters that do not depend on its neighbours).

A key shorter than `MIN_PREFIX` is not looked for: so short a text would match ordinary
words, and no real API key is that short.
"""

from __future__ import annotations

import base64
import re
from functools import lru_cache

MIN_PREFIX = 8
"""The shortest part of the key that is replaced (its first characters, cut by an excerpt)."""
REDACTED = "[redacted]"


def _char(c: str) -> str:
    """A pattern for one character of the key, in any of the forms it may be echoed in."""
    code = ord(c)
    forms = [re.escape(c)]
    if code < 0x10000:
        forms.append(r"\\+u" + "".join(f"[{d.lower()}{d.upper()}]" for d in f"{code:04x}"))
    if c == "/":
        forms.append(r"\\+/")  # JSON may escape a slash
    if code < 0x80:
        forms.append("%" + "".join(f"[{d.lower()}{d.upper()}]" for d in f"{code:02x}"))
        if c == " ":
            forms.append(r"\+")
    return "(?:" + "|".join(forms) + ")"


def _base64_cores(secret: bytes) -> list[str]:
    """The base64 of `secret` as it appears inside any longer base64 text (standard or URL
    alphabet): at each offset in its 3-byte group (0, 1 or 2 bytes before it), the characters
    that depend on its bytes only."""
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + secret).decode("ascii")
        first = (8 * offset + 5) // 6  # characters before it mix in the bytes before the key
        end = 8 * (offset + len(secret)) // 6  # the next one mixes in the bytes after it
        core = encoded[first:end]
        cores |= {core, core.replace("+", "-").replace("/", "_")}
    return sorted(c for c in cores if len(c) >= MIN_PREFIX)


@lru_cache(maxsize=8)
def _patterns(secret: str) -> tuple[re.Pattern[str], list[re.Pattern[str]], list[str]]:
    chars = [_char(c) for c in secret]
    start = re.compile("".join(chars[:MIN_PREFIX]))
    rest = [re.compile(p) for p in chars[MIN_PREFIX:]]
    return start, rest, _base64_cores(secret.encode("utf-8"))


def redact(text: str, secret: str | None) -> str:
    """`text` with every echo of `secret` (see the module's docstring) replaced by
    `[redacted]`; `text` itself when there is no secret or it is too short to look for."""
    if not secret or len(secret) < MIN_PREFIX or not text:
        return text
    start, rest, cores = _patterns(secret)
    for core in cores:
        text = text.replace(core, REDACTED)
    out: list[str] = []
    at = 0
    for match in start.finditer(text):
        if match.start() < at:
            continue
        end = match.end()
        for pattern in rest:  # the longest prefix of the key from here
            more = pattern.match(text, end)
            if more is None:
                break
            end = more.end()
        out.append(text[at : match.start()])
        out.append(REDACTED)
        at = end
    out.append(text[at:])
    return "".join(out)


__all__ = ["MIN_PREFIX", "REDACTED", "redact"]

"""Printing query results: aligned tables for people, csv / json / markdown for tools.

Archive content (run paths, task ids, actions, member names) is untrusted: printed raw, an
escape sequence in it would set the terminal's title, clear the screen or reorder the text
(bidi overrides). Every text meant for people goes through `printable`, which shows control
characters escaped (`\\x1b`, `\\u202e`); csv and json keep the data exact for tools.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sys
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any, TextIO

from deskscore.sql.cells import DEFAULT_DIGITS, cell_text, decimals

__all__ = [
    "DEFAULT_DIGITS", "DIGITS", "EXACT_FORMATS", "FORMATS", "cell_text", "decimals", "printable",
    "render", "render_relation", "say",
]  # fmt: skip

FORMATS = ("table", "csv", "json", "md")
EXACT_FORMATS = ("csv", "json")
"""The formats for tools: their text is the data, control characters included."""

_NOT_ASCII_CONTROLS = (
    "\x7f-\x9f"  # DEL and C1 (a one-character CSI, OSC, ...)
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi marks, embeddings, overrides
    "\u2028\u2029"  # line and paragraph separators
    "\ud800-\udfff"  # lone surrogates (undecodable file names): print would fail on them
)
_CONTROL = re.compile(f"[\x00-\x1f{_NOT_ASCII_CONTROLS}]")
"""What `printable` escapes: C0 (ESC, BEL, CR, backspace, ...) and the above."""
_CONTROL_IN_LINES = re.compile(f"[\x00-\x08\x0b-\x1f{_NOT_ASCII_CONTROLS}]")
"""As _CONTROL, but tab and newline are kept: the layout of text of several lines."""


_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, lines: bool = False) -> str:
    """`text` with control characters shown escaped, as Python writes them in a string
    (ESC as `\\x1b`, U+202E as `\\u202e`, a tab as `\\t`); any other text, backslashes
    included, unchanged.

    `lines=True` keeps newlines and tabs (a message of several lines); without it a value
    stays on one line, as a table cell must.
    """
    return (_CONTROL_IN_LINES if lines else _CONTROL).sub(_escaped, text)


DIGITS: list[int | None] = [None]
"""The decimals tables show, as --digits or deskscore.toml set them (None: DEFAULT_DIGITS);
pipelines.cli.main sets it once per command."""


def say(text: str, fmt: str = "table", file: TextIO | None = None) -> None:
    """Print a command's output: text for people with control characters escaped (its
    lines kept), csv and json exactly as rendered."""
    out = text if fmt in EXACT_FORMATS else printable(text, lines=True)
    print(out, file=file if file is not None else sys.stdout)


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _md_cell(text: str, fmt: str) -> str:
    """A cell's text with `|` escaped in Markdown, where a bare one would end the cell."""
    return text.replace("|", "\\|") if fmt == "md" else text


def render(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    fmt: str = "table",
    digits: int | None = None,
) -> str:
    """`rows` under `columns` as text in `fmt`; numbers right-aligned in tables, with `digits`
    decimals (default: the --digits setting, else 2; a non-zero figure never shows as 0)."""
    if digits is None:
        digits = DIGITS[-1] if DIGITS[-1] is not None else DEFAULT_DIGITS
    if fmt == "json":
        return json.dumps(
            [{c: _json_value(v) for c, v in zip(columns, row, strict=True)} for row in rows],
            indent=2,
            default=str,  # decimals, intervals, UUIDs, bytes: as their text
        )
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[cell_text(v, 12) for v in row] for row in rows])
        return buf.getvalue().rstrip("\n")
    columns = [_md_cell(printable(str(c)), fmt) for c in columns]
    cells = [[_md_cell(printable(cell_text(v, digits)), fmt) for v in row] for row in rows]
    numeric = [
        all(
            isinstance(row[i], int | float) and not isinstance(row[i], bool)
            for row in rows
            if row[i] is not None
        )
        for i in range(len(columns))
    ]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return ("| " + " | ".join(parts) + " |") if fmt == "md" else "  ".join(parts).rstrip()

    if fmt == "md":
        rule = (
            "|"
            + "|".join(
                ("-" * (w + 1) + ":") if num else ("-" * (w + 2))
                for w, num in zip(widths, numeric, strict=True)
            )
            + "|"
        )
    else:
        rule = "  ".join("-" * w for w in widths)
    out = [line(list(columns)), rule, *(line(r) for r in cells)]
    if fmt == "table":
        out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)


def render_relation(relation: Any, fmt: str = "table", digits: int | None = None) -> str:
    """A DuckDB relation rendered with `render`."""
    return render(relation.columns, relation.fetchall(), fmt, digits)

"""Printing query results: aligned tables for people, csv / json / markdown for tools."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

FORMATS = ("table", "csv", "json", "md")


def _cell(value: Any, digits: int = 2) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.{digits}f}"
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def render(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = "table", digits: int = 2
) -> str:
    """`rows` under `columns` as text in `fmt`; numbers right-aligned in tables."""
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
        writer.writerows([[_cell(v, 12) for v in row] for row in rows])
        return buf.getvalue().rstrip("\n")
    cells = [[_cell(v, digits) for v in row] for row in rows]
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


def render_relation(relation: Any, fmt: str = "table", digits: int = 2) -> str:
    """A DuckDB relation rendered with `render`."""
    return render(relation.columns, relation.fetchall(), fmt, digits)

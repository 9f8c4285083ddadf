"""Query results as text people read: how many decimals a figure shows, and a cell's text.

One rule for every place that shows figures (the commands' tables, the report, the viewer):
`digits` decimals, or more when they would round a non-zero figure to zero, so a cost of
$0.0004 never reads as 0.00.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Any

DEFAULT_DIGITS = 2
"""Decimals of figures unless --digits or deskscore.toml say otherwise."""


def decimals(value: float, digits: int) -> int:
    """How many decimals show `value`: `digits`, or more when `digits` would round a non-zero
    value to zero (then its first two significant digits show: 0.00042, not 0.00)."""
    if value == 0 or not math.isfinite(value) or round(abs(value), digits) != 0:
        return digits
    return max(digits, 1 - math.floor(math.log10(abs(value))))


def cell_text(value: Any, digits: int = DEFAULT_DIGITS) -> str:
    """A value as the text of a table cell (and the exact text of a csv cell)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.{decimals(value, digits)}f}"
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


__all__ = ["DEFAULT_DIGITS", "cell_text", "decimals"]

"""What counts as a number in archived JSON and action code, read one way everywhere."""

from __future__ import annotations

import math
from typing import Any


def finite_float(value: Any) -> float | None:
    """An int or float (not a bool, not a string) as a finite float; anything else None.

    An integer beyond a float's range is None too: `float()` raises OverflowError on it
    (`math.isfinite` as well), and an archived file holding one made `deskscore ingest`
    fail with a traceback."""
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is int:
        try:
            return float(value)
        except OverflowError:
            return None
    return None

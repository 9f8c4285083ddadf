"""Figures with their uncertainty, as the leaderboard prints them (`--ci`).

The intervals are the score pipeline's (`leaderboard_intervals`, method bootstrap_domain by
default); this only looks them up per run and figure and formats them: `54.5 ± 2.6` (half the
95% interval) or `[51.9, 57.1]`, in the leaderboard's units (percent figures x 100). Tables get
the figure and its interval in one right-aligned cell; csv and json get three more columns per
figure (<column>_se, <column>_ci_low, <column>_ci_high) so the numbers stay numbers.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

CI_STYLES = ("none", "pm", "interval")
"""--ci: no interval (the default, as before), figure ± half-interval, or [low, high]."""


class WithInterval(float):
    """A figure that prints with its interval: still a float, so tables right-align it."""

    low: float | None
    high: float | None
    style: str

    def __new__(cls, value: float, low: float | None, high: float | None, style: str):
        out = super().__new__(cls, value)
        out.low, out.high, out.style = low, high, style
        return out

    def __format__(self, spec: str) -> str:
        shown = float.__format__(float(self), spec)
        if self.low is None or self.high is None:
            return shown
        if self.style == "interval":
            return f"[{self.low:{spec}}, {self.high:{spec}}]"
        return f"{shown} ± {(self.high - self.low) / 2:{spec}}"


Bounds = dict[tuple[Hashable, str], tuple[float | None, float | None, float | None]]
"""(run_id, leaderboard column) -> (se, ci_low, ci_high) in the leaderboard's units (for
slices, (run_id, slice) stands for the run id)."""


def bounds(con: Any, condition: str, params: Mapping[str, Any], method: str) -> Bounds:
    """Every run's intervals under the configuration `condition` selects, by `method`."""
    from deskscore.scorers import metrics

    shown = {m.name: m for m in metrics.metrics()}
    rows = con.sql(
        f"SELECT run_id, metric, se, ci_low, ci_high FROM leaderboard_intervals "
        f"WHERE {condition} AND method = $method",
        params=dict(params) | {"method": method},
    ).fetchall()
    out: Bounds = {}
    for run_id, name, se, low, high in rows:
        m = shown.get(name)
        if m is None:
            continue
        scale = 100.0 if m.percent else 1.0
        out[(run_id, m.column)] = tuple(None if v is None else v * scale for v in (se, low, high))  # type: ignore[assignment]
    return out


def ids_of(relation: Any) -> list[str]:
    """The run ids of a one-column relation, in its order."""
    return [r[0] for r in relation.fetchall()]


def table_rows(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    run_ids: Sequence[Hashable],
    found: Bounds,
    style: str,
) -> list[list[Any]]:
    """Rows whose figures carry their interval (figures without one are left as they are)."""
    out = []
    for row, run_id in zip(rows, run_ids, strict=True):
        cells = list(row)
        for i, column in enumerate(columns):
            b = found.get((run_id, column))
            if b is not None and isinstance(cells[i], float):
                cells[i] = WithInterval(cells[i], b[1], b[2], style)
        out.append(cells)
    return out


def flat_rows(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    run_ids: Sequence[Hashable],
    found: Bounds,
) -> tuple[list[str], list[list[Any]]]:
    """csv/json: each figure with an interval followed by its _se, _ci_low, _ci_high columns."""
    with_ci = [c for c in columns if any(k[1] == c for k in found)]
    names: list[str] = []
    for c in columns:
        names.append(c)
        if c in with_ci:
            names += [f"{c}_se", f"{c}_ci_low", f"{c}_ci_high"]
    out = []
    for row, run_id in zip(rows, run_ids, strict=True):
        cells: list[Any] = []
        for c, v in zip(columns, row, strict=True):
            cells.append(v)
            if c in with_ci:
                cells += list(found.get((run_id, c), (None, None, None)))
        out.append(cells)
    return names, out


DEFAULT_METHOD = "bootstrap_domain"
"""The method shown (deskscore.scorers.intervals.DEFAULT_METHOD; named here so the command
line does not import numpy)."""

__all__ = [
    "CI_STYLES",
    "DEFAULT_METHOD",
    "WithInterval",
    "bounds",
    "flat_rows",
    "ids_of",
    "table_rows",
]

"""The 95% intervals of `leaderboard --by ... --ci`: each slice rate's units fetched with one
query per breakdown, from the same relations the marts sum (per_domain_units beside
per_domain; deskcraft_slice_units beside
the DeskCraft slice marts), and resampled by
scorers.slice_intervals. Looked up as pipelines.cli.intervals looks up run figures, with
(run_id, slice) for the run id, so its table_rows and flat_rows render them unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from deskscore.pipelines.cli.intervals import Bounds

OSWORLD_RATES = {
    "run": (("success_rate_run_pct", "num_reward"),),
    "human": (("success_rate_human_pct", "num_reward"), ("wes_plus_single_pct", "num_wes")),
}
"""per_domain_units' unit sets: the per_domain column each one's rate is and its numerator."""

DESKCRAFT_RATES = (("strict_success_pct", "num_strict"), ("mean_score_pct", "num_score"))
"""The DeskCraft slice marts' rates, each over the episodes with a usable result."""

SLICINGS = {"app": "app", "domain": "domain", "mode": "mode"}
"""deskcraft_slice_units' slicing behind each DeskCraft `--by` (level: by its source)."""


def _bounds(
    units: Mapping[tuple[Any, Any, str], tuple[list[float], list[float]]],
    rows: Sequence[Sequence[Any]],
    columns: Sequence[str],
    key: str,
) -> Bounds:
    """Intervals, in percent, of the cells of `rows` (the mart's, run_id last) that the mart
    does not leave empty."""
    from deskscore.scorers.slice_intervals import slice_intervals

    found = slice_intervals(units)
    at = {c: i for i, c in enumerate(columns)}
    out: dict[Any, tuple[float | None, float | None, float | None]] = {}
    for row in rows:
        run_id, value = row[-1], row[at[key]]
        for column in {c for _, _, c in units}:
            got = found.get((run_id, value, column))
            if got is not None and row[at[column]] is not None:
                out[((run_id, value), column)] = (100 * got.se, 100 * got.ci_low, 100 * got.ci_high)
    return out  # type: ignore[return-value]


def osworld_bounds(
    con: Any,
    condition: str,
    params: Mapping[str, Any],
    categories: Mapping[str, str] | None,
    rows: Sequence[Sequence[Any]],
    columns: Sequence[str],
    key: str,
) -> Bounds:
    """The intervals of per_domain's rates (or per_category's, given domain -> category)."""
    units: dict[tuple[Any, Any, str], tuple[list[float], list[float]]] = {}
    found = con.sql(
        "SELECT run_id, domain, over, num_reward, num_wes_plus_single, den "
        f"FROM per_domain_units AS v WHERE {condition} ORDER BY ALL",
        params=dict(params) or None,
    ).fetchall()
    for run_id, domain, over, reward, wes, den in found:
        sliced = domain if categories is None else categories.get(domain, domain)
        for column, numerator in OSWORLD_RATES[over]:
            num, dens = units.setdefault((run_id, sliced, column), ([], []))
            num.append(reward if numerator == "num_reward" else wes)
            dens.append(den)
    return _bounds(units, rows, columns, key)


def deskcraft_bounds(
    con: Any,
    by: str,
    level_source: str,
    split: str,
    rows: Sequence[Sequence[Any]],
    columns: Sequence[str],
    key: str,
) -> Bounds:
    """The intervals of a DeskCraft slice mart's rates (per_level, per_app,
    deskcraft_per_domain, per_mode), over the episodes deskcraft_slices sums."""
    slicing = f"level_{level_source}" if by == "level" else SLICINGS[by]
    split = "interactive" if by == "mode" else split
    found = con.sql(
        "SELECT run_id, slice, num_strict, num_score, den FROM deskcraft_slice_units "
        "WHERE slicing = $slicing AND ($split = 'all' OR split = $split) ORDER BY ALL",
        params={"slicing": slicing, "split": split},
    ).fetchall()
    units: dict[tuple[Any, Any, str], tuple[list[float], list[float]]] = {}
    for run_id, sliced, strict, score, den in found:
        for (column, _), num in zip(DESKCRAFT_RATES, (strict, score), strict=True):
            nums, dens = units.setdefault((run_id, sliced, column), ([], []))
            nums.append(num)
            dens.append(den)
    return _bounds(units, rows, columns, key)


__all__ = ["deskcraft_bounds", "osworld_bounds"]

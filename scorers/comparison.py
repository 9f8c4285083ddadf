"""Two runs compared figure by figure on the tasks both ran: the assembly `deskscore compare`
prints, from per-task values (deskscore.scorers.paired holds the statistics).

Strict success is the figure the verdict is about: its paired difference has a bootstrap
interval, McNemar's exact test gives its p-value, and the minimum detectable difference says
how large a true gap these tasks could show at 80% power.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from deskscore.scorers.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from deskscore.scorers.paired import (
    Outcomes,
    PairedDifference,
    mcnemar_exact,
    min_detectable_difference,
    outcomes,
    paired_difference,
)

ALPHA = 0.05
POWER = 0.8


class Comparison(NamedTuple):
    """Run A against run B on the tasks both ran."""

    n_tasks: int
    outcomes: Outcomes
    """Per-task wins, losses and ties of A (by reward)."""
    figures: dict[str, PairedDifference]
    """Each figure's paired difference (A - B), in the order given."""
    a_only: int
    """Tasks A succeeded strictly and B did not."""
    b_only: int
    p_value: float
    """McNemar's exact p for strict success."""
    mdd: float
    """The minimum detectable difference in strict success (a fraction)."""


def compare(
    values_a: Mapping[str, Sequence[float]],
    values_b: Mapping[str, Sequence[float]],
    *,
    strata: Sequence[Hashable] | None = None,
    success: str = "success",
    reward: str = "reward",
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Comparison:
    """Compare per-task values (NaN: no value for that task), aligned task by task; `success`
    and `reward` name the strict-success (0/1) and reward series."""
    sa = np.asarray(values_a[success], dtype=np.float64)
    sb = np.asarray(values_b[success], dtype=np.float64)
    figures = {
        name: paired_difference(
            values_a[name], values_b[name], strata=strata, n_resamples=n_resamples, seed=seed
        )
        for name in values_a
    }
    a_only = int(np.sum((sa == 1) & (sb == 0)))
    b_only = int(np.sum((sa == 0) & (sb == 1)))
    both = np.isfinite(sa) & np.isfinite(sb)
    return Comparison(
        int(both.sum()),
        outcomes(np.asarray(values_a[reward])[both], np.asarray(values_b[reward])[both]),
        figures,
        a_only,
        b_only,
        mcnemar_exact(a_only, b_only),
        min_detectable_difference(sa[both] - sb[both], ALPHA, POWER),
    )


def verdict(c: Comparison, name_a: str = "A", name_b: str = "B", success: str = "success") -> str:
    """One sentence: which run is higher in strict success, by how much, how sure."""
    d = c.figures[success]
    if not c.n_tasks:
        return "no task was run by both"
    points = 100 * d.difference
    ci = f"95% CI [{100 * d.ci_low:.1f}, {100 * d.ci_high:.1f}]"
    p = f"p = {c.p_value:.3f}" if c.p_value >= 0.001 else "p < 0.001"
    if c.p_value < ALPHA and d.difference != 0:
        higher = name_a if d.difference > 0 else name_b
        return f"{higher} higher, difference {abs(points):.1f} points, {ci}, {p}"
    return (
        f"no significant difference: {points:+.1f} points, {ci}, {p} (smaller than the "
        f"{100 * c.mdd:.1f} points these {c.n_tasks} tasks can detect)"
        if abs(points) < 100 * c.mdd
        else f"no significant difference: {points:+.1f} points, {ci}, {p}"
    )


__all__ = ["ALPHA", "POWER", "Comparison", "compare", "verdict"]

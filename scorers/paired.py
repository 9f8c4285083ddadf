"""Paired comparisons of two runs on the tasks both ran (Miller 2024, section 4: when two
models answer the same questions, the paired difference removes the between-task variance).

- `paired_difference`: the difference of two means over the common tasks with its bootstrap
  interval (the same resample weights for both runs, so the pairing is kept);
- `mcnemar_exact`: McNemar's exact test for strict success, a two-sided binomial test of the
  discordant pairs against 1/2 (scipy.stats.binomtest's p, from exact integer sums);
- `holm`: Holm's step-down adjustment of several p-values (family-wise error rate);
- `min_detectable_difference`: the smallest true difference a paired test at level alpha
  detects with the given power, from the spread of the per-task differences.
"""

from __future__ import annotations

import operator
from collections.abc import Hashable, Sequence
from statistics import NormalDist
from typing import NamedTuple

import numpy as np

from deskscore.scorers.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    LEVEL,
    percentile_interval,
    ratio,
    resample_weights,
    standard_error,
)


class Outcomes(NamedTuple):
    """Per-task wins, losses and ties of A against B (higher value wins)."""

    wins: int
    losses: int
    ties: int


def outcomes(a: Sequence[float], b: Sequence[float]) -> Outcomes:
    """How many tasks A scored higher, lower or the same as B on."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return Outcomes(int(np.sum(x > y)), int(np.sum(x < y)), int(np.sum(x == y)))


EXACT_UP_TO = 20_000
"""Discordant pairs up to which McNemar's p is summed in integers (a benchmark has hundreds of
tasks; 20,000 takes 30 ms): the sum's cost grows with their square (2.7 s at 201,000),
scipy's does not, and beyond this scipy computes it (importing scipy.stats then)."""


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p from the discordant counts (A succeeded and B did not, and
    the reverse); 1.0 when there is no discordant pair.

    The p of `scipy.stats.binomtest(a_only, n, 0.5)`: under 1/2 the binomial is symmetric,
    so the outcomes at most as likely as the one seen are the two tails beyond it, and p is
    twice the smaller tail, at most 1. The tail is summed in integers, exactly, and divided
    once (correctly rounded): importing scipy.stats took 0.65 s of `deskscore compare`'s
    1.3 s. Past EXACT_UP_TO pairs, scipy's own."""
    a_only, b_only = operator.index(a_only), operator.index(b_only)  # numpy's too, as ints
    if a_only < 0 or b_only < 0:
        raise ValueError(f"discordant counts must be >= 0, not {a_only} and {b_only}")
    n = a_only + b_only
    if n == 0:
        return 1.0
    if n > EXACT_UP_TO:
        from scipy import stats

        return float(stats.binomtest(a_only, n, 0.5).pvalue)
    k = min(a_only, b_only)
    if 2 * k == n:
        return 1.0
    term = tail = 1  # C(n, 0), then C(n, i) for i up to k
    for i in range(k):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / 2**n)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given: the i-th smallest times (m - i), made
    monotone, capped at 1."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = scaled
    return out.tolist()


def min_detectable_difference(
    differences: Sequence[float], alpha: float = 0.05, power: float = 0.8
) -> float:
    """(z_{1-alpha/2} + z_power) x SE of the mean paired difference: below this, a true
    difference is missed more often than 1 - power. NaN with fewer than two tasks."""
    d = np.asarray(differences, dtype=np.float64)
    if d.size < 2:
        return float("nan")
    se = float(np.std(d, ddof=1) / np.sqrt(d.size))
    z = NormalDist().inv_cdf
    return float((z(1 - alpha / 2) + z(power)) * se)


class PairedDifference(NamedTuple):
    """Two means over the same units and their difference (a - b) with a bootstrap interval."""

    n: int
    mean_a: float
    mean_b: float
    difference: float
    se: float
    ci_low: float
    ci_high: float


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    strata: Sequence[Hashable] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = LEVEL,
) -> PairedDifference:
    """Mean of a minus mean of b over the units where both are finite; the interval resamples
    those units (within `strata`) with one weight matrix for both, so the pairing is kept."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    both = np.isfinite(x) & np.isfinite(y)
    x, y = x[both], y[both]
    n = int(both.sum())
    if n == 0:
        nan = float("nan")
        return PairedDifference(0, nan, nan, nan, nan, nan, nan)
    kept = None if strata is None else [s for s, k in zip(strata, both, strict=True) if k]
    w = resample_weights(n, n_resamples, seed, kept)
    ones = np.ones(n)
    resampled = ratio(w, x - y, ones)
    low, high = percentile_interval(resampled, level)
    return PairedDifference(
        n, float(x.mean()), float(y.mean()), float((x - y).mean()),
        standard_error(resampled), low, high,
    )  # fmt: skip


__all__ = [
    "Outcomes",
    "PairedDifference",
    "holm",
    "mcnemar_exact",
    "min_detectable_difference",
    "outcomes",
    "paired_difference",
]

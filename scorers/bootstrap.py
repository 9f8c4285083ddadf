"""The bootstrap over tasks, vectorised: resample weights, ratio-of-sums figures, intervals.

A resample draws n units (tasks) with replacement; instead of materialising it, each resample
is a row of multinomial weights (how many times each unit was drawn), so a figure that is a
ratio of sums over units becomes two matrix products for all B resamples at once. With strata
(OSWorld domains, DeskCraft apps) each stratum is resampled on its own with its own size, the
stratified ("within-cluster") bootstrap: a benchmark's domain composition is fixed by its
design, so it is not a source of sampling noise. Seeds make every figure reproducible.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from deskscore.scorers.config import DEFAULT_BOOTSTRAP_RESAMPLES as DEFAULT_RESAMPLES
from deskscore.scorers.config import DEFAULT_BOOTSTRAP_SEED as DEFAULT_SEED

LEVEL = 0.95


def resample_weights(
    n_units: int,
    n_resamples: int,
    seed: int | np.random.Generator = DEFAULT_SEED,
    strata: Sequence[Hashable] | None = None,
) -> np.ndarray:
    """(n_resamples x n_units) counts: row b says how often resample b drew each unit.

    Without `strata` every row sums to n_units; with them (one label per unit) each stratum's
    columns sum to its size, so the strata keep their shares."""
    rng = np.random.default_rng(seed)
    if n_units == 0 or n_resamples == 0:
        return np.zeros((n_resamples, n_units), dtype=np.float64)
    if strata is None:
        groups = [np.arange(n_units)]
    else:
        labels = np.asarray([str(s) for s in strata])
        groups = [np.flatnonzero(labels == s) for s in sorted(set(labels.tolist()))]
    # Each stratum's size in draws with replacement per resample, as flat (row, unit) cells,
    # counted at once: multinomial(k, 1/k) counts, without a per-category binomial loop.
    base = (np.arange(n_resamples) * n_units)[:, None]
    cells = [
        (base + idx[rng.integers(0, len(idx), size=(n_resamples, len(idx)))]).ravel()
        for idx in groups
    ]
    counts = np.bincount(np.concatenate(cells), minlength=n_resamples * n_units)
    return counts.reshape(n_resamples, n_units).astype(np.float64)


def ratio(weights: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """sum(w num) / sum(w den) per row of weights (NaN where the denominator is 0)."""
    top = weights @ num
    bottom = weights @ den
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bottom != 0, top / np.where(bottom != 0, bottom, 1.0), np.nan)


def percentile_interval(resampled: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The percentile interval of the resampled figures (NaN resamples left out)."""
    finite = resampled[np.isfinite(resampled)]
    if finite.size == 0:
        return (float("nan"), float("nan"))
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return (float(low), float(high))


def standard_error(resampled: np.ndarray) -> float:
    """The bootstrap standard error: the resampled figures' standard deviation."""
    finite = resampled[np.isfinite(resampled)]
    return float(np.std(finite, ddof=1)) if finite.size > 1 else float("nan")


__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "LEVEL",
    "percentile_interval",
    "ratio",
    "resample_weights",
    "standard_error",
]

"""The bootstrap over tasks, vectorised: resample weights, ratio-of-sums figures, intervals.

A resample draws n units (tasks) with replacement; instead of materialising it, each resample
is a row of multinomial weights (how many times each unit was drawn), so a figure that is a
ratio of sums over units becomes two matrix products for all B resamples at once. With strata
(OSWorld domains, DeskCraft apps) each stratum is resampled on its own with its own size, the
stratified ("within-cluster") bootstrap: a benchmark's domain composition is fixed by its
design, so it is not a source of sampling noise. Seeds make every figure reproducible.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import numpy as np

from deskscore.scorers.config import DEFAULT_BOOTSTRAP_RESAMPLES as DEFAULT_RESAMPLES
from deskscore.scorers.config import DEFAULT_BOOTSTRAP_SEED as DEFAULT_SEED

LEVEL = 0.95


BLOCK_CELLS = 1_000_000
"""Weights held at once by `weight_blocks` (resamples x units): 8 MB of float64 (one row at
least, for a set of more units than that)."""


def resample_weights(
    n_units: int,
    n_resamples: int,
    seed: int | np.random.Generator = DEFAULT_SEED,
    strata: Sequence[Hashable] | None = None,
    dtype: Any = np.float64,
) -> np.ndarray:
    """(n_resamples x n_units) counts: row b says how often resample b drew each unit.

    Without `strata` every row sums to n_units; with them (one label per unit) each stratum's
    columns sum to its size, so the strata keep their shares. `dtype`: the counts' type (an
    integer type must hold n_units)."""
    return next(weight_blocks(n_units, n_resamples, seed, strata, block_cells=None, dtype=dtype))


def weight_blocks(
    n_units: int,
    n_resamples: int,
    seed: int | np.random.Generator = DEFAULT_SEED,
    strata: Sequence[Hashable] | None = None,
    *,
    block_cells: int | None = BLOCK_CELLS,
    dtype: Any = np.float64,
) -> Iterator[np.ndarray]:
    """The rows of `resample_weights`, the same counts, a block of rows at a time: about
    `block_cells` cells each (None: all rows in one block), so a set of any size is
    resampled in bounded memory (a whole matrix of 36,900 episodes by 1,000 resamples is
    295 MB, and its drawing took four times that).

    The draws are one stream: stratum after stratum (in sorted order), each all its resamples'
    draws. A block of rows takes each stratum's draws from where that stratum starts in the
    stream, found by drawing the strata before it once and discarding them."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if n_units == 0 or n_resamples == 0:
        yield np.zeros((n_resamples, n_units), dtype=dtype)
        return
    groups = _groups(n_units, strata)
    rows = n_resamples
    if block_cells is not None:
        rows = max(1, block_cells // n_units)
    if rows >= n_resamples:  # one block: the strata drawn in turn from the stream itself
        starts = [rng] * len(groups)
        rows = n_resamples
    else:
        starts = _stratum_starts(rng, groups, n_resamples, rows)
    for first in range(0, n_resamples, rows):
        block = min(rows, n_resamples - first)
        weights = None if len(groups) == 1 else np.zeros((block, n_units), dtype=dtype)
        for gen, idx in zip(starts, groups, strict=True):
            size = len(idx)
            # multinomial(size, 1/size) counts per row, as flat (row, unit) cells counted at
            # once, without a per-category binomial loop
            cells = (
                np.arange(block)[:, None] * size + gen.integers(0, size, (block, size))
            ).ravel()
            counts = np.bincount(cells, minlength=block * size).reshape(block, size)
            if weights is None:  # one stratum: its units are all the units, in order
                weights = counts.astype(dtype, copy=False)
            else:
                weights[:, idx] = counts
        yield weights


def _groups(n_units: int, strata: Sequence[Hashable] | None) -> list[np.ndarray]:
    """Each stratum's unit positions, strata in sorted order (all units: one stratum)."""
    if strata is None:
        return [np.arange(n_units)]
    labels = np.asarray([str(s) for s in strata])
    return [np.flatnonzero(labels == s) for s in sorted(set(labels.tolist()))]


def _stratum_starts(
    rng: np.random.Generator, groups: list[np.ndarray], n_resamples: int, rows: int
) -> list[np.random.Generator]:
    """A generator per stratum, at the point of `rng`'s stream where its draws begin."""
    starts = []
    for i, idx in enumerate(groups):
        start = np.random.Generator(type(rng.bit_generator)())
        start.bit_generator.state = rng.bit_generator.state
        starts.append(start)
        if i + 1 < len(groups):  # skip this stratum's draws, a block at a time
            for first in range(0, n_resamples, rows):
                rng.integers(0, len(idx), (min(rows, n_resamples - first), len(idx)))
    return starts


def resampled_sums(
    n_units: int,
    n_resamples: int,
    seed: int | np.random.Generator,
    values: np.ndarray,
    strata: Sequence[Hashable] | None = None,
    *,
    block_cells: int | None = BLOCK_CELLS,
) -> np.ndarray:
    """weights @ values for the `resample_weights` rows (values: units, or units x columns),
    a block of weights at a time: (resamples,) or (resamples x columns)."""
    blocks = weight_blocks(n_units, n_resamples, seed, strata, block_cells=block_cells)
    return np.concatenate([w @ values for w in blocks])


def ratio(weights: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """sum(w num) / sum(w den) per row of weights (NaN where the denominator is 0)."""
    return ratio_of_sums(weights @ num, weights @ den)


def ratio_of_sums(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """top / bottom, NaN where bottom is 0 (resampled sums of numerators and denominators)."""
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
    "BLOCK_CELLS",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "LEVEL",
    "percentile_interval",
    "ratio",
    "ratio_of_sums",
    "resample_weights",
    "resampled_sums",
    "standard_error",
    "weight_blocks",
]

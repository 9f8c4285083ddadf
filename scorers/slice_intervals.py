"""Uncertainty of per-slice figures (a run's rates by domain, app, level, mode): the plain
bootstrap over the slice's tasks, a slice being one stratum.

A slice's figure is a ratio of sums over its units, sum(num) / sum(den) (a task's reward over
the tasks run, or over the slice's human tasks with those not run counting 0), so its
resamples are two matrix products. Slices of one size share one weight matrix, drawn from a
generator seeded by (seed, size): a slice's interval depends only on its own units, the seed
and the number of resamples, never on the other slices printed beside it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import NamedTuple, TypeVar

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

K = TypeVar("K", bound=Hashable)

Units = tuple[Sequence[float], Sequence[float]]
"""(numerators, denominators), one of each per unit (task) of a slice."""


class SliceInterval(NamedTuple):
    """A slice figure's point estimate, bootstrap standard error and percentile interval."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    n_units: int


def slice_intervals(
    units_by_slice: Mapping[K, Units],
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = LEVEL,
) -> dict[K, SliceInterval]:
    """Each slice's ratio-of-sums figure with its interval; a slice whose units' denominators
    sum to 0 (a figure that measures nothing) is left out."""
    by_size: dict[int, list[K]] = {}
    for key, (num, den) in units_by_slice.items():
        if len(num) != len(den):
            raise ValueError(f"slice {key!r}: {len(num)} numerators, {len(den)} denominators")
        if float(np.sum(den)) != 0:
            by_size.setdefault(len(den), []).append(key)
    out: dict[K, SliceInterval] = {}
    for size, keys in sorted(by_size.items()):
        # (units x slices): every slice of this size resampled by the same weight rows
        num = np.array([units_by_slice[k][0] for k in keys], dtype=np.float64).T
        den = np.array([units_by_slice[k][1] for k in keys], dtype=np.float64).T
        weights = resample_weights(size, n_resamples, np.random.default_rng((seed, size)))
        resampled = ratio(weights, num, den)  # (resamples x slices)
        estimates = num.sum(axis=0) / den.sum(axis=0)
        for j, key in enumerate(keys):
            low, high = percentile_interval(resampled[:, j], level)
            se = standard_error(resampled[:, j])
            out[key] = SliceInterval(float(estimates[j]), se, low, high, size)
    return out


__all__ = ["SliceInterval", "Units", "slice_intervals"]

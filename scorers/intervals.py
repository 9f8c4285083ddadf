"""Uncertainty of a run's figures: standard errors and 95% intervals by the bootstrap over
tasks, plain and within domains (OSWorld domains, DeskCraft apps), and the analytic clustered
standard error of the success rates (Miller 2024, "Adding Error Bars to Evals").

Each figure is resampled as its metric declares (`Aggregate.resample`): a ratio of sums over
its units (the episodes, or the N human tasks with those not run counting 0), then an
optional finishing step that reads the same resample's other figures (WES's factor from
mean_t_fail). All B resamples are two matrix products per figure: one (B x units) weight
matrix per unit set and method, drawn from one seeded generator, so figures are reproducible.
Cost per task and per success are resampled the same way over the episodes' costs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from deskscore.scorers.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    percentile_interval,
    ratio,
    ratio_of_sums,
    resample_weights,
    resampled_sums,
    standard_error,
)
from deskscore.scorers.clustered import clustered_se, normal_interval
from deskscore.scorers.metrics import HUMAN_TASKS, computed
from deskscore.scorers.run import RunUnits

BOOTSTRAP = "bootstrap"
"""Tasks resampled with replacement, all together."""
BOOTSTRAP_DOMAIN = "bootstrap_domain"
"""Tasks resampled within their domain (OSWorld) or app (DeskCraft): each keeps its size."""
ANALYTIC = "analytic_clustered"
"""The clustered (by domain) standard error of a mean of per-task outcomes; estimate +- 1.96 SE."""
METHODS = (BOOTSTRAP, BOOTSTRAP_DOMAIN, ANALYTIC)
DEFAULT_METHOD = BOOTSTRAP_DOMAIN
"""What the leaderboard and the report show."""


class Interval(NamedTuple):
    """One figure's uncertainty by one method."""

    metric: str
    method: str
    estimate: float
    se: float | None
    ci_low: float | None
    ci_high: float | None
    n_units: int
    n_clusters: int


class CostUnit(NamedTuple):
    """One episode's share of the cost figures (as scorers.cost.run_cost counts them)."""

    domain: str
    cost_usd: float | None
    has_usage: bool
    """Some model call was recorded for it (cost per task is over these)."""
    unpriced: bool
    success: bool
    """Strict success under the deskscore rules (cost per success divides by these)."""


def _finite(x: float | None) -> float | None:
    return x if x is not None and np.isfinite(x) else None


_KEPT_CELLS = 1_000_000
"""Draws of at most this many counts (resamples x units) are kept between calls; a larger set
is drawn again each time, a block of resamples at a time (`bootstrap.resampled_sums`)."""


def _sums(
    n: int, strata: Sequence[str], n_resamples: int, seed: int, values: np.ndarray
) -> dict[str, np.ndarray]:
    """Each method's resampled sums of `values` (n units x columns): (resamples x columns).

    A set of at most _KEPT_CELLS draws uses the kept ones, a column at a time as it always
    has (the same figures to the last bit); a larger one never holds its whole weight matrix
    (36,900 episodes by 1,000 resamples: 295 MB, and 1.7 GB to draw it)."""
    if n * n_resamples > _KEPT_CELLS:
        return {
            BOOTSTRAP: resampled_sums(n, n_resamples, seed, values),
            BOOTSTRAP_DOMAIN: resampled_sums(n, n_resamples, seed, values, strata),
        }
    out = {}
    for method, counts in _kept_counts(n, tuple(strata), n_resamples, seed).items():
        weights = counts.astype(np.float64)
        columns = [weights @ values[:, j] for j in range(values.shape[1])]
        out[method] = np.column_stack(columns) if columns else np.zeros((n_resamples, 0))
    return out


def _seeded_draws(
    n: int, strata: Sequence[str], n_resamples: int, seed: int, dtype: Any = np.float64
) -> dict[str, np.ndarray]:
    return {
        BOOTSTRAP: resample_weights(n, n_resamples, seed, dtype=dtype),
        BOOTSTRAP_DOMAIN: resample_weights(n, n_resamples, seed, strata, dtype=dtype),
    }


@lru_cache(maxsize=3)
def _kept_counts(
    n: int, strata: tuple[str, ...], n_resamples: int, seed: int
) -> dict[str, np.ndarray]:
    """The draws of both methods, kept for the next call with the same arguments: seeded
    draws depend on nothing else, and every run of a benchmark resamples the same human task
    set, and its episodes twice (figures, then costs). Three entries: runs whose episodes
    differ (a task missing here or there) each bring their own, and with two the human set's
    was pushed out by every run and drawn again (15 draws for 10 such runs, 11 ms each, where
    three entries draw 11). Kept read-only as 16-bit counts (a unit is drawn at most
    n <= _KEPT_CELLS times): three entries hold at most 12 MB, and 4.4 MB at 1,000 resamples
    of 369 tasks, where float64 would hold 18 MB, in every worker."""
    kept = {}
    dtype = np.uint32 if n >= 2**16 else np.uint16
    for method, counts in _seeded_draws(n, strata, n_resamples, seed, dtype).items():
        counts.setflags(write=False)
        kept[method] = counts
    return kept


def _rows(
    name: str,
    point: float,
    resampled: Mapping[str, np.ndarray],
    n: int,
    n_clusters: int,
) -> list[Interval]:
    out = []
    for method, values in resampled.items():
        low, high = percentile_interval(values)
        out.append(
            Interval(
                name,
                method,
                point,
                _finite(standard_error(values)),
                _finite(low),
                _finite(high),
                n,
                n_clusters,
            )
        )
    return out


class _Figure(NamedTuple):
    """One resampleable figure's units: its set, numerators and denominators."""

    metric: Any
    over: str
    num: np.ndarray
    den: np.ndarray


def run_intervals(
    units: RunUnits,
    *,
    costs: Sequence[CostUnit] = (),
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[Interval]:
    """Every resampleable figure of the run that is not null, by every method that applies, in
    the metrics' computing order, then the cost figures."""
    run, figures = units.run, units.figures
    sets = {
        HUMAN_TASKS: (units.human, units.human_domains),
        "episodes": (units.episodes, [f.domain for f in units.episodes]),
    }
    planned: list[_Figure] = []
    for m in computed():
        spec = m.run.resample if m.run is not None else None
        if spec is None or m.run is None:
            continue
        over = HUMAN_TASKS if m.run.over == HUMAN_TASKS else "episodes"
        value = spec.value or m.run.value or m.episode.value  # type: ignore[union-attr]
        parts = np.array(
            [spec.parts(None if f is None else value(f, run)) for f in sets[over][0]],
            dtype=np.float64,
        ).reshape(-1, 2)
        planned.append(_Figure(m, over, parts[:, 0], parts[:, 1]))
    # every figure of a set resampled by the same draws, drawn (or read) once
    sums: dict[str, dict[str, np.ndarray]] = {}
    column: dict[str, int] = {}
    for over, (chosen, strata) in sets.items():
        mine = [f for f in planned if f.over == over]
        for i, f in enumerate(mine):
            column[f.metric.name] = 2 * i
        if mine:
            values = np.column_stack([v for f in mine for v in (f.num, f.den)])
            sums[over] = _sums(len(chosen), strata, n_resamples, seed, values)
    resampled: dict[str, dict[str, np.ndarray]] = {BOOTSTRAP: {}, BOOTSTRAP_DOMAIN: {}}
    points: dict[str, np.ndarray] = {}
    out: list[Interval] = []
    for m, over, num, den in planned:
        spec = m.run.resample
        chosen, strata = sets[over]
        point = ratio(np.ones((1, len(chosen))), num, den)
        j = column[m.name]
        for method, summed in sums[over].items():
            resampled[method][m.name] = ratio_of_sums(summed[:, j], summed[:, j + 1])
        if spec.finish is not None:
            point = spec.finish(point, points, run)
            for method in resampled:
                resampled[method][m.name] = spec.finish(
                    resampled[method][m.name], resampled[method], run
                )
        points[m.name] = point
        if figures.get(m.name) is None or not len(chosen):
            continue
        estimate = float(point[0])
        counted = den != 0
        n_clusters = len({s for s, k in zip(strata, counted, strict=True) if k})
        out += _rows(
            m.name, estimate, {k: v[m.name] for k, v in resampled.items()}, int(counted.sum()),
            n_clusters,
        )  # fmt: skip
        if spec.analytic:
            present = den > 0
            kept = [s for s, k in zip(strata, present, strict=True) if k]
            se = clustered_se(num[present] / den[present], kept)
            low, high = normal_interval(estimate, se)
            out.append(
                Interval(
                    m.name,
                    ANALYTIC,
                    estimate,
                    _finite(se),
                    _finite(low),
                    _finite(high),
                    int(present.sum()),
                    len(set(kept)),
                )
            )
    return out + cost_intervals(costs, n_resamples=n_resamples, seed=seed)


def cost_intervals(
    costs: Sequence[CostUnit], *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> list[Interval]:
    """cost_per_task_usd (total over the episodes with usage / their number) and
    cost_per_success_usd (total / strict successes), resampled over the episodes; none when
    a call is unpriced or no episode has usage (the figures are null then)."""
    if not costs or any(c.unpriced for c in costs) or not any(c.has_usage for c in costs):
        return []
    usage = np.array([c.has_usage for c in costs], dtype=np.float64)
    spent = np.array([(c.cost_usd or 0.0) if c.has_usage else 0.0 for c in costs])
    wins = np.array([c.success for c in costs], dtype=np.float64)
    strata = [c.domain for c in costs]
    sums = _sums(len(costs), strata, n_resamples, seed, np.column_stack([spent, usage, wins]))
    out = []
    for name, den, j in (("cost_per_task_usd", usage, 1), ("cost_per_success_usd", wins, 2)):
        if not den.sum():
            continue
        point = float(ratio(np.ones((1, len(costs))), spent, den)[0])
        per = {method: ratio_of_sums(summed[:, 0], summed[:, j]) for method, summed in sums.items()}
        counted = den != 0
        n_clusters = len({s for s, k in zip(strata, counted, strict=True) if k})
        out += _rows(name, point, per, int(counted.sum()), n_clusters)
    return out


def interval_rows(keys: Mapping[str, Any], intervals: Sequence[Interval], **settings: Any):
    """The run_score_intervals rows: the run's keys, each interval, the bootstrap settings."""
    return [keys | i._asdict() | settings for i in intervals]


__all__ = [
    "ANALYTIC",
    "BOOTSTRAP",
    "BOOTSTRAP_DOMAIN",
    "DEFAULT_METHOD",
    "METHODS",
    "CostUnit",
    "Interval",
    "cost_intervals",
    "interval_rows",
    "run_intervals",
]

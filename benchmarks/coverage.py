"""Coverage of the bootstrap's 95% intervals on simulated runs with a known success
probability per task: the share of simulations whose interval holds the truth (target 93-97%).

Two settings, as on OSWorld (10 domains of fixed sizes, 369 tasks):
- iid: tasks drawn from one population (p ~ Beta), the truth its mean success probability;
  the plain bootstrap over tasks is the right one;
- domains: each domain has its own mean, tasks drawn within their domain, domain sizes fixed
  by the benchmark's design; the truth is the size-weighted mean of the domain means, and the
  within-domain bootstrap is the right one.
Each simulation draws the tasks' p, one outcome per task, and an interval from B resamples.

    python benchmarks/coverage.py [--simulations 1000] [--resamples 1000] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from deskscore.scorers.bootstrap import percentile_interval, ratio, resample_weights

SIZES = (46, 47, 47, 47, 23, 24, 17, 93, 15, 10)
"""Tasks per domain: OSWorld-Verified's 369 tasks over its 10 domains."""
DOMAIN_MEANS = (0.2, 0.3, 0.35, 0.45, 0.5, 0.55, 0.6, 0.25, 0.7, 0.8)
CONCENTRATION = 2.0
"""Beta(m c, (1 - m) c) per task: tasks differ a lot inside a domain, as they do."""


def _draw(rng: np.random.Generator, clustered: bool) -> tuple[np.ndarray, float]:
    if clustered:
        means = np.repeat(DOMAIN_MEANS, SIZES)
        truth = float(np.dot(SIZES, DOMAIN_MEANS) / sum(SIZES))
    else:
        means = np.full(sum(SIZES), 0.45)
        truth = 0.45
    p = rng.beta(means * CONCENTRATION, (1 - means) * CONCENTRATION)
    return (rng.random(p.size) < p).astype(np.float64), truth


def coverage(
    simulations: int, resamples: int, seed: int, *, clustered: bool, stratified: bool
) -> float:
    rng = np.random.default_rng(seed)
    strata = np.repeat(np.arange(len(SIZES)), SIZES).tolist() if stratified else None
    n = sum(SIZES)
    ones = np.ones(n)
    hits = 0
    for i in range(simulations):
        outcomes, truth = _draw(rng, clustered)
        w = resample_weights(n, resamples, seed * 1_000_003 + i, strata)
        low, high = percentile_interval(ratio(w, outcomes, ones))
        hits += low <= truth <= high
    return hits / simulations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{args.simulations} simulations of {sum(SIZES)} tasks, {args.resamples} resamples")
    for label, clustered, stratified in (
        ("plain bootstrap, iid tasks", False, False),
        ("domain bootstrap, tasks within domains", True, True),
        ("plain bootstrap, tasks within domains (conservative)", True, False),
    ):
        start = time.perf_counter()
        c = coverage(
            args.simulations, args.resamples, args.seed, clustered=clustered, stratified=stratified
        )
        print(f"{label:55s} coverage {100 * c:5.1f}%  ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()

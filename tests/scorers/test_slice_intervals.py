"""Per-slice intervals: the plain bootstrap over a slice's tasks, checked on closed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from deskscore.scorers.slice_intervals import slice_intervals


def test_a_slice_whose_tasks_all_succeed_has_the_interval_1_1_and_no_error() -> None:
    got = slice_intervals({"all solved": ([1.0] * 7, [1.0] * 7)}, n_resamples=300)
    assert got["all solved"].estimate == 1.0
    assert (got["all solved"].ci_low, got["all solved"].ci_high) == (1.0, 1.0)
    assert got["all solved"].se == 0.0


def test_a_binary_slice_has_the_binomial_standard_error() -> None:
    rng = np.random.default_rng(3)
    outcomes = (rng.random(200) < 0.3).astype(float)
    p, n = outcomes.mean(), len(outcomes)
    got = slice_intervals({"s": (outcomes.tolist(), [1.0] * n)}, n_resamples=4000)["s"]
    assert got.estimate == pytest.approx(p)
    assert got.se == pytest.approx(math.sqrt(p * (1 - p) / n), rel=0.08)
    assert got.ci_low < p < got.ci_high
    assert got.ci_high - got.ci_low == pytest.approx(2 * 1.96 * got.se, rel=0.1)


def test_the_estimate_is_the_ratio_of_sums_and_units_with_no_denominator_count_above_it() -> None:
    # a human-task rate: tasks not run count 0 over 1; a scored task outside the set 0.5 over 0
    num, den = [1.0, 0.0, 0.5, 0.5], [1.0, 1.0, 1.0, 0.0]
    got = slice_intervals({"h": (num, den)}, n_resamples=500)["h"]
    assert got.estimate == pytest.approx(2.0 / 3.0)
    assert got.ci_low <= got.estimate <= got.ci_high


def test_a_slice_measuring_nothing_is_left_out_and_others_do_not_move_a_slice() -> None:
    a = ([1.0, 0.0, 1.0, 1.0, 0.0], [1.0] * 5)
    alone = slice_intervals({"a": a}, n_resamples=200)
    beside = slice_intervals(
        {"a": a, "none run": ([0.0, 0.0], [0.0, 0.0]), "b": ([0.0, 1.0, 1.0], [1.0] * 3)},
        n_resamples=200,
    )
    assert "none run" not in beside
    assert beside["a"] == alone["a"]
    assert slice_intervals({"a": a}, n_resamples=200, seed=1)["a"] != alone["a"]


def test_units_must_pair_numerators_with_denominators() -> None:
    with pytest.raises(ValueError, match="numerators"):
        slice_intervals({"bad": ([1.0, 0.0], [1.0])})

"""pass@k and pass^k against their definitions: every k-subset of the trials, counted."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deskscore.scorers.trials import (
    TaskTrials,
    group_figures,
    mean_reward,
    pass_at_k,
    pass_hat_k,
    tasks_of,
    trial_rows,
)


def _by_subsets(n: int, c: int, k: int) -> tuple[Fraction, Fraction]:
    """(share of k-subsets with a success, share of k-subsets all successes), counted."""
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    some = sum(any(outcomes[i] for i in s) for s in subsets)
    every = sum(all(outcomes[i] for i in s) for s in subsets)
    return Fraction(some, len(subsets)), Fraction(every, len(subsets))


@given(st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_pass_at_k_and_pass_hat_k_are_the_shares_of_k_subsets_of_trials(nc) -> None:
    n, c = nc
    for k in range(1, n + 1):
        some, every = _by_subsets(n, c, k)
        assert math.isclose(pass_at_k(n, c, k), float(some), rel_tol=1e-12, abs_tol=1e-15)
        assert math.isclose(pass_hat_k(n, c, k), float(every), rel_tol=1e-12, abs_tol=1e-15)


def test_small_cases_computed_by_hand() -> None:
    # 3 trials, 1 success: pass@1 = 1/3; pass@2 = 1 - C(2,2)/C(3,2) = 2/3; pass@3 = 1
    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3)
    assert pass_at_k(3, 1, 2) == pytest.approx(2 / 3)
    assert pass_at_k(3, 1, 3) == 1.0
    # 4 trials, 3 successes: pass^2 = C(3,2)/C(4,2) = 3/6; pass^3 = 1/4; pass^4 = 0
    assert pass_hat_k(4, 3, 2) == pytest.approx(0.5)
    assert pass_hat_k(4, 3, 3) == pytest.approx(0.25)
    assert pass_hat_k(4, 3, 4) == 0.0
    # at k = 1 both are the success rate
    assert pass_at_k(5, 2, 1) == pass_hat_k(5, 2, 1) == pytest.approx(0.4)


@pytest.mark.parametrize(("n", "c", "k"), [(0, 0, 1), (2, 3, 1), (3, 1, 0), (3, 1, 4), (3, -1, 1)])
def test_impossible_counts_are_refused(n, c, k) -> None:
    with pytest.raises(ValueError, match="need 0 <= c <= n"):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError, match="need 0 <= c <= n"):
        pass_hat_k(n, c, k)


def test_a_task_fewer_than_k_trials_ran_is_left_out_of_the_mean_at_k() -> None:
    tasks = [
        TaskTrials((1.0, 0.0, 1.0), (True, False, True)),  # n=3, c=2
        TaskTrials((1.0,), (True,)),  # n=1, c=1
        TaskTrials((), ()),  # no trial ran it
    ]
    figures = group_figures(tasks, 3)
    assert [f.n_tasks for f in figures] == [2, 1, 1]
    assert figures[0].pass_at_k == pytest.approx((2 / 3 + 1) / 2)
    assert figures[1].pass_at_k == pytest.approx(1.0)  # 1 - C(1,2)/C(3,2)
    assert figures[1].pass_hat_k == pytest.approx(1 / 3)  # C(2,2)/C(3,2)
    assert figures[2].pass_hat_k == 0.0


def test_a_group_without_a_task_run_has_no_figures() -> None:
    figures = group_figures([TaskTrials((), ())], 2)
    assert [(f.n_tasks, f.pass_at_k, f.pass_hat_k) for f in figures] == [(0, None, None)] * 2
    assert mean_reward([TaskTrials((), ())]) is None


def test_trials_without_a_usable_result_are_not_counted_as_failures() -> None:
    tasks = tasks_of(
        [
            ("chrome", "a", 1.0, True),
            ("chrome", "a", None, None),  # this trial did not run it
            ("chrome", "a", 0.5, False),
            ("os", "b", None, None),
        ]
    )
    assert [(t.n, t.c) for t in tasks] == [(2, 1), (0, 0)]
    assert mean_reward(tasks) == pytest.approx(0.75)


def test_trial_rows_give_one_row_per_k_with_the_group_facts() -> None:
    tasks = [TaskTrials((1.0, 0.0), (True, False))]
    config = {"human_version": "verified", "max_steps_scoring": 15, "compat": "deskscore"}
    rows = trial_rows("g", "osworld", config, [("r2", "1"), ("r1", "0")], tasks)
    assert [r["k"] for r in rows] == [1, 2]
    assert rows[0]["run_ids"] == ["r1", "r2"] and rows[0]["trials"] == ["0", "1"]
    assert rows[0]["n_trials"] == 2 and rows[0]["n_tasks"] == 1
    assert rows[0]["pass_at_k"] == pytest.approx(0.5) and rows[1]["pass_at_k"] == 1.0
    assert rows[1]["pass_hat_k"] == 0.0

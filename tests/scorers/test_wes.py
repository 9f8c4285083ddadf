"""WES maths: per-episode terms, step budget, the second form, and totality."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deskscore.scorers import wes

REWARDS = (0.0, 1.0, 0.5, True, False, 0, 1)


def _episodes(seed: int, n: int = 200) -> list[tuple[float, int, int]]:
    """(r, t_human, t_agent) triples with the reward kinds archives hold."""
    rng = random.Random(seed)
    return [(rng.choice(REWARDS), rng.randint(1, 30), rng.randint(1, 100)) for _ in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_wes_plus_is_reward_times_human_over_agent_steps_in_the_original(seed):
    for r, t_h, t_a in _episodes(seed):
        expected = float(r) * t_h / t_a
        assert wes.wes_plus(r, t_h, t_a, compat="osworld-human") == expected


@pytest.mark.parametrize("seed", range(5))
def test_wes_plus_is_capped_at_the_reward_under_deskscore(seed):
    for r, t_h, t_a in _episodes(seed):
        expected = float(r) * min(t_h / t_a, 1.0)
        assert wes.wes_plus(r, t_h, t_a) == pytest.approx(expected, rel=1e-15)
        assert wes.wes_plus(r, t_h, t_a) <= float(r)


def test_both_rule_sets_agree_when_the_agent_needs_more_steps_than_the_human():
    for r, t_h, t_a in _episodes(11):
        if t_a >= t_h:
            assert wes.wes_plus(r, t_h, t_a) == wes.wes_plus(r, t_h, t_a, compat="osworld-human")


def test_fewer_steps_than_the_human_scores_above_one_only_in_the_original():
    assert wes.wes_plus(1.0, 10, 4, compat="osworld-human") == 2.5
    assert wes.wes_plus(1.0, 10, 4) == 1.0


@pytest.mark.parametrize("seed", range(3))
def test_wes_minus_charges_failed_steps_against_the_budget(seed):
    for r, _, t_a in _episodes(seed):
        s = 100
        assert wes.wes_minus(r, t_a, s) == pytest.approx(-(1 - float(r)) * t_a / s, abs=0)


def test_an_empty_trajectory_scores_zero_instead_of_dividing_by_zero():
    for compat in wes.COMPAT_MODES:
        assert wes.wes_plus(1.0, 5, 0, compat=compat) == 0.0
    assert wes.wes_minus(0.0, 0, 15) == 0.0
    assert wes.wes_minus(0.0, 3, 0) == 0.0


def test_a_success_has_no_wes_minus():
    assert wes.wes_minus(1.0, 12, 15) == 0.0


def test_step_budget_is_the_larger_of_the_setting_and_the_longest_episode():
    assert wes.step_budget(15, [3, 40, 7]) == 40
    assert wes.step_budget(50, [3, 40, 7]) == 50
    assert wes.step_budget(15, []) == 15
    assert wes.step_budget(15, [None, -4, float("nan"), "x", 20]) == 20


def test_mean_t_fail_weights_each_episode_by_its_failure():
    pairs = [(0.0, 10), (0.5, 20), (1.0, 99), (0.0, 30)]
    # weights 1, 0.5, 0, 1 -> (10 + 10 + 0 + 30) / 2.5
    assert wes.mean_t_fail(pairs) == pytest.approx(20.0)


def test_mean_t_fail_is_zero_without_failures():
    assert wes.mean_t_fail([(1.0, 10), (True, 3)]) == 0.0
    assert wes.mean_t_fail([]) == 0.0


@pytest.mark.parametrize("seed", range(3))
def test_second_form_multiplies_wes_plus_by_the_unspent_budget_share(seed):
    eps = _episodes(seed)
    s = 100
    num = sum((1 - float(r)) * t_a for r, _, t_a in eps)
    den = sum(1 - float(r) for r, _, _ in eps)
    m = num / den
    assert wes.mean_t_fail([(r, t_a) for r, _, t_a in eps]) == pytest.approx(m, rel=1e-12)
    plus = sum(float(r) * t_h / t_a for r, t_h, t_a in eps) / len(eps)
    assert wes.wes(plus, m, s) == pytest.approx(plus * (1 - m / s), rel=1e-12)


def test_published_agent_s2_figures_fit_the_second_form():
    """Agent S2 w/ Gemini 2.5, 50 steps: OSWorld 41.4%, WES+ 28.2 / 17.4, WES- -0.26,
    WES 15.6 / 9.6. With every task run, mean_t_fail / S = -WES- / (1 - success), so the
    first-form figures predict the second-form ones; both granularities share one factor."""
    success, plus_s, plus_g, minus = 0.414, 0.282, 0.174, -0.26
    factor = wes.wes_factor(-minus / (1 - success) * 50, 50)
    # Published figures are rounded: allow for it (WES- has two digits only).
    assert wes.wes(plus_s, -minus / (1 - success) * 50, 50) == pytest.approx(0.156, abs=0.003)
    assert plus_g * factor == pytest.approx(0.096, abs=0.002)
    assert pytest.approx(0.096 / 0.174, abs=0.01) == 0.156 / 0.282


def test_step_ratio_is_none_without_a_human_count():
    assert wes.step_ratio(10, 4) == 2.5
    assert wes.step_ratio(10, 0) is None
    assert wes.step_ratio(None, 4) is None


def test_usable_reward_clamps_and_drops_non_finite_values_only_under_deskscore():
    assert wes.usable_reward(1.7) == 1.0
    assert wes.usable_reward(-0.2) == 0.0
    assert wes.usable_reward(float("nan")) is None
    assert wes.usable_reward(True) == 1.0
    assert wes.usable_reward("1") is None
    assert wes.usable_reward(1.7, compat="osworld-human") == 1.7
    assert math.isnan(wes.usable_reward(float("nan"), compat="osworld-human"))


def test_unknown_compat_names_the_known_ones():
    with pytest.raises(ValueError, match="deskscore, osworld-human"):
        wes.check_compat("strict")


ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
)


@given(ANY, ANY, ANY, ANY, st.sampled_from(wes.COMPAT_MODES))
def test_no_input_makes_a_wes_function_raise(r, t_h, t_a, s, compat):
    for value in (
        wes.wes_plus(r, t_h, t_a, compat=compat),
        wes.wes_minus(r, t_a, s),
        wes.mean_t_fail([(r, t_a), (r, t_h)]),
        wes.wes(r, t_a, s),
        wes.wes_factor(r, s),
    ):
        assert isinstance(value, float)
    assert wes.step_ratio(t_a, t_h) is None or isinstance(wes.step_ratio(t_a, t_h), float)
    assert isinstance(wes.step_budget(s, [t_a, t_h]), int)
    assert wes.as_count(t_a) is None or wes.as_count(t_a) >= 0

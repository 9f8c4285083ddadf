"""The statistics against textbook values: McNemar's exact p, Holm's adjustment, pass@k's
closed form, the clustered standard error on a hand-computed example, the bootstrap's weights,
and the trials' variance split."""

from __future__ import annotations

import math

import numpy as np
import pytest

from deskscore.scorers.bootstrap import (
    percentile_interval,
    ratio,
    resample_weights,
    weight_blocks,
)
from deskscore.scorers.clustered import clustered_se, plain_se
from deskscore.scorers.paired import (
    holm,
    mcnemar_exact,
    min_detectable_difference,
    outcomes,
    paired_difference,
)
from deskscore.scorers.trials import TaskTrials, pass_at_k, variance_split


@pytest.mark.parametrize(("b", "c"), [(10, 2), (2, 10), (7, 7), (0, 5), (25, 11)])
def test_mcnemar_exact_is_twice_the_smaller_binomial_tail(b: int, c: int) -> None:
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    assert mcnemar_exact(b, c) == pytest.approx(min(1.0, 2 * tail))


def test_mcnemar_exact_of_the_textbook_example() -> None:
    # 10 against 2 discordant pairs: p = 2 (1 + 12 + 66) / 4096
    assert mcnemar_exact(10, 2) == pytest.approx(158 / 4096)
    assert mcnemar_exact(0, 0) == 1.0


def test_mcnemar_exact_is_scipy_s_two_sided_binomial_test() -> None:
    from scipy import stats

    pairs = [(b, c) for b in range(61) for c in range(61)]
    pairs += [(1000, 1040), (480, 620), (3, 997), (2500, 2600), (0, 1074), (9950, 10050),
              (5, 19995), (18000, 18500), (100000, 101000)]  # fmt: skip
    for b, c in pairs:
        expected = 1.0 if b + c == 0 else stats.binomtest(b, b + c, 0.5).pvalue
        got = mcnemar_exact(b, c)
        assert 0.0 <= got <= 1.0
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-300), (b, c)


def test_mcnemar_exact_takes_numpy_counts_as_integers_and_refuses_what_is_not_a_count() -> None:
    # numpy's 64-bit integers would overflow in the binomial coefficients, silently
    assert mcnemar_exact(np.int64(180), np.int64(185)) == mcnemar_exact(180, 185)
    with pytest.raises(TypeError):
        mcnemar_exact(3.0, 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=">= 0"):
        mcnemar_exact(-1, 3)


@pytest.mark.parametrize(("alpha", "power"), [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5), (0.2, 0.99)])
def test_minimum_detectable_difference_uses_scipy_s_normal_quantiles(
    alpha: float, power: float
) -> None:
    from scipy import stats

    d = np.linspace(-1.0, 2.0, 37)
    se = np.std(d, ddof=1) / np.sqrt(d.size)
    expected = (stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * se
    assert min_detectable_difference(d, alpha, power) == pytest.approx(expected, rel=1e-12)


def test_holm_multiplies_the_ith_smallest_by_m_minus_i_and_keeps_the_order() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


@pytest.mark.parametrize(
    ("n", "c", "k"), [(10, 3, 1), (10, 3, 5), (20, 0, 4), (8, 8, 2), (5, 2, 4)]
)
def test_pass_at_k_equals_chen_et_al_product_form(n: int, c: int, k: int) -> None:
    product = 0.0 if n - c < k else float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))
    assert pass_at_k(n, c, k) == pytest.approx(1.0 - product)


def test_clustered_se_on_a_hand_computed_example() -> None:
    # mean 0.4; residual sums per cluster: a 0.6 - 0.4 + 0.6 = 0.8, b -0.8; sqrt(1.28) / 5
    assert clustered_se([1, 0, 1, 0, 0], ["a", "a", "a", "b", "b"]) == pytest.approx(
        math.sqrt(1.28) / 5
    )


def test_clustered_se_with_one_unit_per_cluster_is_the_plain_se() -> None:
    x = np.random.default_rng(3).random(50)
    assert clustered_se(x, range(50)) == pytest.approx(plain_se(x))


def test_resample_weights_are_reproducible_and_keep_each_stratum_size() -> None:
    strata = ["a"] * 7 + ["b"] * 3 + ["c"] * 12
    w = resample_weights(22, 300, 5, strata)
    assert np.array_equal(w, resample_weights(22, 300, 5, strata))
    assert not np.array_equal(w, resample_weights(22, 300, 6, strata))
    labels = np.array(strata)
    for s, size in (("a", 7), ("b", 3), ("c", 12)):
        assert set(w[:, labels == s].sum(axis=1)) == {size}
    plain = resample_weights(22, 300, 5)
    assert set(plain.sum(axis=1)) == {22}
    assert plain.mean() == pytest.approx(1.0, abs=0.05)


@pytest.mark.parametrize("strata", [None, ["a"] * 22, ["a"] * 7 + ["b"] * 3 + ["c"] * 12])
def test_resample_counts_of_an_integer_type_are_the_same_draws(strata: list[str] | None) -> None:
    """Drawn straight into 16-bit counts (the kept draws of intervals), a set resamples as it
    does in float64; one stratum over every unit resamples as no strata do."""
    w = resample_weights(22, 300, 5, strata)
    counts = resample_weights(22, 300, 5, strata, dtype=np.uint16)
    assert counts.dtype == np.uint16 and np.array_equal(counts, w)
    assert np.array_equal(w, resample_weights(22, 300, 5)) == (
        strata is None or len(set(strata)) == 1
    )


def test_ratio_of_unit_weights_is_the_plain_figure_and_empty_is_nan() -> None:
    num, den = np.array([1.0, 0.0, 3.0]), np.array([1.0, 0.0, 1.0])
    assert ratio(np.ones((1, 3)), num, den)[0] == pytest.approx(2.0)
    assert math.isnan(ratio(np.zeros((1, 3)), num, den)[0])
    assert all(map(math.isnan, percentile_interval(np.array([np.nan, np.nan]))))


def test_paired_difference_keeps_the_pairing() -> None:
    rng = np.random.default_rng(0)
    base = rng.random(200)
    shifted = base + 0.1  # the same tasks, 0.1 better each: no between-task noise remains
    d = paired_difference(shifted, base, n_resamples=200, seed=1)
    assert d.difference == pytest.approx(0.1)
    assert d.ci_high - d.ci_low == pytest.approx(0.0, abs=1e-9)
    assert outcomes(shifted, base) == (200, 0, 0)


def test_minimum_detectable_difference_is_2_8_standard_errors() -> None:
    d = np.array([1.0, -1.0] * 50)
    se = np.std(d, ddof=1) / 10
    assert min_detectable_difference(d) == pytest.approx((1.959964 + 0.841621) * se, rel=1e-5)


def test_variance_split_without_within_task_noise_puts_everything_between() -> None:
    tasks = [TaskTrials((1.0,) * 3, (True,) * 3), TaskTrials((0.0,) * 3, (False,) * 3)] * 5
    split = variance_split(tasks)
    assert split.var_within == 0 and split.se_within == 0
    assert split.se_between == pytest.approx(split.se)


def test_variance_split_of_coin_flips_is_mostly_within() -> None:
    rng = np.random.default_rng(1)
    flips = rng.random((400, 8)) < 0.5  # every task the same p: all variance is within
    tasks = [TaskTrials(tuple(map(float, r)), tuple(map(bool, r))) for r in flips]
    split = variance_split(tasks)
    assert split.var_within == pytest.approx(0.25, rel=0.1)
    assert split.se_between < split.se_within
    assert split.se**2 == pytest.approx(split.se_between**2 + split.se_within**2, rel=0.2)


def _weights_sums(n, strata, b, seed, values) -> dict[str, np.ndarray]:
    """Each method's sums as the whole weight matrix gives them, a column at a time."""
    from deskscore.scorers import intervals

    out = {}
    for method, kept in ((intervals.BOOTSTRAP, None), (intervals.BOOTSTRAP_DOMAIN, strata)):
        w = resample_weights(n, b, seed, kept)
        out[method] = np.column_stack([w @ values[:, j] for j in range(values.shape[1])])
    return out


def test_kept_draws_are_the_fresh_ones_and_read_only() -> None:
    """The intervals' draws are remembered between runs, compactly; what a later run gets is
    exactly what a cold draw gives, and the kept counts cannot change."""
    from deskscore.scorers import intervals

    intervals._kept_counts.cache_clear()
    strata = ["a", "a", "b", "c", "c", "c"]
    values = np.random.default_rng(0).random((6, 4))
    first = intervals._sums(6, strata, 50, 3, values)
    again = intervals._sums(6, list(strata), 50, 3, values)
    assert intervals._kept_counts.cache_info().hits == 1
    assert set(again) == {intervals.BOOTSTRAP, intervals.BOOTSTRAP_DOMAIN}
    expected = _weights_sums(6, strata, 50, 3, values)
    for method in expected:
        assert np.array_equal(first[method], expected[method])
        assert np.array_equal(again[method], expected[method])
    kept = intervals._kept_counts(6, tuple(strata), 50, 3)[intervals.BOOTSTRAP]
    with pytest.raises(ValueError):
        kept[0, 0] = 1
    other = intervals._sums(6, ["a"] * 6, 50, 3, values)[intervals.BOOTSTRAP_DOMAIN]
    assert np.array_equal(other, _weights_sums(6, ["a"] * 6, 50, 3, values)["bootstrap_domain"])


def test_the_human_sets_draws_stay_kept_while_each_run_brings_its_own_episodes() -> None:
    """Runs whose episodes differ (a task missing here or there) resample the human task set,
    then their episodes twice: the human set is drawn once for all of them."""
    from deskscore.scorers import intervals

    intervals._kept_counts.cache_clear()
    human = ["a", "a", "b", "c", "c", "c"]
    for missing in range(5):  # five runs, each without one of the human set's tasks
        episodes = human[:missing] + human[missing + 1 :]
        intervals._sums(5, episodes, 50, 3, np.ones((5, 2)))
        intervals._sums(6, human, 50, 3, np.ones((6, 2)))
        intervals._sums(5, episodes, 50, 3, np.ones((5, 2)))
    distinct = {tuple(human[:m] + human[m + 1 :]) for m in range(5)}
    assert intervals._kept_counts.cache_info().misses == len(distinct) + 1


def test_draws_of_a_large_set_are_the_same_and_not_kept() -> None:
    """A set whose draws would hold more than _KEPT_CELLS counts is drawn every time, a block
    of resamples at a time, to the same sums; one with more units than 16-bit counts hold is
    kept in 32 bits."""
    from deskscore.scorers import intervals

    intervals._kept_counts.cache_clear()
    n = intervals._KEPT_CELLS // 100 + 1
    strata = [f"d{i % 7}" for i in range(n)]
    values = np.random.default_rng(1).random((n, 3))
    sums = intervals._sums(n, strata, 200, 1, values)
    expected = _weights_sums(n, strata, 200, 1, values)
    for method in expected:
        np.testing.assert_allclose(sums[method], expected[method], rtol=1e-13)
    assert intervals._kept_counts.cache_info().currsize == 0
    sums = intervals._sums(70_000, ["x"] * 70_000, 1, 1, np.ones((70_000, 1)))  # kept
    assert sums[intervals.BOOTSTRAP][0, 0] == 70_000
    assert intervals._kept_counts(70_000, ("x",) * 70_000, 1, 1)[intervals.BOOTSTRAP].dtype == (
        np.uint32
    )


@pytest.mark.parametrize("block_cells", [1, 640, 5_000, None])
@pytest.mark.parametrize("strata", [None, ["b", "a", "c"] * 30 + ["a"] * 7])
def test_weight_blocks_are_the_weight_matrix_a_block_of_rows_at_a_time(
    block_cells: int | None, strata: list[str] | None
) -> None:
    """Whatever the block size, the blocks are the rows of the whole matrix, in order: each
    stratum's draws are taken from where they start in the one seeded stream."""
    whole = resample_weights(97, 300, 11, strata)
    blocks = list(weight_blocks(97, 300, 11, strata, block_cells=block_cells))
    assert np.array_equal(np.concatenate(blocks), whole)
    if block_cells is not None and block_cells < 97 * 300:
        assert len(blocks) > 1 and max(b.size for b in blocks) <= max(block_cells, 97)
    seeded = np.random.default_rng((4, 97))  # a generator, as the slice intervals pass
    by_block = weight_blocks(97, 300, np.random.default_rng((4, 97)), strata, block_cells=640)
    assert np.array_equal(np.concatenate(list(by_block)), resample_weights(97, 300, seeded, strata))


def test_the_cost_intervals_of_a_huge_run_hold_one_block_of_weights_at_a_time() -> None:
    """40,000 episodes by 1,000 resamples: the whole weight matrix is 320 MB, and drawing it
    took four times that per method; the intervals hold a block of resamples at a time."""
    import tracemalloc

    from deskscore.scorers.intervals import CostUnit, cost_intervals

    n = 40_000
    costs = [CostUnit(f"d{i % 9}", 0.01 * (i % 13), True, False, i % 3 == 0) for i in range(n)]
    tracemalloc.start()
    try:
        out = cost_intervals(costs, n_resamples=1000, seed=2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.0f} MB"
    assert {(i.metric, i.method) for i in out} == {
        (m, k)
        for m in ("cost_per_task_usd", "cost_per_success_usd")
        for k in ("bootstrap", "bootstrap_domain")
    }
    task = next(i for i in out if i.metric == "cost_per_task_usd" and i.method == "bootstrap")
    assert task.ci_low < task.estimate < task.ci_high

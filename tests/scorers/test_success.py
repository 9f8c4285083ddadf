"""Success rates: show_result.py's, OSWorld-Human's, strict success, per domain."""

from __future__ import annotations

import random

import pytest

from deskscore.scorers import success


def _run(seed: int) -> list[tuple[str, object]]:
    rng = random.Random(seed)
    domains = ("chrome", "gimp", "vlc", "libreoffice_calc", "vs_code", "thunderbird")
    return [
        (rng.choice(domains), rng.choice((0.0, 1.0, 0.5, True, False, None, None)))
        for _ in range(150)
    ]


@pytest.mark.parametrize("seed", range(4))
def test_show_result_divides_by_the_tasks_that_have_a_result(seed):
    pairs = _run(seed)
    rs = [float(r) for _, r in pairs if r is not None]
    assert success.success_rate_run(r for _, r in pairs) == pytest.approx(sum(rs) / len(rs))


@pytest.mark.parametrize("seed", range(4))
def test_osworld_human_divides_by_all_human_tasks(seed):
    pairs = _run(seed)
    rs = [float(r) for _, r in pairs if r is not None]
    n = len(pairs) + 20  # 20 human tasks never run
    assert success.success_rate_human([r for _, r in pairs], n) == pytest.approx(sum(rs) / n)


def test_the_two_rates_differ_when_tasks_were_not_run():
    rewards = [1.0, 0.0, None, None]
    assert success.success_rate_run(rewards) == 0.5
    assert success.success_rate_human(rewards, 4) == 0.25


def test_partial_credit_counts_in_the_mean_but_not_as_strict_success():
    rewards = [0.5, 0.5, 1.0, 0.0]
    assert success.success_rate_run(rewards) == 0.5
    assert success.strict_success_rate(rewards) == 0.25
    assert success.is_strict_success(True)
    assert not success.is_strict_success(0.999)
    assert not success.is_strict_success(float("nan"))


def test_no_result_gives_no_rate_rather_than_zero():
    assert success.success_rate_run([None, "x"]) is None
    assert success.strict_success_rate([]) is None
    assert success.success_rate_human([1.0], 0) is None


@pytest.mark.parametrize("seed", range(3))
def test_per_domain_means_match_a_grouping_by_hand(seed):
    pairs = _run(seed)
    got = success.per_domain(pairs)
    for domain in {d for d, r in pairs if r is not None}:
        rs = [float(r) for d, r in pairs if d == domain and r is not None]
        assert got[domain].n == len(rs)
        assert got[domain].mean_score == pytest.approx(sum(rs) / len(rs))
        assert got[domain].strict_rate == pytest.approx(rs.count(1.0) / len(rs))


def test_categories_group_domains_as_show_result_does():
    pairs = [("libreoffice_calc", 1.0), ("libreoffice_writer", 0.0), ("vlc", 0.5), ("os", 1.0)]
    got = success.per_category(pairs)
    assert got["Office"].mean_score == 0.5
    assert got["Daily"].n == 1
    assert "Professional" not in got

"""Success rates, the two ways the literature computes them, with partial credit kept apart.

OSWorld's `show_result.py` divides the summed rewards by the tasks that produced a result
(so an interrupted run looks as good as its finished part); OSWorld-Human divides by N, the
number of human tasks, counting a task that was not run as 0. Rewards may be partial (0.5),
so the mean score is not a success rate: strict success (r == 1) is counted separately.
Nothing here raises: values that are not numbers (None, 'x') are treated as no result.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from deskscore.scorers.wes import as_reward

CATEGORIES: dict[str, tuple[str, ...]] = {
    "Office": ("libreoffice_calc", "libreoffice_impress", "libreoffice_writer"),
    "Daily": ("vlc", "thunderbird", "chrome"),
    "Professional": ("gimp", "vs_code"),
}
"""show_result.py's domain groups."""


class DomainRate(NamedTuple):
    n: int
    """Tasks with a usable result."""
    mean_score: float
    """sum(r) / n: partial rewards count by their value."""
    strict_rate: float
    """Share of the n tasks with r == 1."""


def _rewards(values: Iterable[Any]) -> list[float]:
    out = []
    for v in values:
        r = as_reward(v)
        if r is not None:
            out.append(r)
    return out


def success_rate_run(rewards: Iterable[Any]) -> float | None:
    """show_result.py: sum(r) / (tasks with a result); None when no task has a result."""
    rs = _rewards(rewards)
    if not rs:
        return None
    total = 0.0
    for r in rs:
        total += r
    return total / len(rs)


def success_rate_human(matched_rewards: Iterable[Any], n_human_tasks: int) -> float | None:
    """OSWorld-Human: sum(r over matched tasks) / N, summed left to right from int 0 as the
    original does (so the printed figure is character-identical); None when N is 0."""
    if isinstance(n_human_tasks, bool) or not isinstance(n_human_tasks, int) or n_human_tasks <= 0:
        return None
    total: float = 0
    for r in _rewards(matched_rewards):
        total += r
    return total / n_human_tasks


def is_strict_success(r: Any) -> bool:
    """r == 1 exactly (True counts as 1); partial credit and NaN are not successes."""
    value = as_reward(r)
    return value is not None and value == 1.0


def strict_success_rate(rewards: Iterable[Any]) -> float | None:
    """Share of tasks with a result whose r == 1; None when no task has a result."""
    rs = _rewards(rewards)
    if not rs:
        return None
    return sum(1 for r in rs if r == 1.0) / len(rs)


def per_domain(pairs: Iterable[tuple[str, Any]]) -> dict[str, DomainRate]:
    """(domain, r) pairs to per-domain figures, domains in first-seen order; pairs whose r is
    not a number are left out, as show_result.py leaves out folders without result.txt."""
    groups: dict[str, list[float]] = {}
    for domain, value in pairs:
        r = as_reward(value)
        if r is not None:
            groups.setdefault(str(domain), []).append(r)
    out = {}
    for domain, rs in groups.items():
        out[domain] = DomainRate(
            len(rs), sum(rs) / len(rs), sum(1 for r in rs if r == 1.0) / len(rs)
        )
    return out


def per_category(pairs: Iterable[tuple[str, Any]]) -> dict[str, DomainRate]:
    """show_result.py's Office / Daily / Professional groups over (domain, r) pairs."""
    by_domain: dict[str, list[float]] = {}
    for domain, value in pairs:
        r = as_reward(value)
        if r is not None:
            by_domain.setdefault(str(domain), []).append(r)
    out = {}
    for name, domains in CATEGORIES.items():
        rs = [r for d in domains for r in by_domain.get(d, [])]
        if rs:
            out[name] = DomainRate(
                len(rs), sum(rs) / len(rs), sum(1 for r in rs if r == 1.0) / len(rs)
            )
    return out

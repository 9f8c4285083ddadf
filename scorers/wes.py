"""OSWorld-Human's Weighted Efficiency Score (WES), per episode and per run.

WES+ rewards success done in few steps: r * t_human / t_agent. WES- charges failure by the
steps it burnt: -(1 - r) * t_agent / S, with S the step budget. The paper's second form folds
both into one score per granularity: WES = WES+ * (1 - mean_t_fail / S), mean_t_fail being the
failure-weighted mean t_agent, sum((1 - r) t) / sum(1 - r). An episode's WES is its WES+ times
the run's factor, so a run's WES is the mean of its episodes' WES over the N human tasks.

Two rule sets, named by `compat`:

'osworld-human' reproduces OSWorld-Human's `score.py` exactly, quirks included: t_agent is the
number of lines of the trajectory file; WES+ is not capped (a task done in fewer steps than the
human scores above 1); S counts every trajectory file of the 10 OSWorld domains, results or
not; non-finite results ('nan', 'inf', which `float()` accepts) are used as they are. Where the
original crashes it has no outcome to reproduce, so it takes deskscore's outcome (fixes 2, 3).

'deskscore' (the default) fixes these quirks:

1. t_agent is the number of executed actions, not of file lines: runner error lines
   ({"Error": ...}) and blank or garbled lines are not steps the agent took.
2. t_agent 0 (an empty trajectory with a result) gives WES+ 0 and WES- 0; the original divides
   by zero and stops.
3. An empty or unparseable result.txt means the task was not run, like a missing one; the
   original stops with ValueError or IndexError.
4. A non-finite result ('nan', 'inf') is not a score either: it is treated as not run instead
   of turning every figure of the run into nan.
5. r is clamped into [0, 1], the range OSWorld's evaluators return, so one corrupt result file
   cannot push WES- above 0 or give a task a negative failure weight.
6. WES+ of a task is capped at r: the human trajectory is the reference, so doing at least as
   well as the human earns full marks, not more. The original lets a task score above 1 (its
   own WARN line flags the case), which lets a few short successes mask failures elsewhere and
   breaks WES+ <= success rate.
7. A result with no trajectory file counts (the runner's verdict stands, as in OSWorld's
   show_result.py) with t_agent 0; the original ignores such a folder altogether.
8. S is the largest t_agent over all the run's episodes, whatever their domain folder; the
   original only looks into the ten OSWorld domain folders (deskscore also scores runs of
   other benchmarks, whose step budget is just as real).

All functions here are total: they take whatever numbers they get (None, NaN, negative step
counts) and return a float, never raise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

COMPAT_MODES: tuple[str, ...] = ("deskscore", "osworld-human")
"""The rule sets, default first."""

DEFAULT_COMPAT = "deskscore"


def check_compat(compat: str) -> str:
    """The compat name if known; ValueError naming the known ones otherwise."""
    if compat not in COMPAT_MODES:
        raise ValueError(f"unknown compat {compat!r}: use one of {', '.join(COMPAT_MODES)}")
    return compat


_MAX_COUNT = 2**31 - 1  # the warehouse stores counts as int32


def as_count(value: Any) -> int | None:
    """A step count as an int in [0, 2**31), or None when `value` is not one (None, NaN, -3,
    'x', True, 10**40)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value <= _MAX_COUNT else None
    if isinstance(value, float) and value.is_integer() and 0 <= value <= _MAX_COUNT:
        return int(value)
    return None


def as_reward(value: Any) -> float | None:
    """A reward as a float (True -> 1.0, False -> 0.0), or None when it is not a number.

    NaN and infinities pass through: whether they count is the rule set's decision.
    """
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    return None


def usable_reward(value: Any, *, compat: str = DEFAULT_COMPAT) -> float | None:
    """The r an episode is scored with, or None when it counts as not run (fixes 4 and 5)."""
    r = as_reward(value)
    if r is None or compat == "osworld-human":
        return r
    if not math.isfinite(r):
        return None
    return min(max(r, 0.0), 1.0)


def _r(value: Any) -> float:
    r = as_reward(value)
    return 0.0 if r is None else r


def wes_plus(r: float, t_human: int, t_agent: int, *, compat: str = DEFAULT_COMPAT) -> float:
    """WES+ of one episode: r * t_human / t_agent (capped at r under deskscore, fix 6).

    t_agent 0 gives 0 (fix 2); a t_human that is not a count counts as 0. The operations run
    in the original's order, (r * t_h) / t_a, so the figures are bit-identical to it.
    """
    t_a = as_count(t_agent)
    if not t_a:
        return 0.0
    t_h = as_count(t_human) or 0
    r = _r(r)
    if compat != "osworld-human" and t_h > t_a:
        return r
    return r * t_h / t_a


def wes_minus(r: float, t_agent: int, step_budget: int) -> float:
    """WES- of one episode: -((1 - r) * t_agent / S), in the original's order; 0 when t_agent
    or S is not positive (fix 2)."""
    t_a = as_count(t_agent)
    s = as_count(step_budget)
    if not t_a or not s:
        return 0.0
    return -((1 - _r(r)) * t_a / s)


def step_budget(max_steps_scoring: int, t_agents: Iterable[int | None]) -> int:
    """S = max(--max-steps-scoring, the largest t_agent); values that are not counts are
    skipped (a budget that is not an int counts as 0)."""
    s = max_steps_scoring
    if isinstance(s, bool) or not isinstance(s, int):
        s = 0
    s = max(min(s, _MAX_COUNT), -_MAX_COUNT)
    for t in t_agents:
        t = as_count(t)
        if t is not None and t > s:
            s = t
    return s


def mean_t_fail(pairs: Iterable[tuple[float, int]]) -> float:
    """Failure-weighted mean t_agent, sum((1 - r) t) / sum(1 - r) over (r, t_agent) pairs.

    0 when nothing failed (sum(1 - r) == 0); t_agent that is not a count counts as 0. Sums run
    left to right, in the order given.
    """
    num = 0.0
    den = 0.0
    for r, t in pairs:
        w = 1 - _r(r)
        num += w * (as_count(t) or 0)
        den += w
    if den == 0:
        return 0.0
    return num / den


def wes_factor(mean_fail: float, budget: int) -> float:
    """1 - mean_t_fail / S: what the second form multiplies WES+ by (1 when S is not positive)."""
    s = as_count(budget)
    if not s:
        return 1.0
    return 1 - _r(mean_fail) / s


def wes(wes_plus_value: float, mean_fail: float, budget: int) -> float:
    """Combined WES, second form: WES+ * (1 - mean_t_fail / S)."""
    return _r(wes_plus_value) * wes_factor(mean_fail, budget)


def step_ratio(t_agent: int | None, t_human: int | None) -> float | None:
    """t_agent / t_human, or None when either is not a count or t_human is 0."""
    t_a = as_count(t_agent)
    t_h = as_count(t_human)
    if t_a is None or not t_h:
        return None
    return t_a / t_h

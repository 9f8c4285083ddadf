"""Every metric deskscore reports, defined once: name, version, direction, unit, definition.

Tables, the CLI and the report read names and directions from here, so a metric cannot be
"higher is better" in one place and the opposite in another. A change of definition bumps
the metric's version.
"""

from __future__ import annotations

from typing import NamedTuple


class Metric(NamedTuple):
    name: str
    version: int
    direction: str
    """'higher' or 'lower': which way is better."""
    unit: str
    definition: str


def _m(name: str, version: int, direction: str, unit: str, definition: str) -> Metric:
    return Metric(name, version, direction, unit, definition)


_ALL = (
    _m("success_rate_run", 1, "higher", "fraction",
       "sum(r) / tasks with a usable result, as OSWorld's show_result.py"),
    _m("success_rate_human", 1, "higher", "fraction",
       "sum(r over tasks matched to a human task) / N human tasks, as OSWorld-Human"),
    _m("strict_success_rate_run", 1, "higher", "fraction",
       "share of tasks with a usable result whose r == 1 (partial credit is not success)"),
    _m("wes_plus_single", 1, "higher", "fraction",
       "mean over N of r * t_human_single / t_agent (OSWorld-Human WES+, single actions)"),
    _m("wes_plus_grouped", 1, "higher", "fraction",
       "mean over N of r * t_human_grouped / t_agent (OSWorld-Human WES+, grouped actions)"),
    _m("wes_minus", 1, "higher", "fraction",
       "mean over N of -(1 - r) * t_agent / S: steps burnt on failure, 0 at best"),
    _m("mean_t_fail", 1, "lower", "steps",
       "failure-weighted mean t_agent: sum((1 - r) t_agent) / sum(1 - r), 0 with no failure"),
    _m("wes_single", 1, "higher", "fraction",
       "WES+ single * (1 - mean_t_fail / S): OSWorld-Human WES, second form"),
    _m("wes_grouped", 1, "higher", "fraction",
       "WES+ grouped * (1 - mean_t_fail / S): OSWorld-Human WES, second form"),
    _m("step_ratio_single", 1, "lower", "ratio",
       "t_agent / t_human_single of one task (1 = as many steps as the human)"),
    _m("step_ratio_grouped", 1, "lower", "ratio",
       "t_agent / t_human_grouped of one task"),
    _m("mean_step_ratio_single", 1, "lower", "ratio",
       "mean t_agent / t_human_single over strictly successful matched tasks"),
    _m("mean_step_ratio_grouped", 1, "lower", "ratio",
       "mean t_agent / t_human_grouped over strictly successful matched tasks"),
    _m("cost_usd", 1, "lower", "USD",
       "sum over a run's model calls of tokens x price per million: uncached input at the "
       "input rate, cached input at the cached rate, cache writes at the cache-write rate, "
       "output (reasoning added only where reported apart) at the output rate; null when any "
       "call is unpriced (scorers/cost.py)"),
    _m("cost_per_task_usd", 1, "lower", "USD",
       "cost_usd / tasks with at least one recorded model call"),
    _m("cost_per_success_usd", 1, "lower", "USD",
       "cost_usd / tasks with r == 1 (deskscore rules)"),
    _m("task_time_s", 1, "lower", "seconds",
       "an episode's wall time: last action timestamp - first, plus the recorded latency of "
       "the first turn's model calls"),
    _m("median_task_s", 1, "lower", "seconds", "median task_time_s over a run's episodes"),
    _m("llm_time_share", 1, "lower", "fraction",
       "share of task time spent in model calls, where calls record their latency"),
)  # fmt: skip

METRICS: dict[str, Metric] = {m.name: m for m in _ALL}
"""The registry, by name."""


def metric(name: str) -> Metric:
    """The metric called `name`; KeyError listing the known names otherwise."""
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(METRICS)}") from None


def better(name: str, a: float, b: float) -> bool:
    """Whether value `a` of metric `name` is strictly better than `b`."""
    return a > b if metric(name).direction == "higher" else a < b

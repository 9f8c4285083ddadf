"""deskscore's metrics: OSWorld's and OSWorld-Human's figures, step ratios, cost and time.

Registration order is the leaderboard's column order. A metric added here adds columns to the
score tables: bump deskscore.schemas.SCHEMA_VERSION with it (a changed definition bumps the
metric's own version instead). Sums run as OSWorld-Human's score.py
runs them (builtin `sum` over the human tasks in the human data's order; the success sum left
to right from int 0), so the figures are character-identical to it; see scorers/wes.py for
the rule sets. Figures over the N human tasks are null under the deskscore rules when no task
of the run matched a human task (`declare.unmatched`): they would be a 0 that measured nothing.
"""

from __future__ import annotations

from typing import Any

from deskscore.scorers.metrics.declare import (
    EPISODES,
    HUMAN_TASKS,
    Aggregate,
    EpisodeFacts,
    Metric,
    PerEpisode,
    Resample,
    RunFacts,
    mean,
    over_present,
    over_units,
    per_human_task,
    unmatched,
)
from deskscore.scorers.metrics.registry import register
from deskscore.scorers.success import (
    is_strict_success,
    strict_success_rate,
    success_rate_human,
    success_rate_run,
)
from deskscore.scorers.wes import (
    as_count,
    as_reward,
    mean_t_fail,
    step_ratio,
    wes_factor,
    wes_minus,
    wes_plus,
)

RANKED_BY = ("success_rate_human", "wes_plus_single", "success_rate_run")
"""What the leaderboard ranks runs by, in order (each the better way first, nulls last); the
printed leaderboard leads with the first. The success rate over the tasks run comes last: it
ranks the runs whose figures over the human tasks are empty (DeskCraft's, Sec-Eval's)."""


def _r(e: EpisodeFacts) -> float:
    return e.reward if e.reward is not None else 0.0


def _reward(e: EpisodeFacts, run: RunFacts) -> float | None:
    return e.reward


def _step_ratio_single(e: EpisodeFacts, run: RunFacts) -> float | None:
    return step_ratio(e.t_agent, e.t_human_single)


def _step_ratio_grouped(e: EpisodeFacts, run: RunFacts) -> float | None:
    return step_ratio(e.t_agent, e.t_human_grouped)


def _success_step_ratio_single(e: EpisodeFacts, run: RunFacts) -> float | None:
    return _step_ratio_single(e, run) if is_strict_success(e.reward) else None


def _success_step_ratio_grouped(e: EpisodeFacts, run: RunFacts) -> float | None:
    return _step_ratio_grouped(e, run) if is_strict_success(e.reward) else None


def _wes_plus_single(e: EpisodeFacts, run: RunFacts) -> float | None:
    if not e.scored:
        return None
    return wes_plus(_r(e), e.t_human_single or 0, e.t_agent or 0, compat=run.compat)


def _wes_plus_grouped(e: EpisodeFacts, run: RunFacts) -> float | None:
    if not e.scored:
        return None
    return wes_plus(_r(e), e.t_human_grouped or 0, e.t_agent or 0, compat=run.compat)


def _wes_minus(e: EpisodeFacts, run: RunFacts) -> float | None:
    return wes_minus(_r(e), e.t_agent or 0, run.step_budget) if e.scored else None


def _failure(e: EpisodeFacts, run: RunFacts) -> tuple[float, int]:
    return (_r(e), e.t_agent or 0)


def _factor(run: RunFacts) -> float:
    return wes_factor(run.figures["mean_t_fail"], run.step_budget)


def _wes_single(e: EpisodeFacts, run: RunFacts) -> float | None:
    plus = _wes_plus_single(e, run)
    return None if plus is None else plus * _factor(run)


def _wes_grouped(e: EpisodeFacts, run: RunFacts) -> float | None:
    plus = _wes_plus_grouped(e, run)
    return None if plus is None else plus * _factor(run)


def _rate_run(values: list[Any], run: RunFacts) -> float | None:
    return success_rate_run(values)


def _rate_human(values: list[Any], run: RunFacts) -> float | None:
    return None if unmatched(values, run) else success_rate_human(values, run.n_human_tasks)


def _strict_rate(values: list[Any], run: RunFacts) -> float | None:
    return strict_success_rate(values)


def _mean_t_fail(values: list[tuple[float, int]], run: RunFacts) -> float | None:
    return None if unmatched(values, run) else mean_t_fail(values)


def _strict_parts(value: Any) -> tuple[float, float]:
    return (0.0, 0.0) if value is None else (float(is_strict_success(value)), 1.0)


def _failure_parts(value: tuple[float, int] | None) -> tuple[float, float]:
    """mean_t_fail's sums: ((1 - r) t, 1 - r), as scorers.wes.mean_t_fail adds them; a task
    not run is not in them."""
    if value is None:
        return (0.0, 0.0)
    w = 1 - (as_reward(value[0]) or 0.0)
    return (w * (as_count(value[1]) or 0), w)


def _no_failure_is_zero(est: Any, figures: Any, run: RunFacts) -> Any:
    """mean_t_fail is 0 when nothing failed (a resample whose failure weights sum to 0)."""
    import numpy as np

    return np.nan_to_num(est, nan=0.0)


def _times_factor(est: Any, figures: Any, run: RunFacts) -> Any:
    """WES = WES+ x (1 - mean_t_fail / S), the factor recomputed on the same resample."""
    if run.step_budget <= 0:
        return est
    return est * (1 - figures["mean_t_fail"] / run.step_budget)


_MEAN = Resample(over_units)


def _cost(
    name: str,
    *,
    version: int,
    unit: str,
    label: str,
    table: str = "run_costs",
    header: str | None = None,
) -> Metric:
    """A cost or time figure: the cost scorer computes it into `table`, whose declaration gives
    its column's type and doc; lower is better."""
    return Metric(
        name, version=version, direction="lower", unit=unit, label=label, table=table, header=header
    )


register(
    Metric(
        "success_rate_run",
        version=1,
        direction="higher",
        unit="fraction",
        label="show_result.py success rate",
        run=Aggregate(
            EPISODES,
            _rate_run,
            "sum(r) / n_tasks_run: over the tasks run, as OSWorld's show_result.py (null when "
            "nothing ran).",
            value=_reward,
            resample=Resample(over_present, analytic=True),
        ),
        header="show_result %",
        percent=True,
    ),
    Metric(
        "success_rate_human",
        version=2,
        direction="higher",
        unit="fraction",
        label="OSWorld-Human success rate",
        run=Aggregate(
            HUMAN_TASKS,
            _rate_human,
            "sum(r over matched) / N: over the N human tasks, a task not run counting 0, as "
            "OSWorld-Human's 'Original OSWorld Result' (null under the deskscore rules when no "
            "task matched).",
            value=_reward,
            resample=Resample(over_units, analytic=True),
        ),
        header="OSWorld-Human %",
        percent=True,
    ),
    Metric(
        "strict_success_rate_run",
        version=1,
        direction="higher",
        unit="fraction",
        label="strict success",
        run=Aggregate(
            EPISODES,
            _strict_rate,
            "Share of run tasks with r == 1.",
            value=_reward,
            resample=Resample(_strict_parts, analytic=True),
        ),
        percent=True,
        board_column="strict_success_run_pct",
    ),
    Metric(
        "step_ratio_single",
        version=1,
        direction="lower",
        unit="ratio",
        label="steps / human",
        episode=PerEpisode(_step_ratio_single, "t_agent / t_human_single."),
    ),
    Metric(
        "step_ratio_grouped",
        version=1,
        direction="lower",
        unit="ratio",
        label="steps / human (grouped)",
        episode=PerEpisode(_step_ratio_grouped, "t_agent / t_human_grouped."),
    ),
    Metric(
        "wes_plus_single",
        version=2,
        direction="higher",
        unit="fraction",
        label="WES+ single",
        episode=PerEpisode(_wes_plus_single, "r * t_human_single / t_agent (0 when t_agent is 0)."),
        run=Aggregate(
            HUMAN_TASKS,
            per_human_task,
            "Mean single-action WES+ over N (null under the deskscore rules when no task matched).",
            resample=_MEAN,
        ),
        header="WES+ single",
        percent=True,
    ),
    Metric(
        "wes_plus_grouped",
        version=2,
        direction="higher",
        unit="fraction",
        label="WES+ grouped",
        episode=PerEpisode(
            _wes_plus_grouped, "r * t_human_grouped / t_agent (0 when t_agent is 0)."
        ),
        run=Aggregate(
            HUMAN_TASKS,
            per_human_task,
            "Mean grouped-action WES+ over N (null: as WES+).",
            resample=_MEAN,
        ),
        header="WES+ grouped",
        percent=True,
        compact=False,
    ),
    Metric(
        "wes_minus",
        version=2,
        direction="higher",
        unit="fraction",
        label="WES-",
        episode=PerEpisode(_wes_minus, "-(1 - r) * t_agent / S."),
        run=Aggregate(
            HUMAN_TASKS, per_human_task, "Mean WES- over N (null: as WES+).", resample=_MEAN
        ),
        header="WES-",
    ),
    Metric(
        "wes_single",
        version=2,
        direction="higher",
        unit="fraction",
        label="WES single",
        episode=PerEpisode(
            _wes_single,
            "Combined WES, second form: wes_plus_single * (1 - mean_t_fail / S), the run's factor.",
        ),
        run=Aggregate(
            HUMAN_TASKS,
            per_human_task,
            "Combined WES (second form), single-action (null: as WES+).",
            resample=Resample(over_units, value=_wes_plus_single, finish=_times_factor),
        ),
        needs=("mean_t_fail",),
        header="WES single",
        percent=True,
    ),
    Metric(
        "wes_grouped",
        version=2,
        direction="higher",
        unit="fraction",
        label="WES grouped",
        episode=PerEpisode(_wes_grouped, "Combined WES, second form, grouped granularity."),
        run=Aggregate(
            HUMAN_TASKS,
            per_human_task,
            "Combined WES (second form), grouped-action (null: as WES+).",
            resample=Resample(over_units, value=_wes_plus_grouped, finish=_times_factor),
        ),
        needs=("mean_t_fail",),
        header="WES grouped",
        percent=True,
        compact=False,
    ),
    Metric(
        "mean_step_ratio_single",
        version=1,
        direction="lower",
        unit="ratio",
        label="steps / human",
        run=Aggregate(
            HUMAN_TASKS,
            mean,
            "Mean t_agent / t_human_single over successful matched tasks.",
            value=_success_step_ratio_single,
            resample=Resample(over_present),
        ),
        header="steps/human",
    ),
    Metric(
        "mean_step_ratio_grouped",
        version=1,
        direction="lower",
        unit="ratio",
        label="steps / human (grouped)",
        run=Aggregate(
            HUMAN_TASKS,
            mean,
            "Mean t_agent / t_human_grouped over successful matched tasks.",
            value=_success_step_ratio_grouped,
            resample=Resample(over_present),
        ),
    ),
    Metric(
        "mean_t_fail",
        version=2,
        direction="lower",
        unit="steps",
        label="mean failed steps",
        run=Aggregate(
            HUMAN_TASKS,
            _mean_t_fail,
            "Failure-weighted mean t_agent of failed matched tasks: sum((1-r) t) / sum(1-r) "
            "(null: as WES+).",
            value=_failure,
            resample=Resample(_failure_parts, finish=_no_failure_is_zero),
        ),
    ),
    _cost("cost_usd", version=1, unit="USD", label="cost"),
    _cost("cost_per_task_usd", version=1, unit="USD", label="cost per task", header="$/task"),
    _cost("cost_per_success_usd", version=1, unit="USD", label="cost per success"),
    _cost("task_time_s", version=1, unit="s", label="task time", table="episode_costs"),
    _cost("median_task_s", version=1, unit="s", label="median task time", header="median task s"),
)

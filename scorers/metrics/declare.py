"""What a metric declaration holds, and what its functions are given.

A metric is declared once (`Metric`): how one episode's value is computed (`PerEpisode`), how
the run's figure is made from the episodes (`Aggregate`: which episodes, in which order, how
combined), which way is better, its unit, its columns' docs, how the leaderboard shows it and
its version. `score_run` computes the declared metrics in one loop; tables, SQL views, the
CLI and the report derive their columns from the declarations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class EpisodeFacts:
    """What a metric's per-episode function sees of one episode (scored against one human
    task when the run's figure is made over HUMAN_TASKS)."""

    domain: str
    task_id: str
    reward: float | None
    """r under the run's rule set; None when the task counts as not run."""
    t_agent: int | None
    """Agent steps (None when unknown: scored as 0)."""
    t_human_single: int | None
    """Human single-action steps of the task's reference; None without one."""
    t_human_grouped: int | None
    has_human_ref: bool
    scored: bool
    """Matched to a human task: it counts in the OSWorld-Human figures."""


@dataclass(frozen=True)
class RunFacts:
    """The run-level quantities a metric's functions may read. `figures` holds the run figures
    computed so far: those of the metrics a metric `needs` are always there."""

    compat: str
    max_steps_scoring: int
    step_budget: int
    """S = max(max_steps_scoring, the run's largest t_agent), computed before any metric."""
    n_human_tasks: int
    """N: the human tasks of the data version (the OSWorld-Human denominator)."""
    figures: Mapping[str, Any]


EpisodeFn = Callable[[EpisodeFacts, RunFacts], Any]
CombineFn = Callable[[list[Any], RunFacts], Any]

Over = Literal["episodes", "human_tasks"]
EPISODES: Over = "episodes"
"""Every episode of the run, in the order given."""
HUMAN_TASKS: Over = "human_tasks"
"""Each human task the run has an episode for, in the human data's order, against that episode
with the task's own step counts (OSWorld-Human's loop: a task found twice counts twice).
Empty when no episode matched a human task: see `unmatched`."""

ORIGINAL_RULES = "osworld-human"
"""The rule set that reproduces OSWorld-Human's score.py, whose figures over N stay 0 when
nothing matched."""


@dataclass(frozen=True)
class PerEpisode:
    """A metric's value for one episode: its episode_scores column."""

    value: EpisodeFn
    doc: str
    """The episode_scores column's doc."""
    type: str = "float64"


Parts = Callable[[Any], tuple[float, float]]
"""One unit's share of a ratio-of-sums figure: (numerator, denominator)."""
Finish = Callable[["np.ndarray", Mapping[str, "np.ndarray"], RunFacts], "np.ndarray"]


def over_units(value: Any) -> tuple[float, float]:
    """A mean over every unit, a missing value counting 0 (a figure over the N human tasks)."""
    return (0.0 if value is None else float(value), 1.0)


def over_present(value: Any) -> tuple[float, float]:
    """A mean over the units that have a value (None: the unit is not in the mean)."""
    return (0.0, 0.0) if value is None else (float(value), 1.0)


@dataclass(frozen=True)
class Resample:
    """How a run figure is recomputed on a bootstrap resample of its units, vectorised: the
    figure is sum(numerator) / sum(denominator) over the units (`parts` of each unit's value),
    then `finish` (given the resampled figures of the metrics it `needs`). Declared with the
    metric so the intervals follow its definition; a test holds that the unresampled form gives
    the run figure."""

    parts: Parts = over_units
    value: EpisodeFn | None = None
    """The per-unit value resampled; default: the aggregate's."""
    finish: Finish | None = None
    analytic: bool = False
    """A mean of per-unit outcomes: it also gets the analytic clustered standard error."""


@dataclass(frozen=True)
class Aggregate:
    """A metric's run figure: `combine` over `value` of the episodes chosen by `over`."""

    over: Over
    combine: CombineFn
    doc: str
    """The run_scores column's doc."""
    value: EpisodeFn | None = None
    """What is combined; default: the metric's per-episode value."""
    type: str = "float64"
    resample: Resample | None = None
    """How its bootstrap recomputes it (None: the figure gets no interval)."""


@dataclass(frozen=True)
class Metric:
    """One metric, declared once. score_run computes it into episode_scores (`episode`) and
    run_scores (`run`); a metric another scorer computes names its `table` instead."""

    name: str
    _: KW_ONLY
    version: int
    """Bumped when the definition changes: the score job then computes every run again."""
    direction: Literal["higher", "lower"]
    """Which way is better."""
    unit: str
    label: str
    """Its name as people read it in a sentence or on a chart axis."""
    episode: PerEpisode | None = None
    run: Aggregate | None = None
    needs: tuple[str, ...] = ()
    """Metrics whose run figures this one's functions read (`RunFacts.figures`): computed, and
    stored in the tables, before it."""
    table: str | None = None
    """For a metric another scorer computes (e.g. run_costs by the cost scorer): the table that
    stores it, whose declaration gives its column's type and doc."""
    header: str | None = None
    """The `deskscore leaderboard` column header; None: left out of the printed leaderboard
    (the leaderboard view still has every run_scores figure)."""
    percent: bool = False
    """The leaderboard shows 100 x the figure, in a column named <name>_pct."""
    compact: bool = True
    """The report's narrow leaderboard shows it too (when it has a header)."""
    board_column: str | None = None
    """The leaderboard view's column, when not the default name (<name>, or <name>_pct)."""

    @property
    def column(self) -> str:
        """The leaderboard view's column of this metric."""
        if self.board_column:
            return self.board_column
        return f"{self.name}_pct" if self.percent else self.name

    @property
    def axis_label(self) -> str:
        """The label of a chart axis showing the leaderboard's figure, unit included."""
        if self.percent:
            return f"{self.label} (%)"
        return self.label if self.unit in ("fraction", "ratio") else f"{self.label} ({self.unit})"


def unmatched(values: Sequence[Any], run: RunFacts) -> bool:
    """Whether a figure over the N human tasks stands on nothing: no episode of the run matched
    a human task (the HUMAN_TASKS values are empty), e.g. a run of scenarios that are not
    OSWorld tasks. Under the deskscore rules such a figure is None, not a measured 0; under
    the osworld-human rules it is what OSWorld-Human's score.py prints (a sum over no task
    divided by N: 0), so `score.py` stays character-identical to it."""
    return not values and run.compat != ORIGINAL_RULES


def per_human_task(values: Sequence[float], run: RunFacts) -> float | None:
    """The sum over N, OSWorld-Human's mean: builtin `sum` in the order given (so the figure is
    bit-identical to the original's); None without human tasks, or when none matched (see
    `unmatched`)."""
    if not run.n_human_tasks or unmatched(values, run):
        return None
    return sum(values) / run.n_human_tasks


def mean(values: Sequence[Any], run: RunFacts) -> float | None:
    """The mean of the values that are not None; None when none is."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None

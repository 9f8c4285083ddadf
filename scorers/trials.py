"""Figures over several trials of the same tasks: per-task mean success, pass@k and pass^k.

A trial is a run (`runs.trial`); the runs that are trials of one configuration share a
`runs.run_group`. For one task, n is the number of the group's trials that ran it with a usable
result and c the number of those that succeeded strictly (r == 1). Then, for 1 <= k <= n:

- pass@k = 1 - C(n - c, k) / C(n, k): the chance that at least one of k trials drawn without
  replacement from the n succeeds (the unbiased estimator of Chen et al. 2021, "Evaluating
  Large Language Models Trained on Code");
- pass^k = C(c, k) / C(n, k): the chance that all k drawn trials succeed (tau-bench's
  reliability figure, Yao et al. 2024).

pass@1 = pass^1 = c / n. A group's figure is the mean of the per-task figures over the tasks
with n >= k: a task that fewer than k trials ran has no estimate at k and is left out of that
mean (`GroupFigures.n_tasks` says how many tasks each mean is over). Trials that did not run a
task, or ran it without a usable result, are not counted as failures: that is show_result.py's
rule (success over the tasks run), applied per task.

Binomial coefficients are exact integers (`math.comb`) and each ratio is one division, so the
figures are exact to the last bit a float can hold; there is no sampling.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n-c, k) / C(n, k): at least one of k trials (of n, c successful) succeeds."""
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """C(c, k) / C(n, k): all k trials (of n, c successful) succeed."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


class TaskTrials(NamedTuple):
    """One task's outcomes over a group's trials: the rewards of the trials that ran it with a
    usable result, and which of those were strict successes."""

    rewards: tuple[float, ...]
    successes: tuple[bool, ...]

    @property
    def n(self) -> int:
        return len(self.rewards)

    @property
    def c(self) -> int:
        return sum(self.successes)


class GroupFigures(NamedTuple):
    """A group's figures at one k (1 <= k <= the group's trial count)."""

    k: int
    n_tasks: int
    """Tasks with n >= k: those the means at this k are over."""
    pass_at_k: float | None
    """Mean pass@k over those tasks; None when there is none."""
    pass_hat_k: float | None
    """Mean pass^k over those tasks; None when there is none."""


def mean_reward(tasks: Iterable[TaskTrials]) -> float | None:
    """Mean over the tasks (n >= 1) of each task's mean reward (partial credit counts); None
    without such a task."""
    means = [sum(t.rewards) / t.n for t in tasks if t.n]
    return sum(means) / len(means) if means else None


def group_figures(tasks: Sequence[TaskTrials], n_trials: int) -> list[GroupFigures]:
    """pass@k and pass^k for k = 1..n_trials, each the mean over the tasks with n >= k."""
    out = []
    for k in range(1, n_trials + 1):
        eligible = [t for t in tasks if t.n >= k]
        if eligible:
            at = sum(pass_at_k(t.n, t.c, k) for t in eligible) / len(eligible)
            hat = sum(pass_hat_k(t.n, t.c, k) for t in eligible) / len(eligible)
        else:
            at = hat = None
        out.append(GroupFigures(k, len(eligible), at, hat))
    return out


class VarianceSplit(NamedTuple):
    """The standard error of the mean per-task success over several trials, split in two
    (Miller 2024, section 3: resampling answers). The per-task means vary because tasks differ
    (between) and because each task's K trials are a sample of the agent's outcomes (within,
    shrinking as 1/K): var(task means) = var_between + var_within / K."""

    n_tasks: int
    mean: float | None
    se: float | None
    """sqrt(var(task means) / n): the standard error of `mean`."""
    var_within: float | None
    """Mean over tasks of the variance of a task's outcomes across its trials (ddof 1)."""
    var_between: float | None
    """var(task means) - var_within / K (K: mean trials per task), floored at 0."""
    se_within: float | None
    """sqrt(var_within / (K n)): the part more trials per task would shrink."""
    se_between: float | None
    """sqrt(var_between / n): the part only more tasks would shrink."""


def variance_split(tasks: Iterable[TaskTrials]) -> VarianceSplit:
    """The split of the standard error of mean strict success, over the tasks with two trials
    or more (a task run once has no within-task variance to estimate)."""
    import numpy as np

    rows = [np.asarray(t.successes, dtype=np.float64) for t in tasks if t.n >= 2]
    n = len(rows)
    if n < 2:
        return VarianceSplit(n, None, None, None, None, None, None)
    means = np.array([r.mean() for r in rows])
    within = float(np.mean([r.var(ddof=1) for r in rows]))
    k = float(np.mean([r.size for r in rows]))
    total = float(means.var(ddof=1))
    between = max(total - within / k, 0.0)
    return VarianceSplit(
        n,
        float(means.mean()),
        float(np.sqrt(total / n)),
        within,
        between,
        float(np.sqrt(within / (k * n))),
        float(np.sqrt(between / n)),
    )


def tasks_of(outcomes: Iterable[tuple[str, str, float | None, bool | None]]) -> list[TaskTrials]:
    """Per-task outcomes from (domain, task_id, reward, success) per trial and episode, in task
    order; an episode with no usable reward (None) is a trial that did not run the task."""
    by_task: dict[tuple[str, str], tuple[list[float], list[bool]]] = {}
    for domain, task_id, reward, success in outcomes:
        rewards, successes = by_task.setdefault((domain, task_id), ([], []))
        if reward is None:
            continue
        rewards.append(float(reward))
        successes.append(bool(success))
    return [TaskTrials(tuple(r), tuple(s)) for _, (r, s) in sorted(by_task.items())]


def n_tasks_run(tasks: Iterable[TaskTrials]) -> int:
    """Tasks at least one trial ran with a usable result."""
    return sum(1 for t in tasks if t.n)


def trial_order(trials: Iterable[tuple[str, str | None]]) -> tuple[list[str], list[str]]:
    """A group's run ids and trial labels ('' for none) as its rows list them: by label, the
    unlabelled last, then by run id."""
    ordered = sorted(trials, key=lambda t: (t[1] is None, t[1] or "", t[0]))
    return [run_id for run_id, _ in ordered], [label or "" for _, label in ordered]


def trial_rows(
    group: str,
    benchmark: str,
    config: Mapping[str, object],
    trials: Sequence[tuple[str, str | None]],
    tasks: Sequence[TaskTrials],
) -> list[dict[str, object]]:
    """The `trial_scores` rows of one group under one configuration: one per k.

    `trials` are (run_id, trial label) of the group's runs scored under `config` (its
    human_version, max_steps_scoring and compat)."""
    run_ids, labels = trial_order(trials)
    common = {
        "run_group": group,
        "benchmark": benchmark,
        **config,
        "n_trials": len(run_ids),
        "run_ids": run_ids,
        "trials": labels,
        "n_tasks": n_tasks_run(tasks),
        "mean_reward": mean_reward(tasks),
    }
    return [
        common
        | {
            "k": f.k,
            "n_tasks_k": f.n_tasks,
            "pass_at_k": f.pass_at_k,
            "pass_hat_k": f.pass_hat_k,
        }
        for f in group_figures(tasks, len(run_ids))
    ]


__all__ = [
    "GroupFigures",
    "TaskTrials",
    "VarianceSplit",
    "group_figures",
    "mean_reward",
    "n_tasks_run",
    "pass_at_k",
    "pass_hat_k",
    "tasks_of",
    "trial_order",
    "trial_rows",
    "variance_split",
]

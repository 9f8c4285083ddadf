"""`deskscore leaderboard --trials`: run groups ranked by pass@1, with pass@k and pass^k.

A separate view (mart `trials`) rather than columns of the leaderboard: the leaderboard has
one row per run (each trial's own OSWorld-Human figures stay there), trial figures one row
per group of runs; repeating a group's figures on each of its trials' rows would invite
summing them.
"""

from __future__ import annotations

from typing import Any

from deskscore.pipelines.cli.output import render

TRIAL_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("rank", "rank", "rank"),
    ("agent", "agent", "agent"),
    ("n_trials", "n_trials", "trials"),
    ("n_tasks", "n_tasks", "tasks run"),
    ("pass_at_1_pct", "100 * pass_at_1", "pass@1 %"),
    ("pass_at_k_pct", "100 * pass_at_k", "pass@k %"),
    ("pass_hat_k_pct", "100 * pass_hat_k", "pass^k %"),
    ("k", "k", "k"),
    ("n_tasks_k", "n_tasks_k", "tasks at k"),
    ("mean_reward_pct", "100 * mean_reward", "mean reward %"),
    ("max_steps_scoring", "max_steps_scoring", "S floor"),
    ("human_version", "human_version", "human"),
    ("compat", "compat", "rules"),
    ("run_group", "run_group", "group"),
)
"""(column name for csv/json, expression over the mart, header for tables). pass@k and pass^k
are at k = the group's trial count, over the tasks that many trials ran (tasks at k); pass@1
is over every task run (tasks run)."""


def trials_text(warehouse: str, fmt: str = "table", **filters: Any) -> tuple[str, int]:
    """The `trials` mart rendered (only the configuration `filters` name), and its row count."""
    from deskscore.sql import connect

    con = connect(warehouse, only="trials")
    where = " AND ".join(f"{k} = ${k}" for k, v in filters.items() if v is not None) or "true"
    params = {k: v for k, v in filters.items() if v is not None}
    cols = ", ".join(f"{expr} AS {name}" for name, expr, _ in TRIAL_COLUMNS)
    rows = con.sql(f"SELECT {cols} FROM trials WHERE {where}", params=params).fetchall()
    if fmt in {"table", "md"}:
        headers = [header for _, _, header in TRIAL_COLUMNS]
    else:
        headers = [name for name, _, _ in TRIAL_COLUMNS]
    return render(headers, rows, fmt), len(rows)


__all__ = ["TRIAL_COLUMNS", "trials_text"]

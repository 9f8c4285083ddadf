"""Reports as declarative column lists: (view column, header as people read it), in order."""

LEADERBOARD_COLUMNS = (
    ("rank", "rank"),
    ("agent", "agent"),
    ("success_rate_human_pct", "OSWorld %"),
    ("success_rate_run_pct", "run %"),
    ("wes_plus_single_pct", "WES+ single"),
    ("wes_plus_grouped_pct", "WES+ grouped"),
    ("wes_minus", "WES-"),
    ("wes_single_pct", "WES single"),
    ("wes_grouped_pct", "WES grouped"),
    ("mean_step_ratio_single", "steps/human"),
    ("cost_per_task_usd", "$/task"),
    ("median_task_s", "median task s"),
    ("n_tasks_run", "tasks run"),
    ("n_human_tasks", "N"),
    ("step_budget", "S"),
    ("human_version", "human"),
    ("compat", "rules"),
)
"""The leaderboard as people read it: (view column, header), in order."""

LEADERBOARD_COMPACT = tuple(
    col
    for col in LEADERBOARD_COLUMNS
    if col[0] not in {"wes_plus_grouped_pct", "wes_grouped_pct", "n_human_tasks", "human_version"}
)
"""The leaderboard narrowed to fit a page (the HTML report): single-action figures only."""

"""Every metric deskscore reports, each declared once (see `declare`), and the registry that
derives the score tables' columns, the SQL views' metric columns, the leaderboard's columns
and the score version from the declarations. Importing this package registers deskscore's own
metrics (`builtin`); `register` adds one more."""

from deskscore.scorers.metrics.builtin import RANKED_BY  # importing it registers the builtins
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
)
from deskscore.scorers.metrics.registry import (
    better,
    board,
    computed,
    field,
    metric,
    metrics,
    register,
    score_fields,
    unregister,
    version_bumps,
)

__all__ = [
    "EPISODES",
    "HUMAN_TASKS",
    "RANKED_BY",
    "Aggregate",
    "EpisodeFacts",
    "Metric",
    "PerEpisode",
    "Resample",
    "RunFacts",
    "better",
    "board",
    "computed",
    "field",
    "mean",
    "metric",
    "metrics",
    "over_present",
    "over_units",
    "per_human_task",
    "register",
    "score_fields",
    "unregister",
    "version_bumps",
]

"""Reports as declarative column lists: (view column, header as people read it), in order.

The leaderboard's figures come from the metric registry, read when asked (a metric registered
at run time shows up): the figure it ranks by first, then every other one with a header. Then
what the figures stand on: tasks run (show_result.py's denominator), tasks matched to human
data, N (OSWorld-Human's denominator), S, the configuration and the agent.
"""

from __future__ import annotations

from deskscore.scorers import metrics

_LEAD = (("rank", "rank"), ("label", "run"))
"""A run is shown by its label (run_labels): its name or agent, told apart from namesakes."""
_CONFIGURATION = (
    ("n_tasks_run", "tasks run"),
    ("n_tasks_matched", "matched"),
    ("n_human_tasks", "N"),
    ("step_budget", "S"),
    ("human_version", "human"),
    ("compat", "rules"),
    ("agent", "agent"),
)
_WIDE_ONLY = frozenset({"n_human_tasks", "human_version", "agent"})


def _figures(compact: bool) -> list[tuple[str, str]]:
    shown = [(m.name, m.column, m.header) for m in metrics.board() if m.header]
    shown = [s for s in shown if not compact or metrics.metric(s[0]).compact]
    shown.sort(key=lambda s: s[0] != metrics.RANKED_BY[0])  # stable: the ranking figure first
    return [(column, header) for _, column, header in shown if header]


def leaderboard_columns() -> tuple[tuple[str, str], ...]:
    """The leaderboard as people read it: (view column, header), in order."""
    return (*_LEAD, *_figures(compact=False), *_CONFIGURATION)


def leaderboard_compact() -> tuple[tuple[str, str], ...]:
    """The leaderboard narrowed to fit a page (the HTML report): single-action figures only."""
    return (
        *_LEAD,
        *_figures(compact=True),
        *(c for c in _CONFIGURATION if c[0] not in _WIDE_ONLY),
    )

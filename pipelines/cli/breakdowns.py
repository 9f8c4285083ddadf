"""`deskscore leaderboard --by level|app|domain|mode`: the DeskCraft slices of each run.

Each breakdown is a declaration: the mart it reads, the filters it takes, and its columns as
(view column, header people read); the SQL only selects and filters. Strict success (score
1) and mean score (partial credit counted) are printed side by side, never merged.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from deskscore.pipelines.cli.output import render


class Breakdown(NamedTuple):
    view: str
    key: tuple[str, str]
    """(column, header) of what the rows are sliced by."""
    filters: tuple[str, ...]
    """Arguments of `breakdown_text` that filter this view (level_source, split)."""
    extra: tuple[tuple[str, str], ...] = ()


_MEASURES = (
    ("n_tasks_run", "tasks run"),
    ("n_strict_success", "solved"),
    ("strict_success_pct", "strict %"),
    ("mean_score_pct", "mean score %"),
    ("n_episodes", "episodes"),
)

BREAKDOWNS: dict[str, Breakdown] = {
    "level": Breakdown("per_level", ("level", "level"), ("level_source", "split"),
                       (("level_source", "level source"), ("split", "split"))),
    "app": Breakdown("per_app", ("app", "app"), ("split",),
                     (("category", "domain"), ("split", "split"))),
    "domain": Breakdown("deskcraft_per_domain", ("domain", "domain"), ("split",),
                        (("n_apps", "apps"), ("split", "split"))),
    "mode": Breakdown("per_mode", ("mode", "mode"), (),
                      (("n_questions", "questions"), ("n_user_turns", "user turns"))),
}  # fmt: skip
"""What `--by` accepts, and how each is printed."""

LEVEL_SOURCES = ("stem", "difficulty")
SPLITS = ("all", "standard", "interactive")


def breakdown_text(
    warehouse: str,
    by: str,
    fmt: str = "table",
    *,
    level_source: str = "stem",
    split: str = "all",
) -> tuple[str, int]:
    """The breakdown `by` of every DeskCraft run, rendered; and how many rows it has."""
    from deskscore.sql import connect

    spec = BREAKDOWNS[by]
    columns = (("agent", "agent"), spec.key, *_MEASURES, *spec.extra, ("run_id", "run"))
    values: dict[str, Any] = {"level_source": level_source, "split": split}
    params = {f: values[f] for f in spec.filters}
    where = " AND ".join(f"{f} = ${f}" for f in spec.filters) or "true"
    cols = ", ".join(c for c, _ in columns)
    rows = (
        connect(warehouse)
        .sql(f"SELECT {cols} FROM {spec.view} WHERE {where}", params=params or None)
        .fetchall()
    )
    headers = [h if fmt in {"table", "md"} else c for c, h in columns]
    return render(headers, rows, fmt), len(rows)

"""`deskscore leaderboard --by ...`: each run sliced, OSWorld runs and DeskCraft runs apart.

OSWorld runs are sliced by domain (`per_domain`) or by show_result.py's domain groups
(`--by app`: Office, Daily, Professional, and the domains in no group on rows of their own;
`per_category`), under one scoring configuration, with the success rate both ways (over the
tasks run, as show_result.py; over the human tasks, as OSWorld-Human), WES+ and the step
ratio. DeskCraft runs are sliced by level, app, DeskCraft domain or collaboration mode, with
strict success (score 1) and mean score (partial credit counted) side by side, never merged.
A warehouse holding both prints both, each titled.

Each breakdown is a declaration: the mart it reads, the filters it takes, and its columns as
(view column, header people read); the SQL only selects and filters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from deskscore.pipelines.cli.common import UserError
from deskscore.pipelines.cli.intervals import Bounds, flat_rows, table_rows
from deskscore.pipelines.cli.output import render
from deskscore.pipelines.cli.scored import (
    chosen_configuration,
    deskcraft_run,
    not_scored,
    only_runs,
    scored_configurations,
    where,
)
from deskscore.scorers import metrics


class Breakdown(NamedTuple):
    view: str
    key: tuple[str, str]
    """(column, header) of what the rows are sliced by."""
    filters: tuple[str, ...]
    """Arguments of `breakdown_text` that filter this view (level_source, split)."""
    extra: tuple[tuple[str, str], ...] = ()
    title: str = ""
    """What the rows are sliced by, in the section's title."""
    order: str = ""
    """How a run's rows are ordered (default: by the key)."""


_MEASURES = (
    ("n_tasks_run", "tasks run"),
    ("n_strict_success", "solved"),
    ("strict_success_pct", "strict %"),
    ("mean_score_pct", "mean score %"),
    ("n_episodes", "episodes"),
)

BREAKDOWNS: dict[str, Breakdown] = {
    "level": Breakdown("per_level", ("level", "level"), ("level_source", "split"),
                       (("level_source", "level source"), ("split", "split")), "level"),
    "app": Breakdown("per_app", ("app", "app"), ("split",),
                     (("category", "domain"), ("split", "split")), "app"),
    "domain": Breakdown("deskcraft_per_domain", ("domain", "domain"), ("split",),
                        (("n_apps", "apps"), ("split", "split")), "DeskCraft domain"),
    "mode": Breakdown("per_mode", ("mode", "mode"), (),
                      (("n_questions", "questions"), ("n_user_turns", "user turns")),
                      "collaboration mode"),
}  # fmt: skip
"""DeskCraft runs: what `--by` accepts, and how each is printed."""

OSWORLD_BREAKDOWNS: dict[str, Breakdown] = {
    "domain": Breakdown("per_domain", ("domain", "domain"), (), (), "domain"),
    "app": Breakdown("per_category", ("category", "group"), (), (("domains", "domains"),),
                     "show_result.py category", "NOT v.is_show_result_group, v.category"),
}  # fmt: skip
"""OSWorld runs (every run that is not DeskCraft's): what `--by` accepts."""

BY: tuple[str, ...] = tuple(dict.fromkeys([*OSWORLD_BREAKDOWNS, *BREAKDOWNS]))
LEVEL_SOURCES = ("stem", "difficulty")
SPLITS = ("all", "standard", "interactive")


def _osworld_measures() -> tuple[tuple[str, str], ...]:
    """The per-slice figures of OSWorld runs; a metric's header is the leaderboard's."""

    def shown(name: str) -> tuple[str, str]:
        m = metrics.metric(name)
        return m.column, m.header or m.label

    return (
        ("n_tasks_run", "tasks run"),
        ("n_strict_success", "solved"),
        shown("success_rate_run"),
        ("n_human_tasks", "human tasks"),
        ("n_tasks_matched", "matched"),
        shown("success_rate_human"),
        shown("wes_plus_single"),
        shown("mean_step_ratio_single"),
    )


def _section(
    con: Any,
    spec: Breakdown,
    measures: tuple[tuple[str, str], ...],
    condition: str,
    params: dict[str, Any],
    fmt: str,
    ci: str = "none",
    bounds: Callable[[list[Any], list[str]], Bounds] | None = None,
) -> tuple[list[tuple[Any, ...]], str]:
    """(rows, rendered table) of one breakdown: the run's label first, its id last; with `ci`,
    the rates carry the intervals `bounds(rows, column names)` finds (pipelines.cli.intervals)."""
    columns = (("label", "run"), spec.key, *measures, *spec.extra, ("run_id", "run id"))
    cols = ", ".join("l.label" if c == "label" else f"v.{c}" for c, _ in columns)
    order = spec.order or f"v.{spec.key[0]}"
    rows = con.sql(
        f"SELECT {cols} FROM {spec.view} AS v JOIN run_labels AS l USING (run_id) "
        f"WHERE {condition} ORDER BY l.label, v.run_id, {order}",
        params=params or None,
    ).fetchall()
    headers = [h if fmt in {"table", "md"} else c for c, h in columns]
    if ci == "none" or bounds is None or not rows:
        return rows, render(headers, rows, fmt)
    names = [c for c, _ in columns]
    found = bounds(rows, names)
    ids = [(r[-1], r[1]) for r in rows]
    if fmt in {"csv", "json"}:
        flat_names, flat = flat_rows(names, rows, ids, found)
        return rows, render(flat_names, flat, fmt)
    return rows, render(headers, table_rows(names, rows, ids, found, ci), fmt)


def _deskcraft(
    con: Any,
    by: str,
    fmt: str,
    level_source: str,
    split: str,
    ci: str = "none",
    runs: Sequence[str] = (),
) -> list[str]:
    if by not in BREAKDOWNS:
        return []
    spec = BREAKDOWNS[by]
    values: dict[str, Any] = {"level_source": level_source, "split": split}
    params = {f: values[f] for f in spec.filters}
    condition = " AND ".join(f"v.{f} = ${f}" for f in spec.filters) or "true"
    condition, params = only_runs(condition, params, runs, "v")

    def bounds(rows: list[Any], names: list[str]) -> Bounds:
        from deskscore.pipelines.cli.slice_bounds import deskcraft_bounds

        return deskcraft_bounds(con, by, level_source, split, rows, names, spec.key[0])

    rows, text = _section(con, spec, _MEASURES, condition, params, fmt, ci, bounds)
    if not rows:
        return []
    shown = ", ".join(f"{f.replace('_', ' ')} {values[f]}" for f in spec.filters)
    head = f"DeskCraft runs by {spec.title} ({shown + ', ' if shown else ''}deskscore rules)"
    return [f"{head}\n{text}" if fmt in {"table", "md"} else text]


def _osworld(
    con: Any,
    warehouse: str,
    by: str,
    fmt: str,
    chosen: dict[str, Any],
    ci: str = "none",
    runs: Sequence[str] = (),
) -> list[str]:
    osworld = f"SELECT run_id FROM runs WHERE NOT {deskcraft_run()}"
    if by not in OSWORLD_BREAKDOWNS or not con.sql(osworld).fetchall():
        return []
    configs = scored_configurations(con)
    config = chosen_configuration(configs, **chosen)
    if config not in configs:
        raise UserError(not_scored(warehouse, config, configs))
    spec = OSWORLD_BREAKDOWNS[by]
    condition, params = where(config, "v")
    condition += f" AND v.run_id IN ({osworld})"
    condition, params = only_runs(condition, params, runs, "v")

    def bounds(rows: list[Any], names: list[str]) -> Bounds:
        from deskscore.pipelines.cli.slice_bounds import osworld_bounds
        from deskscore.scorers.success import CATEGORIES

        groups = {d: c for c, ds in CATEGORIES.items() for d in ds} if by == "app" else None
        return osworld_bounds(con, condition, params, groups, rows, names, spec.key[0])

    rows, text = _section(con, spec, _osworld_measures(), condition, params, fmt, ci, bounds)
    if not rows:
        return []
    head = f"OSWorld runs by {spec.title} ({config.describe()})"
    return [f"{head}\n{text}" if fmt in {"table", "md"} else text]


def breakdown_text(
    warehouse: str,
    by: str,
    fmt: str = "table",
    *,
    level_source: str = "stem",
    split: str = "all",
    human_version: str | None = None,
    max_steps_scoring: int | None = None,
    compat: str | None = None,
    ci: str = "none",
    runs: Sequence[str] = (),
) -> str:
    """The breakdown `by` of every run it applies to (of `runs` only, when given): OSWorld runs under one configuration
    (chosen as the leaderboard chooses it), DeskCraft runs, each titled; `ci` adds each rate's
    95% interval (pipelines.cli.slice_bounds); UserError when nothing applies."""
    from deskscore.sql import connect

    views = [spec.view for spec in (OSWORLD_BREAKDOWNS.get(by), BREAKDOWNS.get(by)) if spec]
    if ci != "none":
        views += ["per_domain_units", "deskcraft_slice_units"]
    con = connect(warehouse, only=("runs", "run_scores", "run_labels", *views))
    chosen = {"human_version": human_version, "max_steps_scoring": max_steps_scoring}
    chosen["compat"] = compat
    sections = _osworld(con, warehouse, by, fmt, chosen, ci, runs)
    sections += _deskcraft(con, by, fmt, level_source, split, ci, runs)
    if not sections:
        families = [name for name, known in (("OSWorld", OSWORLD_BREAKDOWNS),
                    ("DeskCraft", BREAKDOWNS)) if by in known]  # fmt: skip
        how = f"run 'deskscore score --warehouse {warehouse}'"
        if by in BREAKDOWNS:
            how = f"ingest DeskCraft runs with --benchmark deskcraft, then {how}"
        if by not in OSWORLD_BREAKDOWNS:
            how += f" (OSWorld runs are sliced by --by {'|'.join(OSWORLD_BREAKDOWNS)})"
        raise UserError(
            f"--by {by} slices {' and '.join(families)} runs, and {warehouse} has no scored "
            f"one: {how}"
        )
    return "\n\n".join(sections)

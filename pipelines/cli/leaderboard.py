"""`deskscore leaderboard`: the runs ranked under one scoring configuration, or sliced (`--by`).

One row per run, shown by its label (its name or agent, told apart from namesakes: the
run_labels view), for one configuration named in the title (see `pipelines.cli.scored` for
how the options not given are chosen). Runs of several benchmarks get a table each. A run
none of whose tasks matched the human data has empty figures over the N human tasks, and a
note under the table says why.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from deskscore.pipelines.cli.args import runs_arg, warehouse_arg
from deskscore.pipelines.cli.breakdowns import BY, LEVEL_SOURCES, SPLITS, breakdown_text
from deskscore.pipelines.cli.columns import leaderboard_columns
from deskscore.pipelines.cli.common import UserError, check_runs, existing_warehouse
from deskscore.pipelines.cli.intervals import (
    CI_STYLES,
    DEFAULT_METHOD,
    bounds,
    flat_rows,
    ids_of,
    table_rows,
)
from deskscore.pipelines.cli.output import FORMATS, printable, render, say
from deskscore.pipelines.cli.scored import configuration, only_runs, where
from deskscore.scorers.config import COMPAT_MODES, HUMAN_VERSIONS, ScoreConfig

_CHOSEN = "default: the only one scored, else"

S_RULE = (
    "S: the step budget WES- and WES divide by, S = max(--max-steps-scoring, the run's longest "
    "t_agent)"
)
"""Printed under each leaderboard table, where S is shown."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("leaderboard", help="print the leaderboard")
    warehouse_arg(p)
    defaults = ScoreConfig()
    p.add_argument(
        "--human-version",
        choices=HUMAN_VERSIONS,
        help=f"figures against this data version ({_CHOSEN} {defaults.human_version})",
    )
    p.add_argument(
        "--max-steps-scoring",
        type=int,
        help=f"figures with this floor of S ({_CHOSEN} {defaults.max_steps_scoring})",
    )
    p.add_argument(
        "--compat",
        choices=COMPAT_MODES,
        help=f"figures under these rules ({_CHOSEN} {defaults.compat})",
    )
    p.add_argument("--format", default="table", choices=FORMATS)
    p.add_argument(
        "--ci",
        default="none",
        choices=CI_STYLES,
        help="each figure with its 95%% interval (bootstrap over tasks within domains; with "
        "--by, each slice rate's over the slice's tasks): 'pm' as 54.5 ± 2.6, 'interval' as "
        "[51.9, 57.1]; csv/json add _se, _ci_low and _ci_high columns (default none)",
    )
    p.add_argument(
        "--by",
        choices=BY,
        help="slices of each run: OSWorld runs by domain (per_domain) or by show_result.py "
        "category (app: per_category); DeskCraft runs by difficulty level, app, DeskCraft "
        "domain or collaboration mode (per_level, per_app, deskcraft_per_domain, per_mode)",
    )
    p.add_argument(
        "--level-source",
        default=LEVEL_SOURCES[0],
        choices=LEVEL_SOURCES,
        help="with --by level: levels from the task stem prefix (default) or the difficulty field",
    )
    p.add_argument(
        "--split",
        default=SPLITS[0],
        choices=SPLITS,
        help="with --by level|app|domain: one DeskCraft split (default all)",
    )
    runs_arg(p, "show")
    p.add_argument(
        "--trials",
        action="store_true",
        help="one row per run group (the trials of one configuration: trial folders, epochs, "
        "ingest --trial-of) with pass@1, pass@k and pass^k at k = its trial count (mart trials)",
    )
    p.set_defaults(handler=run)


def title(config: ScoreConfig, benchmark: str | None = None) -> str:
    """The leaderboard's title: the configuration its figures were computed under (and the
    benchmark, when a warehouse holds several), as `score` and `demo` name it too."""
    runs = f", {benchmark} runs" if benchmark else ""
    return f"Leaderboard{runs} ({config.describe()})"


def _notes(rows: list[tuple[str, str]]) -> list[str]:
    """Notes under a table: each distinct note once, after the runs it concerns."""
    by_note: dict[str, list[str]] = {}
    for label, note in rows:
        if note:
            by_note.setdefault(note, []).append(label)
    if not by_note:
        return []
    return [
        "notes:",
        *(printable(f"  {', '.join(labels)}: {note}") for note, labels in by_note.items()),
    ]


def leaderboard_text(
    warehouse: str,
    fmt: str = "table",
    *,
    human_version: str | None = None,
    max_steps_scoring: int | None = None,
    compat: str | None = None,
    ci: str = "none",
    runs: Sequence[str] = (),
) -> str:
    """The leaderboard of one configuration (of `runs` only, when given), rendered: titled tables (one per benchmark) with
    their notes, or one csv/json table with a benchmark and a note column; `ci` adds each
    figure's interval (pipelines.cli.intervals). UserError when the configuration was never
    scored."""
    from deskscore.sql import connect

    read = ("run_scores", "leaderboard", *(("leaderboard_intervals",) if ci != "none" else ()))
    con = connect(warehouse, only=read)  # what is queried below
    config = configuration(
        con,
        warehouse,
        human_version=human_version,
        max_steps_scoring=max_steps_scoring,
        compat=compat,
    )
    condition, params = where(config)
    condition, params = only_runs(condition, params, runs)
    columns = leaderboard_columns()
    found = bounds(con, condition, params, DEFAULT_METHOD) if ci != "none" else {}
    if fmt in {"csv", "json"}:
        columns = (*columns, ("benchmark", "benchmark"), ("note", "note"))
        cols = ", ".join(c for c, _ in columns)
        rows = con.sql(f"SELECT {cols} FROM leaderboard WHERE {condition}", params=params)
        if ci != "none":
            ids = con.sql(f"SELECT run_id FROM leaderboard WHERE {condition}", params=params)
            names, flat = flat_rows([c for c, _ in columns], rows.fetchall(), ids_of(ids), found)
            return render(names, flat, fmt)
        return render([c for c, _ in columns], rows.fetchall(), fmt)
    cols = ", ".join(c for c, _ in columns)
    headers = [h for _, h in columns]
    benchmarks = [
        b
        for (b,) in con.sql(
            f"SELECT DISTINCT benchmark FROM leaderboard WHERE {condition} ORDER BY benchmark",
            params=params,
        ).fetchall()
    ]
    sections = []
    for benchmark in benchmarks:
        rows = con.sql(
            f"SELECT {cols}, note, run_id FROM leaderboard WHERE {condition} "
            "AND benchmark = $benchmark",
            params=params | {"benchmark": benchmark},
        ).fetchall()
        named = title(config, benchmark if len(benchmarks) > 1 else None)
        shown = [r[:-2] for r in rows]
        if ci != "none":
            names = [c for c, _ in columns]
            shown = table_rows(names, shown, [r[-1] for r in rows], found, ci)  # type: ignore[assignment]
        table = render(headers, shown, fmt)
        label = [c for c, _ in columns].index("label")
        notes = _notes([(r[label], r[-2]) for r in rows])
        sections.append("\n".join([named, table, S_RULE, *notes]))
    return "\n\n".join(sections)


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    existing_warehouse(args.warehouse)
    if args.runs:
        check_runs(args.warehouse, args.runs)
    chosen = {
        "human_version": args.human_version,
        "max_steps_scoring": args.max_steps_scoring,
        "compat": args.compat,
    }
    if getattr(args, "trials", False):  # run groups: pipelines/cli/trials_board.py
        return _trials(args)
    if getattr(args, "by", None):  # slices: pipelines/cli/breakdowns.py
        say(
            breakdown_text(
                args.warehouse,
                args.by,
                args.format,
                level_source=args.level_source,
                split=args.split,
                **chosen,
                ci=args.ci,
                runs=args.runs or (),
            ),
            args.format,
        )
        return 0
    text = leaderboard_text(args.warehouse, args.format, **chosen, ci=args.ci, runs=args.runs or ())
    say(text, args.format)
    return 0


def _trials(args: argparse.Namespace) -> int:
    from deskscore.pipelines.cli.trials_board import trials_text

    filters = {"human_version": args.human_version, "max_steps_scoring": args.max_steps_scoring}
    text, n_rows = trials_text(args.warehouse, args.format, **filters, compat=args.compat)
    if not n_rows:
        raise UserError(
            f"no trial figures: run 'deskscore score --warehouse {args.warehouse}' (with the "
            "options asked for here) to compute them"
        )
    say(text, args.format)
    return 0

"""`deskscore score`: every run scored under one configuration, with verdicts, loops, costs."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from deskscore.pipelines.cli.args import summary_format_arg
from deskscore.pipelines.cli.common import UserError, existing_warehouse, writing
from deskscore.pipelines.cli.output import say
from deskscore.pipelines.options import ScoreOptions, add_options


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "score", help="compute episode and run scores (success, WES+, WES-, WES, step ratios)"
    )
    add_options(p, ScoreOptions)
    summary_format_arg(p)
    p.set_defaults(handler=run, beam=True)


def unmatched_runs(options: ScoreOptions) -> list[str]:
    """Labels of the OSWorld runs scored under `options` that have tasks with a usable result
    none of which matched a human task (DeskCraft runs never do, and are not listed)."""
    return _unmeasured(options)[0]


def runs_without_results(options: ScoreOptions) -> list[str]:
    """Labels of the OSWorld runs scored under `options` with no task that has a usable
    result (no result.txt, or none that reads as a score): they match nothing either, but
    for that reason, not for their task ids."""
    return _unmeasured(options)[1]


def _unmeasured(options: ScoreOptions) -> tuple[list[str], list[str]]:
    """(`unmatched_runs`, `runs_without_results`), read in one query."""
    from deskscore.pipelines.cli.scored import deskcraft_run, where
    from deskscore.sql import connect

    if not _any_unmatched(options):
        return [], []  # the usual case, told by one small table: no query engine to start
    condition, params = where(options.config, "s")
    if options.runs:
        condition += " AND s.run_id IN (SELECT unnest($runs))"
        params["runs"] = list(options.runs)
    con = connect(options.warehouse, only=("run_scores", "runs", "run_labels"))  # read below
    rows = con.sql(
        f"""
        SELECT l.label, s.n_tasks_run FROM run_scores AS s
        JOIN runs AS r USING (run_id) JOIN run_labels AS l USING (run_id)
        WHERE {condition} AND s.n_tasks_matched = 0 AND NOT {deskcraft_run("r")}
        ORDER BY l.label
        """,
        params=params,
    )
    found = rows.fetchall()
    return [label for label, n_run in found if n_run], [
        label for label, n_run in found if not n_run
    ]


def _any_unmatched(options: ScoreOptions) -> bool:
    """Whether a run scored under `options` matched no human task (then `unmatched_runs`
    names them through the views, which label runs): run_scores alone says."""
    from deskscore.collectors.warehouse import Warehouse
    from deskscore.pipelines.stages.base import config_rows

    columns = ["run_id", "benchmark", "n_tasks_matched"]
    runs = set(options.runs) if options.runs else None
    return any(
        row["n_tasks_matched"] == 0
        and row["benchmark"] != "deskcraft"  # never matched, never listed
        and (runs is None or row["run_id"] in runs)
        for row in config_rows(Warehouse(options.warehouse), "run_scores", columns, options.config)
    )


def score(options: ScoreOptions) -> dict[str, Any]:
    """Score the warehouse under `options` (the score job, with the writer lock held) and
    return its summary: what `--format json` prints and the Python API returns."""
    from dataclasses import asdict

    from deskscore.pipelines.jobs.score import IncompleteJob, run_score
    from deskscore.scorers.cost import PriceError

    existing_warehouse(options.warehouse)
    try:
        with writing(options.warehouse, "score", options.wait, ["runs scored"]):
            result = run_score(options)
    except (PriceError, IncompleteJob) as exc:
        raise UserError(str(exc)) from None
    config = options.config
    unmatched, without_results = _unmeasured(options)
    return {
        "warehouse": str(options.warehouse),
        "configuration": {
            "human_version": config.human_version,
            "max_steps_scoring": config.max_steps_scoring,
            "compat": config.compat,
        },
        "described": config.describe(),
        **asdict(result),
        "unmatched_runs": unmatched,
        "runs_without_results": without_results,
        "costs": options.costs,
    }


def summary_lines(s: dict[str, Any], compat: str, human_version: str) -> list[str]:
    """The summary as people read it."""
    lines = [
        f"scored {s['runs_scored']} run(s), {s['episodes_scored']} episodes ({s['described']})"
    ]
    if s["runs_unchanged"]:
        lines.append(
            f"{s['runs_unchanged']} run(s) unchanged since they were last scored this way: "
            "kept (--force scores them again)"
        )
    what = (
        "are 0, as OSWorld-Human's score.py computes them"
        if compat == "osworld-human"
        else "are left empty"
    )
    unmatched = s["unmatched_runs"]
    if unmatched:
        lines.append(
            f"{len(unmatched)} run(s) matched no task of OSWorld-Human {human_version} "
            f"({', '.join(unmatched)}): their figures over the N human tasks {what} (see the "
            "leaderboard's notes)"
        )
    empty = s["runs_without_results"]
    if empty:
        lines.append(
            f"{len(empty)} run(s) have no task with a usable result ({', '.join(empty)}): no "
            "result.txt, or none that reads as a score; their figures over the N human tasks "
            f"{what} (see the quarantine for the results that could not be read)"
        )
    if s["costs"]:
        unpriced = s["calls_unpriced"]
        lines.append(
            f"priced {s['calls_priced']} model call(s)"
            + (f"; {unpriced} without a price (see 'deskscore cost')" if unpriced else "")
        )
    if s["trial_groups"]:
        lines.append(
            f"trial figures (pass@k, pass^k) of {s['trial_groups']} group(s) of several "
            "trials: 'deskscore leaderboard --trials'"
        )
    disagree = s["verdicts_disagree"]
    lines.append(
        f"verdicts: {s['verdicts_archived']} archived, "
        f"{s['verdicts_recomputed']} recomputed offline, {disagree} disagreeing "
        "with result.txt"
        + (" (see 'deskscore sql \"SELECT * FROM verdict_disagreements\"')" if disagree else "")
    )
    return lines


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    options = ScoreOptions.from_args(args, beam_args)
    summary = score(options)
    if getattr(args, "format", "table") == "json":
        say(json.dumps(summary, indent=2), "json")
        return 0
    for line in summary_lines(summary, options.compat, options.human_version):
        say(line)
    return 0

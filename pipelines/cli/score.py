"""`deskscore score`: every run scored under one configuration, with verdicts, loops, costs."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from deskscore.pipelines.cli.common import UserError, existing_warehouse, writing
from deskscore.pipelines.cli.output import say
from deskscore.pipelines.options import ScoreOptions, add_options


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "score", help="compute episode and run scores (success, WES+, WES-, WES, step ratios)"
    )
    add_options(p, ScoreOptions)
    p.set_defaults(handler=run, beam=True)


def unmatched_runs(options: ScoreOptions) -> list[str]:
    """Labels of the OSWorld runs scored under `options` none of whose tasks matched a human
    task (DeskCraft runs never do, and are not listed)."""
    from deskscore.pipelines.cli.scored import deskcraft_run, where
    from deskscore.sql import connect

    condition, params = where(options.config, "s")
    if options.runs:
        condition += " AND s.run_id IN (SELECT unnest($runs))"
        params["runs"] = list(options.runs)
    con = connect(options.warehouse, only=("run_scores", "runs", "run_labels"))  # read below
    rows = con.sql(
        f"""
        SELECT l.label FROM run_scores AS s
        JOIN runs AS r USING (run_id) JOIN run_labels AS l USING (run_id)
        WHERE {condition} AND s.n_tasks_matched = 0 AND NOT {deskcraft_run("r")}
        ORDER BY l.label
        """,
        params=params,
    )
    return [label for (label,) in rows.fetchall()]


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.pipelines.jobs.score import IncompleteJob, run_score
    from deskscore.scorers.cost import PriceError

    options = ScoreOptions.from_args(args, beam_args)
    existing_warehouse(options.warehouse)
    try:
        with writing(options.warehouse, "score", options.wait, ["runs scored"]):
            result = run_score(options)
    except (PriceError, IncompleteJob) as exc:
        raise UserError(str(exc)) from None
    say(
        f"scored {result.runs_scored} run(s), {result.episodes_scored} episodes "
        f"({options.config.describe()})"
    )
    if result.runs_unchanged:
        say(
            f"{result.runs_unchanged} run(s) unchanged since they were last scored this way: "
            "kept (--force scores them again)"
        )
    unmatched = unmatched_runs(options)
    if unmatched:
        what = (
            "are 0, as OSWorld-Human's score.py computes them"
            if options.compat == "osworld-human"
            else "are left empty"
        )
        say(
            f"{len(unmatched)} run(s) matched no task of OSWorld-Human {options.human_version} "
            f"({', '.join(unmatched)}): their figures over the N human tasks {what} (see the "
            "leaderboard's notes)"
        )
    if options.costs:
        unpriced = result.calls_unpriced
        say(
            f"priced {result.calls_priced} model call(s)"
            + (f"; {unpriced} without a price (see 'deskscore cost')" if unpriced else "")
        )
    if result.trial_groups:
        say(
            f"trial figures (pass@k, pass^k) of {result.trial_groups} group(s) of several "
            "trials: 'deskscore leaderboard --trials'"
        )
    disagree = result.verdicts_disagree
    say(
        f"verdicts: {result.verdicts_archived} archived, "
        f"{result.verdicts_recomputed} recomputed offline, {disagree} disagreeing "
        "with result.txt"
        + (" (see 'deskscore sql \"SELECT * FROM verdict_disagreements\"')" if disagree else "")
    )
    return 0

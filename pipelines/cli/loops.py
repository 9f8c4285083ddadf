"""`deskscore loops`: the episodes that loop the most, each with its loop spans."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from deskscore.pipelines.cli.args import format_arg, runs_arg, warehouse_arg
from deskscore.pipelines.cli.common import UserError, check_runs, existing_warehouse
from deskscore.pipelines.cli.output import render, say

WORST_EPISODES_SQL = """
WITH
worst AS (
    SELECT run_id, agent, domain, task_id, executed_steps, looping_steps, looping_share
    FROM episode_loops
    WHERE looping_steps > 0 AND (CAST($runs AS VARCHAR[]) IS NULL OR list_contains($runs, run_id))
    ORDER BY looping_steps DESC, looping_share DESC, run_id, domain, task_id
    LIMIT $top
)
SELECT
    w.run_id,
    w.agent,
    w.domain,
    w.task_id,
    w.executed_steps,
    w.looping_steps,
    w.looping_share,
    s.first_step,
    s.last_step,
    first_row.step_num AS first_turn,
    last_row.step_num AS last_turn,
    s.length,
    array_to_string(s.signals, '+') AS signals,
    s.outcome
FROM worst AS w
JOIN loop_spans AS s USING (run_id, domain, task_id)
LEFT JOIN steps AS first_row
    ON first_row.run_id = s.run_id AND first_row.domain = s.domain
    AND first_row.task_id = s.task_id AND first_row.step_idx = s.first_step
LEFT JOIN steps AS last_row
    ON last_row.run_id = s.run_id AND last_row.domain = s.domain
    AND last_row.task_id = s.task_id AND last_row.step_idx = s.last_step
ORDER BY w.looping_steps DESC, w.looping_share DESC, w.run_id, w.domain, w.task_id, s.first_step
"""
"""The top episodes by looping steps (share breaks ties), one row per span with the turns
(step_num, as the trajectory and its screenshots number them) its first and last steps are
in; filters are parameters, never pasted into the text."""

COLUMNS = (
    ("agent", "agent"),
    ("run_id", "run"),
    ("domain", "domain"),
    ("task_id", "task"),
    ("executed_steps", "steps"),
    ("looping_steps", "looping"),
    ("looping_pct", "looping %"),
    ("span", "span (step_idx)"),
    ("turns", "turns (step_num)"),
    ("length", "length"),
    ("signals", "signals"),
    ("outcome", "outcome"),
)
"""(column, header for people), in order."""

_EPISODE_COLUMNS = 7
"""The leading columns that describe the episode; a table shows them on its first span only."""


def worst_episodes_text(
    warehouse: str,
    *,
    run_id: str | Sequence[str] | None = None,
    top: int = 10,
    fmt: str = "table",
) -> str:
    """The `top` episodes with the most looping steps, with their spans, rendered in `fmt`.

    In the aligned table an episode's columns are printed on its first span's row only;
    csv, json and md repeat them on every row so each row stands alone.
    """
    from deskscore.sql import connect

    con = connect(warehouse, only=WORST_EPISODES_SQL)  # its views, no others
    runs = [run_id] if isinstance(run_id, str) else (list(run_id) if run_id else None)
    rows = con.execute(WORST_EPISODES_SQL, {"runs": runs, "top": max(0, int(top))}).fetchall()
    out: list[list[object]] = []
    previous = None
    for row in rows:
        run, agent, domain, task, steps, looping, share = row[:7]
        first, last, first_turn, last_turn, length, signals, outcome = row[7:]
        episode = [agent, run, domain, task, steps, looping, 100.0 * share if share else None]
        # a runner's error row has no turn
        turns = None if None in (first_turn, last_turn) else f"{first_turn}-{last_turn}"
        span = [f"{first}-{last}", turns, length, signals, outcome]
        key = (run, domain, task)
        if fmt == "table" and key == previous:
            episode = [None] * _EPISODE_COLUMNS
        previous = key
        out.append(episode + span)
    headers = [h for _, h in COLUMNS] if fmt in {"table", "md"} else [c for c, _ in COLUMNS]
    return render(headers, out, fmt)


def add_parser(sub: Any) -> None:
    p = sub.add_parser("loops", help="list the episodes that loop most, with their loop spans")
    warehouse_arg(p)
    runs_arg(p, "list")
    p.add_argument("--top", type=int, default=10, help="how many episodes (default 10)")
    format_arg(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.collectors.warehouse import Warehouse

    root = existing_warehouse(args.warehouse)
    if args.runs:
        check_runs(root, args.runs)
    # scored or not, told by the figures (a run without loops may have no loop_spans file)
    if not Warehouse(root).files("run_scores"):
        raise UserError(
            f"loops are found by scoring: run 'deskscore score --warehouse {root}' first"
        )
    text = worst_episodes_text(str(root), run_id=args.runs, top=args.top, fmt=args.format)
    say(text, args.format)
    return 0


__all__ = ["COLUMNS", "WORST_EPISODES_SQL", "add_parser", "run", "worst_episodes_text"]

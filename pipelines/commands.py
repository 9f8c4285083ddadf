"""What each `deskscore` subcommand does, once its arguments are parsed."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from deskscore.pipelines.output import render, render_relation


class UserError(Exception):
    """A problem the user can fix; printed without a traceback."""


def _existing_warehouse(path: str) -> Path:
    root = Path(path)
    if not root.is_dir():
        raise UserError(
            f"no warehouse at {root}: run 'deskscore ingest SOURCE --warehouse {root}' first"
        )
    return root


SHOWN_QUARANTINE = 10
"""Quarantined items listed with their message after an ingest (all are in the table)."""


class Reconciliation(NamedTuple):
    text: str
    unreadable_sources: int


def reconciliation(
    warehouse: str, sources: Sequence[str], counters: dict[str, int]
) -> Reconciliation:
    """What went in against what came out, per source; quarantined items by reason, and the
    first few of them with the message that says what to do."""
    from deskscore.collectors.ids import source_id
    from deskscore.sql import connect

    con = connect(warehouse)
    normalised = [_normalise(s) for s in sources]
    con.execute("CREATE TEMP TABLE ingested_sources(source VARCHAR)")
    con.executemany("INSERT INTO ingested_sources VALUES (?)", [[s] for s in normalised])
    per_source = con.sql(
        """
        WITH r AS (SELECT run_id, source FROM runs WHERE source IN (SELECT source FROM ingested_sources)),
        e AS (SELECT run_id, count(*) AS episodes, sum(n_lines) AS lines, sum(n_steps) AS actions,
                     sum(n_error_lines) AS error_lines, sum(n_quarantined) AS quarantined_lines,
                     count(*) FILTER (WHERE result_status = 'ok') AS with_result
              FROM episodes GROUP BY run_id),
        s AS (SELECT run_id, count(*) AS step_rows FROM steps GROUP BY run_id)
        SELECT r.source, count(*) AS runs, sum(e.episodes) AS episodes, sum(e.with_result) AS with_result,
               sum(e.lines) AS traj_lines, sum(s.step_rows) AS step_rows, sum(e.quarantined_lines) AS quarantined_lines,
               sum(e.lines) = sum(s.step_rows) + sum(e.quarantined_lines) AS reconciled
        FROM r LEFT JOIN e USING (run_id) LEFT JOIN s USING (run_id)
        GROUP BY r.source ORDER BY r.source
        """
    )
    ids = [source_id(s) for s in normalised]
    con.execute("CREATE TEMP TABLE source_ids(run_id VARCHAR)")
    con.executemany("INSERT INTO source_ids VALUES (?)", [[i] for i in ids])
    con.execute(
        """
        CREATE TEMP VIEW ingested_quarantine AS
        SELECT * FROM quarantine
        WHERE source IN (SELECT source FROM ingested_sources) OR run_id IN (SELECT run_id FROM source_ids)
        """
    )
    reasons = con.sql(
        "SELECT reason, count(*) AS items FROM ingested_quarantine GROUP BY reason ORDER BY items DESC, reason"
    )
    first = con.sql(
        f"""
        SELECT message FROM ingested_quarantine
        ORDER BY location <> '', source, location, line_no LIMIT {SHOWN_QUARANTINE}
        """
    ).fetchall()
    lines = [
        "Reconciliation",
        f"files seen: {counters.get('files_seen', 0)}   task folders: {counters.get('task_folders', 0)}   "
        f"episodes read: {counters.get('episodes', 0)}   step rows: {counters.get('steps', 0)}   "
        f"trajectory lines: {counters.get('traj_lines', 0)}   quarantined: {counters.get('quarantined', 0)}",
        render_relation(per_source),
    ]
    reason_rows = reasons.fetchall()
    lines.append("quarantined by reason:" if reason_rows else "quarantined by reason: none")
    if reason_rows:
        lines.append(render(["reason", "items"], reason_rows))
        total = sum(n for _, n in reason_rows)
        lines.append(
            f"first {len(first)} of {total} (all are in the quarantine table):"
            if total > len(first)
            else "items:"
        )
        lines.extend(f"  {message}" for (message,) in first)  # messages name file and line
    unreadable = dict(reason_rows).get("unreadable_source", 0)
    return Reconciliation("\n".join(lines), unreadable)


def _normalise(source: str) -> str:
    from deskscore.collectors.source import open_source

    try:
        return open_source(source).uri
    except Exception:  # an unreadable source keeps its given name; it is in quarantine
        return source


def cmd_ingest(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.pipelines import progress
    from deskscore.pipelines.ingest import run_ingest

    started = time.perf_counter()
    with progress.show("ingest", ["task folders", "episodes", "runs written"]):
        result = run_ingest(
            args.sources,
            args.warehouse,
            benchmark=args.benchmark,
            layout=args.layout,
            beam_args=beam_args,
        )
    report = reconciliation(args.warehouse, args.sources, result.counters)
    print(report.text)
    print(
        f"ingested {len(args.sources)} source(s) into {args.warehouse} in {time.perf_counter() - started:.1f} s"
    )
    if report.unreadable_sources:
        print(
            f"deskscore ingest: {report.unreadable_sources} source(s) could not be read (see above); "
            "the others were ingested",
            file=sys.stderr,
        )
        return 1
    return 0


def cmd_score(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.pipelines import progress
    from deskscore.pipelines.score import run_score

    _existing_warehouse(args.warehouse)
    with progress.show("score", ["runs scored"]):
        counters = run_score(
            args.warehouse,
            human_version=args.human_version,
            max_steps_scoring=args.max_steps_scoring,
            compat=args.compat,
            human_path=args.human_path,
            run_ids=args.runs,
            beam_args=beam_args,
        )
    print(
        f"scored {counters.get('runs_scored', 0)} run(s), {counters.get('episodes_scored', 0)} episodes "
        f"(human data {args.human_version}, S >= {args.max_steps_scoring}, rules {args.compat})"
    )
    return 0


def cmd_sql(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    import duckdb

    from deskscore.sql import connect

    con = connect(_existing_warehouse(args.warehouse))
    try:
        relation = con.sql(args.query)
    except duckdb.Error as exc:
        raise UserError(f"{exc}\n(views: see 'deskscore sql \"SHOW TABLES\"')") from None
    if relation is None:
        return 0
    print(render_relation(relation, args.format))
    return 0


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
    ("n_tasks_run", "tasks run"),
    ("n_human_tasks", "N"),
    ("step_budget", "S"),
    ("human_version", "human"),
    ("compat", "rules"),
)
"""The leaderboard as people read it: (view column, header), in order."""


def leaderboard_text(warehouse: str, fmt: str = "table", **filters: Any) -> str:
    from deskscore.sql import connect

    con = connect(warehouse)
    where = " AND ".join(f"{k} = ${k}" for k, v in filters.items() if v is not None) or "true"
    params = {k: v for k, v in filters.items() if v is not None}
    cols = ", ".join(c for c, _ in LEADERBOARD_COLUMNS)
    relation = con.sql(f"SELECT {cols} FROM leaderboard WHERE {where}", params=params)
    rows = relation.fetchall()
    headers = (
        [h for _, h in LEADERBOARD_COLUMNS]
        if fmt in {"table", "md"}
        else [c for c, _ in LEADERBOARD_COLUMNS]
    )
    return render(headers, rows, fmt)


def cmd_leaderboard(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    _existing_warehouse(args.warehouse)
    print(
        leaderboard_text(
            args.warehouse,
            args.format,
            human_version=args.human_version,
            max_steps_scoring=args.max_steps_scoring,
            compat=args.compat,
        )
    )
    return 0


def cmd_demo(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.collectors.synthetic import write_demo_archive
    from deskscore.pipelines import progress
    from deskscore.pipelines.ingest import run_ingest
    from deskscore.pipelines.score import run_score

    out = Path(args.out)
    warehouse = str(out / "warehouse")
    started = time.perf_counter()
    demo = write_demo_archive(out / "archive", seed=args.seed, screenshots=args.screenshots)
    sources = [str(s) for s in demo.sources]
    print(
        f"wrote a demo archive of {len(sources)} source(s) under {out / 'archive'} in {time.perf_counter() - started:.1f} s"
    )
    with progress.show("ingest", ["task folders", "episodes", "runs written"]):
        result = run_ingest(sources, warehouse, beam_args=beam_args)
    print(reconciliation(warehouse, sources, result.counters).text)
    with progress.show("score", ["runs scored"]):
        run_score(warehouse, max_steps_scoring=args.max_steps_scoring, beam_args=beam_args)
    print()
    print(f"Leaderboard (OSWorld-Human verified, S >= {args.max_steps_scoring}, deskscore rules)")
    print(leaderboard_text(warehouse))
    print(
        f'\ndone in {time.perf_counter() - started:.1f} s; explore with: deskscore sql --warehouse {warehouse} "SELECT * FROM per_domain"'
    )
    return 0

"""`deskscore ingest`: read archives into the warehouse and print what went in against what
came out (the reconciliation)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from deskscore.pipelines.cli.args import summary_format_arg
from deskscore.pipelines.cli.common import UserError, writing
from deskscore.pipelines.cli.output import printable, render, say
from deskscore.pipelines.options import IngestOptions, add_options

if TYPE_CHECKING:
    from deskscore.pipelines.jobs.ingest import IngestResult


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "ingest", help="read archives (folders, .zip, fsspec URLs) into the warehouse"
    )
    add_options(p, IngestOptions)
    summary_format_arg(p)
    p.set_defaults(handler=run, beam=True)


SHOWN_QUARANTINE = 10
"""Quarantined items listed with their message after an ingest (all are in the table)."""


class Reconciliation(NamedTuple):
    text: str
    unreadable_sources: int
    per_source: list[dict[str, Any]]
    """One row per source: what went in against what came out (the table in `text`)."""
    quarantined_by_reason: dict[str, int]


def reconciliation(
    warehouse: str,
    sources: Sequence[str],
    result: IngestResult | None = None,
    unchanged: Sequence[str] = (),
) -> Reconciliation:
    """What went in against what came out, per source (those read now, and those skipped as
    unchanged, from what the warehouse holds of them); quarantined items by reason, and the
    first few of them with the message that says what to do."""
    from deskscore.collectors.archives import canonical_uri
    from deskscore.collectors.ids import source_id
    from deskscore.sql import connect

    con = connect(warehouse, only=("runs", "episodes", "steps", "quarantine"))  # read below
    normalised = [canonical_uri(s) for s in sources]
    con.execute("CREATE TEMP TABLE ingested_sources(source VARCHAR, status VARCHAR)")
    named = [[s, "read"] for s in normalised] + [[canonical_uri(s), "unchanged"] for s in unchanged]
    if named:
        con.executemany("INSERT INTO ingested_sources VALUES (?, ?)", named)
    per_source = con.sql(
        """
        WITH r AS (SELECT run_id, source, status FROM runs JOIN ingested_sources USING (source)),
        e AS (SELECT run_id, count(*) AS episodes, sum(n_lines) AS lines, sum(n_steps) AS actions,
                     sum(n_error_lines) AS error_lines, sum(n_quarantined) AS quarantined_lines,
                     count(*) FILTER (WHERE result_status = 'ok') AS with_result
              FROM episodes GROUP BY run_id),
        s AS (SELECT run_id, count(*) AS step_rows FROM steps GROUP BY run_id)
        SELECT r.source, any_value(r.status) AS this_time, count(*) AS runs, sum(e.episodes) AS episodes,
               sum(e.with_result) AS with_result, sum(e.lines) AS traj_lines, sum(s.step_rows) AS step_rows,
               sum(e.quarantined_lines) AS quarantined_lines,
               coalesce(sum(e.lines), 0) = coalesce(sum(s.step_rows), 0) + coalesce(sum(e.quarantined_lines), 0) AS reconciled
        FROM r LEFT JOIN e USING (run_id) LEFT JOIN s USING (run_id)
        GROUP BY r.source ORDER BY r.source
        """
    )
    ids = [source_id(s) for s, _ in named]
    con.execute("CREATE TEMP TABLE source_ids(run_id VARCHAR)")
    if ids:
        con.executemany("INSERT INTO source_ids VALUES (?)", [[i] for i in ids])
    con.execute(
        """
        CREATE TEMP VIEW ingested_quarantine AS
        SELECT * FROM quarantine
        WHERE source IN (SELECT source FROM ingested_sources) OR run_id IN (SELECT run_id FROM source_ids)
        """
    )
    reasons = con.sql(
        "SELECT reason, sum(coalesce(n_lines, 1))::BIGINT AS items FROM ingested_quarantine "
        "GROUP BY reason ORDER BY items DESC, reason"
    )
    first = con.sql(
        f"""
        SELECT message FROM ingested_quarantine
        ORDER BY location <> '', source, location, line_no LIMIT {SHOWN_QUARANTINE}
        """
    ).fetchall()
    r = result
    per_source_columns, per_source_rows = per_source.columns, per_source.fetchall()
    lines = [
        "Reconciliation",
        f"files seen: {r.files_seen if r else 0}   task folders: {r.task_folders if r else 0}   "
        f"episodes read: {r.episodes if r else 0}   step rows: {r.steps if r else 0}   "
        f"trajectory lines: {r.traj_lines if r else 0}   "
        f"quarantined: {r.quarantined if r else 0}   model calls: {r.llm_calls if r else 0}",
        render(per_source_columns, per_source_rows),
    ]
    reason_rows = reasons.fetchall()
    lines.append("quarantined by reason:" if reason_rows else "quarantined by reason: none")
    if reason_rows:
        lines.append(render(["reason", "items"], reason_rows))
        [(total,)] = con.sql("SELECT count(*) FROM ingested_quarantine").fetchall()  # rows
        lines.append(
            f"first {len(first)} of {total} (all are in the quarantine table):"
            if total > len(first)
            else "items:"
        )
        # messages name file and line; each stays on its line
        lines.extend(f"  {printable(message)}" for (message,) in first)
    unreadable = dict(reason_rows).get("unreadable_source", 0)
    rows = [dict(zip(per_source_columns, row, strict=True)) for row in per_source_rows]
    return Reconciliation("\n".join(lines), unreadable, rows, dict(reason_rows))


def _drop_new_warehouse(warehouse: str, created: bool) -> None:
    """Remove the warehouse folder this ingest created when it ingested nothing, so that a
    mistyped path leaves no empty warehouse behind (one that existed before is kept)."""
    if created:
        shutil.rmtree(warehouse, ignore_errors=True)


class NothingIngested(UserError):
    """No source held a task folder; `report` says why, item by item."""

    def __init__(self, report: Reconciliation, message: str) -> None:
        super().__init__(message)
        self.report = report


class Ingested(NamedTuple):
    """What an ingest did: the job's result, its reconciliation, and the messages after it."""

    options: IngestOptions
    sources: list[str]
    result: IngestResult
    report: Reconciliation
    notes: list[str]
    seconds: float


def ingest(options: IngestOptions) -> Ingested:
    """Ingest `options.sources` (the ingest job, with the writer lock held) and reconcile what
    went in against what came out. UserError when no source holds a task folder (the
    warehouse this created is removed again) or the options are wrong."""
    from deskscore.collectors.archives import SourceListError, expand_sources
    from deskscore.pipelines.jobs.ingest import run_ingest

    started = time.perf_counter()
    try:
        sources = expand_sources(options.sources)
    except SourceListError as exc:
        raise UserError(f"{exc}; check the pattern or the list file") from None
    counters = ["runs found", "episodes", "runs written", "runs unchanged"]
    new_warehouse = not os.path.lexists(options.warehouse)
    with writing(options.warehouse, "ingest", options.wait, counters):
        try:
            result = run_ingest(options.replace(sources=tuple(sources)))
        except ValueError as exc:  # a bad --layout
            _drop_new_warehouse(options.warehouse, new_warehouse)
            raise UserError(str(exc)) from None
        report = reconciliation(options.warehouse, result.plan.todo, result, result.plan.unchanged)
        found_nothing = bool(result.plan.todo) and not result.runs_found
        if found_nothing:
            _drop_new_warehouse(options.warehouse, new_warehouse)
    if found_nothing:
        raise NothingIngested(
            report,
            "no task folder found in any source, nothing ingested"
            + (f" ({options.warehouse} not created)" if new_warehouse else "")
            + "; the items above say why: fix a path that does not exist, or for a tree not "
            "laid out as <domain>/<task_id>/ pass --layout, e.g. --layout '{domain}/{task_id}'",
        )
    seconds = time.perf_counter() - started
    return Ingested(options, sources, result, report, _notes(options, sources, result, seconds),
                    seconds)  # fmt: skip


def _notes(
    options: IngestOptions, sources: Sequence[str], result: IngestResult, seconds: float
) -> list[str]:
    notes = []
    unchanged = result.plan.unchanged
    if unchanged:
        notes.append(
            f"skipped {len(unchanged)} source(s) already ingested and unchanged (same size and "
            "mtime, or ETag); --force reads them again"
        )
    if result.plan.options_changed:
        notes.append(
            f"read {len(result.plan.options_changed)} unchanged source(s) again: --benchmark, "
            "--layout, --agent or --run-name differ from their last ingest"
        )
    if result.runs_unchanged:
        notes.append(
            f"{result.runs_unchanged} run(s) re-read with the same content: their tables were kept"
        )
    if result.runs_dropped:
        notes.append(
            f"dropped {result.runs_dropped} run(s) no longer found in their source "
            "(with their scores)"
        )
    if result.compacted:
        notes.append(f"packed {result.compacted} small file(s) into larger ones")
    notes.append(
        f"ingested {len(result.plan.todo)} of {len(sources)} source(s) into {options.warehouse} "
        f"in {seconds:.1f} s"
    )
    return notes


def ingest_summary(done: Ingested) -> dict[str, Any]:
    """The ingest as `--format json` prints it and the Python API returns it."""
    r = done.result
    counts = {
        name: getattr(r, name)
        for name in (
            "files_seen", "task_folders", "runs_found", "runs_written", "runs_unchanged",
            "runs_gone", "runs_dropped", "episodes", "steps", "traj_lines", "quarantined",
            "llm_calls", "compacted", "engine",
        )
    }  # fmt: skip
    return {
        "warehouse": str(done.options.warehouse),
        "sources": len(done.sources),
        "sources_read": list(r.plan.todo),
        "sources_unchanged": list(r.plan.unchanged),
        **counts,
        "per_source": done.report.per_source,
        "quarantined_by_reason": done.report.quarantined_by_reason,
        "unreadable_sources": done.report.unreadable_sources,
        "seconds": round(done.seconds, 3),
    }


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    try:
        done = ingest(IngestOptions.from_args(args, beam_args))
    except NothingIngested as exc:
        say(exc.report.text)
        raise
    if getattr(args, "format", "table") == "json":
        say(json.dumps(ingest_summary(done), indent=2, default=str), "json")
    else:
        say(done.report.text)
        for note in done.notes:
            say(note)
    if done.report.unreadable_sources:
        say(
            f"deskscore ingest: {done.report.unreadable_sources} source(s) could not be read "
            "(see above); the others were ingested",
            file=sys.stderr,
        )
        return 1
    return 0

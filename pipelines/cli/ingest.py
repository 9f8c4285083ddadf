"""`deskscore ingest`: read archives into the warehouse and print what went in against what
came out (the reconciliation)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Collection, Sequence
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


PER_SOURCE = ("source", "this_time", "runs", "episodes", "with_result", "traj_lines",
              "step_rows", "quarantined_lines", "reconciled")  # fmt: skip
"""The reconciliation's columns, one row per source."""


def reconciliation(
    warehouse: str,
    sources: Sequence[str],
    result: IngestResult | None = None,
    unchanged: Sequence[str] = (),
) -> Reconciliation:
    """What went in against what came out, per source (those read now, and those skipped as
    unchanged, from what the warehouse holds of them); quarantined items by reason, and the
    first few of them with the message that says what to do. Read back from the files of the
    runs of these sources alone, so it costs what they hold, not what the warehouse holds."""
    from deskscore.collectors.archives import canonical_uri
    from deskscore.collectors.ids import source_id
    from deskscore.collectors.warehouse import Warehouse

    wh = Warehouse(warehouse)
    status = {canonical_uri(s): "unchanged" for s in unchanged}
    status.update((canonical_uri(s), "read") for s in sources)
    runs: dict[str, list[dict[str, str]]] = {}
    for r in wh.read("runs", columns=["source", "benchmark", "run_id"]).to_pylist():
        if r["source"] in status:
            part = {"benchmark": r["benchmark"], "run_id": r["run_id"]}
            runs.setdefault(r["source"], []).append(part)
    per_source = [_source_figures(wh, s, status[s], runs[s]) for s in sorted(runs)]
    held = _held(wh, status, {source_id(s) for s in status})
    reasons: dict[str, int] = {}
    for q in held:  # a row of consecutive quarantined lines counts each line
        n = q["n_lines"]
        reasons[q["reason"]] = reasons.get(q["reason"], 0) + (1 if n is None else n)
    reason_rows = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
    first = [q["message"] for q in held[:SHOWN_QUARANTINE]]
    r = result
    lines = [
        "Reconciliation",
        f"files seen: {r.files_seen if r else 0}   task folders: {r.task_folders if r else 0}   "
        f"episodes read: {r.episodes if r else 0}   step rows: {r.steps if r else 0}   "
        f"trajectory lines: {r.traj_lines if r else 0}   "
        f"quarantined: {r.quarantined if r else 0}   model calls: {r.llm_calls if r else 0}",
        render(list(PER_SOURCE), [[row[c] for c in PER_SOURCE] for row in per_source]),
    ]
    lines.append("quarantined by reason:" if reason_rows else "quarantined by reason: none")
    if reason_rows:
        lines.append(render(["reason", "items"], reason_rows))
        lines.append(
            f"first {len(first)} of {len(held)} (all are in the quarantine table):"
            if len(held) > len(first)
            else "items:"
        )
        # messages name file and line; each stays on its line
        lines.extend(f"  {printable(message)}" for message in first)
    unreadable = reasons.get("unreadable_source", 0)
    return Reconciliation("\n".join(lines), unreadable, per_source, dict(reason_rows))


def _held(wh: Any, sources: Collection[str], ids: Collection[str]) -> list[dict[str, Any]]:
    """The quarantine rows of these sources (or of the source partitions `ids`): the source's
    own problems first (an empty location), then by source, file and line, nulls last."""
    columns = ["source", "run_id", "reason", "n_lines", "location", "line_no", "message"]
    table = wh.read("quarantine", columns=columns)
    if not table.num_rows:
        return []  # the usual case: no need to import pyarrow.compute
    import pyarrow as pa
    import pyarrow.compute as pc

    mine = pc.or_(
        pc.is_in(table["source"], value_set=pa.array(list(sources), type=pa.string())),
        pc.is_in(table["run_id"], value_set=pa.array(list(ids), type=pa.string())),
    )
    rows = table.filter(mine).to_pylist()

    def order(q: dict[str, Any]) -> tuple[Any, ...]:
        where, source, line = q["location"], q["source"], q["line_no"]
        return (where is None, where != "", source is None, source or "", where or "",
                line is None, line or 0)  # fmt: skip

    return sorted(rows, key=order)


def _source_figures(
    wh: Any, source: str, status: str, parts: list[dict[str, str]]
) -> dict[str, Any]:
    """One source's row: its runs' episodes and step rows, read back from their files."""
    columns = ["n_lines", "result_status", "n_quarantined"]
    sums: dict[str, int | None] = dict.fromkeys(
        ("episodes", "with_result", "traj_lines", "step_rows", "quarantined_lines")
    )

    def add(key: str, value: int) -> None:
        sums[key] = (sums[key] or 0) + value

    for part in parts:
        episodes = wh.read("episodes", part, columns=columns)
        if episodes.num_rows:
            add("episodes", episodes.num_rows)
            add("with_result", episodes["result_status"].to_pylist().count("ok"))
            add("traj_lines", sum(filter(None, episodes["n_lines"].to_pylist())))
            add("quarantined_lines", sum(filter(None, episodes["n_quarantined"].to_pylist())))
        steps = wh.read("steps", part, columns=["run_id"]).num_rows
        if steps:
            add("step_rows", steps)
    reconciled = (sums["traj_lines"] or 0) == (sums["step_rows"] or 0) + (
        sums["quarantined_lines"] or 0
    )
    return {"source": source, "this_time": status, "runs": len(parts), **sums,
            "reconciled": reconciled}  # fmt: skip


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
    from deskscore.pipelines.jobs.ingest import IngestOptionError, run_ingest

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
        except IngestOptionError as exc:  # a bad --layout, an empty name
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
            + "; the items above say why: fix a path that does not exist, or "
            + _layout_hint(options.layout),
        )
    seconds = time.perf_counter() - started
    notes = _notes(options, sources, result, seconds, report.unreadable_sources)
    return Ingested(options, sources, result, report, notes, seconds)


def _layout_hint(layout: str | None) -> str:
    """What to try when no task folder was found, with or without a --layout given."""
    if layout is None:
        return ("for a tree not laid out as <domain>/<task_id>/ pass --layout, e.g. "
                "--layout '{domain}/{task_id}'")  # fmt: skip
    return (f"check --layout {layout!r}, which is matched from the top of each source (inside "
            "a folder, at a zip's root)")  # fmt: skip


def _notes(
    options: IngestOptions,
    sources: Sequence[str],
    result: IngestResult,
    seconds: float,
    unreadable: int,
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
        f"ingested {len(result.plan.todo) - unreadable} of {len(sources)} source(s) into "
        f"{options.warehouse} in {seconds:.1f} s"
        + (f" ({unreadable} could not be read)" if unreadable else "")
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

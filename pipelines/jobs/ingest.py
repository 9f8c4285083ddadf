"""`deskscore ingest`: sources -> runs, episodes, steps, llm_calls and quarantine partitions.

Wiring only: which sources need reading (`plan_ingest`), the two Beam stages, then packing
small files (`Warehouse.compact`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import apache_beam as beam

from deskscore.pipelines.infra.runner import counters, pipeline
from deskscore.pipelines.stages.discover import PROBLEMS_TAG, DiscoverRuns
from deskscore.pipelines.stages.ingest import IngestRuns, WriteSourceProblems


class IngestPlan(NamedTuple):
    """Sources to read (with the stamp each had when planned), and those skipped because
    their stamp is the one already ingested."""

    todo: list[str]
    unchanged: list[str]
    stamps: dict[str, str | None]


class IngestResult(NamedTuple):
    counters: dict[str, int]
    files_written: int
    plan: IngestPlan
    compacted: int
    """Small files folded into packs after the run."""


def plan_ingest(sources: Sequence[str], warehouse: str, *, force: bool = False) -> IngestPlan:
    """Split `sources` (canonical URIs) into those to read and those a finished ingest already
    read with the same stamp (the `sources` table); a source that could not be listed has no
    stamp and is always read."""
    from deskscore.collectors.archives import source_stamp
    from deskscore.collectors.warehouse import Warehouse

    now = {uri: source_stamp(uri) for uri in sources}
    if force:
        return IngestPlan(list(sources), [], now)
    done = Warehouse(warehouse).read("sources", columns=["source", "source_stamp"]).to_pylist()
    stored = {r["source"]: r["source_stamp"] for r in done if r["source_stamp"]}
    todo, unchanged = [], []
    for uri in sources:
        (unchanged if uri in stored and stored[uri] == now[uri] else todo).append(uri)
    return IngestPlan(todo, unchanged, {uri: now[uri] for uri in todo})


def record_sources(warehouse: str, sources: Sequence[str], benchmark: str) -> int:
    """After a whole ingest succeeded: remember each source's stamp (as the runs recorded it)
    and how many runs it gave, so the next ingest can skip it. A run recorded from one of
    these sources under another stamp was not found in it this time (its folder was removed
    or renamed): its rows are dropped, so no table keeps a run that no longer exists.
    Returns how many runs were dropped."""
    from deskscore.collectors.archives import source_stamp
    from deskscore.collectors.warehouse import Warehouse

    wh = Warehouse(warehouse)
    now = {uri: source_stamp(uri) for uri in sources}
    runs = wh.read("runs", columns=["source", "source_stamp", "benchmark", "run_id"]).to_pylist()
    found: dict[str, list[str | None]] = {}
    for r in runs:
        if r["source"] in now:
            found.setdefault(r["source"], []).append(r["source_stamp"])
    dropped = 0
    for r in runs:
        stamp = now.get(r["source"])
        if stamp is not None and r["source_stamp"] != stamp and stamp in found[r["source"]]:
            wh.drop_run(r["benchmark"], r["run_id"])
            found[r["source"]].remove(r["source_stamp"])
            dropped += 1
    rows = {r["source"]: r for r in wh.read("sources").to_pylist()}
    for uri in sources:
        stamp = now[uri]
        rows[uri] = {
            "source": uri,
            # the stamp its runs were read under; unknown if it has changed since (or gave none)
            "source_stamp": stamp if stamp in found.get(uri, []) else None,
            "benchmark": benchmark,
            "n_runs": len(found.get(uri, [])),
        }
    wh.write("sources", [rows[k] for k in sorted(rows)], {})
    return dropped


def run_ingest(
    sources: Sequence[str],
    warehouse: str,
    *,
    benchmark: str = "osworld",
    layout: str | None = None,
    force: bool = False,
    compact: bool = True,
    workers: int | None = None,
    beam_args: Sequence[str] = (),
) -> IngestResult:
    """Ingest `sources` (paths, URLs, globs, @list files) into `warehouse` with Beam and
    return the run's counters.

    Unchanged sources are skipped (see `plan_ingest`) unless `force`; within a changed source,
    a run whose content hash is unchanged keeps its files. Afterwards small files are packed.
    """
    from deskscore.collectors.archives import expand_sources
    from deskscore.collectors.formats import process_local
    from deskscore.collectors.warehouse import Warehouse

    plan = plan_ingest(sorted(expand_sources(sources)), warehouse, force=force)
    if any(s.startswith("memory://") for s in plan.todo) or process_local():
        workers = 1  # an in-memory filesystem, or a format registered here: this process only
    values: dict[str, int] = {}
    if plan.todo:
        p = pipeline(beam_args, parallel=len(plan.todo), workers=workers)
        found = (
            p
            | "Sources" >> beam.Create([(uri, plan.stamps[uri]) for uri in plan.todo])
            | "DiscoverRuns" >> DiscoverRuns(benchmark, layout)
        )
        _ = found.runs | "IngestRuns" >> IngestRuns(warehouse, layout, force)
        _ = found[PROBLEMS_TAG] | "WriteSourceProblems" >> WriteSourceProblems(warehouse)
        result = p.run()
        result.wait_until_finish()
        values = counters(result)
        values["runs_dropped"] = record_sources(warehouse, plan.todo, benchmark)
    values["sources_unchanged"] = len(plan.unchanged)
    folded = 0
    if compact and plan.todo:
        folded = sum(c.files_in for c in Warehouse(warehouse).compact())
    return IngestResult(values, values.get("files_written", 0), plan, folded)

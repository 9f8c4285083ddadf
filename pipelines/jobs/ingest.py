"""`deskscore ingest`: sources -> runs, episodes, steps, llm_calls and quarantine partitions.

Wiring only: which sources need reading (`plan_ingest`), listing them into runs
(`stages.discover`), the ingest stage per run, recording the sources once every run is
written (`record_sources`), then packing small files (`Warehouse.compact`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from deskscore.pipelines.options import IngestOptions

if TYPE_CHECKING:
    from deskscore.pipelines.infra.local import LocalPool


class IngestPlan(NamedTuple):
    """Sources to read (with the stamp each had when planned), and those skipped because
    their stamp and recorded options are the ones already ingested."""

    todo: list[str]
    unchanged: list[str]
    stamps: dict[str, str | None]
    options_changed: tuple[str, ...] = ()
    """Sources of `todo` read again only because an option that decides their rows (see
    `IngestOptions.recorded`) differs from the one they were last read with."""


@dataclass(frozen=True)
class IngestResult:
    """What an ingest did: the plan, what listing found, and the figures read back from the
    warehouse once every run was written."""

    plan: IngestPlan
    files_seen: int = 0
    """Files listed in the sources read (not in those skipped as unchanged)."""
    task_folders: int = 0
    runs_found: int = 0
    runs_written: int = 0
    runs_unchanged: int = 0
    """Runs re-read whose content hash was unchanged: their files were kept."""
    runs_gone: int = 0
    """Runs that vanished from their source while it was read (quarantined; read next time)."""
    runs_dropped: int = 0
    """Runs no longer in their source, removed with their scores."""
    episodes: int = 0
    steps: int = 0
    traj_lines: int = 0
    quarantined: int = 0
    """Items quarantined from the sources read (their runs' and their own): each line of a row
    of consecutive lines, one for any other row."""
    llm_calls: int = 0
    compacted: int = 0
    """Small files folded into packs after the run."""
    engine: str = "direct"


def plan_ingest(
    sources: Sequence[str],
    warehouse: str,
    *,
    force: bool = False,
    recorded: Mapping[str, str | None] | None = None,
) -> IngestPlan:
    """Split `sources` (canonical URIs) into those to read and those a finished ingest already
    read with the same stamp and the same `recorded` options (the `sources` table: benchmark,
    layout, agent, run name); a source that could not be listed has no stamp and is always
    read."""
    from deskscore.collectors.archives import source_stamp
    from deskscore.collectors.warehouse import Warehouse

    recorded = dict(recorded or {})
    now = {uri: source_stamp(uri) for uri in sources}
    if force:
        return IngestPlan(list(sources), [], now)
    columns = ["source", "source_stamp", *recorded]
    done = Warehouse(warehouse).read("sources", columns=columns).to_pylist()
    stored = {r["source"]: r for r in done if r["source_stamp"]}
    todo, unchanged, changed = [], [], []
    for uri in sources:
        row = stored.get(uri)
        if row is None or row["source_stamp"] != now[uri]:
            todo.append(uri)
        elif any(row[k] != v for k, v in recorded.items()):
            todo.append(uri)
            changed.append(uri)
        else:
            unchanged.append(uri)
    return IngestPlan(todo, unchanged, {uri: now[uri] for uri in todo}, tuple(changed))


def record_sources(
    wh: Any,
    sources: Sequence[str],
    recorded: Mapping[str, str | None],
    listed: Mapping[str, set[tuple[str, str]]] | None = None,
) -> int:
    """After a whole ingest succeeded (in its transaction `wh`): remember each source's stamp
    (as the runs recorded it), the options it was read with (`recorded`: benchmark, layout,
    ...) and how many runs it gave, so the next ingest can skip it. A run recorded from one of
    these sources that was not found in it this time is dropped, so no table keeps a run that
    no longer exists: one recorded under another stamp (its folder was removed or renamed),
    and, for a source that could be listed (`listed`: its (benchmark, run_id) pairs), one not
    among them (found with another layout, or stored under another benchmark). Returns how
    many runs were dropped."""
    from deskscore.collectors.archives import source_stamp

    listed = listed or {}
    now = {uri: source_stamp(uri) for uri in sources}
    runs = wh.read("runs", columns=["source", "source_stamp", "benchmark", "run_id"]).to_pylist()
    found: dict[str, list[str | None]] = {}
    for r in runs:
        if r["source"] in now:
            found.setdefault(r["source"], []).append(r["source_stamp"])
    dropped = 0
    for r in runs:
        stamp = now.get(r["source"])
        moved = stamp is not None and r["source_stamp"] != stamp and stamp in found[r["source"]]
        unlisted = (
            r["source"] in listed and (r["benchmark"], r["run_id"]) not in listed[r["source"]]
        )
        if moved or unlisted:
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
            "n_runs": len(found.get(uri, [])),
            **recorded,
        }
    wh.write("sources", [rows[k] for k in sorted(rows)], {})
    return dropped


def _stored_hashes(wh: Any, run_ids: set[str] | None = None) -> dict[str, str | None]:
    """Content hash by run id, of `run_ids` (None: every run)."""
    rows = wh.read("runs", columns=["run_id", "content_hash"]).to_pylist()
    return {
        r["run_id"]: r["content_hash"] for r in rows if run_ids is None or r["run_id"] in run_ids
    }


def _figures(wh: Any, parts: list[dict[str, str]]) -> dict[str, int]:
    """What the reconciliation prints, counted in the files the ingest wrote: those of its
    runs' and sources' partitions (`parts`), so it costs what they hold, not the warehouse.
    The sums are over a run's episodes and quarantine rows (hundreds): Python adds them up
    without importing pyarrow.compute (25 ms, a ninth of a one-run ingest's imports)."""
    episodes = wh.read_partitions("episodes", parts, columns=["n_lines"])
    # a row of consecutive quarantined lines counts each line
    held = wh.read_partitions("quarantine", parts, columns=["n_lines"]).column(0).to_pylist()
    return {
        "episodes": episodes.num_rows,
        "traj_lines": sum(filter(None, episodes.column(0).to_pylist())),
        "steps": wh.read_partitions("steps", parts, columns=["run_id"]).num_rows,
        "llm_calls": wh.read_partitions("llm_calls", parts, columns=["run_id"]).num_rows,
        "quarantined": sum(1 if n is None else n for n in held),
    }


def _distinct(parts: list[dict[str, str]]) -> list[dict[str, str]]:
    """Each partition once, in a stable order."""
    return [dict(p) for p in sorted({tuple(sorted(p.items())) for p in parts})]


def _left_out(wh: Any, work: list[Any]) -> dict[str, set[str]]:
    """Runs the ingest stage left out with a run-level quarantine row, by its reason: gone
    from their source (GONE) or holding a value they cannot store (UNSTORABLE); see
    IngestStage.run."""
    from deskscore.pipelines.stages.ingest import GONE, STAGE, UNSTORABLE

    out: dict[str, set[str]] = {GONE: set(), UNSTORABLE: set()}
    for w in work:
        reasons = wh.read("quarantine", w.partition, columns=["reason"], file=STAGE)
        for reason in out.keys() & set(reasons.column(0).to_pylist()):
            out[reason].add(w.key.run_id)
    return out


def _list(item: tuple[str, str | None], **how: Any) -> Any:
    """List one (source, stamp) of the plan."""
    from deskscore.pipelines.stages.discover import list_source

    return list_source(item[0], item[1], how["benchmark"], how["layout"], how["trial_of"])


class IngestOptionError(ValueError):
    """An option of the ingest that cannot work (a bad --layout, an empty name), found before
    anything is read."""


def run_ingest(options: IngestOptions) -> IngestResult:
    """Ingest `options.sources` (paths, URLs, globs, @list files) into the warehouse.

    Unchanged sources are skipped (see `plan_ingest`) unless `force`; within a changed
    source, a run whose content hash is unchanged keeps its files. Sources are listed here,
    then each run is read and written by the ingest stage (see `infra.runner.run_stages`);
    only when every run's tables are there are the sources recorded as ingested. Afterwards
    small files are packed. Raises IngestOptionError for a bad layout or name, before
    anything is read."""
    from deskscore.collectors.archives import expand_sources
    from deskscore.collectors.layout import parse_layout
    from deskscore.pipelines.infra.local import local_pool
    from deskscore.pipelines.infra.runner import local_workers

    if options.layout is not None:
        try:
            parse_layout(options.layout)
        except ValueError as exc:
            raise IngestOptionError(str(exc)) from None
    for flag, name in (("--agent", options.agent), ("--run-name", options.run_name)):
        if name is not None and not name.strip():
            raise IngestOptionError(f"{flag} is empty: give a name, or leave the option out")
    recorded = options.recorded
    plan = plan_ingest(
        sorted(expand_sources(options.sources)),
        options.warehouse,
        force=options.force,
        recorded=recorded,
    )
    if not plan.todo:
        return IngestResult(plan)
    workers = options.workers
    if any(s.startswith("memory://") for s in plan.todo):
        workers = 1  # an in-memory filesystem exists in this process only
    with local_pool(local_workers(os.cpu_count() or 1, workers)) as pool:
        return _ingest(options, plan, pool, workers)


def _ingest(
    options: IngestOptions, plan: IngestPlan, pool: LocalPool, workers: int | None
) -> IngestResult:
    """`run_ingest` once it knows what to read, with `pool` for listing and reading."""
    from deskscore.collectors.ids import source_id
    from deskscore.collectors.warehouse import Warehouse
    from deskscore.pipelines.infra.runner import choose_engine, run_here, run_stages
    from deskscore.pipelines.jobs.compaction import compact_tables, pack_as_written
    from deskscore.pipelines.jobs.score import check_outputs
    from deskscore.pipelines.stages.elements import SourceItem
    from deskscore.pipelines.stages.ingest import (
        GONE,
        UNSTORABLE,
        IngestStage,
        write_source_problems,
    )

    how = {"benchmark": options.benchmark, "layout": options.layout, "trial_of": options.trial_of}
    recorded = options.recorded
    todo = [(u, plan.stamps[u]) for u in plan.todo]
    named = {"layout": options.layout, "run_name": options.run_name}
    if options.agent is not None:
        named["agent"] = options.agent
    engine = choose_engine(options.engine, len(todo), workers, options.beam_args)
    # One transaction: every run's tables, the sources' problems, the record of what was
    # ingested and the packing of small files become visible together, or not at all.
    with Warehouse(options.warehouse).transaction() as wh:
        before = _stored_hashes(wh)
        stage = IngestStage(
            str(wh.root), options.layout, options.force, run_fields=named, job=wh.job
        )
        if engine == "beam":  # listed here, then every run is an element of the pipeline
            listings = [_list(item, **how) for item in todo]
            left = [w for listing in listings for w in listing.runs]
        else:  # each source listed, and its run read, by the worker that takes it
            items = [
                SourceItem(u, s, options.benchmark, options.layout, options.trial_of)
                for u, s in todo
            ]
            stage.pack_writes = pack_as_written(engine, options.compact, len(items))
            engine, done = run_here([stage], items, engine=engine, workers=workers, pool=pool)
            listings = [d.listing for d in done]
            left = [w for d in done if not d.read for w in d.listing.runs]
        work = [w for listing in listings for w in listing.runs]
        run_ids = {w.key.run_id for w in work}
        for listing in listings:
            write_source_problems(wh, options.benchmark, source_id(listing.uri), listing.problems)
        if left:  # runs of sources that hold several, spread over every worker
            chosen = choose_engine(options.engine, len(left), workers, options.beam_args)
            stage.pack_writes = pack_as_written(chosen, options.compact, len(left))
            used = run_stages(
                [stage],
                left,
                engine=options.engine,
                workers=workers,
                beam_args=options.beam_args,
                pool=pool,
            )
            engine = used if engine == "direct" else engine
        pool.close()  # the workers' packs are closed and journaled as they exit
        check_outputs(wh, [stage], work)
        after = _stored_hashes(wh, run_ids)
        left_out = _left_out(wh, work)
        gone = left_out[GONE]
        not_written = gone | left_out[UNSTORABLE]
        unchanged = 0
        if not options.force:
            unchanged = sum(
                1 for r, h in after.items() if r not in not_written and before.get(r) == h
            )
        listed = {
            listing.uri: {(w.key.benchmark, w.key.run_id) for w in listing.runs}
            for listing in listings
            if not any(p["reason"] == "unreadable_source" for p in listing.problems)
        }
        dropped = record_sources(wh, plan.todo, recorded, listed)
        sources = [{"benchmark": options.benchmark, "run_id": source_id(u)} for u in plan.todo]
        figures = _figures(wh, _distinct([w.partition for w in work] + sources))
        compacted = 0
        if options.compact:
            # Packed once the workers have exited, by threads of this process (see
            # compaction): two processes packing side by side held ~200 MB more.
            packing = compact_tables(wh, threads=1 if engine == "direct" else pool.workers)
            compacted = sum(c.files_in for c in packing)
    return IngestResult(
        plan,
        files_seen=sum(listing.n_files for listing in listings),
        task_folders=sum(listing.n_task_folders for listing in listings),
        runs_found=len(work),
        runs_written=len(work) - len(not_written) - unchanged,
        runs_unchanged=unchanged,
        runs_gone=len(gone),
        runs_dropped=dropped,
        compacted=compacted,
        engine=engine,
        **figures,
    )

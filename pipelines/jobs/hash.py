"""`deskscore hash`: the screenshots of a warehouse's runs -> screenshot_refs and screenshots.

Wiring only: which runs (`stages.base.run_keys`), the references stage over them, the plan
of who decodes what (read from what that stage wrote), the screenshots stage, and the
figures counted in the files written. All in one transaction: a failed or killed pass leaves
the warehouse as it was, and the next pass does everything again.
"""

from __future__ import annotations

from typing import Any

from deskscore.pipelines.options import HashOptions
from deskscore.pipelines.stages.base import RunKey, run_keys
from deskscore.pipelines.stages.hash import (
    REFS_QUARANTINE,
    HashRefsStage,
    HashShotsStage,
    Plan,
    ShotWork,
    plan_shots,
)

COUNTERS = (
    "runs",
    "refs",
    "files_read",
    "unreadable",
    "distinct",
    "known",
    "to_decode",
    "decoded",
    "bad_images",
    "screenshots_written",
    "quarantined",
)
"""Every figure `run_hash` returns."""


def _by_run(table: Any, ids: set[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in table.to_pylist():
        if r["run_id"] in ids and r["content_hash"] is not None:
            out.setdefault(r["run_id"], set()).add(r["content_hash"])
    return out


def plan(wh: Any, keys: list[RunKey]) -> Plan:
    """Who keeps and who decodes each content of the pass, from the references the first
    stage wrote (`wh` is the job's transaction, so it reads them) and the rows stored."""
    from deskscore.collectors.screenshot_tables import content_hashes, partition

    ids = {k.run_id for k in keys}
    columns = ["run_id", "content_hash"]
    shown = _by_run(wh.read("screenshot_refs", columns=columns), ids)
    held = _by_run(wh.read("screenshots", columns=columns), ids)
    unreadable = {
        k.run_id
        for k in keys
        if "unreadable_source"
        in wh.read("quarantine", partition(k), columns=["reason"], file=REFS_QUARANTINE)
        .column(0)
        .to_pylist()
    }
    return plan_shots(
        keys,
        shown,
        unreadable,
        held,
        content_hashes(wh, "screenshots", excluding=keys),
        content_hashes(wh, "screenshot_refs", excluding=keys),
    )


def figures(wh: Any, keys: list[RunKey], planned: Plan) -> dict[str, int]:
    """The figures `hash` prints, counted in what the pass wrote."""
    from deskscore.collectors.screenshot_tables import QUARANTINE_FILE, partition

    out = dict.fromkeys(COUNTERS, 0)
    out["runs"] = len(keys)
    out["distinct"] = planned.distinct
    out["known"] = planned.known
    for key, work in zip(keys, planned.work, strict=True):
        part = partition(key)
        refs = wh.read("screenshot_refs", part, columns=["screenshot_path", "content_hash"])
        out["refs"] += refs.num_rows
        rows = wh.read("screenshots", part, columns=["content_hash", "status"]).to_pylist()
        out["screenshots_written"] += len(rows)
        decoded = [r for r in rows if r["content_hash"] in set(work.decode)]
        out["to_decode"] += len(work.decode)
        out["decoded"] += len(decoded)
        out["bad_images"] += sum(r["status"] != "ok" for r in decoded)
        for slot in (REFS_QUARANTINE, QUARANTINE_FILE):
            reasons = wh.read("quarantine", part, columns=["reason"], file=slot).column(0)
            out["quarantined"] += len(reasons)
            out["unreadable"] += reasons.to_pylist().count("unreadable_screenshot")
        if (
            "unreadable_source"
            not in wh.read("quarantine", part, columns=["reason"], file=REFS_QUARANTINE)
            .column(0)
            .to_pylist()
        ):
            paths = {
                r["screenshot_path"] for r in refs.to_pylist() if r["content_hash"] is not None
            }
            out["files_read"] += len(paths)
    return out


def _check(wh: Any, keys: list[RunKey], planned: Plan) -> None:
    """Raise IncompleteJob when a run lacks its references, or a content given to it lacks
    both its row and a quarantine row saying why."""
    from deskscore.collectors.screenshot_tables import QUARANTINE_FILE, partition
    from deskscore.pipelines.jobs.score import IncompleteJob

    gaps = []
    for key, work in zip(keys, planned.work, strict=True):
        part = partition(key)
        if not wh.has_file("screenshot_refs", part):
            gaps.append(f"{key.run_id} (screenshot_refs)")
            continue
        wanted = set(work.keep) | set(work.keep_bare) | set(work.decode)
        if not wanted:
            continue
        rows = set(wh.read("screenshots", part, columns=["content_hash"]).column(0).to_pylist())
        if wanted - rows and not wh.has_file("quarantine", part, QUARANTINE_FILE):
            gaps.append(f"{key.run_id} ({len(wanted - rows)} screenshots row(s))")
    if gaps:
        raise IncompleteJob(
            f"outputs missing after the pipeline finished: {', '.join(gaps[:5])}"
            + (" ..." if len(gaps) > 5 else "")
            + "; nothing was recorded: run `deskscore hash` again"
        )


def run_hash(options: HashOptions) -> dict[str, int]:
    """Hash the screenshots of every run (or `options.runs`) of the warehouse; returns the
    figures (runs, refs, files_read, unreadable, distinct, known, decoded, bad_images,
    quarantined, ...), counted in the files written.

    `options.threads` decoding threads per worker (default: the CPU count, 2 to 8); images
    above `options.max_pixels` (default: the image rules' cap) are not decoded (status
    too_large).
    """
    from deskscore.collectors.images import DEFAULT_MAX_PIXELS
    from deskscore.collectors.warehouse import Warehouse
    from deskscore.pipelines.infra.runner import run_stages

    keys = run_keys(Warehouse(options.warehouse), options.runs)
    if not keys:
        return dict.fromkeys(COUNTERS, 0)
    max_pixels = DEFAULT_MAX_PIXELS if options.max_pixels is None else options.max_pixels
    run = {"engine": options.engine, "workers": options.workers, "beam_args": options.beam_args}
    with Warehouse(options.warehouse).transaction() as wh:
        refs = HashRefsStage(str(wh.root), wh.job, options.threads)
        run_stages([refs], keys, **run)
        planned = plan(wh, keys)
        work: list[ShotWork] = planned.work
        shots = HashShotsStage(str(wh.root), wh.job, options.threads, max_pixels)
        run_stages([shots], work, **run)
        _check(wh, keys, planned)
        return figures(wh, keys, planned)


__all__ = ["COUNTERS", "figures", "plan", "run_hash"]

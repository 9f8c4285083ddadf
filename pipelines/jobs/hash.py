"""`deskscore hash`: the screenshots of a warehouse's runs -> screenshot_refs and screenshots.

Wiring only: which runs (`run_keys`), then the `HashScreenshots` stage over them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import apache_beam as beam

from deskscore.collectors.images import DEFAULT_MAX_PIXELS
from deskscore.pipelines.infra.runner import counters, pipeline
from deskscore.pipelines.options import HashOptions
from deskscore.pipelines.stages.hash import HashScreenshots, RunKey

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
    "files_written",
)
"""Every counter `run_hash` returns (0 when nothing counted)."""


def run_keys(warehouse_root: str, run_ids: Sequence[str] | None = None) -> list[RunKey]:
    """The runs of the warehouse (or those of `run_ids`), sorted."""
    from deskscore.collectors.warehouse import Warehouse

    runs = Warehouse(warehouse_root).read("runs").select(["benchmark", "run_id", "source"])
    wanted = set(run_ids) if run_ids else None
    return sorted(
        {
            RunKey(r["benchmark"], r["run_id"], r["source"])
            for r in runs.to_pylist()
            if wanted is None or r["run_id"] in wanted
        }
    )


def run_hash(options: HashOptions) -> dict[str, int]:
    """Hash the screenshots of every run (or `options.runs`) of the warehouse; returns the
    counters (runs, refs, files_read, unreadable, distinct, known, decoded, bad_images,
    quarantined, ...).

    `options.threads` decoding threads per worker (default: the CPU count, 2 to 8); images
    above `options.max_pixels` (default: the image rules' cap) are not decoded (status
    too_large).
    """
    keys = run_keys(options.warehouse, options.runs)
    if not keys:
        return dict.fromkeys(COUNTERS, 0)
    root = str(os.path.abspath(options.warehouse))
    max_pixels = DEFAULT_MAX_PIXELS if options.max_pixels is None else options.max_pixels
    p = pipeline(options.beam_args)
    _ = (
        p
        | "Runs" >> beam.Create(keys)
        | "HashScreenshots" >> HashScreenshots(root, threads=options.threads, max_pixels=max_pixels)
    )
    result = p.run()
    result.wait_until_finish()
    return {**dict.fromkeys(COUNTERS, 0), **counters(result)}


__all__ = ["COUNTERS", "run_hash", "run_keys"]

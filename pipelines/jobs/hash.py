"""`deskscore hash`: the screenshots of a warehouse's runs -> screenshot_refs and screenshots.

Wiring only: which runs (`stages.base.run_keys`), then the `HashScreenshots` stage over them.
"""

from __future__ import annotations

import apache_beam as beam

from deskscore.collectors.images import DEFAULT_MAX_PIXELS
from deskscore.pipelines.infra.runner import counters, pipeline
from deskscore.pipelines.options import HashOptions
from deskscore.pipelines.stages.base import run_keys
from deskscore.pipelines.stages.hash import HashScreenshots

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


def run_hash(options: HashOptions) -> dict[str, int]:
    """Hash the screenshots of every run (or `options.runs`) of the warehouse; returns the
    counters (runs, refs, files_read, unreadable, distinct, known, decoded, bad_images,
    quarantined, ...).

    `options.threads` decoding threads per worker (default: the CPU count, 2 to 8); images
    above `options.max_pixels` (default: the image rules' cap) are not decoded (status
    too_large).
    """
    from deskscore.collectors.warehouse import Warehouse

    keys = run_keys(Warehouse(options.warehouse), options.runs)
    if not keys:
        return dict.fromkeys(COUNTERS, 0)
    max_pixels = DEFAULT_MAX_PIXELS if options.max_pixels is None else options.max_pixels
    with Warehouse(options.warehouse).transaction() as wh:
        p = pipeline(options.beam_args)
        _ = (
            p
            | "Runs" >> beam.Create(keys)
            | "HashScreenshots"
            >> HashScreenshots(
                str(wh.root), threads=options.threads, max_pixels=max_pixels, job=wh.job
            )
        )
        result = p.run()
        result.wait_until_finish()
    return {**dict.fromkeys(COUNTERS, 0), **counters(result)}


__all__ = ["COUNTERS", "run_hash"]

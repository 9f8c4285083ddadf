"""`deskscore hash` (placeholder until the hash job moves here)."""

from __future__ import annotations

from deskscore.pipelines.options import HashOptions


def run_hash(options: HashOptions) -> dict[str, int]:
    from deskscore.pipelines.stages.hash import run_hash as _run

    kw = {} if options.max_pixels is None else {"max_pixels": options.max_pixels}
    return _run(
        options.warehouse,
        run_ids=options.runs or None,
        beam_args=options.beam_args,
        threads=options.threads,
        **kw,
    )

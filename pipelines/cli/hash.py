"""`deskscore hash`: hash every screenshot the steps refer to."""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

from deskscore.pipelines.cli.common import existing_warehouse, writing
from deskscore.pipelines.cli.output import say
from deskscore.pipelines.options import HashOptions, add_options


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "hash", help="hash every screenshot the steps refer to (content hash, phash, size)"
    )
    add_options(p, HashOptions)
    p.set_defaults(handler=run, beam=True)


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.pipelines.jobs.hash import run_hash

    options = HashOptions.from_args(args, beam_args)
    existing_warehouse(options.warehouse)
    started = time.perf_counter()
    with writing(options.warehouse, "hash", options.wait, ["screenshots", "decoded"]):
        counters = run_hash(options)
    say(
        f"hashed {counters.get('refs', 0)} screenshot reference(s) in {counters.get('runs', 0)} run(s): "
        f"{counters.get('decoded', 0)} decoded, {counters.get('known', 0)} already known, "
        f"{counters.get('bad_images', 0)} bad image(s), {counters.get('unreadable', 0)} unreadable file(s) "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return 0

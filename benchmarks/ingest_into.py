"""Benchmark: adding one run to a warehouse that already holds many, against adding it to an
empty one.

    python benchmarks/ingest_into.py [--runs 100] [--repeat 5] [--dir DIR] [--keep]

Generates text run archives like `batch.py --text-only` (369 OSWorld tasks each), ingests
--runs of them into one warehouse (hard links under new names: each is a source and a run of
its own), then, in alternating rounds, times `deskscore ingest` of one more archive as a fresh
process into (a) an empty warehouse and (b) a copy of the full one (the copy is made before
the clock starts). Everyday use is (b): a warehouse that grows by a run or a few at a time.
It prints the medians and (b)/(a), which should stay near 1: what an ingest reads back to
check and reconcile its figures is its own runs' files, not every table of the warehouse.
A script, not a test; it removes what it wrote unless --keep.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from batch import generate

from deskscore.pipelines.cli.output import render

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # timed commands keep bytecode, as a user's do

DISTINCT = 10
"""Archives generated; the warehouse's runs are hard links to them under other names."""


def ingest(sources: list[Path], warehouse: Path) -> float:
    cmd = [sys.executable, "-m", "deskscore.pipelines.cli.main", "ingest",
           *map(str, sources), "--warehouse", str(warehouse)]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=100, help="runs the full warehouse holds")
    p.add_argument("--repeat", type=int, default=5, help="timed rounds (medians)")
    p.add_argument("--dir", help="where to write (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the archives and warehouses")
    p.add_argument("--seed", type=int, default=500)
    args = p.parse_args(argv)

    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="deskscore-into-"))
    archives = generate(base / "zips", DISTINCT + 1, args.seed, screenshots="none")
    new, pool = archives[-1], archives[:-1]
    links = base / "links"
    links.mkdir(exist_ok=True)
    held = []
    for i in range(args.runs):
        link = links / f"held{i:05d}.zip"
        if not link.exists():
            os.link(pool[i % len(pool)], link)
        held.append(link)
    full = base / "full"
    if not full.exists():
        seconds = ingest(held, full)
        print(f"  the full warehouse: {args.runs} runs ingested in {seconds:.1f} s")
    walls: dict[str, list[float]] = {"(a) into an empty warehouse": [],
                                     f"(b) into one of {args.runs} runs": []}  # fmt: skip
    target = base / "target"
    for r in range(args.repeat + 1):
        for name in walls:
            shutil.rmtree(target, ignore_errors=True)
            if name.startswith("(b)"):
                shutil.copytree(full, target)
            seconds = ingest([new], target)
            if r:  # round 0 is untimed: bytecode caches as a user's would be
                walls[name].append(seconds)
        if r:
            print(f"\r  round {r}/{args.repeat}", end="", flush=True)
    print()
    empty = statistics.median(next(iter(walls.values())))
    rows = [[name, f"{statistics.median(s):.2f} s", f"{statistics.median(s) / empty:.2f}x"]
            for name, s in walls.items()]  # fmt: skip
    print(render(["side", "median wall", "/ (a)"], rows))
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

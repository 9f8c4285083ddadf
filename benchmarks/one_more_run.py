"""Benchmark: adding one run to a warehouse that already holds many, against adding it to an
empty one.

    python benchmarks/one_more_run.py [--runs 100] [--repeat 5] [--screenshots] [--dir DIR]
        [--keep]

Generates text run archives like `batch.py --text-only` (369 OSWorld tasks each), ingests and
scores --runs of them in one warehouse (hard links under new names: each is a source and a
run of its own), then, in alternating rounds, times `deskscore ingest` and `deskscore score`
of one more archive, as fresh processes, in (a) an empty warehouse and (b) a copy of the full
one (the copy is made before the clock starts). Everyday use is (b): a warehouse that grows
by a run or a few at a time. It prints the medians and (b)/(a), which should stay near 1:
what a job reads back to check, reconcile and group its figures is its own runs' files, not
every table of the warehouse. With --screenshots the archives carry their PNG screenshots and
the full warehouse's screenshots are hashed (`deskscore hash`) before the rounds, so a score
also checks the screenshot hash tables, which loop detection reads across runs. A script, not
a test; it removes what it wrote unless --keep.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from batch import generate
from one_run import timed

from deskscore.pipelines.cli.output import render

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # timed commands keep bytecode, as a user's do

DISTINCT = 10
"""Archives generated; the warehouse's runs are hard links to them under other names."""


def deskscore(*args: str) -> float:
    """Seconds a `deskscore` command takes as a fresh process."""
    return timed([sys.executable, "-m", "deskscore.pipelines.cli.main", *args])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=100, help="runs the full warehouse holds")
    p.add_argument("--repeat", type=int, default=5, help="timed rounds (medians)")
    p.add_argument("--screenshots", action="store_true", help="PNG members, hashed")
    p.add_argument("--dir", help="where to write (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the archives and warehouses")
    p.add_argument("--seed", type=int, default=500)
    args = p.parse_args(argv)

    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="deskscore-one-more-"))
    kind = "png" if args.screenshots else "text"
    archives = generate(
        base / f"zips-{kind}", DISTINCT + 1, args.seed, "pool" if args.screenshots else "none"
    )
    new, pool = archives[-1], archives[:-1]
    links = base / f"links-{kind}"
    links.mkdir(exist_ok=True)
    held = []
    for i in range(args.runs):
        link = links / f"held{i:05d}.zip"
        if not link.exists():
            os.link(pool[i % len(pool)], link)
        held.append(link)
    full = base / f"full-{kind}-{args.runs}"
    if not full.exists():
        seconds = deskscore("ingest", *map(str, held), "--warehouse", str(full))
        if args.screenshots:
            seconds += deskscore("hash", "--warehouse", str(full))
        seconds += deskscore("score", "--warehouse", str(full))
        if args.screenshots:
            # the warehouse as the next day's score finds it: the first score packed the hash
            # files it had read, so this one reads them once more and keeps their digests
            deskscore("score", "--warehouse", str(full))
        print(f"  the full warehouse: {args.runs} runs ingested and scored in {seconds:.1f} s")
    sides = {"(a) an empty warehouse": None, f"(b) one of {args.runs} runs": full}
    walls: dict[tuple[str, str], list[float]] = {}
    target = base / "target"
    for r in range(args.repeat + 1):
        for name, start_from in sides.items():
            shutil.rmtree(target, ignore_errors=True)
            if start_from is not None:
                shutil.copytree(start_from, target)
            ingest = deskscore("ingest", str(new), "--warehouse", str(target))
            score = deskscore("score", "--warehouse", str(target))
            if r:  # round 0 is untimed: bytecode caches as a user's would be
                for job, seconds in (("ingest", ingest), ("score", score)):
                    walls.setdefault((job, name), []).append(seconds)
        if r:
            print(f"\r  round {r}/{args.repeat}", end="", flush=True)
    print()
    rows = []
    for (job, name), seconds in walls.items():
        empty = statistics.median(walls[(job, next(iter(sides)))])
        wall = statistics.median(seconds)
        rows.append([f"{job} of one more run", name, f"{wall:.2f} s", f"{wall / empty:.2f}x"])
    print(render(["job", "in", "median wall", "/ (a)"], rows))
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: peak memory of `deskscore ingest` on tiny hostile archives.

    python benchmarks/memory_bombs.py [--only blank_lines,sparse_file] [--workers 1] [--keep DIR]

Writes the archives of `deskscore.collectors.synthetic.bombs` (a 4 KB zip of 4 million blank
lines, a 20 KB zip of 8 x 2 MiB of newlines, a sparse 3 GB traj.jsonl, and three more), ingests
each into a fresh warehouse as a user would (a fresh `deskscore ingest` process), then runs
`deskscore check` on it. Prints per archive: its size on disk, the wall time and peak RSS of
the ingest (the whole process tree, sampled every 50 ms, as benchmarks/batch.py measures),
the trajectory lines and quarantined items the ingest reported, and whether `check`
reconciled every line. The target: peak RSS under 1 GB for each. A script, not a test.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from batch import Meter  # a sibling script, not a package

from deskscore.collectors.synthetic.bombs import BOMBS, write_bombs
from deskscore.pipelines.cli.output import render

TARGET = 1 << 30


def _disk_bytes(path: Path) -> int:
    """Bytes the source takes on disk (allocated blocks: a sparse file takes none)."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_blocks * 512 for p in files)


def _figure(pattern: str, text: str) -> str:
    m = re.search(pattern, text)
    return m.group(1) if m else "?"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", help="comma-separated bomb names (default: all)")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--keep", help="write into this folder and keep it")
    args = p.parse_args(argv)
    names = tuple(args.only.split(",")) if args.only else tuple(BOMBS)
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="deskscore-bombs-"))
    sources = write_bombs(base / "bombs", names)
    exe = [sys.executable, "-m", "deskscore.pipelines.cli.main"]
    rows, ok = [], True
    for name, source in sources.items():
        wh = base / f"wh-{name}"
        shutil.rmtree(wh, ignore_errors=True)
        cmd = [*exe, "ingest", str(source), "--warehouse", str(wh), "--workers", str(args.workers)]
        with Meter() as m:
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        check = subprocess.run(
            [*exe, "check", "--warehouse", str(wh)], capture_output=True, text=True, check=False
        )
        passed = done.returncode == 0 and check.returncode == 0 and m.peak < TARGET
        ok &= passed
        rows.append(
            [
                name,
                f"{_disk_bytes(source) / 1024:,.0f} KB",
                f"{m.seconds:.1f} s",
                f"{m.peak / 2**20:,.0f} MB",
                _figure(r"trajectory lines: (\d+)", done.stdout),
                _figure(r"quarantined: (\d+)", done.stdout),
                "yes" if check.returncode == 0 else "NO",
                "met" if m.peak < TARGET else "NOT met",
            ]
        )
        if done.returncode != 0:
            print(f"{name}: ingest exited {done.returncode}\n{done.stderr[-2000:]}")
    head = ["archive", "on disk", "wall", "peak RSS", "traj lines", "quarantined", "check",
            "< 1 GB"]  # fmt: skip
    print(render(head, rows))
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

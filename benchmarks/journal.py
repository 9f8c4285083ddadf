"""Benchmark: a job's read of its own pending writes, as the job grows.

    python benchmarks/journal.py [--sizes 1000 10000 100000] [--rounds 20]

A job's stages read back what the same job wrote (a hash job's screenshot references, a
job's small files as it packs them), through the job's journal. For each size K, writes a
journal of K lines in two files (two processes: 10 tables per run, K/10 runs) on top of an
empty committed generation, then `--rounds` times: appends one more run's 10 lines and reads
one slot and one partition's slots back, timing

- baseline: what a read did before, the whole journal parsed and applied to the committed
  manifest (`apply_ops(base, read_journal(...))`), then the table's slots scanned for the
  partition;
- deskscore: `Warehouse(root, job, pending=True)`, kept across the rounds as a stage keeps it
  (`has_file`, then the partition's slots).

It prints the median time per read of each and their ratio, measured in the same run, and
checks that both find the same slots. In a job of N runs the baseline's cost per run grows
with N (the job's time with N squared); deskscore's should stay flat. A script, not a test.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from deskscore.collectors.warehouse import Warehouse
from deskscore.collectors.warehouse.store import JOBS_DIR, apply_ops, commit, read_journal
from deskscore.pipelines.cli.output import render
from deskscore.schemas.manifest import manifest_dir, read_manifest, split_slot

TABLES = (
    "episode_scores", "run_scores", "run_score_intervals", "loop_spans", "llm_call_costs",
    "episode_costs", "run_costs", "verdicts", "score_inputs", "quarantine",
)  # fmt: skip
JOB = "bench-job"


def _lines(runs: range, t0: int) -> list[str]:
    out = []
    for i in runs:
        for j, table in enumerate(TABLES):
            op = {"op": "put", "table": table, "slot": f"benchmark=osworld/run_id=r{i}/data",
                  "file": f"f{i}-{j}.parquet", "rows": 3, "t": t0 + 10 * i + j}  # fmt: skip
            out.append(json.dumps(op, sort_keys=True) + "\n")
    return out


def _baseline(root: Path, table: str, part: str) -> list:
    base = read_manifest(root)
    assert base is not None
    manifest = apply_ops(base, read_journal(root, JOB))
    slots = manifest.tables.get(table, {})
    return sorted((k, e) for k, e in slots.items() if split_slot(k)[0] == part)


def measure(size: int, rounds: int) -> tuple[float, float]:
    """Median seconds per read after a write: (baseline, deskscore)."""
    root = Path(tempfile.mkdtemp(prefix="deskscore-journal-"))
    try:
        commit(root, [])
        folder = manifest_dir(root) / JOBS_DIR / JOB
        folder.mkdir(parents=True)
        runs = size // len(TABLES)
        lines = _lines(range(runs), 0)
        (folder / "1.jsonl").write_text("".join(lines[0::2]))
        (folder / "2.jsonl").write_text("".join(lines[1::2]))
        wh = Warehouse(root, JOB, pending=True)
        wh.manifest()
        base_times, ours = [], []
        for r in range(rounds):
            run = runs + r
            with open(folder / f"{1 + r % 2}.jsonl", "a", encoding="utf-8") as f:
                f.write("".join(_lines(range(run, run + 1), 0)))
            part = {"benchmark": "osworld", "run_id": f"r{run}"}
            folder_key = f"benchmark=osworld/run_id=r{run}"
            t = time.perf_counter()
            expected = _baseline(root, "episode_costs", folder_key)
            base_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            wh.has_file("episode_costs", part, "data")
            got = wh._slots("episode_costs", part)
            ours.append(time.perf_counter() - t)
            assert got == expected, (got, expected)
        return statistics.median(base_times), statistics.median(ours)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    p.add_argument("--rounds", type=int, default=20)
    args = p.parse_args(argv)
    rows = []
    for size in args.sizes:
        base, ours = measure(size, args.rounds)
        rows.append([size, f"{base * 1000:.2f} ms", f"{ours * 1000:.2f} ms", f"{base / ours:.0f}x"])
    print("a read of the job's pending writes after it wrote one more run (median per read):")
    print(render(["journal lines", "baseline: whole journal", "deskscore", "ratio"], rows))


if __name__ == "__main__":
    main()

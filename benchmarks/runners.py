"""Benchmark: the same jobs on Beam's default runner, on a Dask cluster and on PortableRunner.

    python benchmarks/runners.py [--per-domain 2] [--zips 2] [--repeat 2] [--dir DIR] [--keep]

Writes one mixed archive (a result folder of two runs and `--zips` zipped runs, each of
`--per-domain` tasks per OSWorld domain, tiny screenshots, the damage of
collectors/synthetic/hostile.py), starts a Dask cluster of two single-thread worker
processes on 127.0.0.1 (not timed: a cluster outlives the jobs it runs), then, in the same
session, runs `deskscore ingest`, `hash` and `score` as fresh processes into a fresh
warehouse per runner and round:

- default: `--engine beam` (Beam's FnApiRunner, one worker process per core);
- dask: `--runner=DaskRunner --dask_client_address=...` on the cluster;
- portable: `--runner=PortableRunner --job_endpoint=embed --environment_type=LOOPBACK`.

It prints each job's wall time (the best of `--repeat` rounds) and the ratio of each runner's
total to the default runner's, then compares every table and view of each runner's last
warehouse with the default runner's, row by row (`deskscore.sql.compare`): rows per relation
and rows that differ. A job that fails on a runner is reported as such and run again on the
default runner, so the jobs after it still run on the runner measured. A script, not a test;
it removes what it wrote unless --keep.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # timed commands keep bytecode, as a user's do

JOBS = ("ingest", "hash", "score")
RUNNERS = ("default", "dask", "portable")
PORTABLE = ("--runner=PortableRunner", "--job_endpoint=embed", "--environment_type=LOOPBACK")


def _deskscore(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "deskscore.pipelines.cli.main", *args],
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - started, done


def _round(
    sources: list[str], warehouse: Path, runner_args: tuple[str, ...]
) -> dict[str, float | None]:
    """Each job's wall time on one runner into a fresh warehouse (None: the job failed)."""
    job_args = {
        "ingest": ("ingest", *sources),
        "hash": ("hash",),
        "score": ("score", "--max-steps-scoring", "50"),
    }
    out: dict[str, float | None] = {}
    for job in JOBS:
        common = ("--warehouse", str(warehouse), "--engine", "beam")
        seconds, done = _deskscore(*job_args[job], *common, *runner_args)
        out[job] = seconds if done.returncode == 0 else None
        if done.returncode:
            last = (done.stderr.strip().splitlines() or ["?"])[-1]
            print(f"  {job} failed on {' '.join(runner_args) or 'default'}: {last}")
            _, again = _deskscore(*job_args[job], *common)
            if again.returncode:
                raise SystemExit(f"{job} fails on the default runner too: {again.stderr[-2000:]}")
    return out


def _best(rounds: list[dict[str, float | None]]) -> dict[str, float | None]:
    best: dict[str, float | None] = {}
    for job in JOBS:
        times = [r[job] for r in rounds if r[job] is not None]
        best[job] = min(times) if times else None
    return best


def _seconds(value: float | None) -> str:
    return "failed" if value is None else f"{value:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-domain", type=int, default=2, help="tasks per domain per run")
    parser.add_argument("--zips", type=int, default=2, help="runs packed as zips")
    parser.add_argument("--repeat", type=int, default=2, help="rounds; the best is shown")
    parser.add_argument("--dir", type=Path, help="work folder (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="leave the work folder")
    args = parser.parse_args()

    from deskscore.collectors.synthetic.hostile import write_mixed_archive
    from deskscore.pipelines.infra.dask_cluster import local_dask_cluster
    from deskscore.sql.compare import compare_warehouses

    work = args.dir or Path(tempfile.mkdtemp(prefix="runners-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        sources = [str(s) for s in write_mixed_archive(work / "archive", zips=args.zips,
                                                        per_domain=args.per_domain)]  # fmt: skip
        n_runs = 2 + args.zips
        print(f"archive: {n_runs} runs x {args.per_domain * 10} tasks, {len(sources)} sources")
        times: dict[str, list[dict[str, float | None]]] = {r: [] for r in RUNNERS}
        last: dict[str, Path] = {}
        with local_dask_cluster(work / "cluster", workers=2, threads=1) as cluster:
            runner_args = {
                "default": (),
                "dask": ("--runner=DaskRunner", f"--dask_client_address={cluster.address}"),
                "portable": PORTABLE,
            }
            for k in range(args.repeat):
                for runner in RUNNERS:  # the same order each round, the default first
                    last[runner] = work / f"{runner}-{k}"
                    times[runner].append(_round(sources, last[runner], runner_args[runner]))
                    print(f"round {k + 1}: {runner} done")
        best = {r: _best(times[r]) for r in RUNNERS}
        reference = best["default"]
        print()
        header = f"{'runner':10} " + " ".join(f"{j:>9}" for j in JOBS)
        print(header + f" {'total':>9} {'vs default':>11}  over")
        for runner in RUNNERS:
            row = best[runner]
            ran = [j for j in JOBS if row[j] is not None]  # the default's time for the same jobs
            total = sum(row[j] or 0.0 for j in ran)
            base = sum(reference[j] or 0.0 for j in ran)
            cells = " ".join(f"{_seconds(row[j]):>9}" for j in JOBS)
            ratio = f"{total / base:>10.2f}x" if base else f"{'-':>11}"
            print(f"{runner:10} {cells} {total:>7.1f} s {ratio}  {' + '.join(ran)}")
        failed = {r: [j for j in JOBS if best[r][j] is None] for r in RUNNERS}
        for runner, jobs in failed.items():
            if jobs:
                print(f"{runner}: {', '.join(jobs)} failed; run on the default runner instead")
        print()
        diffs = {r: compare_warehouses(last["default"], last[r]) for r in RUNNERS[1:]}
        names = sorted({d.name for r in diffs.values() for d in r})
        by_name = {r: {d.name: d for d in diffs[r]} for r in diffs}
        print(f"{'relation':28} {'rows':>7} " + " ".join(f"{r + ' rows':>14}" for r in diffs)
              + " " + " ".join(f"{r + ' differing':>19}" for r in diffs))  # fmt: skip
        for name in names:
            first = next(by_name[r][name] for r in diffs if name in by_name[r])
            rows = " ".join(
                f"{by_name[r][name].right_rows if name in by_name[r] else 0:>14}" for r in diffs
            )
            differing = " ".join(
                f"{by_name[r][name].only_left + by_name[r][name].only_right:>19}"
                if name in by_name[r]
                else f"{'-':>19}"
                for r in diffs
            )
            print(f"{name:28} {first.left_rows:>7} {rows} {differing}")
        total_differing = {r: sum(d.only_left + d.only_right for d in diffs[r]) for r in diffs}
        print(f"differing rows in all: {total_differing}")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

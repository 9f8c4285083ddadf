"""Benchmark: the everyday case, one run folder, deskscore against reading it and score.py.

    python benchmarks/one_run.py [--repeat 5] [--peer PATH/TO/original/score.py]
        [--human-path DIR] [--profile NAME] [--dir DIR] [--keep]

Writes one generated 369-task OSWorld run folder (steps drawn like a real run's by the demo
agent `--profile`; no screenshots: they are not what these commands read), then times, as
fresh processes, `--repeat` rounds of each in turn (after one untimed round, so Python's
bytecode caches are as a user's would be):

- floor: read the files `deskscore ingest` reads (traj.jsonl, result.txt, token_usage.json,
  args.json, all_result.json) and parse their JSON with orjson, in one process;
- `deskscore ingest RUN` into a fresh warehouse (the engine `auto` picks for one run);
- `deskscore ingest RUN` + `deskscore score --compat osworld-human --max-steps-scoring 50`;
- OSWorld-Human's `score.py --result-path RUN --max-steps-scoring 50` (with `--peer`);
- deskscore's drop-in `score.py` with the same arguments.

It prints the median wall time of each, its ratio to the floor measured in the same run,
and the floor's ratio to OSWorld-Human's script. A script, not a test: it removes what it
wrote unless --keep.
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

from deskscore.pipelines.cli.output import render

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # timed commands keep bytecode, as a user's do

ROOT = Path(__file__).resolve().parents[1]
SHARED_HUMAN = ROOT.parent / "shared" / "reference-data" / "osworld-human" / "verified"
NEEDED = ("traj.jsonl", "result.txt", "token_usage.json", "args.json", "all_result.json")

FLOOR = """
import os, sys, orjson

parsed = 0
for folder, _, files in os.walk(sys.argv[1]):
    for name in files:
        if name not in {needed!r}:
            continue
        with open(os.path.join(folder, name), 'rb') as f:
            data = f.read()
        parts = [line for line in data.splitlines() if line.strip()] if name == 'traj.jsonl' else (
            [data] if name.endswith('.json') else [])
        for part in parts:
            try:
                orjson.loads(part); parsed += 1
            except orjson.JSONDecodeError:
                pass
print(parsed)
"""


def write_run(folder: Path, profile_name: str, seed: int) -> Path:
    from deskscore.collectors.human import load_bundled
    from deskscore.collectors.synthetic import load_profiles
    from deskscore.collectors.synthetic.runs import write_run as write

    profiles = {p.name: p for p in load_profiles()}
    if profile_name not in profiles:
        sys.exit(f"no demo agent {profile_name!r}: use one of {', '.join(sorted(profiles))}")
    tasks = list(load_bundled("verified"))
    return write(folder, profiles[profile_name], tasks, seed=seed, screenshots="none")


def timed(cmd: list[str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=5, help="timed rounds (medians)")
    p.add_argument("--peer", help="OSWorld-Human's score.py (its row is skipped without it)")
    p.add_argument("--human-path", help="its verified human data folder (default: shared data)")
    p.add_argument("--profile", default="legacy-c13", help="the demo agent whose run is written")
    p.add_argument("--dir", help="where to write (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the run and warehouses")
    p.add_argument("--seed", type=int, default=11)
    args = p.parse_args(argv)

    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="deskscore-one-run-"))
    human = Path(args.human_path) if args.human_path else SHARED_HUMAN
    run = write_run(base / "results", args.profile, args.seed)
    steps = sum(
        sum(1 for line in p.read_bytes().splitlines() if line.strip())
        for p in run.rglob("traj.jsonl")
    )
    print(f"one run of {len(list(run.rglob('traj.jsonl')))} tasks, {steps} trajectory lines")
    exe = [sys.executable, "-m", "deskscore.pipelines.cli.main"]
    warehouse = base / "warehouse"
    score_args = ["--result-path", str(run), "--max-steps-scoring", "50"]

    ingest = [*exe, "ingest", str(run), "--warehouse", str(warehouse)]
    score = [*exe, "score", "--warehouse", str(warehouse), "--compat", "osworld-human",
             "--max-steps-scoring", "50", "--human-version", "verified"]  # fmt: skip
    sides: dict[str, list[tuple[list[str], Path | None]]] = {
        "floor: read + parse (orjson)": [
            ([sys.executable, "-c", FLOOR.format(needed=NEEDED), str(run)], None)
        ],
        "deskscore ingest": [(ingest, None)],
        "deskscore ingest + score": [(ingest, None), (score, None)],
        "deskscore's score.py": [([sys.executable, str(ROOT / "score.py"), *score_args], human)],
    }
    if args.peer:
        peer_cmd = [sys.executable, str(Path(args.peer).resolve()), *score_args]
        sides["OSWorld-Human's score.py"] = [(peer_cmd, human)]
    walls: dict[str, list[float]] = {}
    for r in range(args.repeat + 1):
        for name, cmds in sides.items():
            shutil.rmtree(warehouse, ignore_errors=True)  # every ingest into a fresh warehouse
            seconds = sum(timed(cmd, cwd) for cmd, cwd in cmds)
            if r:  # round 0 is untimed: bytecode caches as a user's would be
                walls.setdefault(name, []).append(seconds)
        if r:
            print(f"\r  round {r}/{args.repeat}", end="", flush=True)
    print()
    floor = statistics.median(walls["floor: read + parse (orjson)"])
    peer = statistics.median(walls["OSWorld-Human's score.py"]) if args.peer else None
    rows = []
    for name, seconds in walls.items():
        wall = statistics.median(seconds)
        rows.append([name, f"{wall:.2f} s", f"{wall / floor:.1f}x",
                     f"{wall / peer:.2f}x" if peer else "-"])  # fmt: skip
    print(render(["side", "median wall", "/ floor", "/ OSWorld-Human's score.py"], rows))
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

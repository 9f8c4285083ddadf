"""Benchmark: how long `deskscore sql` and `deskscore leaderboard` take to start, against DuckDB.

    python benchmarks/startup.py [--repeat 5] [--per-domain 2] [--python PATH] [--dir DIR] [--keep]

Builds a small warehouse first (`deskscore demo --per-domain N` into a temporary folder,
untimed), then runs each of these as a fresh process, `--repeat` rounds of all of them in
turn (after one untimed round that leaves Python's bytecode caches as a user's would be):

- baseline: `python -c "import duckdb; duckdb.sql('SELECT 1').fetchall()"`, DuckDB alone;
- `deskscore sql --warehouse W "SELECT 1"`: the command's own start (target: at most 1.5x
  the baseline);
- `deskscore sql --warehouse W "SELECT count(*) FROM leaderboard"`: a mart and what it reads;
- `deskscore leaderboard --warehouse W`;
- the other everyday reading commands, as the README's tour runs them: `deskscore compare`
  of two runs, `deskscore cost`, `deskscore loops --top 3` and `deskscore check`.

It prints the median wall time of each and its ratio to the baseline measured in the same
run (the machine may be shared: a median of fresh processes, not one), and PASS or FAIL for
the target. `--python` names the interpreter of another install to measure (its `deskscore`
is the one beside it). A script, not a test: it removes what it wrote unless --keep.
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

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # timed commands keep bytecode, as a user's do

TARGET_RATIO = 1.5
"""`deskscore sql "SELECT 1"` against the baseline."""
BASELINE = "import duckdb; duckdb.sql('SELECT 1').fetchall()"


def _commands(python: str, deskscore: str, warehouse: Path) -> dict[str, list[str]]:
    """What is timed, by the label printed; the baseline first."""
    wh = ("--warehouse", str(warehouse))
    return {
        "python -c duckdb SELECT 1 (baseline)": [python, "-c", BASELINE],
        'deskscore sql "SELECT 1"': [deskscore, "sql", *wh, "SELECT 1"],
        'deskscore sql "SELECT count(*) FROM leaderboard"': [
            deskscore,
            "sql",
            *wh,
            "SELECT count(*) FROM leaderboard",
        ],
        "deskscore leaderboard": [deskscore, "leaderboard", *wh],
        "deskscore compare openai/gpt-5.4 atlas-deliberate-v2": [
            deskscore,
            "compare",
            "openai/gpt-5.4",
            "atlas-deliberate-v2",
            *wh,
        ],
        "deskscore cost": [deskscore, "cost", *wh],
        "deskscore loops --top 3": [deskscore, "loops", "--top", "3", *wh],
        "deskscore check": [deskscore, "check", *wh],
    }


def _seconds(command: list[str]) -> float:
    """Wall time of one fresh process; SystemExit with its error if it fails."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr[-2000:]}")
    return elapsed


def _deskscore(python: str) -> str:
    """The `deskscore` command installed with `python` (beside it, as a venv has it)."""
    beside = Path(python).parent / "deskscore"
    found = str(beside) if beside.exists() else shutil.which("deskscore")
    if not found:
        raise SystemExit(f"no deskscore command beside {python} nor on PATH")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds; the median is shown")
    parser.add_argument("--per-domain", type=int, default=2, help="demo tasks per domain")
    parser.add_argument(
        "--python", default=sys.executable, help="the interpreter of the install to measure"
    )
    parser.add_argument("--dir", type=Path, help="work folder (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="leave the work folder")
    args = parser.parse_args()

    deskscore = _deskscore(args.python)
    work = args.dir or Path(tempfile.mkdtemp(prefix="startup-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        demo = work / "demo"
        built = subprocess.run(
            [deskscore, "demo", "--out", str(demo), "--per-domain", str(args.per_domain)],
            capture_output=True,
            text=True,
        )
        if built.returncode:
            raise SystemExit(f"deskscore demo failed: {built.stderr[-2000:]}")
        commands = _commands(args.python, deskscore, demo / "warehouse")
        print(f"warehouse: deskscore demo --per-domain {args.per_domain}; install: {deskscore}")
        for command in commands.values():  # untimed: bytecode caches written, files cached
            _seconds(command)
        times: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(args.repeat):
            for label, command in commands.items():  # in turn: a slow spell hits them all
                times[label].append(_seconds(command))
        medians = {label: statistics.median(t) for label, t in times.items()}
        baseline = next(iter(medians.values()))
        width = max(len(label) for label in commands)
        print(f"\n{'command':{width}} {'median':>9} {'vs baseline':>12}  target")
        for k, (label, seconds) in enumerate(medians.items()):
            ratio = seconds / baseline
            target = ""
            if k == 1:
                verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
                target = f"<= {TARGET_RATIO:.1f}x {verdict}"
            print(f"{label:{width}} {seconds:>7.3f} s {ratio:>11.2f}x  {target}")
        print(f"\nmedian of {args.repeat} fresh processes each")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

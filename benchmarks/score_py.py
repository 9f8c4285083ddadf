"""Benchmark: deskscore's score.py against OSWorld-Human's original, on generated runs.

    python benchmarks/score_py.py --peer PATH/TO/original/score.py [--runs 3]
        [--human-version verified] [--human-path DIR] [--repeat 5]

Generates K realistic 369-task OSWorld runs (seeded), runs both scripts on each as fresh
processes (the original from the human data folder, as it must be run; ours the same way),
checks that the four figure lines are identical, and prints the best-of-N wall times and
their ratio (target: ours <= 2.5x the original). A second section feeds both scripts the
inputs the original crashes on and shows its exit code next to our figures.

This is a script, not a test: it writes to a temporary folder and removes it afterwards.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from deskscore.collectors.human import load_bundled
from deskscore.collectors.synthetic import load_profiles
from deskscore.collectors.synthetic import write_run as synthetic_run

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # timed commands keep bytecode, as a user's do

ROOT = Path(__file__).resolve().parents[1]
OURS = ROOT / "score.py"
FIGURES = ("Original OSWorld Result:", "Single Action WES+:", "Grouped Action WES+:", "WES-:")
TARGET_RATIO = 2.5


def write_run(base: Path, tasks: list[dict], *, seed: int, profile_index: int) -> tuple[Path, int]:
    """One generated run (deskscore's demo generator, a demo agent profile); (run root, its budget)."""
    profiles = load_profiles()
    profile = profiles[profile_index % len(profiles)]
    root = synthetic_run(
        base,
        profile,
        tasks,
        seed=seed,
        screenshots="none",
        old_thunderbird_ids=profile_index % 2 == 1,
    )
    return root, profile.max_steps


def run_script(script: Path, args: list[str], cwd: Path) -> tuple[int, str, float]:
    """(exit code, stdout, wall seconds) of one fresh process."""
    start = time.perf_counter()
    p = subprocess.run(
        [sys.executable, str(script), *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    return p.returncode, p.stdout, time.perf_counter() - start


def best_of(script: Path, args: list[str], cwd: Path, n: int) -> tuple[int, str, float]:
    best = None
    for _ in range(n):
        code, out, wall = run_script(script, args, cwd)
        if best is None or wall < best[2]:
            best = (code, out, wall)
    assert best is not None
    return best


def figures(stdout: str) -> list[str]:
    """The four figure lines, in order (missing ones as '-')."""
    lines = stdout.splitlines()
    return [next((ln for ln in lines if ln.startswith(f)), "-") for f in FIGURES]


def _value(line: str) -> str:
    return line.split(":", 1)[1].strip().split("%")[0] if ":" in line else line


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join("{:>" + str(w) + "}" for w in widths)
    return "\n".join(
        [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
        + [fmt.format(*r) for r in rows]
    )


def crash_inputs(base: Path, tasks: list[dict]) -> dict[str, Path]:
    """Small runs the original stops on: an empty traj, a garbled line, an unparseable result."""
    out = {}
    for kind in ("empty traj.jsonl", "garbled line", "unparseable result.txt"):
        root, _ = write_run(base / kind.replace(" ", "_"), tasks[:40], seed=7, profile_index=0)
        victim = next(
            p.parent
            for p in sorted(root.glob("*/*/traj.jsonl"))
            if (p.parent / "result.txt").exists()
        )
        if kind == "empty traj.jsonl":
            (victim / "traj.jsonl").write_bytes(b"")
            (victim / "result.txt").write_text("1\n")
        elif kind == "garbled line":
            data = (victim / "traj.jsonl").read_bytes()
            (victim / "traj.jsonl").write_bytes(data[: len(data) // 2] + b"\n")
        else:
            (victim / "result.txt").write_text("abc\n")
        out[kind] = root
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--peer", required=True, help="OSWorld-Human's score.py (a copy of it)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--human-version", default="verified", choices=("2025-06", "verified"))
    p.add_argument(
        "--human-path",
        default=None,
        help="OSWorld-Human data folder (default: "
        "../shared/reference-data/osworld-human/<version> beside the repository)",
    )
    p.add_argument("--repeat", type=int, default=5, help="timings per script and run (best kept)")
    p.add_argument("--seed", type=int, default=2025)
    args = p.parse_args(argv)

    peer = Path(args.peer).resolve()
    human = Path(
        args.human_path
        or ROOT.parent / "shared" / "reference-data" / "osworld-human" / args.human_version
    ).resolve()
    if not peer.is_file() or not human.is_dir():
        print(
            f"error: need --peer FILE ({peer}) and a human data folder ({human})", file=sys.stderr
        )
        return 2
    # Runs hold the 369 OSWorld tasks whatever the human version is, as real runs do.
    tasks = load_bundled("verified")
    print(
        f"human data: {human} ({args.human_version}); peer: {peer}; python {sys.version.split()[0]}"
    )

    rows = []
    ratios = []
    all_equal = True
    with tempfile.TemporaryDirectory(prefix="score_py_bench_") as tmp:
        for k in range(args.runs):
            run, max_steps = write_run(
                Path(tmp) / f"run{k}", tasks, seed=args.seed + k, profile_index=k
            )
            cli = ["--result-path", str(run), "--max-steps-scoring", str(max_steps)]
            code_o, out_o, wall_o = best_of(peer, cli, human, args.repeat)
            code_d, out_d, wall_d = best_of(OURS, cli, human, args.repeat)
            fo, fd = figures(out_o), figures(out_d)
            equal = code_o == 0 and code_d == 0 and fo == fd
            same_prefix = out_d.startswith(out_o)
            all_equal &= equal and same_prefix
            ratios.append(wall_d / wall_o)
            rows.append(
                [
                    f"run{k} (S={max_steps}{', old tb ids' if k % 2 else ''})",
                    *(_value(f) for f in fo),
                    *(_value(f) for f in fd),
                    "yes" if equal else "NO",
                    "yes" if same_prefix else "NO",
                    f"{wall_o * 1000:.0f}",
                    f"{wall_d * 1000:.0f}",
                    f"{wall_d / wall_o:.2f}",
                ]
            )
        header = [
            "run",
            "orig SR%",
            "orig WES+s",
            "orig WES+g",
            "orig WES-",
            "ours SR%",
            "ours WES+s",
            "ours WES+g",
            "ours WES-",
            "figures =",
            "stdout =",
            "orig ms",
            "ours ms",
            "ratio",
        ]
        print()
        print(_table(rows, header))
        overall = sum(ratios) / len(ratios)
        verdict = "PASS" if overall <= TARGET_RATIO and all_equal else "FAIL"
        print(
            f"\noverall ratio (mean of runs): {overall:.2f} (target <= {TARGET_RATIO}); "
            f"outputs equal: {'yes' if all_equal else 'NO'}; {verdict}"
        )

        print("\ncrash inputs (40-task runs; ours prints NOTE lines and the figures):")
        crash_rows = []
        for kind, root in crash_inputs(Path(tmp) / "crash", tasks).items():
            cli = ["--result-path", str(root)]
            code_o, out_o, _ = run_script(peer, cli, human)
            code_d, out_d, _ = run_script(OURS, cli, human)
            notes = [ln for ln in out_d.splitlines() if ln.startswith("NOTE")]
            crash_rows.append(
                [kind, str(code_o), str(code_d), *(_value(f) for f in figures(out_d))]
            )
            for n in notes:
                print(f"  [{kind}] {n.replace(tmp, '<tmp>')}")
        print(
            _table(
                crash_rows,
                ["input", "orig exit", "ours exit", "ours SR%", "WES+s", "WES+g", "WES-"],
            )
        )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())

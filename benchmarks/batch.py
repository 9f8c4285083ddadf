"""Benchmark: re-scoring a release of run archives, deskscore against the user's alternative.

    python benchmarks/batch.py --sizes 20 40 80 --rounds 3 --peer PATH/TO/original/score.py
        [--human-path DIR] [--workers 2] [--text-only] [--peer-rounds {first,all}] [--dir DIR]
        [--keep]

Generates run archives like a published release (one zip per run: 369 OSWorld tasks, steps
drawn like real runs by deskscore's demo agents, every step's 1280x720 PNG screenshot as a
member, `__MACOSX/` entries; with --text-only, the same runs without PNG members), then, in
the same session, for each size N measures:

(a) the alternative: for each archive, `unzip` it and run OSWorld-Human's `score.py` on it
    (`--max-steps-scoring 50`), one archive at a time (skipped without `--peer`). With PNG
    members it runs once per size, in the first round: unpacking the screenshots makes it
    the slow side by far. Text-only, it runs in every round (`--peer-rounds all`, the default
    there): it is then within a few times (b), and most of it is `unzip` creating about
    1,450 files per archive, which took from 0.07 s to 1.4 s an archive on one machine's
    disk from one minute to the next: one round of it is not a measurement;
(b) `deskscore ingest` + `deskscore score --compat osworld-human --max-steps-scoring 50` on
    the zips, as fresh processes, into a fresh warehouse;
(c) the floor: only reading the members (b) needs from each zip and parsing their JSON with
    orjson, with as many processes as (b) has workers.

Rounds alternate the sizes (20, 40, 80, 20, 40, 80, ...) so a slow patch of the machine does
not land on one size, and each side starts once what the side before wrote is on disk. It prints, per size, the medians of wall time and peak RSS (the whole
process tree, sampled every 50 ms) of each side, the ratios (a)/(b) and (b)/(c) (target
<= 3), how time grows from each size to the next (target 1.9-2.2 for a doubling) and whether
peak RSS stays flat (target: at most 350 MB for (b)), and checks that (a) and (b) print the
same four figures for every run. A script, not a test; it removes what it wrote unless --keep.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from deskscore.pipelines.cli.output import render

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # timed commands keep bytecode, as a user's do

ROOT = Path(__file__).resolve().parents[1]
SHARED_HUMAN = ROOT.parent / "shared" / "reference-data" / "osworld-human"
FIGURES = ("Original OSWorld Result:", "Single Action WES+:", "Grouped Action WES+:", "WES-:")
NEEDED = ("traj.jsonl", "result.txt", "token_usage.json", "args.json", "all_result.json")


# --------------------------------------------------------------------------- measuring


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and all its descendants, now."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            continue
        stack.extend(_children(p))
    return total


class Meter:
    """Wall time and the peak RSS of this process's children (sampled every 50 ms)."""

    def __enter__(self) -> Meter:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self.start = time.perf_counter()
        self._thread.start()
        return self

    def _sample(self) -> None:
        me = os.getpid()
        while not self._stop.wait(0.05):
            rss = sum(_tree_rss(c) for c in _children(me))
            self.peak = max(self.peak, rss)

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start
        self._stop.set()
        self._thread.join()


def run(cmd: list[str], cwd: Path | None = None) -> str:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return done.stdout


# --------------------------------------------------------------------------- the three sides


def generate(folder: Path, n: int, seed: int, screenshots: str = "pool") -> list[Path]:
    from deskscore.collectors.human import load_bundled
    from deskscore.collectors.synthetic import load_profiles, write_run_zip

    tasks = list(load_bundled("verified"))
    profiles = load_profiles()
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        path = folder / f"run{i:03d}.zip"
        if not path.exists():
            write_run_zip(
                path,
                profiles[i % len(profiles)],
                tasks,
                seed=seed + i,
                screenshots=screenshots,
                prefix=f"run{i:03d}",
            )
        out.append(path)
        print(f"\r  generated {i + 1}/{n} archives", end="", flush=True)
    print()
    return out


def peer_side(zips: list[Path], peer: Path, human: Path, scratch: Path) -> dict[str, list[str]]:
    """(a): unzip each archive and run the original score.py on its run; figures by archive."""
    out = {}
    for i, path in enumerate(zips):
        target = scratch / path.stem
        shutil.rmtree(target, ignore_errors=True)  # left by an interrupted run: unzip would ask
        target.mkdir(parents=True)
        if shutil.which("unzip"):
            run(["unzip", "-q", str(path), "-d", str(target)])
        else:
            run([sys.executable, "-m", "zipfile", "-e", str(path), str(target)])
        args = next(target.rglob("args.json")).parent  # the run root, as a user would find it
        stdout = run([sys.executable, str(peer), "--result-path", str(args),
                      "--max-steps-scoring", "50"], cwd=human)  # fmt: skip
        out[path.name] = [line for line in stdout.splitlines() if line.startswith(FIGURES)]
        shutil.rmtree(target)
        print(f"\r  (a) {i + 1}/{len(zips)} archives", end="", flush=True)
    print()
    return out


def deskscore_side(zips: list[Path], warehouse: Path, workers: int) -> None:
    """(b): deskscore ingest + score, as a user runs them."""
    shutil.rmtree(warehouse, ignore_errors=True)
    exe = [sys.executable, "-m", "deskscore.pipelines.cli.main"]
    common = ["--warehouse", str(warehouse), "--workers", str(workers)]
    run([*exe, "ingest", *map(str, zips), *common])
    run([*exe, "score", *common, "--compat", "osworld-human", "--max-steps-scoring", "50",
         "--human-version", "verified"])  # fmt: skip


def _read_needed(path: str) -> int:
    import orjson

    parsed = 0
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            name = info.filename.rsplit("/", 1)[-1]
            if name not in NEEDED or info.filename.startswith("__MACOSX/"):
                continue
            data = zf.read(info)
            if name == "traj.jsonl":
                for line in data.splitlines():
                    if line.strip():
                        try:
                            orjson.loads(line)
                            parsed += 1
                        except orjson.JSONDecodeError:
                            pass
            elif name.endswith(".json"):
                try:
                    orjson.loads(data)
                    parsed += 1
                except orjson.JSONDecodeError:
                    pass
    return parsed


def floor_side(zips: list[Path], workers: int) -> int:
    """(c): only read the needed members and parse their JSON, `workers` processes."""
    with ProcessPoolExecutor(workers) as pool:
        return sum(pool.map(_read_needed, [str(z) for z in zips]))


def ours_figures(warehouse: Path, zips: list[Path]) -> dict[str, list[str]]:
    """run_scores of (b), printed as the original prints them, by archive."""
    from deskscore.sql import connect

    rows = (
        connect(warehouse)
        .sql(
            "SELECT r.source, s.success_rate_human, s.wes_plus_single, s.wes_plus_grouped, "
            "s.wes_minus, s.n_human_tasks FROM run_scores s JOIN runs r USING (run_id)"
        )
        .fetchall()
    )
    out = {}
    for source, sr, single, grouped, minus, n in rows:
        out[Path(source).name] = [
            f"Original OSWorld Result: {sr * 100:.2f}% (on {n} human tasks)",
            f"Single Action WES+: {single * 100:.2f}",
            f"Grouped Action WES+: {grouped * 100:.2f}",
            f"WES-: {minus:.2f}",
        ]
    return out


# --------------------------------------------------------------------------- report


def _mb(n: int) -> str:
    return f"{n / 2**20:,.0f} MB"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[20, 40, 80], help="archives per size")
    p.add_argument("--rounds", type=int, default=3, help="rounds over all sizes (medians)")
    p.add_argument("--peer", help="OSWorld-Human's score.py (side (a) is skipped without it)")
    p.add_argument("--human-path", help="its verified human data folder (default: shared data)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--text-only", action="store_true", help="archives without PNG members")
    p.add_argument("--dir", help="where to write the archives (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the archives and warehouses")
    p.add_argument("--seed", type=int, default=300)
    p.add_argument("--peer-rounds", choices=("first", "all"),
                   help="rounds side (a) runs in (default: all with --text-only, else first)")  # fmt: skip
    args = p.parse_args(argv)
    peer_rounds = args.peer_rounds or ("all" if args.text_only else "first")

    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="deskscore-batch-"))
    human = Path(args.human_path) if args.human_path else SHARED_HUMAN / "verified"
    sizes = sorted(set(args.sizes))
    kind = "text" if args.text_only else "png"
    print(f"writing {max(sizes)} run archives ({kind}) into {base}")
    zips = generate(
        base / f"zips-{kind}", max(sizes), args.seed, "none" if args.text_only else "pool"
    )

    walls: dict[tuple[str, int], list[float]] = {}
    peaks: dict[tuple[str, int], list[int]] = {}
    differ: dict[int, list[str]] = {}
    theirs: dict[str, list[str]] = {}
    for r in range(args.rounds):
        for n in sizes:
            chosen = zips[:n]
            peer_now = args.peer and (r == 0 or peer_rounds == "all")
            sides = (["a"] if peer_now else []) + ["b", "c"]
            for side in sides:
                os.sync()  # what the side before wrote is on disk, not slowing this one down
                with Meter() as m:
                    if side == "a":
                        theirs = peer_side(chosen, Path(args.peer), human, base / "unzipped")
                    elif side == "b":
                        deskscore_side(chosen, base / "warehouse", args.workers)
                    else:
                        floor_side(chosen, args.workers)
                walls.setdefault((side, n), []).append(m.seconds)
                peaks.setdefault((side, n), []).append(m.peak)
                print(f"  round {r + 1}, N = {n}, ({side}): {m.seconds:.1f} s, {_mb(m.peak)}")
                if side == "b" and "a" in sides:  # the figures (b) wrote against (a)'s
                    ours = ours_figures(base / "warehouse", chosen)
                    now = [k for k, v in theirs.items() if ours.get(k) != v]
                    seen = differ.setdefault(n, [])  # a difference in any round counts
                    seen.extend(k for k in now if k not in seen)
                    for name in now[:5]:
                        print(f"  {name}: score.py {theirs[name]} vs deskscore {ours.get(name)}")

    names = {"a": "(a) unzip + score.py", "b": "(b) deskscore ingest + score",
             "c": "(c) floor: read + parse"}  # fmt: skip
    rows = []
    for n in sizes:
        for side in ("a", "b", "c"):
            if (side, n) in walls:
                rows.append([names[side], str(n), f"{statistics.median(walls[side, n]):.1f} s",
                             _mb(int(statistics.median(peaks[side, n]))), str(len(walls[side, n]))])  # fmt: skip
    print()
    print(f"{kind} archives, {args.workers} worker(s), medians over the rounds:")
    print(render(["side", "N", "wall", "peak RSS", "rounds"], rows))
    print()
    summary = []
    for i, n in enumerate(sizes):
        b, c = statistics.median(walls["b", n]), statistics.median(walls["c", n])
        row = [str(n), f"{b / c:.1f}x"]
        row.append(f"{statistics.median(walls['a', n]) / b:.1f}x" if ("a", n) in walls else "-")
        if i:
            prev = sizes[i - 1]
            row.append(f"{b / statistics.median(walls['b', prev]):.2f} ({prev}->{n})")
        else:
            row.append("-")
        row.append(_mb(int(statistics.median(peaks["b", n]))))
        row.append(
            "-" if n not in differ else ("yes" if not differ[n] else f"NO ({len(differ[n])})")
        )
        summary.append(row)
    head = ["N", "(b)/(c) <= 3x", "(a)/(b)", "(b) time growth", "(b) peak RSS <= 350 MB",
            "figures = score.py"]  # fmt: skip
    print(render(head, summary))
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 0 if all(not d for d in differ.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: re-scoring a release of run archives, deskscore against the user's alternative.

    python benchmarks/batch.py --n 50 --peer PATH/TO/original/score.py [--human-path DIR]
        [--workers 2] [--no-double] [--dir DIR] [--keep]

Generates 2N run archives like a published release (one zip per run: 369 OSWorld tasks, steps
drawn like real runs by deskscore's demo agents, every step's 1280x720 PNG screenshot as a
member, `__MACOSX/` entries), then, in the same session, measures at N:

(a) the alternative: for each archive, `unzip` it and run OSWorld-Human's `score.py` on it
    (`--max-steps-scoring 50`), one archive at a time (skipped without `--peer`);
(b) `deskscore ingest` + `deskscore score --compat osworld-human --max-steps-scoring 50` on
    the zips, as fresh processes, into a fresh warehouse;
(c) the floor: only reading the members (b) needs from each zip and parsing their JSON with
    orjson, with as many processes as (b) has workers.

It prints wall time and peak RSS (the whole process tree, sampled) of each, the ratios (a)/(b)
(target >= 5) and (b)/(c) (target <= 3), checks that (a) and (b) print the same four figures
for every run, then repeats (b) and (c) at 2N: time should grow linearly (ratio 2.0-2.3) and
peak RSS stay flat (within 20%). A script, not a test; it removes what it wrote unless --keep.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

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


def generate(folder: Path, n: int, seed: int) -> list[Path]:
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
                screenshots="pool",
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
        target.mkdir(parents=True, exist_ok=True)
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


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).rjust(w) if j else str(c).ljust(w) for j, (c, w) in
                       enumerate(zip(r, widths, strict=True))) for r in [header, *rows]]  # fmt: skip
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _mb(n: int) -> str:
    return f"{n / 2**20:,.0f} MB"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=50, help="archives in the first measurement")
    p.add_argument("--peer", help="OSWorld-Human's score.py (side (a) is skipped without it)")
    p.add_argument("--human-path", help="its verified human data folder (default: shared data)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--no-double", action="store_true", help="skip the 2N measurement")
    p.add_argument("--dir", help="where to write the archives (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the archives and warehouses")
    p.add_argument("--seed", type=int, default=300)
    args = p.parse_args(argv)

    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="deskscore-batch-"))
    human = Path(args.human_path) if args.human_path else SHARED_HUMAN / "verified"
    total = args.n if args.no_double else 2 * args.n
    print(f"writing {total} run archives into {base}")
    zips = generate(base / "zips", total, args.seed)
    size = sum(z.stat().st_size for z in zips[: args.n])
    print(f"N = {args.n} archives, {size / 2**30:.1f} GiB, {args.workers} worker(s)")

    results: dict[str, Meter] = {}
    agree = None
    if args.peer:
        with Meter() as m:
            theirs = peer_side(zips[: args.n], Path(args.peer), human, base / "unzipped")
        results["(a) unzip + score.py"] = m
    with Meter() as m:
        deskscore_side(zips[: args.n], base / "warehouse", args.workers)
    results["(b) deskscore ingest + score"] = m
    with Meter() as m:
        floor_side(zips[: args.n], args.workers)
    results["(c) floor: read + parse"] = m
    if args.peer:
        ours = ours_figures(base / "warehouse", zips[: args.n])
        differ = [name for name, lines in theirs.items() if ours.get(name) != lines]
        agree = not differ
        for name in differ[:5]:
            print(f"  {name}: score.py {theirs[name]} vs deskscore {ours.get(name)}")

    rows = [[k, f"{m.seconds:.1f} s", _mb(m.peak)] for k, m in results.items()]
    print(table(rows, ["side", "wall", "peak RSS"]))
    b, c = results["(b) deskscore ingest + score"], results["(c) floor: read + parse"]
    if args.peer:
        a = results["(a) unzip + score.py"]
        ratio = a.seconds / b.seconds
        print(f"(a)/(b) = {ratio:.1f}x (target >= 5): {'met' if ratio >= 5 else 'NOT met'}")
        print(f"figures identical for all {len(theirs)} runs: {'yes' if agree else 'NO'}")
    floor = b.seconds / c.seconds
    print(f"(b)/(c) = {floor:.1f}x the floor (target <= 3): {'met' if floor <= 3 else 'NOT met'}")

    if not args.no_double:
        with Meter() as m2:
            deskscore_side(zips, base / "warehouse2", args.workers)
        with Meter() as c2:
            floor_side(zips, args.workers)
        rows = [
            ["(b) deskscore", f"{b.seconds:.1f} s", f"{m2.seconds:.1f} s",
             f"{m2.seconds / b.seconds:.2f}", _mb(b.peak), _mb(m2.peak), f"{m2.peak / b.peak:.2f}"],
            ["(c) floor", f"{c.seconds:.1f} s", f"{c2.seconds:.1f} s",
             f"{c2.seconds / c.seconds:.2f}", _mb(c.peak), _mb(c2.peak), f"{c2.peak / c.peak:.2f}"],
        ]  # fmt: skip
        head = ["side", f"wall N={args.n}", f"wall 2N={total}", "ratio", "RSS N", "RSS 2N", "ratio"]
        print(table(rows, head))
        t, r = m2.seconds / b.seconds, m2.peak / b.peak
        print(f"time 2N/N = {t:.2f} (target 2.0-2.3), peak RSS 2N/N = {r:.2f} (target 0.8-1.2)")
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 0 if agree in (None, True) else 1


if __name__ == "__main__":
    sys.exit(main())

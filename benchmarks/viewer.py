"""Benchmark: the viewer (`deskscore view`) on a warehouse of 100 runs, one of them a zip with
screenshots, and its task list on a run of 100,000 episodes.

    python benchmarks/viewer.py [--runs 100] [--rounds 5] [--episodes 100000] [--dir DIR] [--keep]

Writes `--runs` generated runs (text only, as folders) and one more packed as a zip with
1280x720 PNG screenshots (the deliberate demo agent, whose episodes run up to 100 steps),
ingests, hashes and scores them, then starts `deskscore view` over the warehouse and, in the
same session, measures:

(a) time to first paint of the zip run's longest episode page (target: under 1 s with the
    warehouse warm, i.e. after one earlier request), and until the screenshots of the first
    screen are shown, in the system's chromium driven by Playwright (medians of `--rounds`);
(b) the baseline: the same episode's steps read with a raw DuckDB query over the warehouse
    (sql.connect, warm) plus reading the first screen's screenshots from the zip with zipfile;
(c) the viewer's resident memory after serving the leaderboard, the episode page and every
    run's page, against a bare process holding a DuckDB connection over the same warehouse;
(d) one page of the task list of a run with `--episodes` episodes (rows written straight
    into a warehouse of their own), with no filter, on its last page, and with each filter,
    against a raw `count(*)` of the run's episodes.

A script, not a test; it removes what it wrote unless --keep.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from urllib.request import urlopen

from deskscore.pipelines.cli.output import render

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # timed commands keep bytecode, as a user's do

CHROMIUM = "/usr/bin/chromium"
FIRST_SCREEN = 3
"""Screenshots visible on the first screen of an episode page (1500x1000 window)."""


def _mb(n: int) -> str:
    return f"{n / 2**20:.0f} MB"


def _ms(seconds: float) -> str:
    return f"{1000 * seconds:.0f} ms"


def _rss(pid: int) -> int:
    """Resident bytes of a process, now (VmRSS)."""
    with open(f"/proc/{pid}/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return kb * 1024


# --------------------------------------------------------------------------- the warehouse


def build(base: Path, n_runs: int, seed: int) -> tuple[Path, str]:
    """`n_runs` text-only runs and one zipped run with PNG screenshots, ingested, hashed and
    scored; returns the warehouse and the zipped run's source path."""
    from deskscore.collectors.synthetic import load_profiles, task_slice, write_run, write_run_zip
    from deskscore.pipelines.jobs.hash import run_hash
    from deskscore.pipelines.jobs.ingest import run_ingest
    from deskscore.pipelines.jobs.score import run_score
    from deskscore.pipelines.options import HashOptions, IngestOptions, ScoreOptions

    profiles = load_profiles()
    tasks = task_slice(per_domain=2)
    sources = []
    for i in range(n_runs):
        root = base / "runs" / f"run-{i:03d}"
        write_run(root, profiles[i % len(profiles)], tasks, seed=seed + i, screenshots="none")
        sources.append(str(root))
    deliberate = next(p for p in profiles if p.name == "atlas-deliberate")
    zipped = write_run_zip(
        base / "deliberate.zip", deliberate, tasks, seed=seed, screenshots="pool", prefix="d"
    )
    sources.append(str(zipped))
    wh = base / "warehouse"
    run_ingest(IngestOptions(str(wh), sources=tuple(sources)))
    run_hash(HashOptions(str(wh)))
    run_score(ScoreOptions(str(wh), max_steps_scoring=50))
    return wh, str(zipped)


def longest_episode(wh: Path, source: str) -> tuple[str, str, str, int]:
    from deskscore.sql import connect

    con = connect(wh)
    return con.execute(
        "SELECT e.run_id, e.domain, e.task_id, count(*) AS n FROM episodes AS e JOIN runs AS r "
        "USING (run_id) JOIN steps AS s USING (run_id, domain, task_id) WHERE r.source = ? "
        "GROUP BY ALL ORDER BY n DESC, e.domain, e.task_id LIMIT 1",
        [source],
    ).fetchone()


# --------------------------------------------------------------------------- the viewer


class Viewer:
    """`deskscore view --no-browser` in a process of its own."""

    def __init__(self, wh: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "deskscore.pipelines.cli.main", "view", "--warehouse",
             str(wh), "--no-browser"],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if not found:
            self.proc.kill()
            raise SystemExit(f"the viewer printed no URL: {line!r}")
        self.url = found.group(0)

    def get(self, path: str) -> bytes:
        with urlopen(self.url + path.lstrip("/"), timeout=120) as r:
            return r.read()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def first_paint(url: str, rounds: int) -> tuple[list[float], list[float]]:
    """(first contentful paint, first screen's screenshots shown) of `url`, in seconds, per
    round, each in a fresh browser context (no cache) after one warm-up request."""
    from playwright.sync_api import sync_playwright

    paints, screens = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for r in range(rounds + 1):
            context = browser.new_context(viewport={"width": 1500, "height": 1000})
            page = context.new_page()
            start = time.perf_counter()
            page.goto(url, wait_until="commit")
            page.wait_for_function(
                "() => performance.getEntriesByName('first-contentful-paint').length > 0"
            )
            fcp = page.evaluate(
                "() => performance.getEntriesByName('first-contentful-paint')[0].startTime"
            )
            page.wait_for_function(
                "() => Array.from(document.images).filter(i => { const b ="
                " i.getBoundingClientRect(); return b.bottom > 0 && b.top < innerHeight; })"
                ".every(i => i.complete && i.naturalWidth > 0)"
            )
            screen = time.perf_counter() - start
            if r:  # the first round warms the warehouse and the viewer
                paints.append(fcp / 1000)
                screens.append(screen)
            page.wait_for_load_state("networkidle")  # no request of this round left queued
            context.close()
        browser.close()
    return paints, screens


def baseline(wh: Path, source: str, key: tuple[str, str, str], rounds: int) -> list[float]:
    """The episode's steps by a raw DuckDB query on a warm connection, and its first screen's
    screenshots read from the zip, in seconds per round."""
    from deskscore.sql import connect

    con = connect(wh)
    sql = "SELECT * FROM steps WHERE run_id = ? AND domain = ? AND task_id = ? ORDER BY step_idx"
    paths_sql = (
        "SELECT screenshot_path FROM screenshot_refs WHERE run_id = ? AND domain = ? "
        "AND task_id = ? ORDER BY step_idx LIMIT ?"
    )
    con.execute(sql, list(key)).fetchall()  # warm
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        con.execute(sql, list(key)).fetchall()
        paths = [p for (p,) in con.execute(paths_sql, [*key, FIRST_SCREEN]).fetchall()]
        with zipfile.ZipFile(source) as z:
            for p in paths:
                z.read(p)
        out.append(time.perf_counter() - start)
    return out


def bare_rss(wh: Path) -> int:
    """Resident bytes of a process that only holds a DuckDB connection over the warehouse and
    has run the leaderboard query."""
    code = (
        "import sys; from deskscore.sql import connect; "
        "con = connect(sys.argv[1]); con.sql('SELECT * FROM leaderboard').fetchall(); "
        "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmRSS:')))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(wh)], capture_output=True, text=True)
    return int(out.stdout.strip()) * 1024


# --------------------------------------------------------------------------- 100,000 episodes


def big_run(base: Path, n: int) -> tuple[Path, str]:
    """A warehouse with one run of `n` episodes of 10 steps, written straight as rows (every
    tenth looping, every seventh failed), for the task list."""
    from deskscore.collectors.warehouse import Warehouse

    wh = base / "big"
    store = Warehouse(wh)
    run_id, part = "big0000000000000", {"benchmark": "osworld", "run_id": "big0000000000000"}
    store.write("runs", [{"run_id": run_id, "benchmark": "osworld", "source": "generated",
                          "run_path": "", "format": "osworld", "agent": "big-agent",
                          "n_task_folders": n}], part)  # fmt: skip
    domains = ("chrome", "gimp", "libreoffice_calc", "os", "vlc", "vs_code", "thunderbird")
    eps, steps, spans = [], [], []
    for i in range(n):
        d, t = domains[i % len(domains)], f"task-{i:06d}"
        eps.append({"run_id": run_id, "benchmark": "osworld", "domain": d, "task_id": t,
                    "source_task_id": t, "task_path": f"{d}/{t}", "n_lines": 10, "n_steps": 10,
                    "n_turns": 10, "n_error_lines": 0, "n_quarantined": 0,
                    "result_status": "ok", "ended_by": "done", "score": 0.0 if i % 7 else 1.0,
                    "instruction": f"Do task number {i} in {d}"})  # fmt: skip
        for k in range(10):
            steps.append({"run_id": run_id, "benchmark": "osworld", "domain": d, "task_id": t,
                          "step_idx": k, "line_no": k + 1, "step_num": k + 1,
                          "action_format": "pyautogui", "action_kind": "click",
                          "action_text": f"pyautogui.click({k * 10}, {i % 1000})"})  # fmt: skip
        if i % 10 == 0:
            spans.append({"run_id": run_id, "benchmark": "osworld", "domain": d, "task_id": t,
                          "first_step": 2, "last_step": 5, "length": 4, "looping_steps": 3,
                          "outcome": "recovered", "detector_version": "bench"})  # fmt: skip
    store.write("episodes", eps, part)
    store.write("steps", steps, part)
    store.write("loop_spans", spans, part)
    return wh, run_id


def task_list_times(wh: Path, run_id: str, n: int, rounds: int) -> list[list[str]]:
    from deskscore.sql import connect
    from deskscore.viewer.store import PAGE_SIZE, Store, TaskFilter

    store = Store(wh)
    last = (n - 1) // PAGE_SIZE
    cases = {
        "no filter, page 1": TaskFilter(),
        f"no filter, page {last + 1}": TaskFilter(page=last),
        "domain": TaskFilter(domain="gimp"),
        "outcome": TaskFilter(outcome="success"),
        "looping": TaskFilter(looping=True),
        "steps 5-20": TaskFilter(min_steps=5, max_steps=20),
        "text (instruction or action)": TaskFilter(text="click(90, 999)"),
        "looping + text, page 3": TaskFilter(looping=True, text="number 4", page=2),
    }
    con = connect(wh)
    raw = "SELECT count(*) FROM episodes WHERE run_id = ?"
    con.execute(raw, [run_id]).fetchall()

    def timed(call: Any) -> float:
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    floor = timed(lambda: con.execute(raw, [run_id]).fetchall())
    rows = [["raw count(*) of the run's episodes", "", _ms(floor)]]
    for name, f in cases.items():
        store.tasks(run_id, f)  # warm
        got = store.tasks(run_id, f)
        rows.append([name, str(got.total), _ms(timed(lambda f=f: store.tasks(run_id, f)))])
    store.close()
    return rows


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=100, help="runs in the warehouse (plus the zip)")
    p.add_argument("--rounds", type=int, default=5, help="measurements per figure (medians)")
    p.add_argument("--episodes", type=int, default=100_000, help="episodes of the big run")
    p.add_argument("--dir", help="where to write (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep what it wrote")
    p.add_argument("--seed", type=int, default=500)
    args = p.parse_args(argv)
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"no chromium at {CHROMIUM}")
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="deskscore-viewer-"))

    start = time.perf_counter()
    wh, zipped = build(base, args.runs, args.seed)
    run_id, domain, task, n_steps = longest_episode(wh, zipped)
    print(f"warehouse of {args.runs} + 1 runs in {time.perf_counter() - start:.0f} s; "
          f"episode {domain}/{task}: {n_steps} steps, screenshots in {Path(zipped).name}")  # fmt: skip

    viewer = Viewer(wh)
    try:
        path = "episode?" + urlencode({"run": run_id, "domain": domain, "task": task})
        paints, screens = first_paint(viewer.url + path, args.rounds)
        base_times = baseline(wh, zipped, (run_id, domain, task), args.rounds)
        viewer.get("/")
        after_episode = _rss(viewer.proc.pid)
        run_ids = re.findall(rb'href="/run/([0-9a-f]+)"', viewer.get("/"))
        for rid in dict.fromkeys(run_ids):
            viewer.get(f"/run/{rid.decode()}")
        after_runs = _rss(viewer.proc.pid)
    finally:
        viewer.close()
    bare = bare_rss(wh)

    fp, sc, bl = (statistics.median(x) for x in (paints, screens, base_times))
    print()
    print(f"episode page of {n_steps} steps from a zip, warm, medians of {args.rounds}:")
    print(render(
        ["measure", "time", "target"],
        [["(a) viewer: first contentful paint", _ms(fp), "< 1000 ms"],
         [f"(a) viewer: first {FIRST_SCREEN} screenshots shown", _ms(sc), ""],
         [f"(b) baseline: DuckDB query + {FIRST_SCREEN} zip members", _ms(bl), ""],
         ["(a) first paint / (b)", f"{fp / bl:.1f}x", ""]],
    ))  # fmt: skip
    print()
    print(f"memory with {args.runs + 1} runs:")
    print(render(
        ["process", "RSS"],
        [["(c) viewer after the leaderboard and the episode page", _mb(after_episode)],
         [f"(c) viewer after every run's page too ({len(set(run_ids))} runs)", _mb(after_runs)],
         ["baseline: a DuckDB connection over the warehouse", _mb(bare)]],
    ))  # fmt: skip
    if args.episodes:
        start = time.perf_counter()
        big, big_id = big_run(base, args.episodes)
        print()
        print(f"(d) task list, one page of 50, run of {args.episodes} episodes "
              f"(written in {time.perf_counter() - start:.0f} s), medians of {args.rounds}:")  # fmt: skip
        print(render(["filter", "matching", "time"], task_list_times(big, big_id, args.episodes,
                                                                     args.rounds)))  # fmt: skip
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())

"""Kill `deskscore ingest`, `hash` and `score` for real at random points, run them again, and
get the same tables, row for row, as a warehouse that was never interrupted."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deskscore.collectors.human import load_bundled
from deskscore.collectors.synthetic import load_profiles, write_run, write_zip
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.check import check_warehouse
from deskscore.schemas import TABLES

pytestmark = pytest.mark.slow

KILLS_PER_JOB = 2


def _deskscore(*args: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from deskscore.pipelines.cli.main import main; sys.exit(main())", *args]  # fmt: skip


def _jobs(archive: dict[str, Path], warehouse: Path) -> list[tuple[str, list[str]]]:
    wh = ["--warehouse", str(warehouse)]
    return [
        ("ingest", _deskscore("ingest", str(archive["results"]), str(archive["zip"]), *wh)),
        ("hash", _deskscore("hash", *wh)),
        ("score", _deskscore("score", *wh, "--max-steps-scoring", "50")),
    ]


def _run(cmd: list[str]) -> float:
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return time.monotonic() - started


def _kill_at(cmd: list[str], delay: float) -> bool:
    """Start `cmd`, SIGKILL it after `delay` seconds; True if it was still running then."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        return True


def _content(root: Path) -> dict[str, list[tuple]]:
    wh = Warehouse(root)
    out = {}
    for name in TABLES:
        data = wh.read(name)
        rows = [tuple(repr(v) for v in row.values()) for row in data.to_pylist()]
        out[name] = sorted(rows)
    return out


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("crash")
    profiles = load_profiles()
    seen: set[str] = set()
    tasks = [
        r for r in load_bundled("verified") if not (r["domain"] in seen or seen.add(r["domain"]))
    ]
    results = root / "results"
    for i in range(2):
        write_run(results, profiles[i], tasks, seed=i, screenshots="tiny")
    zipped = write_run(root / "to_zip", profiles[2], tasks, seed=5, screenshots="tiny")
    return {"results": results, "zip": write_zip(zipped, root / "run3.zip")}


def test_jobs_killed_at_random_points_resume_to_the_same_tables(
    archive: dict[str, Path], tmp_path: Path
) -> None:
    clean = tmp_path / "clean"
    durations = {name: _run(cmd) for name, cmd in _jobs(archive, clean)}
    expected = _content(clean)
    assert expected["steps"] and expected["screenshot_refs"] and expected["episode_scores"]

    rng = random.Random(20261130)
    crashed = tmp_path / "crashed"
    killed = {}
    for name, cmd in _jobs(archive, crashed):
        killed[name] = 0
        for attempt in range(KILLS_PER_JOB):
            # Somewhere between interpreter start-up and the job's last writes. A job that
            # finished skips its work the next time, so later attempts redo it (--force) to
            # have something to interrupt.
            again = [*cmd, "--force"] if attempt and name != "hash" else cmd
            killed[name] += _kill_at(again, rng.uniform(0.3, 0.95) * durations[name])
        _run(cmd)  # resume: run it again to completion, as a user would (no --force)
    print(f"kills that landed while the job ran: {killed}")
    assert sum(killed.values()) >= len(killed)  # most kills landed while a job was running

    assert _content(crashed) == expected
    leftovers = [p for p in crashed.rglob(".*.tmp")]
    for name in TABLES:
        assert not any(p.name.startswith(".") for p in Warehouse(crashed).files(name))
    assert check_warehouse(crashed).ok, (leftovers, check_warehouse(crashed).problems)

"""Writers killed at every step of a write, readers reading while writers write.

A job runs in a subprocess whose `os.replace` and file deletions are counted; at the N-th one
the process kills itself with SIGKILL, exactly there. Whatever N, the warehouse must show the
previous version (never a run twice, never half a job), `check` must pass, and a plain re-run
must give the tables of a warehouse that was never interrupted.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deskscore.collectors.synthetic import load_profiles, task_slice, write_run, write_zip
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.check import check_warehouse
from deskscore.schemas import TABLES
from deskscore.sql import connect

pytestmark = pytest.mark.slow

KILLER = r"""
import os, sys, signal, pathlib
limit = int(os.environ["KILL_AT"])
count = [0]
def step():
    count[0] += 1
    if count[0] == limit:
        os.kill(os.getpid(), signal.SIGKILL)
real_replace, real_unlink, real_path_unlink = os.replace, os.unlink, pathlib.Path.unlink
def replace(*a, **k):
    step(); return real_replace(*a, **k)
def unlink(*a, **k):
    step(); return real_unlink(*a, **k)
def path_unlink(self, *a, **k):
    step(); return real_path_unlink(self, *a, **k)
os.replace, os.unlink, pathlib.Path.unlink = replace, unlink, path_unlink
from deskscore.pipelines.cli.main import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(f"STEPS {count[0]}", file=sys.stderr)
sys.exit(code)
"""


def _deskscore(args: list[str], kill_at: int = 0) -> subprocess.CompletedProcess:
    env = {**__import__("os").environ, "KILL_AT": str(kill_at)}
    return subprocess.run(
        [sys.executable, "-c", KILLER, *args], capture_output=True, text=True, env=env, timeout=300
    )


def _steps(done: subprocess.CompletedProcess) -> int:
    return int(done.stderr.rsplit("STEPS ", 1)[1].split()[0])


def _content(root: Path) -> dict[str, list[str]]:
    wh = Warehouse(root)
    return {
        name: sorted(json.dumps(r, sort_keys=True, default=str) for r in wh.read(name).to_pylist())
        for name in TABLES
        if name not in ("sources",)  # holds stamps, which differ between copies
    }


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Nine small runs (enough to be packed): five folders under one result dir, four zips."""
    root = tmp_path_factory.mktemp("kills")
    profiles = load_profiles()
    tasks = task_slice(per_domain=1)[:4]
    results = root / "results"
    sources = [str(results)]
    for i in range(5):
        write_run(results, profiles[i % len(profiles)], tasks, seed=i, screenshots="none")
    for i in range(4):
        run = write_run(root / f"z{i}", profiles[i], tasks, seed=10 + i, screenshots="none")
        sources.append(str(write_zip(run, root / f"run{i}.zip")))
    return sources


def _ingest(sources: list[str], wh: Path, *extra: str) -> list[str]:
    return ["ingest", *sources, "--warehouse", str(wh), "--engine", "direct", *extra]


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Eight small zips: enough sources for the ingest to write its runs straight into packs
    (`MIN_SMALL_FILES` per process)."""
    root = tmp_path_factory.mktemp("kills-many")
    profiles = load_profiles()
    tasks = task_slice(per_domain=1)[:3]
    sources = []
    for i in range(8):
        run = write_run(root / f"z{i}", profiles[i % len(profiles)], tasks, seed=20 + i,
                        screenshots="none")  # fmt: skip
        sources.append(str(write_zip(run, root / f"run{i}.zip")))
    return sources


def _kill_everywhere(sources: list[str], tmp_path: Path, points: int, least: int) -> None:
    """Every kill point of a first ingest (from nothing) and of a forced one (over a full
    warehouse), `points` of each (all, when there are fewer) spread over all steps, each
    followed by a plain re-run; each job has more than `least` steps."""
    clean = tmp_path / "clean"
    first = _deskscore(_ingest(sources, clean))
    assert first.returncode == 0, first.stderr[-2000:]
    assert check_warehouse(clean).ok
    expected = _content(clean)
    forced = _deskscore(_ingest(sources, clean, "--force"))
    assert forced.returncode == 0, forced.stderr[-2000:]
    steps_first, steps_forced = _steps(first), _steps(forced)
    assert steps_first > least and steps_forced > least
    for job, total in (("first", steps_first), ("forced", steps_forced)):
        spots = sorted(set(range(1, total + 1, max(1, total // points))) | {1, total})
        for n in spots:
            wh = tmp_path / f"{job}-{n}"
            if job == "forced":
                shutil.copytree(clean, wh)
            args = _ingest(sources, wh, "--force") if job == "forced" else _ingest(sources, wh)
            killed = _deskscore(args, kill_at=n)
            assert killed.returncode != 0, f"{job} step {n} of {total}: the kill did not land"
            runs = Warehouse(wh).read("runs", columns=["run_id"]).column(0).to_pylist()
            assert len(runs) == len(set(runs)), f"{job} step {n}: a run seen twice"
            assert check_warehouse(wh, sources=False).ok, (job, n)
            rerun = _deskscore(_ingest(sources, wh))
            assert rerun.returncode == 0, rerun.stderr[-2000:]
            assert _content(wh) == expected, f"{job} killed at step {n} of {total}"
            assert check_warehouse(wh).ok, (job, n)
            shutil.rmtree(wh)


def test_an_ingest_killed_at_any_write_step_leaves_one_version_and_a_rerun_completes_it(
    archive: list[str], tmp_path: Path
) -> None:
    """Runs written to their own files, then packed by compaction: at least 20 kill points
    of each job."""
    _kill_everywhere(archive, tmp_path, 24, least=20)
    slots = Warehouse(tmp_path / "clean").slots("steps")
    assert any(e.groups is not None for _, e in slots)  # packs were made: compaction ran


def test_an_ingest_writing_runs_straight_into_packs_killed_anywhere_leaves_one_version(
    many: list[str], tmp_path: Path
) -> None:
    """Runs written into packs as they are read (enough sources), including a forced ingest
    whose packs replace packs: fewer kill points, the same checks."""
    _kill_everywhere(many, tmp_path, 10, least=10)
    wh = Warehouse(tmp_path / "clean")
    slots = wh.slots("steps")
    assert len(slots) == 8 and all(e.groups is not None for _, e in slots)
    assert len(wh.files("steps")) == 1  # one pack, written once: nothing left to fold


def test_readers_see_one_whole_version_while_a_writer_rewrites_everything(
    archive: list[str], tmp_path: Path
) -> None:
    wh = tmp_path / "wh"
    assert _deskscore(_ingest(archive, wh)).returncode == 0
    [(steps, runs)] = (
        connect(wh).sql("SELECT (SELECT count(*) FROM steps), count(*) FROM runs").fetchall()
    )
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLER, *_ingest(archive, wh, "--force")],
        env={**__import__("os").environ, "KILL_AT": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    seen = []
    try:
        while writer.poll() is None or len(seen) < 20:
            seen.append(
                connect(wh)
                .sql("SELECT (SELECT count(*) FROM steps), count(*) FROM runs")
                .fetchall()[0]
            )
            if writer.poll() is not None and len(seen) >= 20:
                break
            time.sleep(0.02)
    finally:
        writer.wait(timeout=300)
    assert writer.returncode == 0
    assert set(seen) == {(steps, runs)}, f"{len(seen)} reads: {sorted(set(seen))}"

"""The same jobs on every Beam runner reachable here give the same warehouse.

A generated archive (runs in a folder and in zips, tiny screenshots, a cut trajectory line,
broken screenshots, a stray file, a zip member that climbs out of the archive) is ingested,
hashed and scored by `deskscore` on the default runner (Beam's FnApiRunner, worker
processes), on PortableRunner (an embedded job server, loopback workers: the path Flink,
Spark and Dataflow take) and on a Dask cluster this module starts (a scheduler and two
worker processes on 127.0.0.1). After each job every table and view that holds rows is
compared with the default runner's, row by row (`deskscore.sql.compare`), and what the
commands print must be the same. A Dask worker killed mid-ingest must leave a warehouse that
`check` does not pass with a partial result recorded as done, and that a plain re-run
completes.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from deskscore.collectors.synthetic.hostile import write_mixed_archive
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.infra.dask_cluster import DaskCluster, local_dask_cluster
from deskscore.sql.compare import RelationDiff, compare_warehouses

pytestmark = pytest.mark.slow

JOBS = ("ingest", "hash", "score")
PORTABLE = ("--runner=PortableRunner", "--job_endpoint=embed", "--environment_type=LOOPBACK")


def deskscore(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """`deskscore ARGS` as a fresh process of this interpreter."""
    command = [sys.executable, "-m", "deskscore.pipelines.cli.main", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def _printed(done: subprocess.CompletedProcess[str], warehouse: Path) -> str:
    """What a command printed, without what differs from one warehouse or run to another
    (the warehouse's path, seconds taken)."""
    text = done.stdout.replace(str(warehouse), "WAREHOUSE")
    return re.sub(r" in \d+(\.\d+)? s\b", " in N s", text)


@pytest.fixture(scope="session")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    """A scheduler on 127.0.0.1 and two single-thread worker processes of this interpreter
    (so they import this deskscore), stopped by process id at the end of the session."""
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    folder = tmp_path_factory.mktemp("dask-cluster")
    with local_dask_cluster(folder, workers=2, threads=1) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return [str(s) for s in write_mixed_archive(tmp_path_factory.mktemp("mixed"), zips=2)]


@dataclass
class Built:
    """The warehouse one runner wrote: each command's outcome, and a copy of the warehouse
    taken after each job."""

    warehouse: Path
    done: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)
    after: dict[str, Path] = field(default_factory=dict)
    tasks_run: dict[str, int] = field(default_factory=dict)
    """On the Dask cluster: tasks each worker ran during the ingest, by worker address."""

    def printed(self, step: str) -> str:
        return _printed(self.done[step], self.warehouse)


@pytest.fixture(scope="module")
def built(
    request: pytest.FixtureRequest, archive: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], Built]:
    """The warehouse of `runner` ('default', 'portable' or 'dask'), built on first use.

    A hash that fails on a runner is recorded, and the job is then run on the default runner
    so the score job can still be compared on that runner."""
    cache: dict[str, Built] = {}

    def runner_args(runner: str) -> tuple[str, ...]:
        if runner == "portable":
            return PORTABLE
        if runner == "dask":
            cluster = request.getfixturevalue("dask_cluster")
            return ("--runner=DaskRunner", f"--dask_client_address={cluster.address}")
        return ()

    def build(runner: str) -> Built:
        if runner in cache:
            return cache[runner]
        root = tmp_path_factory.mktemp(runner)
        out = Built(root / "warehouse")
        beam = ("--warehouse", str(out.warehouse), "--engine", "beam", *runner_args(runner))
        commands = {
            "ingest": ("ingest", *archive),
            "hash": ("hash",),
            "score": ("score", "--max-steps-scoring", "50"),
        }
        cluster = request.getfixturevalue("dask_cluster") if runner == "dask" else None
        for job in JOBS:
            before = cluster.executed() if cluster and job == "ingest" else {}
            out.done[job] = deskscore(*commands[job], *beam)
            if cluster and job == "ingest":
                after = cluster.executed()
                out.tasks_run = {w: n - before.get(w, 0) for w, n in after.items()}
            if out.done[job].returncode and (runner == "default" or job != "hash"):
                raise AssertionError(f"{job} on {runner}: {out.done[job].stderr[-3000:]}")
            if out.done[job].returncode:  # hash: see the fixture's doc
                fallback = deskscore("hash", "--warehouse", str(out.warehouse), "--engine", "beam")
                assert fallback.returncode == 0, fallback.stderr[-3000:]
            out.after[job] = root / f"after-{job}"
            shutil.copytree(out.warehouse, out.after[job])
        out.done["leaderboard"] = deskscore("leaderboard", "--warehouse", str(out.warehouse))
        assert out.done["leaderboard"].returncode == 0, out.done["leaderboard"].stderr
        cache[runner] = out
        return out

    return build


def _differing(diffs: list[RelationDiff]) -> list[RelationDiff]:
    return [d for d in diffs if not d.same]


def _show(runner: str, job: str, diffs: list[RelationDiff]) -> None:
    """Print each relation's rows and differing rows (shown with `pytest -rP`)."""
    print(f"{job} on {runner} against the default runner: relation, rows, differing rows")
    for d in diffs:
        print(f"  {d.name:28} {d.left_rows:6} {d.right_rows:6} {d.only_left + d.only_right:4}")


def test_the_archive_carries_every_kind_of_damage(built: Callable[[str], Built]) -> None:
    """The comparison means something only if the hostile members reached the tables."""
    wh = Warehouse(built("default").warehouse)
    reasons = [r["reason"] for r in wh.read("quarantine", columns=["reason"]).to_pylist()]
    assert reasons.count("invalid_json") == 2 and "unsafe_member_path" in reasons
    statuses = {r["status"] for r in wh.read("screenshots", columns=["status"]).to_pylist()}
    assert {"ok", "corrupt", "truncated"} <= statuses
    assert wh.read("loop_spans").num_rows and wh.read("episode_scores").num_rows
    zipped = [r["source"].endswith(".zip") for r in wh.read("runs").to_pylist()]
    assert zipped.count(True) >= 2 and zipped.count(False) >= 2  # zips and a folder of runs


@pytest.mark.parametrize("runner", ["portable", "dask"])
def test_ingest_writes_the_default_runners_tables_and_reconciliation(
    runner: str, built: Callable[[str], Built]
) -> None:
    reference, other = built("default"), built(runner)
    diffs = compare_warehouses(reference.after["ingest"], other.after["ingest"])
    _show(runner, "ingest", diffs)
    assert {"steps", "episodes", "quarantine", "runs"} <= {d.name for d in diffs}
    assert _differing(diffs) == []
    assert other.printed("ingest") == reference.printed("ingest")


def test_the_dask_runner_spreads_the_runs_over_every_worker(built: Callable[[str], Built]) -> None:
    """One partition per run (deskscore's default for --dask_npartitions): both workers work."""
    tasks_run = built("dask").tasks_run
    assert len(tasks_run) == 2 and all(n > 0 for n in tasks_run.values()), tasks_run


@pytest.mark.parametrize("runner", ["portable", "dask"])
def test_hash_writes_the_default_runners_tables(runner: str, built: Callable[[str], Built]) -> None:
    reference, other = built("default"), built(runner)
    assert other.done["hash"].returncode == 0, other.done["hash"].stderr
    diffs = compare_warehouses(reference.after["hash"], other.after["hash"])
    _show(runner, "hash", diffs)
    assert {"screenshots", "screenshot_refs"} <= {d.name for d in diffs}
    assert _differing(diffs) == []
    assert other.printed("hash") == reference.printed("hash")


@pytest.mark.parametrize("runner", ["portable", "dask"])
def test_score_writes_the_default_runners_tables_figures_and_leaderboard(
    runner: str, built: Callable[[str], Built]
) -> None:
    reference, other = built("default"), built(runner)
    diffs = compare_warehouses(reference.after["score"], other.after["score"])
    _show(runner, "score", diffs)
    assert {"episode_scores", "run_scores", "verdicts", "loop_spans", "leaderboard"} <= {
        d.name for d in diffs
    }
    assert _differing(diffs) == []
    assert other.printed("score") == reference.printed("score")
    assert other.printed("leaderboard") == reference.printed("leaderboard")


# ----------------------------------------------------------------- a worker killed mid-job


def _journals(warehouse: Path) -> list[Path]:
    """The journal files of the warehouse's running jobs, one per process that wrote."""
    from deskscore.collectors.warehouse.store import JOBS_DIR
    from deskscore.schemas.manifest import manifest_dir

    return sorted((manifest_dir(warehouse) / JOBS_DIR).glob("*/*.jsonl"))


def _kill_a_worker_once_it_writes(
    job: subprocess.Popen[str], warehouse: Path, workers: dict[str, int], timeout: float = 300
) -> int:
    """SIGKILL the first worker process that journals a write of `job`'s transaction (so it
    is in the middle of a run); returns its process id. Fails if the job ends first."""
    pids = set(workers.values())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert job.poll() is None, "the ingest finished before a worker wrote: nothing killed"
        for path in _journals(warehouse):
            pid = int(path.name.split("-", 1)[0])
            if pid in pids:
                os.kill(pid, signal.SIGKILL)
                return pid
        time.sleep(0.02)
    raise AssertionError(f"no worker wrote within {timeout} s")


def _set_allowed_failures(address: str, allowed: int | None) -> int:
    """Set how often the scheduler runs a task again after its worker died (None: dask's
    default); returns the value it had."""
    import dask
    from distributed import Client

    wanted = (
        dask.config.get("distributed.scheduler.allowed-failures") if allowed is None else allowed
    )

    def swap(dask_scheduler: Any) -> int:
        before = dask_scheduler.allowed_failures
        dask_scheduler.allowed_failures = wanted
        return int(before)

    with Client(address, timeout=30, set_as_default=False) as client:
        return int(client.run_on_scheduler(swap))


@pytest.mark.parametrize("retries", [None, 0], ids=["task-run-again", "job-fails"])
def test_a_dask_worker_killed_mid_ingest_leaves_nothing_partial_marked_done(
    retries: int | None,
    dask_cluster: DaskCluster,
    archive: list[str],
    built: Callable[[str], Built],
    tmp_path: Path,
) -> None:
    """With dask's default, the dead worker's task runs again elsewhere and the job succeeds;
    with no retry allowed, the job fails. Either way `check` must not pass on a partial
    result recorded as done, and a plain re-run leaves the clean run's tables."""
    clean = built("default").after["ingest"]
    warehouse = tmp_path / "warehouse"
    address = dask_cluster.address
    before = _set_allowed_failures(address, retries)
    try:
        workers = dask_cluster.worker_pids()
        job = subprocess.Popen(
            [sys.executable, "-m", "deskscore.pipelines.cli.main", "ingest", *archive,
             "--warehouse", str(warehouse), "--runner=DaskRunner",
             f"--dask_client_address={address}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            _kill_a_worker_once_it_writes(job, warehouse, workers)
            _, stderr = job.communicate(timeout=600)
        finally:
            if job.poll() is None:
                job.kill()
                job.wait()
    finally:
        _set_allowed_failures(address, before)
        dask_cluster.wait_for_workers()
    print(f"ingest with a worker killed ({retries=}): exit {job.returncode}")
    if retries == 0:
        assert job.returncode != 0, "the job succeeded though a task's worker died"
        assert "KilledWorker" in stderr or "died" in stderr, stderr[-2000:]

    check = deskscore("check", "--warehouse", str(warehouse))
    recorded = {r["source"] for r in Warehouse(warehouse).read("sources").to_pylist()}
    complete = _differing(compare_warehouses(clean, warehouse)) == []
    print(f"check after the kill: exit {check.returncode}; sources recorded: {len(recorded)}")
    if check.returncode == 0 and recorded:
        assert complete, "check passed on a partial ingest recorded as done"
    if job.returncode == 0:
        assert complete and check.returncode == 0, check.stdout + check.stderr
    else:
        assert not recorded, f"a failed ingest recorded sources as done: {recorded}"

    again = deskscore("ingest", *archive, "--warehouse", str(warehouse))
    assert again.returncode == 0, again.stderr[-3000:]
    check = deskscore("check", "--warehouse", str(warehouse))
    assert check.returncode == 0, check.stdout + check.stderr
    assert _differing(compare_warehouses(clean, warehouse)) == []

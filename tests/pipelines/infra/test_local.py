"""The local engine: this process and spawned workers share a job's elements."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deskscore.pipelines.infra.local import LocalPool, local_pool
from deskscore.pipelines.infra.runner import LOCAL_FROM, choose_engine, run_stages

sys.path.insert(0, str(Path(__file__).parent))  # spawned workers get this path: they unpickle
from local_stages import Record, worker_env


def _taken(folder: Path) -> dict[int, int]:
    """element -> the pid of the process that took it."""
    return {int(p.name.split(".")[0]): int(p.name.split(".")[1]) for p in folder.iterdir()}


def test_every_element_is_taken_exactly_once_and_outputs_keep_element_order(
    tmp_path: Path,
) -> None:
    elements = list(range(12))
    with local_pool(2) as pool:
        out = pool.run_stages([Record(str(tmp_path))], elements)
    assert out == [e * 2 for e in elements]
    taken = _taken(tmp_path)
    assert sorted(taken) == elements
    assert len(list(tmp_path.iterdir())) == len(elements)  # none done twice
    assert len(set(taken.values())) == 2  # this process and one worker both worked
    assert os.getpid() in taken.values()


def test_workers_keep_taking_elements_while_this_process_is_busy_with_a_long_one(
    tmp_path: Path,
) -> None:
    # This process's first element takes 3 s, every other element none: the worker (started
    # by a first map) should have taken all but that one by then. Refilled only when this
    # process was free, the worker got its two queued elements and then waited out those 3 s.
    warm, folder = tmp_path / "warm", tmp_path / "timed"
    warm.mkdir()
    folder.mkdir()
    elements = list(range(20))
    with local_pool(2) as pool:
        pool.run_stages([Record(str(warm))], [0, 1, 2])
        out = pool.run_stages([Record(str(folder), slow_in=os.getpid(), slow_s=3.0)], elements)
    assert out == [e * 2 for e in elements]
    taken = _taken(folder)
    assert sorted(taken) == elements
    assert sum(pid == os.getpid() for pid in taken.values()) <= 2, taken


def test_a_worker_failure_while_this_process_is_busy_hands_out_nothing_more(
    tmp_path: Path,
) -> None:
    # The worker fails on element 5 while this process sleeps on its first element: that
    # failure is raised once this process is free, and no element after it was started.
    stage = Record(str(tmp_path), fail_on=5, slow_in=os.getpid(), slow_s=2.0)
    with local_pool(2) as pool, pytest.raises(ValueError, match="element 5 is bad"):
        pool.run_stages([stage], list(range(20)))
    assert sorted(_taken(tmp_path)) == [0, 1, 2, 3, 4]


def _gone(pid: int) -> bool:
    """The process has exited (a zombie nobody reaps counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_a_worker_exits_when_the_process_that_started_it_is_killed(tmp_path: Path) -> None:
    # A job killed mid-run (SIGKILL: no clean-up runs in it) used to leave its worker waiting
    # on the executor's queue for ever; the worker now notices and exits within a second.
    script = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from local_stages import Linger\n"
        "from deskscore.pipelines.infra.local import local_pool\n"
        "with local_pool(2) as pool:\n"
        f"    pool.run_stages([Linger({str(tmp_path)!r})], [0, 1])\n"
    )
    job = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        pids = set(_taken(tmp_path).values())
        assert job.pid in pids and len(pids) == 2, pids
        (worker,) = pids - {job.pid}
    finally:
        job.kill()
        job.wait()
    deadline = time.monotonic() + 10
    while not _gone(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    if not _gone(worker):
        os.kill(worker, signal.SIGKILL)
        pytest.fail(f"worker {worker} outlived the killed job by 10 s")


def test_a_failure_in_any_process_raises_with_its_message(tmp_path: Path) -> None:
    with local_pool(2) as pool, pytest.raises(ValueError, match="element 7 is bad"):
        pool.run_stages([Record(str(tmp_path), fail_on=7)], list(range(10)))


def test_one_worker_runs_everything_in_this_process(tmp_path: Path) -> None:
    out = LocalPool(1).run_stages([Record(str(tmp_path))], [1, 2, 3])
    assert out == [2, 4, 6]
    assert set(_taken(tmp_path).values()) == {os.getpid()}


def test_a_pool_serves_several_maps_of_different_stages(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    with local_pool(2) as pool:
        assert pool.run_stages([Record(str(first))], list(range(6))) == [0, 2, 4, 6, 8, 10]
        assert pool.run_stages([Record(str(second))], list(range(4))) == [0, 2, 4, 6]
    assert sorted(_taken(first)) == list(range(6))
    assert sorted(_taken(second)) == list(range(4))


def test_auto_runs_few_elements_here_many_on_local_workers_and_beam_when_asked() -> None:
    assert choose_engine("auto", LOCAL_FROM - 1, 2, ()) == "direct"
    assert choose_engine("auto", LOCAL_FROM, 2, ()) == "local"
    assert choose_engine("auto", 100, 1, ()) == "direct"
    assert choose_engine("auto", 100, 2, ("--runner=DaskRunner",)) == "beam"
    assert choose_engine("beam", 1, 1, ()) == "beam"
    with pytest.raises(ValueError, match="unknown engine"):
        choose_engine("threads", 3, 2, ())


def test_run_stages_on_the_local_engine_reports_it_and_uses_both_processes(
    tmp_path: Path,
) -> None:
    used = run_stages([Record(str(tmp_path))], list(range(8)), engine="local", workers=2)
    assert used == "local"
    assert sorted(_taken(tmp_path)) == list(range(8))


def test_workers_get_their_share_of_threads_and_few_arenas_and_the_user_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("POLARS_MAX_THREADS", raising=False)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")  # the user's own setting
    share = str(max(1, (os.cpu_count() or 1) // 2))
    with local_pool(2) as pool:
        seen = pool.map(worker_env, list(range(6)), lambda i: (os.getpid(), "here", "here"))
    from_workers = {(threads, arenas) for pid, threads, arenas in seen if pid != os.getpid()}
    assert from_workers == {(share, "4")}
    assert "POLARS_MAX_THREADS" not in os.environ  # taken out again with the pool
    assert os.environ["MALLOC_ARENA_MAX"] == "4"


def test_a_command_puts_arrow_on_malloc_before_pyarrow_loads() -> None:
    import subprocess

    code = (
        "from deskscore.pipelines.infra.memory import lean_allocators\n"
        "lean_allocators()\n"
        "import pyarrow as pa\n"
        "print(pa.default_memory_pool().backend_name)"
    )
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "system"

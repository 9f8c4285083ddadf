"""A Dask cluster on this machine, started the way the README shows (`dask scheduler` plus
`dask worker`), for the runner tests and benchmarks/runners.py.

Its processes run this interpreter's `dask` command, so the workers import the same deskscore
as the caller. They are started as subprocesses, waited for until every worker has joined,
and stopped by process id (terminate, then kill), workers before the scheduler.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STOP_SECONDS = 15.0
"""How long a process has to exit after SIGTERM before it is killed."""


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on (the kernel's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate `proc` and what it started (by process id), killing what does not exit."""
    import psutil  # a dependency of distributed

    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        children = []
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    _, alive = psutil.wait_procs(children, timeout=STOP_SECONDS)
    for child in alive:
        child.kill()
    psutil.wait_procs(alive, timeout=STOP_SECONDS)


@dataclass(frozen=True)
class DaskCluster:
    """A running cluster: where its scheduler listens, its processes and their logs."""

    address: str
    scheduler: subprocess.Popen[bytes]
    workers: subprocess.Popen[bytes]
    """The `dask worker` process; each worker process is a child of it (under a nanny that
    starts it again if it dies)."""
    logs: Path
    n_workers: int

    def worker_pids(self) -> dict[str, int]:
        """The process id of each worker now joined, by worker address."""
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as client:
            return dict(client.run(os.getpid))

    def executed(self) -> dict[str, int]:
        """How many tasks each worker now joined has run, by worker address."""
        from distributed import Client

        def count(dask_worker: Any) -> int:
            return int(dask_worker.state.executed_count)

        with Client(self.address, timeout=30, set_as_default=False) as client:
            return dict(client.run(count))

    def wait_for_workers(self, timeout: float = 120.0) -> None:
        """Return once every worker has joined (a killed one is started again by its nanny)."""
        from distributed import Client

        with Client(self.address, timeout=timeout, set_as_default=False) as client:
            client.wait_for_workers(self.n_workers, timeout=timeout)


def _dask(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("dask")), *args]


@contextmanager
def local_dask_cluster(
    folder: Path,
    *,
    workers: int = 2,
    threads: int = 1,
    timeout: float = 120.0,
) -> Iterator[DaskCluster]:
    """A scheduler on 127.0.0.1 (a free port) and `workers` worker processes of `threads`
    threads each, their logs and scratch space in `folder`. Yields once every worker has
    joined; stops them all on leaving."""
    folder.mkdir(parents=True, exist_ok=True)
    address = f"tcp://127.0.0.1:{free_port()}"
    # no dashboard, and its HTTP server on a free port, not on one another cluster may hold
    quiet = ("--no-dashboard", "--dashboard-address", "127.0.0.1:0")
    with ExitStack() as stack:
        scheduler_log = stack.enter_context(open(folder / "scheduler.log", "wb"))
        worker_log = stack.enter_context(open(folder / "workers.log", "wb"))
        scheduler = subprocess.Popen(
            _dask("scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1], *quiet),
            stdout=scheduler_log, stderr=subprocess.STDOUT, cwd=folder,
        )  # fmt: skip
        stack.callback(_stop, scheduler)
        pool = subprocess.Popen(
            _dask("worker", address, "--nworkers", str(workers), "--nthreads", str(threads),
                  "--host", "127.0.0.1", "--local-directory", str(folder / "space"),
                  "--death-timeout", "60", *quiet),
            stdout=worker_log, stderr=subprocess.STDOUT, cwd=folder,
        )  # fmt: skip
        stack.callback(_stop, pool)  # callbacks run last first: workers before the scheduler
        cluster = DaskCluster(address, scheduler, pool, folder, workers)
        cluster.wait_for_workers(timeout)
        yield cluster


__all__ = ["DaskCluster", "free_port", "local_dask_cluster"]

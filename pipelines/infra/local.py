"""This machine's cores without a pipeline: this process and spawned worker processes share a
job's elements, each element going through every stage in the process that took it.

Beam's local runner costs more here than it gives: importing Beam takes over a second and
about 130 MB in every worker, and its harness moves every element through the Fn API. A
per-run job needs none of that: elements are independent, small (a run key) and write their
own files, so a pool of plain processes runs the very same stage calls (see
`pipelines.stages.base`) for the price of an interpreter per worker.

Workers are spawned (a fresh interpreter: no copy of this process's threads, Arrow pools or
DuckDB connection). Each keeps one element queued beside the one it works on; this process
takes the next element whenever it is free, and at the end takes back elements a worker has
queued but not started, so the last runs are not left waiting behind a busy worker.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

_set_up: dict[str, Sequence[Any]] = {}
"""In a worker: the stage lists it has set up, by the token of the call that sent them."""


def through(stages: Sequence[Any], element: Any) -> list[Any]:
    """One element through every stage in turn, its memory given back after each; what the
    last stage yielded."""
    from deskscore.pipelines.infra.memory import release

    current = [element]
    for stage in stages:
        current = [o for e in current for o in stage.process(e)]
        release()
    return current


def _in_worker(token: str, pickled: bytes, element: Any) -> list[Any]:
    """A worker's side of `LocalPool.run_stages`: the stages (pickled before this process set
    its own up) are set up on their first element and torn down when the worker exits (their
    journals closed, their sources released)."""
    import multiprocessing.util
    import pickle

    mine = _set_up.get(token)
    if mine is None:
        mine = _set_up[token] = pickle.loads(pickled)
        for stage in mine:
            stage.setup()

        def teardown() -> None:
            for stage in mine:
                stage.teardown()

        multiprocessing.util.Finalize(None, teardown, exitpriority=10)
    return through(mine, element)


class LocalPool:
    """This process and `workers - 1` worker processes, started on first use."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self._pool: Any = None
        self._restore_env: Callable[[], None] = lambda: None

    def _executor(self) -> Any:
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            from deskscore.pipelines.infra.memory import worker_environment

            context = multiprocessing.get_context("spawn")
            # Workers are spawned as work arrives and read the environment then: the
            # defaults stay in place while the pool lives.
            self._restore_env = _set_defaults(worker_environment(self.workers))
            self._pool = ProcessPoolExecutor(self.workers - 1, mp_context=context)
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
            self._restore_env()

    def map(
        self, remote: Callable[..., Any], items: Sequence[Any], local: Callable[[Any], Any]
    ) -> list[Any]:
        """[remote(item) or local(item) for each item], in item order: `remote` (picklable,
        called with the item) runs in a worker, `local` in this process. The first failure
        raises; the calls not started are cancelled."""
        from collections import deque
        from concurrent.futures import FIRST_COMPLETED, Future, wait

        if self.workers == 1 or len(items) <= 1:
            return [local(item) for item in items]
        pool = self._executor()
        results: dict[int, Any] = {}
        pending = deque(enumerate(items))
        in_flight: dict[Future[Any], tuple[int, Any]] = {}
        try:
            while pending or in_flight:
                while pending and len(in_flight) < 2 * (self.workers - 1):
                    i, item = pending.popleft()
                    in_flight[pool.submit(remote, item)] = (i, item)
                mine = pending.popleft() if pending else _take_back(in_flight)
                if mine is not None:
                    results[mine[0]] = local(mine[1])
                elif in_flight:
                    wait(in_flight, return_when=FIRST_COMPLETED)
                for future in [f for f in in_flight if f.done()]:
                    i, _ = in_flight.pop(future)
                    results[i] = future.result()
        except BaseException:
            for future in in_flight:
                future.cancel()
            raise
        return [results[i] for i in range(len(items))]

    def run_stages(self, stages: Sequence[Any], elements: Sequence[Any]) -> list[Any]:
        """Every element through `stages` (set up once per process); what the last stage
        yielded, in element order."""
        import functools
        import pickle

        remote = functools.partial(_in_worker, uuid.uuid4().hex, pickle.dumps(list(stages)))
        for stage in stages:
            stage.setup()
        try:
            done = self.map(remote, elements, functools.partial(through, stages))
        finally:
            for stage in stages:
                stage.teardown()
        return [o for outputs in done for o in outputs]


def _set_defaults(defaults: dict[str, str]) -> Callable[[], None]:
    """Put `defaults` in os.environ where unset (the user's values win); returns what takes
    them out again."""
    import os

    added = {k: v for k, v in defaults.items() if k not in os.environ}
    os.environ.update(added)

    def restore() -> None:
        for name in added:
            os.environ.pop(name, None)

    return restore


def _take_back(in_flight: dict[Any, tuple[int, Any]]) -> tuple[int, Any] | None:
    """An item a worker has queued but not started, withdrawn for this process; None when
    every one has started."""
    for future in list(in_flight):
        if future.cancel():
            return in_flight.pop(future)
    return None


@contextmanager
def local_pool(workers: int) -> Iterator[LocalPool]:
    """A LocalPool of `workers` processes (this one included), shut down on leaving."""
    pool = LocalPool(workers)
    try:
        yield pool
    finally:
        pool.close()


__all__ = ["LocalPool", "local_pool", "through"]

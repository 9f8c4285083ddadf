"""This machine's cores without a pipeline: this process and spawned worker processes share a
job's elements, each element going through every stage in the process that took it.

Beam's local runner costs more here than it gives: importing Beam takes over a second and
about 130 MB in every worker, and its harness moves every element through the Fn API. A
per-run job needs none of that: elements are independent, small (a run key) and write their
own files, so a pool of plain processes runs the very same stage calls (see
`pipelines.stages.base`) for the price of an interpreter per worker.

Workers are spawned (a fresh interpreter: no copy of this process's threads, Arrow pools or
DuckDB connection). A thread of this process hands each worker its next element as soon as it
has finished the last, while this process takes the next element whenever it is free: at the
end, each process waits behind at most the one element another has started.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import contextmanager
from typing import Any

_set_up: dict[str, Sequence[Any]] = {}
"""In a worker: the stage lists it has set up, by the token of the call that sent them."""


def through(stages: Sequence[Any], element: Any) -> list[Any]:
    """One element through every stage in turn, its memory given back once all are done
    (`memory.released`); what the last stage yielded. Once, not after each stage: a stage's
    tables are freed as it returns, and giving the heap back five times per run cost a
    scoring job 2% of its time for no lower peak."""
    from deskscore.pipelines.infra.memory import released

    def each(first: Any) -> list[Any]:
        current = [first]
        for stage in stages:
            current = [o for e in current for o in stage.process(e)]
        return current

    return released(each, element)


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
            self._pool = ProcessPoolExecutor(
                self.workers - 1,
                mp_context=context,
                initializer=_exit_with_parent,
                initargs=(os.getpid(),),
            )
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
        if self.workers == 1 or len(items) <= 1:
            return [local(item) for item in items]
        share = _Share(self._executor(), remote, items, depth=self.workers - 1)
        feeder = threading.Thread(target=share.feed, name="deskscore-feed", daemon=True)
        feeder.start()
        try:
            while (mine := share.take()) is not None:
                share.done(mine[0], local(mine[1]))
            feeder.join()
        except BaseException:
            share.stop()
            raise
        return share.outcome()

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


def _exit_with_parent(parent: int) -> None:
    """A worker's initializer: a thread that ends the worker once the process that started it
    is gone (killed, say, by the OOM killer or a CI timeout). Nothing else would tell it: the
    executor's queues stay open in the worker itself, so an orphan waited on them for ever,
    holding its memory, and finished a run for a job nobody would commit."""
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="deskscore-parent-watch", daemon=True).start()


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


class _Share:
    """The items of one `LocalPool.map`, shared between this process's thread (which works on
    them too) and a feeder thread that keeps `depth` items handed to the workers.

    The workers are fed from a thread of its own because this process spends whole seconds in
    an element of its own: fed only between those, a worker that finished its queue first sat
    idle (a quarter of a 2-process ingest of runs of mixed sizes, with two items queued per
    worker). Fed at once, one item per worker is enough, and at the end this process waits
    behind at most one item a worker has started. (Handing out more would not let this
    process take them back at the end: the executor passes a worker's next item to it, where
    it can no longer be cancelled.)"""

    def __init__(self, pool: Any, remote: Callable[..., Any], items: Sequence[Any], depth: int):
        self._pool, self._remote, self._depth = pool, remote, depth
        self._n = len(items)
        self._lock = threading.Lock()
        self._pending = deque(enumerate(items))
        self._in_flight: dict[Future[Any], tuple[int, Any]] = {}
        self._results: dict[int, Any] = {}
        self._error: BaseException | None = None

    def feed(self) -> None:
        """The feeder thread: submit while the queue is short, collect what comes back."""
        while True:
            with self._lock:
                try:
                    while self._error is None and self._pending and self._short():
                        i, item = self._pending.popleft()
                        self._in_flight[self._pool.submit(self._remote, item)] = (i, item)
                except BaseException as e:  # a broken pool: this process's thread raises it
                    self._fail(e)
                waiting = list(self._in_flight)
                if not waiting:
                    return
            finished, _ = wait(waiting, return_when=FIRST_COMPLETED)
            with self._lock:
                for future in finished:
                    i, _ = self._in_flight.pop(future)
                    if future.cancelled():
                        continue  # stopped
                    error = future.exception()
                    if error is not None:
                        self._fail(error)
                    else:
                        self._results[i] = future.result()

    def _short(self) -> bool:
        return len(self._in_flight) < self._depth

    def take(self) -> tuple[int, Any] | None:
        """The next item for this process; None when every one is handed out (or a call
        failed)."""
        with self._lock:
            if self._error is not None or not self._pending:
                return None
            return self._pending.popleft()

    def done(self, i: int, result: Any) -> None:
        with self._lock:
            self._results[i] = result

    def stop(self) -> None:
        """This process failed: hand out nothing more, cancel what has not started."""
        with self._lock:
            self._fail(None)

    def outcome(self) -> list[Any]:
        """Every result in item order, or the first failure raised."""
        if self._error is not None:
            raise self._error
        return [self._results[i] for i in range(self._n)]

    def _fail(self, error: BaseException | None) -> None:
        """(Lock held.) Record the first failure and cancel the calls not started."""
        if self._error is None:
            self._error = error if error is not None else RuntimeError("stopped")
        self._pending.clear()
        for future in self._in_flight:
            future.cancel()


@contextmanager
def local_pool(workers: int) -> Iterator[LocalPool]:
    """A LocalPool of `workers` processes (this one included), shut down on leaving."""
    pool = LocalPool(workers)
    try:
        yield pool
    finally:
        pool.close()


__all__ = ["LocalPool", "local_pool", "through"]

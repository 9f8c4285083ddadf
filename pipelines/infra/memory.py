"""Giving a finished run's memory back, so a worker's footprint follows the largest run it
reads, not how many runs it has read.

Per-run stages allocate and free tens of MB of small Python objects, Arrow and Polars frames
per run; glibc keeps the freed pages, fragmented, and a worker's RSS would creep up with every
run (measured: +45% over 100 runs of the loop stage, flat with this). After each run a stage
collects cycles and, once the process has grown by TRIM_MARGIN since it last did, asks malloc
to return free pages to the system (Linux with glibc; a no-op elsewhere).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")


@cache
def _malloc_trim() -> object | None:
    """glibc's malloc_trim, looked up among the symbols the interpreter already has loaded
    (its C library's), not by `ctypes.util.find_library`, which runs `ldconfig -p` and whose
    module takes 5 ms to import in every command."""
    import ctypes

    try:
        return getattr(ctypes.CDLL(None), "malloc_trim", None)
    except OSError:
        return None


@cache
def arrow_on_malloc() -> None:
    """Make Arrow allocate with the C library's malloc, so `release` gives its freed buffers
    back too. Arrow's default pool (mimalloc or jemalloc) keeps freed pages for reuse: a
    worker that turned one large run into columns stayed about 60 MB larger afterwards
    (measured on a 16,000-step run), whatever ran next."""
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())


ALLOCATOR_DEFAULTS = {"ARROW_DEFAULT_MEMORY_POOL": "system"}
"""Set for a deskscore command before pyarrow loads (the user's own values win): Arrow on the
C library's malloc from its first buffer, which `arrow_on_malloc` cannot reach when a job
reads the warehouse before its stages are set up. Measured on 20 run archives with 2
workers: peak RSS of the process tree 385 -> 328 MB for ingest, 487 -> 406-426 MB for score."""


def lean_allocators() -> None:
    """Apply ALLOCATOR_DEFAULTS to this process (before pyarrow is imported) and, through
    the environment, to the workers it starts."""
    for name, value in ALLOCATOR_DEFAULTS.items():
        os.environ.setdefault(name, value)


def worker_environment(workers: int) -> dict[str, str]:
    """Environment defaults for `workers` worker processes sharing this machine's cores:
    Polars' thread pool sized to their share of the cores (each worker already is one of
    the processes running elements side by side), and at most two glibc malloc arenas, as
    the Python side of a worker runs on one thread. Measured on the same 20 archives: peak
    RSS of a worker a further 15-30 MB lower."""
    share = max(1, (os.cpu_count() or 1) // max(1, workers))
    return {"POLARS_MAX_THREADS": str(share), "MALLOC_ARENA_MAX": "2"}


TRIM_MARGIN = 24 << 20
"""Bytes a process may grow by (resident) since it last returned its free heap pages before
`release` returns them again. Returning them after every run cost more than the call: each
page given back is faulted in again, zeroed, by the next run that needs it. A run that leaves
the process within the margin leaves its free pages to the next; one that grew it further
(a large run) gives them back. Each process then holds at most this much more than it would
with pages returned after every run, whatever the number of runs. Measured on 40 PNG run
archives with 2 workers, 3 alternating rounds: system time 1.15-1.32 -> 0.93-1.06 s for
ingest and 0.68-0.90 -> 0.36-0.56 s for score, ingest + score 11.7 -> 11.0 s (medians).
Never giving pages back saved more (ingest 0.50 s of system time) but let the peak creep
with the runs (291 -> 311 MB at 20 archives, 316 -> 333 MB at 80, for the process tree)."""

_trimmed_at: int | None = None
"""This process's resident bytes just after it last returned its free pages (None: never, or
its size could not be read then)."""


def _resident_bytes() -> int | None:
    """This process's resident set in bytes (Linux's /proc), None where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def release() -> None:
    """Collect garbage cycles, and return free heap pages to the system once the process has
    grown by more than TRIM_MARGIN since it last did (always where its size cannot be read).

    What survives is frozen (`gc.freeze`): modules, caches and a worker's state are then never
    scanned again, so each collection costs only the objects of the run just finished."""
    global _trimmed_at
    gc.collect()
    gc.freeze()
    trim = _malloc_trim()
    if trim is None or not due(_resident_bytes(), _trimmed_at, TRIM_MARGIN):
        return
    trim(0)  # type: ignore[operator]
    _trimmed_at = _resident_bytes()


def due(now: int | None, last: int | None, margin: int) -> bool:
    """Whether free pages go back now: the process is `now` bytes, was `last` bytes just
    after it last gave them back (None: it never has, or its size cannot be read)."""
    return now is None or last is None or now > last + margin


GEN0_WHILE_RUNNING = 100_000
"""The cyclic collector's first threshold while an element runs (Python's default: 700).
Reading a run allocates millions of small objects that are not cycles (a step's dicts,
strings, tuples) and that mostly outlive a young collection, so the default collects often,
and promotes them into older generations that are scanned again and again, for nothing:
`release` collects everything once the element is done. Measured on 6 run archives ingested
in one process, 4 alternating rounds: 4.06-4.14 s before, 3.91-3.99 s with it (about 4%),
the same peak RSS; with the collector disabled altogether, no faster."""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the collector's first threshold (GEN0_WHILE_RUNNING) for the block; cycles are
    still collected, a hundred times less often."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], GEN0_WHILE_RUNNING), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


@cache
def settle() -> None:
    """Freeze (`gc.freeze`) what this process holds before its first element: its modules,
    their functions and classes, the options. They live as long as the process, and the
    first collection (`release` after the first element, or one the element triggers) would
    otherwise scan them all: about 40,000 objects and 10 ms, in every process of every
    command (ingesting or scoring one run takes about 400 ms). Once per process, at the
    start: cycles that are garbage by then stay uncollected, a few import-time ones at most,
    where freezing before every element would also keep whatever a runner discarded between
    two elements."""
    gc.freeze()


def released(process: Callable[[Any], Iterable[T]], element: Any) -> list[T]:
    """Run one element through a stage to the end (collecting cycles rarely meanwhile:
    `fewer_collections`), then give its memory back (`release`); its outputs (a few file
    paths or small records) are returned whole, after."""
    settle()
    with fewer_collections():
        outputs = list(process(element))
    release()
    return outputs

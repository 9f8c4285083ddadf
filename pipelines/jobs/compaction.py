"""Packing a job's small files, table by table on every local worker.

Packing reads every small file of a table and writes it again into packs. A job of many runs
writes its runs' tables straight into packs instead (`pack_as_written`), so what is left to
fold is the files of jobs of a few runs, and tables a job reads back while it runs. Tables
pack independently, so each can go to whichever process of a pool, or thread of this process,
is free; each writes its packs into the same job (through its own journal), so they become
visible with the job's commit, all together or not at all.

Ingest and score pack in their own process once their workers have exited, with as many
threads as they had workers: reading and writing Parquet runs in Arrow's C++ without the GIL,
so two threads pack two tables at once in one interpreter. At 80 PNG archives, the ingest's
packing alone took 4.05 s on one thread and 2.66 s on two (peak RSS of that process 274 MB
and 314-330 MB), and the whole ingest 27.6 s twice against 26.0 s and 25.1 s, its peak
unchanged (312-315 MB against 303-305 MB: the reading workers set it); `score --force` took
8.90 s and 9.16 s against 8.68 s and 8.67 s (its small tables pack mostly in Python, under
the GIL). Two processes packing side by side had been the ingest's peak memory (about 370 MB
for the process tree against 295 MB) for no less time.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deskscore.collectors.warehouse import Compaction, Warehouse
    from deskscore.pipelines.infra.local import LocalPool

_LARGEST_FIRST = ("steps", "llm_calls", "step_actions", "llm_call_costs", "screenshot_refs")
"""The tables with the most rows: started first, so the last one to finish is a small one."""


def _compact_table(name: str, *, root: str, job: str) -> list[Compaction]:
    """In a worker: pack one table's small files within the job."""
    from deskscore.collectors.warehouse import Warehouse

    wh = Warehouse(root, job, pending=True)  # sees the job's own writes, as its caller does
    try:
        return _compact_one(wh, name)
    finally:
        wh.close()


def _compact_one(wh: Warehouse, name: str) -> list[Compaction]:
    """One table packed, then its memory given back: packing rereads every run of the table,
    and the freed pages would otherwise stay with the process until it ends."""
    from deskscore.pipelines.infra.memory import release

    try:
        return wh.compact([name])
    finally:
        release()


def compact_tables(
    wh: Warehouse, pool: LocalPool | None = None, threads: int = 1
) -> list[Compaction]:
    """`wh.compact()` (wh in a job), its tables shared among `pool`'s processes, or among
    `threads` threads of this process (see the module doc)."""
    from deskscore.schemas import TABLES

    if wh.job is None:
        return wh.compact()
    names = sorted(TABLES, key=lambda n: (_order(n), n))
    remote = functools.partial(_compact_table, root=str(wh.root), job=wh.job)
    if pool is not None and pool.workers > 1:
        done: list[Any] = pool.map(remote, names, functools.partial(_compact_one, wh))
    elif threads > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(threads) as threaded:
            done = list(threaded.map(remote, names))
    else:
        return wh.compact()
    return [c for table in done for c in table]


def pack_as_written(engine: str, compact: bool, units: int) -> bool:
    """Whether a job's stages write runs' small tables straight into packs (see `Warehouse`'s
    `pack_writes`) instead of leaving files for `compact_tables`: on this machine's engines
    (a Beam runner need not tear its stages down, which closes the packs), unless the user
    keeps files as they are (`--no-compact`), and with `units` (sources or runs) enough for
    a pack of MIN_SMALL_FILES runs, the fewest `compact` folds; fewer stay files until that
    many gather. With several processes each fills a pack of its own, of fewer runs than
    that in a small job (10 runs on 2 processes: two of 5), which `compact` merges once
    MIN_SMALL_FILES such packs gather, as it folds files. Asking for a full pack per process
    (16 runs on 2) instead made a job of 8 to 15 runs write files and fold them into a pack
    at its end, each table written twice and read once more: 10 text-only archives ingested
    and scored in 4.1 s against 3.4 s (medians of 3 alternating rounds)."""
    from deskscore.collectors.warehouse.store import MIN_SMALL_FILES

    return engine != "beam" and compact and units >= MIN_SMALL_FILES


def _order(name: str) -> int:
    return _LARGEST_FIRST.index(name) if name in _LARGEST_FIRST else len(_LARGEST_FIRST)


__all__ = ["compact_tables", "pack_as_written"]

"""One writer at a time per warehouse: jobs that write (ingest, hash, score) hold an exclusive
advisory lock on `<warehouse>/.deskscore.lock`.

Readers never need the lock (they follow the manifest, see store.py); it keeps two writers
from interleaving their commits, and it is when a writer holds it that the journals and files
of jobs that died before committing are collected. The lock
is released by the kernel when the process dies, so a killed job never leaves it stuck.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = ".deskscore.lock"


class WarehouseBusy(Exception):
    """Another job holds the warehouse's writer lock; the message names it and what to do."""


class WarehouseNotWritable(Exception):
    """The writer lock cannot be made or opened (a read-only warehouse, say); the message names
    the folder and what to do."""


def _holder(handle: int) -> str:
    try:
        text = os.pread(handle, 4096, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "unknown job"


@contextmanager
def writer_lock(
    warehouse: str | os.PathLike[str], command: str, wait: float = 0.0
) -> Iterator[None]:
    """Hold the warehouse's writer lock for the block; wait up to `wait` seconds for it.

    Raises WarehouseBusy when another job still holds it after `wait` seconds, and
    WarehouseNotWritable when the lock cannot be made (the job could not write either).
    """
    root = Path(warehouse)
    try:
        root.mkdir(parents=True, exist_ok=True)
        handle = os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise WarehouseNotWritable(
            f"cannot take the writer lock {root / LOCK_NAME} ({exc.strerror or exc}): a job "
            f"that writes needs write access to the warehouse folder {root}; run it as a user "
            "who can write there, or on a copy of the warehouse in a folder of yours"
        ) from None
    try:
        deadline = time.monotonic() + max(wait, 0.0)
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise WarehouseBusy(
                        f"another deskscore job ({_holder(handle)}) is writing {root}; "
                        "wait for it to finish or pass --wait SECONDS"
                    ) from None
                time.sleep(0.05)
        os.ftruncate(handle, 0)
        os.pwrite(handle, f"pid {os.getpid()}, command {command}".encode(), 0)
        from deskscore.collectors.warehouse.store import collect_dead_jobs

        collect_dead_jobs(root)  # no other writer can be running: what jobs left is dead
        try:
            yield
        finally:
            os.ftruncate(handle, 0)
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        os.close(handle)


__all__ = ["LOCK_NAME", "WarehouseBusy", "WarehouseNotWritable", "writer_lock"]

"""A stage for the local engine's tests, in a module spawned workers can import by name."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path


class Record:
    """A stage that writes one file per element, named for the element and the process that
    took it, and passes the element on doubled."""

    label = "recorded"

    def __init__(
        self,
        folder: str,
        fail_on: int | None = None,
        slow_in: int | None = None,
        slow_s: float = 0.0,
    ) -> None:
        self.folder = folder
        self.fail_on = fail_on
        self.slow_in = slow_in
        """The pid of a process whose first element takes `slow_s` seconds."""
        self.slow_s = slow_s
        self.set_up = False

    def setup(self) -> None:
        self.set_up = True

    def process(self, element: int) -> Iterator[int]:
        assert self.set_up, "process before setup"
        if element == self.fail_on:
            raise ValueError(f"element {element} is bad")
        if os.getpid() == self.slow_in:
            self.slow_in = None
            time.sleep(self.slow_s)
        Path(self.folder, f"{element}.{os.getpid()}").touch()
        yield element * 2

    def teardown(self) -> None:
        self.set_up = False


class Linger:
    """A stage that writes one file per element, named for the element and the process that
    took it, then sleeps (a long run, for a test that kills its job)."""

    label = "lingered"

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def setup(self) -> None:
        pass

    def process(self, element: int) -> Iterator[int]:
        Path(self.folder, f"{element}.{os.getpid()}").touch()
        time.sleep(120)
        yield element

    def teardown(self) -> None:
        pass


def worker_env(_: int) -> tuple[int, str | None, str | None]:
    """(pid, POLARS_MAX_THREADS, MALLOC_ARENA_MAX) of the process that ran it."""
    import os

    return os.getpid(), os.environ.get("POLARS_MAX_THREADS"), os.environ.get("MALLOC_ARENA_MAX")

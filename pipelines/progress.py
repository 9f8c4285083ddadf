"""Live progress for in-process pipeline runs.

Stages call `tick(stage)`; when the pipeline runs in this process (the pinned local runner)
a rich progress display shows counts and rates per stage. On a remote runner nobody listens
and ticks cost one attribute lookup.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator, Sequence

_lock = threading.Lock()
_counts: dict[str, int] | None = None


def tick(stage: str, n: int = 1) -> None:
    counts = _counts
    if counts is not None:
        with _lock:
            counts[stage] = counts.get(stage, 0) + n


@contextlib.contextmanager
def show(title: str, stages: Sequence[str]) -> Iterator[None]:
    """Display per-stage counters while the body runs (stderr, so stdout stays clean)."""
    global _counts
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(file=sys.stderr)
    _counts = {}
    progress = Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=None),
        TextColumn("{task.completed:>8.0f} {task.fields[unit]}"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=console,
        transient=not console.is_terminal,
        disable=not console.is_terminal,
    )
    ids = {s: progress.add_task(f"{title}: {s}", total=None, unit=s, rate="") for s in stages}
    stop = threading.Event()

    def refresh() -> None:
        while not stop.wait(0.2):
            for stage, task_id in ids.items():
                done = (_counts or {}).get(stage, 0)
                elapsed = progress.tasks[task_id].elapsed or 0.0
                rate = f"{done / elapsed:,.0f}/s" if elapsed > 0 and done else ""
                progress.update(task_id, completed=done, rate=rate)

    thread = threading.Thread(target=refresh, daemon=True)
    with progress:
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            _counts = None

"""Live progress for local pipeline runs.

Stages call `tick(stage)`; a rich progress display shows counts and rates per stage. In this
process ticks are added up in memory; in the local runner's worker processes they are added
up per process and written, at most five times a second, to a small file in a folder the
display names through the environment, and the display sums the files. On a remote runner
nobody listens and a tick costs one lookup.

The display's folder holds an `owner` file that the display keeps locked (flock) while it runs.
A display that was killed (SIGKILL, a lost container) cannot remove its folder; the lock goes
with the process, so the next display removes every such folder whose lock it can take. A
lock, unlike a PID, also tells the truth where containers share the temp folder but not PIDs.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

ENV = "DESKSCORE_PROGRESS_DIR"
PREFIX = "deskscore-progress-"
OWNER = "owner"
_FLUSH_SECONDS = 0.2
_lock = threading.Lock()
_counts: dict[str, int] | None = None
_worker_counts: dict[str, int] = {}
_flushed_at = 0.0


def _flush(folder: str) -> None:
    """Write this worker process's counts (atomically: a reader never sees half a file)."""
    global _flushed_at
    target = Path(folder) / f"{os.getpid()}.json"
    tmp = target.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(_worker_counts))
        os.replace(tmp, target)
    except OSError:
        pass  # the display has gone (the run is over): nothing to report to
    _flushed_at = time.monotonic()


def _flush_at_exit() -> None:
    folder = os.environ.get(ENV)
    if folder and _worker_counts:
        with _lock:
            _flush(folder)


def tick(stage: str, n: int = 1) -> None:
    counts = _counts
    if counts is not None:
        with _lock:
            counts[stage] = counts.get(stage, 0) + n
        return
    folder = os.environ.get(ENV)
    if folder is None:
        return
    with _lock:
        if not _worker_counts:
            atexit.register(_flush_at_exit)
        _worker_counts[stage] = _worker_counts.get(stage, 0) + n
        if time.monotonic() - _flushed_at >= _FLUSH_SECONDS:
            _flush(folder)


def _worker_totals(folder: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for path in Path(folder).glob("*.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for stage, value in data.items():
            out[stage] = out.get(stage, 0) + int(value)
    return out


def _flock(path: str, flags: int) -> int | None:
    """A descriptor of `path` holding its exclusive flock; None where flock is missing, the
    file cannot be opened, or another process holds the lock."""
    try:
        import fcntl
    except ImportError:  # not POSIX: folders are only removed by their own display
        return None
    try:
        fd = os.open(path, os.O_RDWR | flags, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _own(folder: str) -> int | None:
    """Lock a new owner file and only then give it its name: no sweeper can see an owner
    file of a live display unlocked."""
    draft = os.path.join(folder, f"{OWNER}.draft")
    fd = _flock(draft, os.O_CREAT | os.O_EXCL)
    if fd is not None:
        try:
            os.replace(draft, os.path.join(folder, OWNER))
        except OSError:
            os.close(fd)
            return None
    return fd


def sweep_abandoned(tmp: str | None = None) -> int:
    """Remove the progress folders whose display died without removing them (their owner
    file is there and unlocked); returns how many. A folder without an owner file is left:
    older versions made none, and a display that has not yet named its locked file has
    none either."""
    import shutil

    removed = 0
    for folder in Path(tmp or tempfile.gettempdir()).glob(f"{PREFIX}*"):
        fd = _flock(str(folder / OWNER), 0)
        if fd is None:
            continue
        try:
            shutil.rmtree(folder, ignore_errors=True)
            removed += not folder.exists()
        finally:
            os.close(fd)
    return removed


def _may_be_terminal(stream: object) -> bool:
    """False when rich would not take `stream` for a terminal either (its `Console.is_terminal`:
    TTY_COMPATIBLE=1 or a non-empty FORCE_COLOR make anything one; otherwise only a stream
    whose `isatty` says so, unless TTY_COMPATIBLE=0), told without importing rich."""
    tty_compatible = os.environ.get("TTY_COMPATIBLE", "")
    if tty_compatible == "1" or os.environ.get("FORCE_COLOR"):
        return True
    if tty_compatible == "0":
        return False
    try:
        return bool(getattr(stream, "isatty", lambda: False)())
    except ValueError:  # a closed stream
        return False


@contextlib.contextmanager
def show(title: str, stages: Sequence[str]) -> Iterator[None]:
    """Display per-stage counters while the body runs (stderr, so stdout stays clean).

    Where stderr is no terminal (a script, a cluster job, a pipe) nothing is displayed, so
    nothing is set up: no rich (25-40 ms to import, up to a tenth of ingesting or scoring one
    run), no folder, and the workers' ticks write no files."""
    global _counts
    console = None
    if _may_be_terminal(sys.stderr):  # then rich decides (Jupyter may set FORCE_COLOR)
        from rich.console import Console

        console = Console(file=sys.stderr)
    if console is None or not console.is_terminal:
        yield
        return
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    _counts = {}
    progress = Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=None),
        TextColumn("{task.completed:>8.0f} {task.fields[unit]}"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=console,
    )
    ids = {s: progress.add_task(f"{title}: {s}", total=None, unit=s, rate="") for s in stages}
    stop = threading.Event()
    sweep_abandoned()
    folder = tempfile.mkdtemp(prefix=PREFIX)
    owner = _own(folder)
    previous = os.environ.get(ENV)
    os.environ[ENV] = folder  # worker processes started from here inherit it

    def refresh() -> None:
        while not stop.wait(0.2):
            workers = _worker_totals(folder)
            for stage, task_id in ids.items():
                done = (_counts or {}).get(stage, 0) + workers.get(stage, 0)
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
            if previous is None:
                os.environ.pop(ENV, None)
            else:
                os.environ[ENV] = previous
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
            if owner is not None:
                os.close(owner)

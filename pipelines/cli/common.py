"""What every `deskscore` command shares: errors the user can fix, the warehouse they name,
and what surrounds a job that writes (the writer lock, the progress display)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class UserError(Exception):
    """A problem the user can fix; printed without a traceback."""


WAREHOUSE_FROM: list[str] = []
"""Where the command line's warehouse came from (pipelines.cli.settings.apply sets it), so
that an error can say which setting to change."""


def existing_warehouse(path: str) -> Path:
    """The warehouse folder, which must exist (commands that only read never create one)."""
    root = Path(path)
    if not root.is_dir():
        source = f" (set by {WAREHOUSE_FROM[-1]})" if WAREHOUSE_FROM else ""
        raise UserError(
            f"no warehouse at {root}{source}: run 'deskscore ingest SOURCE --warehouse {root}' "
            "first, or name an existing one with --warehouse, $DESKSCORE_WAREHOUSE or "
            "deskscore.toml"
        )
    return root


def make_folder(folder: Path, given: str, purpose: str) -> None:
    """Make the output folder `folder` (named by the option `given`, e.g. "--out x"), or raise
    UserError before anything is written: it is a file, or it cannot be made."""
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{given}: is a file; name a folder for {purpose}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"{given}: cannot make the folder {folder} ({exc.strerror or exc}); name one you "
            "can write"
        ) from None


SHOWN_RUNS = 10
"""Run ids listed when --run names one the warehouse does not hold."""


def check_runs(warehouse: str | Path, run_ids: Sequence[str] | None, con: Any = None) -> None:
    """UserError, saying what to run, when the warehouse holds no run or not those asked: a
    filter on a run id it does not hold (a typo, a label) would otherwise show nothing.
    `con`: the caller's connection to the warehouse's views, if it has one."""
    if con is None:
        from deskscore.sql import connect

        con = connect(warehouse, only=["runs"])
    known = [r for (r,) in con.sql("SELECT DISTINCT run_id FROM runs ORDER BY run_id").fetchall()]
    if not known:
        raise UserError(
            f"the warehouse at {warehouse} holds no run: run 'deskscore ingest SOURCE "
            f"--warehouse {warehouse}' and 'deskscore score --warehouse {warehouse}' first"
        )
    unknown = sorted(set(run_ids or ()) - set(known))
    if unknown:
        listed = ", ".join(known[:SHOWN_RUNS]) + (", ..." if len(known) > SHOWN_RUNS else "")
        raise UserError(
            f"no run {', '.join(unknown)} in the warehouse at {warehouse} (its runs: {listed}); "
            f"'deskscore sql \"SELECT run_id, agent, source FROM runs\" --warehouse {warehouse}' "
            "lists them all"
        )


@contextmanager
def writing(warehouse: str, command: str, wait: float, counters: Sequence[str]) -> Iterator[None]:
    """Around a job that writes: hold the warehouse's writer lock (see
    collectors.warehouse.lock) or fail clearly, and show the job's `counters` as they tick."""
    import sys

    from deskscore.collectors.warehouse.lock import (
        WarehouseBusy,
        WarehouseNotWritable,
        writer_lock,
    )
    from deskscore.pipelines.infra import progress

    try:
        with writer_lock(warehouse, command, 0.0):  # free: no line about waiting
            pass
    except WarehouseNotWritable as exc:
        raise UserError(str(exc)) from None
    except WarehouseBusy as exc:
        if wait:
            holder = str(exc).split(" is writing", 1)[0]
            print(f"deskscore {command}: {holder} is writing {warehouse}; waiting up to "
                  f"{wait:g} s for it (--wait)", file=sys.stderr)  # fmt: skip
    try:
        with writer_lock(warehouse, command, wait or 0.0), progress.show(command, counters):
            yield
    except WarehouseBusy as exc:
        raise UserError(str(exc)) from None


__all__ = ["SHOWN_RUNS", "UserError", "check_runs", "existing_warehouse", "writing"]

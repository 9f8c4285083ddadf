"""Each job's options: one frozen object per job, built once, from the command line or by a caller.

A field is declared once, with its default, its help and its command-line flag (`option`);
`add_options` turns the declarations into argparse arguments (each help ends with the default
it shows, taken from the field) and `from_args` builds the object back from the parsed
arguments. Jobs take the object whole, so an option travels in one form from the command line
to the stage that uses it, and what is derived from options (a score configuration, its file
name) is a property here, not re-derived along the way.

Only the standard library and light deskscore modules are imported: the CLI builds its parser
from these classes without loading Beam.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from deskscore.scorers.config import (
    COMPAT_MODES,
    DEFAULT_COMPAT,
    DEFAULT_HUMAN_VERSION,
    DEFAULT_MAX_STEPS_SCORING,
    HUMAN_VERSIONS,
    ScoreConfig,
)

DEFAULT_WAREHOUSE = "warehouse"

T = TypeVar("T", bound="JobOptions")


def option(default: Any, *flags: str, help: str, **argparse_kw: Any) -> Any:
    """A dataclass field that is also a command-line option.

    `flags` are the option strings ('--max-steps-scoring'), or one bare name for a positional
    argument, or none for a field callers set but the command line does not; `argparse_kw`
    holds what else argparse needs (type, choices, action, metavar, nargs)."""
    meta = {"flags": flags, "help": help, "argparse": argparse_kw}
    if isinstance(default, list | dict | set):
        raise TypeError("option defaults must be immutable (use a tuple)")
    return field(default=default, metadata=meta)


def _shown_default(f: dataclasses.Field[Any]) -> str:
    action = f.metadata["argparse"].get("action")
    if action in ("store_true", "store_false", "append") or f.default in (None, (), ""):
        return ""
    return f" (default {f.default})"


def add_options(
    parser: argparse.ArgumentParser, cls: type[JobOptions], *, skip: Sequence[str] = ()
) -> None:
    """Declare every command-line field of `cls` (but `skip`) on `parser`."""
    for f in fields(cls):
        flags = f.metadata.get("flags") if f.metadata else None
        if not flags or f.name in skip:
            continue
        kw = dict(f.metadata["argparse"])
        kw["help"] = f.metadata["help"] + _shown_default(f)
        if flags[0].startswith("-"):
            kw["dest"] = f.name
            # argparse appends to its default: start from None, `from_args` makes it a tuple
            kw["default"] = None if kw.get("action") == "append" else f.default
            parser.add_argument(*flags, **kw)
        else:
            parser.add_argument(f.name, **kw)


def _value(f: dataclasses.Field[Any], raw: Any) -> Any:
    if raw is None and f.default == ():
        return ()
    if isinstance(raw, list):
        return tuple(raw)
    return raw


@dataclass(frozen=True)
class JobOptions:
    """What every job that writes the warehouse takes."""

    warehouse: str = option(DEFAULT_WAREHOUSE, "--warehouse", help="the warehouse folder")
    wait: float = option(
        0.0,
        "--wait",
        type=float,
        metavar="SECONDS",
        help="if another job is writing the warehouse, wait this long for it (0: refuse at once)",
    )
    beam_args: tuple[str, ...] = ()
    """Standard Beam pipeline options (--runner=..., ...), for jobs that run in Beam."""

    @classmethod
    def from_args(cls: type[T], args: argparse.Namespace, beam_args: Sequence[str] = ()) -> T:
        """The options of a parsed command line (fields it does not set keep their default)."""
        values = {
            f.name: _value(f, getattr(args, f.name))
            for f in fields(cls)
            if f.init and hasattr(args, f.name)
        }
        return cls(**values, beam_args=tuple(beam_args))

    def replace(self: T, **changes: Any) -> T:
        return dataclasses.replace(self, **changes)


def _runs(what: str) -> Any:
    return option((), "--run", action="append", help=f"{what} only this run id (repeatable)")


def _workers() -> Any:
    return option(
        None,
        "--workers",
        type=int,
        help="local worker processes (default: one per core when there is more than one "
        "archive or run; 1 runs everything in this process)",
    )


def _force(what: str) -> Any:
    return option(False, "--force", action="store_true", help=what)


def _compact() -> Any:
    return option(
        True,
        "--no-compact",
        action="store_false",
        help="leave small run files as they are (default: fold them into packs afterwards)",
    )


PRICES_HELP = (
    "a price CSV (columns model,input_per_mtok,cached_input_per_mtok,cache_write_per_mtok,"
    "output_per_mtok,read_on,source; USD per million tokens) whose rows replace or add to the "
    "bundled price table"
)


@dataclass(frozen=True)
class IngestOptions(JobOptions):
    """`deskscore ingest`: which sources, read how, into which warehouse."""

    sources: tuple[str, ...] = option(
        (),
        "sources",
        nargs="+",
        help="result folders, .zip archives, fsspec URLs, globs ('runs/*.zip', "
        "'s3://bucket/*.zip') or @FILE (a list file, one source per line)",
    )
    benchmark: str = option("osworld", "--benchmark", help="benchmark name stored with the runs")
    layout: str | None = option(
        None,
        "--layout",
        help="where task folders sit, e.g. '{domain}/{task_id}' (default: find <domain>/<uuid>/ "
        "folders)",
    )
    force: bool = _force("read and rewrite every source, even those already ingested unchanged")
    compact: bool = _compact()
    workers: int | None = _workers()


@dataclass(frozen=True)
class ScoreOptions(JobOptions):
    """`deskscore score`: one scoring configuration, and the stages computed with it."""

    human_version: str = option(
        DEFAULT_HUMAN_VERSION,
        "--human-version",
        choices=HUMAN_VERSIONS,
        help="OSWorld-Human data version",
    )
    max_steps_scoring: int = option(
        DEFAULT_MAX_STEPS_SCORING,
        "--max-steps-scoring",
        type=int,
        help="the floor of S, the step budget of WES- and WES (S = max(this, the run's longest "
        "t_agent); 15 as OSWorld-Human)",
    )
    compat: str = option(
        DEFAULT_COMPAT,
        "--compat",
        choices=COMPAT_MODES,
        help="scoring rules: 'deskscore' counts executed actions as t_agent (runner error "
        "lines and blank or garbled lines are not steps), scores an episode with no action 0 "
        "instead of dividing by zero, treats an empty, unparseable or non-finite result.txt as "
        "not run, clamps r into [0, 1] and caps a task's WES+ at r; 'osworld-human' reproduces "
        "OSWorld-Human's score.py exactly, quirks included (t_agent = lines of traj.jsonl)",
    )
    human_path: str | None = option(
        None,
        "--human-path",
        help="an OSWorld-Human data folder to read instead of the bundled figures",
    )
    runs: tuple[str, ...] = _runs("score")
    loops: bool = option(
        True, "--no-loops", action="store_false", help="skip loop detection (loop_spans)"
    )
    costs: bool = option(
        True,
        "--no-costs",
        action="store_false",
        help="skip pricing the model calls (run_costs, ...)",
    )
    prices: str | None = option(None, "--prices", help=PRICES_HELP)
    deskcraft_tasks: str | None = option(
        None,
        "--deskcraft-tasks",
        metavar="DIR",
        help="DeskCraft's evaluation_examples folder, read into the tasks table (default: the "
        "bundled DeskCraft task figures, written when DeskCraft runs are scored)",
    )
    force: bool = _force(
        "score every run again, even those whose inputs are unchanged since last time"
    )
    compact: bool = _compact()
    workers: int | None = _workers()

    @property
    def config(self) -> ScoreConfig:
        """The scoring configuration the figures are stored under."""
        return ScoreConfig(self.human_version, self.max_steps_scoring, self.compat)


@dataclass(frozen=True)
class CostOptions(JobOptions):
    """`deskscore cost`: pricing runs again (the score job prices them too)."""

    prices: str | None = option(
        None, "--prices", help=PRICES_HELP + "; the runs are priced again with it before printing"
    )
    runs: tuple[str, ...] = _runs("price and print")


@dataclass(frozen=True)
class HashOptions(JobOptions):
    """`deskscore hash`: screenshots of which runs, decoded how."""

    runs: tuple[str, ...] = _runs("hash")
    threads: int | None = None
    """Decoding threads per worker (default: the CPU count, 2 to 8)."""
    max_pixels: int | None = None
    """Images above this many pixels are not decoded (default: the image rules' cap)."""


@dataclass(frozen=True)
class ReportOptions(JobOptions):
    """`deskscore report`: which runs, written where."""

    out: str = option("report.html", "--out", help="the HTML file")
    runs: tuple[str, ...] = _runs("report")
    png: str | None = option(None, "--png", help="also write each figure as a PNG into this folder")


__all__ = [
    "DEFAULT_WAREHOUSE",
    "PRICES_HELP",
    "CostOptions",
    "HashOptions",
    "IngestOptions",
    "JobOptions",
    "ReportOptions",
    "ScoreOptions",
    "add_options",
    "option",
]

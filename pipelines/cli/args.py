"""Command-line arguments several commands share, declared once: the warehouse, the output
format and digits, and the run filter."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from deskscore.pipelines.cli.output import FORMATS

DEFAULT_WAREHOUSE = "warehouse"
"""As pipelines.options.DEFAULT_WAREHOUSE."""

WAREHOUSE_HELP = (
    f"the warehouse folder (default: $DESKSCORE_WAREHOUSE, else deskscore.toml's warehouse, "
    f"else {DEFAULT_WAREHOUSE})"
)


def warehouse_arg(p: argparse.ArgumentParser) -> None:
    """--warehouse, as the jobs declare it (pipelines.options.JobOptions; a test keeps the two
    the same). Declared here rather than from the jobs' options: a command that only reads,
    such as `deskscore sql`, would otherwise wait on importing every job's options. Left None
    here; pipelines.cli.settings fills it in after parsing."""
    p.add_argument("--warehouse", dest="warehouse", default=None, help=WAREHOUSE_HELP)


def format_arg(p: argparse.ArgumentParser, choices: tuple[str, ...] = FORMATS) -> None:
    """--format: aligned tables for people (the default), or csv / json / md for tools."""
    p.add_argument("--format", default="table", choices=choices)


SUMMARY_FORMATS = ("table", "json")


def summary_format_arg(p: argparse.ArgumentParser) -> None:
    """--format of a job's summary: lines for people, or one JSON object for scripts and CI
    (the same keys the Python API returns)."""
    p.add_argument(
        "--format",
        dest="format",
        default="table",
        choices=SUMMARY_FORMATS,
        help="the summary as lines for people, or one JSON object (default table)",
    )


def int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse `type=` for an integer from `low` to `high` (no upper bound if None): a
    value out of range is refused by argparse, in one line naming the option, before it
    reaches the code that would fail on it."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low or (high is not None and value > high):
            within = f"from {low} to {high}" if high is not None else f"{low} or more"
            raise argparse.ArgumentTypeError(f"must be {within}, not {value}")
        return value

    parse.__name__ = "int"  # argparse names the type in its messages
    return parse


MAX_DIGITS = 15
"""The most decimals --digits asks for: a double holds no more significant digits."""


def digits_arg(p: argparse.ArgumentParser) -> None:
    """--digits, on every command: decimals of the figures in tables. A figure that would show
    as zero while it is not (a cost of $0.0004 at two decimals) shows its first significant
    digits instead, so 0.00 means zero."""
    p.add_argument(
        "--digits",
        type=int_in(0, MAX_DIGITS),
        default=None,
        metavar="N",
        help=f"decimals of figures in tables, 0 to {MAX_DIGITS}; a non-zero figure never shows "
        "as 0 (default: deskscore.toml's digits, else 2)",
    )


def runs_arg(p: argparse.ArgumentParser, what: str) -> None:
    """--run, repeatable, as the jobs' options declare it (pipelines.options._runs)."""
    p.add_argument(
        "--run",
        dest="runs",
        action="append",
        default=None,
        metavar="RUN_ID",
        help=f"{what} only this run id (repeatable)",
    )

"""Command-line arguments several commands share, declared once: the warehouse, the output
format and digits, and the run filter."""

from __future__ import annotations

import argparse

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


def digits_arg(p: argparse.ArgumentParser) -> None:
    """--digits, on every command: decimals of the figures in tables. A figure that would show
    as zero while it is not (a cost of $0.0004 at two decimals) shows its first significant
    digits instead, so 0.00 means zero."""
    p.add_argument(
        "--digits",
        type=int,
        default=None,
        metavar="N",
        help="decimals of figures in tables; a non-zero figure never shows as 0 (default: "
        "deskscore.toml's digits, else 2)",
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

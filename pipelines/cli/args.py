"""Command-line options that several `deskscore` subcommands share, declared once."""

from __future__ import annotations

import argparse

DEFAULT_WAREHOUSE = "warehouse"


def warehouse_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--warehouse", default=DEFAULT_WAREHOUSE, help="warehouse folder (default: ./warehouse)"
    )


def wait_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="if another job is writing the warehouse, wait this long for it (default 0: refuse)",
    )


def workers_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--workers",
        type=int,
        help="local worker processes (default: one per core when there is more than one "
        "archive or run; 1 runs everything in this process)",
    )

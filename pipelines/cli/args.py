"""The command-line argument that commands which only read the warehouse share."""

from __future__ import annotations

import argparse

DEFAULT_WAREHOUSE = "warehouse"
"""As pipelines.options.DEFAULT_WAREHOUSE."""


def warehouse_arg(p: argparse.ArgumentParser) -> None:
    """--warehouse, as the jobs declare it (pipelines.options.JobOptions; a test keeps the two
    the same). Declared here rather than from the jobs' options: a command that only reads,
    such as `deskscore sql`, would otherwise wait on importing every job's options."""
    p.add_argument(
        "--warehouse",
        dest="warehouse",
        default=DEFAULT_WAREHOUSE,
        help=f"the warehouse folder (default {DEFAULT_WAREHOUSE})",
    )

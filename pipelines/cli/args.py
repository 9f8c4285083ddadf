"""The command-line argument that commands which only read the warehouse share."""

from __future__ import annotations

import argparse

from deskscore.pipelines.options import JobOptions, add_options


def warehouse_arg(p: argparse.ArgumentParser) -> None:
    """--warehouse, as the jobs declare it (pipelines.options.JobOptions)."""
    add_options(p, JobOptions, skip=("wait",))

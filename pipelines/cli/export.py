"""`deskscore export`: a view, a table or a query written to a Parquet, CSV or JSON file, or
to a folder Hugging Face `datasets` loads (sql.export), without `sql --write "COPY ..."`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from deskscore.pipelines.cli.args import warehouse_arg
from deskscore.pipelines.cli.common import UserError, existing_warehouse
from deskscore.pipelines.cli.output import render, say

FORMATS = ("parquet", "csv", "json", "hf")
"""As sql.export.FORMATS (kept here so that --help needs no DuckDB import)."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "export",
        help="write a view, table or query to Parquet, CSV, JSON or a Hugging Face dataset folder",
        description="Write the rows of a view or table (by name) or of a SELECT query to a "
        "file, or, with --format hf, one or more of them to a folder that Hugging Face "
        "datasets loads (data/<name>/*.parquet and a README.md whose configs: YAML names "
        "them). The query reads the warehouse through its views only, as in 'deskscore sql', "
        "and can write in the output's folder only.",
    )
    p.add_argument(
        "items",
        nargs="+",
        metavar="TABLE_OR_QUERY",
        help='a view or table name (leaderboard, run_scores, ...) or a query ("SELECT ..."); '
        "several with --format hf",
    )
    warehouse_arg(p)
    p.add_argument("--format", default="parquet", choices=FORMATS, help="(default parquet)")
    p.add_argument(
        "--out",
        required=True,
        metavar="PATH",
        help="the file written (parquet, csv, json), or the folder (hf); not in the warehouse",
    )
    p.add_argument(
        "--summary",
        default="table",
        choices=("table", "json"),
        help="what is printed about the files written (default table)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.sql.export import ExportError, export

    root = existing_warehouse(args.warehouse)
    try:
        written = export(root, args.items, args.format, args.out)
    except ExportError as exc:
        raise UserError(str(exc)) from None
    rows = [(w.name, w.rows, str(w.path)) for w in written]
    say(render(["name", "rows", "file"], rows, args.summary), args.summary)
    return 0


__all__ = ["FORMATS", "add_parser", "run"]

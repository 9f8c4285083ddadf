"""`deskscore sql`: a query against the warehouse's views.

DuckDB itself keeps the query in (see sql.confine): it reads the warehouse only through the
views, never a file by name, and writes no file; with `--write`, files can be written, and
read back, in one folder only: the warehouse's export area `<warehouse>/exports`, or the
folder `--out` names, which is also where relative paths in the query lead.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deskscore.pipelines.cli.args import warehouse_arg
from deskscore.pipelines.cli.common import UserError, existing_warehouse, make_folder
from deskscore.pipelines.cli.output import FORMATS, render, say

EXPORTS = "exports"
"""The warehouse's export area: where `--write` lets a query write when no `--out` is named.
No table lives there, so nothing a query writes can change what the views read."""

VIEWS_HINT = 'views: deskscore sql "SHOW TABLES"'


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "sql",
        help="run a SQL query against the warehouse views",
        description="Run DuckDB SQL over the warehouse's views. The query can read the views "
        "only (no file by name) and writes no file; with --write it may write files (COPY, "
        "EXPORT DATABASE, ATTACH) and read them back, in one folder: --out, or "
        f"<warehouse>/{EXPORTS}. Relative paths in the query are taken from that folder.",
    )
    p.add_argument(
        "query",
        nargs="?",
        help='SQL, e.g. "SELECT * FROM leaderboard"; without it (and without -f), DuckDB\'s own '
        "shell opens on the views, read-only (needs the duckdb program on the PATH)",
    )
    p.add_argument(
        "-f",
        "--file",
        metavar="FILE",
        help="read the SQL from FILE ('-': standard input) instead of the command line",
    )
    warehouse_arg(p)
    p.add_argument(
        "--write",
        action="store_true",
        help="let the query write files, in the --out folder only (COPY ... TO 'top.csv', "
        "EXPORT DATABASE, ATTACH); default: it writes nothing",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help=f"with --write: the folder files are written to, created if missing (default "
        f"<warehouse>/{EXPORTS}); not the warehouse nor a folder in or above it",
    )
    p.add_argument("--format", default="table", choices=FORMATS)
    p.set_defaults(handler=run)


def export_folder(warehouse: Path, out: str | None) -> Path:
    """The one folder `--write` lets the query write in; UserError for an `--out` that would
    let it write the warehouse's tables (the warehouse, a folder in it, or one above it)."""
    root = warehouse.resolve()
    exports = root / EXPORTS
    if out is None:
        return exports
    folder = Path(out).resolve()
    if folder.is_relative_to(exports):
        return folder
    if folder.is_relative_to(root) or root.is_relative_to(folder):
        raise UserError(
            f"--out {out}: would let the query write the warehouse's tables; name a folder "
            f"outside {root}, or leave --out out to write in {exports}"
        )
    return folder


def _refusal(exc: BaseException, folder: Path | None, warehouse: Path) -> str:
    """What a refused file access means, and what to do instead."""
    from deskscore.sql.confine import error_line

    if folder is None:
        return (
            f"{error_line(exc)} (deskscore sql is read-only: the query reads the warehouse "
            f"through its views only and writes no file; --write lets it write files in "
            f"{warehouse.resolve() / EXPORTS} or in --out DIR)"
        )
    return (
        f"{error_line(exc)} (with --write the query writes and reads files in {folder} only, "
        "where relative paths lead; the warehouse is read through its views)"
    )


SHELL = "duckdb"
"""DuckDB's command-line program (not part of pip's duckdb)."""


def query_text(args: argparse.Namespace) -> str | None:
    """The SQL to run: the argument, or FILE's text with -f; None for the shell."""
    if args.file is None:
        return args.query
    if args.query is not None:
        raise UserError("give the query on the command line or with -f FILE, not both")
    if args.file == "-":
        return sys.stdin.read()
    try:
        return Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"-f {args.file}: cannot read it ({exc})") from None


def open_shell(root: Path) -> int:
    """DuckDB's shell on the views, read-only (sql.shell); UserError when it is not installed."""
    import shutil
    import subprocess
    import tempfile

    from deskscore.sql.shell import init_script

    program = shutil.which(SHELL)
    if program is None:
        raise UserError(
            "no query given, and DuckDB's shell (the 'duckdb' program) is not on the PATH: "
            "pip's duckdb has none. Install the DuckDB CLI (duckdb.org/docs/installation) for "
            'an interactive session, or pass the query: deskscore sql "SELECT ...", or -f FILE'
        )
    with tempfile.NamedTemporaryFile("w", suffix=".sql", prefix="deskscore-shell-") as init:
        init.write(init_script(root))
        init.flush()
        return subprocess.call([program, "-init", init.name, ":memory:"])


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    import duckdb

    from deskscore.sql.confine import confined_connect, error_line

    root = existing_warehouse(args.warehouse)
    query = query_text(args)
    if query is None:
        if args.write or args.out is not None:
            raise UserError("--write and --out go with a query: the shell is read-only")
        return open_shell(root)
    args.query = query
    folder = None
    if args.write:
        folder = export_folder(root, args.out)
        given = f"--out {args.out}" if args.out is not None else str(folder)
        make_folder(folder, given, "the files the query writes")
    elif args.out is not None:
        raise UserError("--out names where --write writes: pass --write too")
    con = confined_connect(root, folder, only=args.query)  # the views it reads, no others
    try:
        with contextlib.chdir(folder) if folder else contextlib.nullcontext():
            relation = con.sql(args.query)
            if relation is None:
                return 0
            columns, rows = relation.columns, relation.fetchall()
    except duckdb.PermissionException as exc:
        raise UserError(_refusal(exc, folder, root)) from None
    except duckdb.Error as exc:
        what = "the settings are fixed" if "configuration has been locked" in str(exc) else ""
        raise UserError(f"{error_line(exc)}; {what or 'fix the query'} ({VIEWS_HINT})") from None
    except (OverflowError, ValueError) as exc:  # a value Python cannot hold, e.g. a huge INTERVAL
        raise UserError(
            f"a result value cannot be shown ({error_line(exc)}); cast it, e.g. to VARCHAR"
        ) from None
    say(render(columns, rows, args.format), args.format)
    return 0

"""`deskscore sql`: a query against the warehouse's views, read-only unless --write."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from deskscore.pipelines.cli.args import warehouse_arg
from deskscore.pipelines.cli.common import UserError, existing_warehouse
from deskscore.pipelines.cli.output import FORMATS, render_relation, say


def add_parser(sub: Any) -> None:
    p = sub.add_parser("sql", help="run a SQL query against the warehouse views")
    p.add_argument("query", help='SQL, e.g. "SELECT * FROM leaderboard"')
    warehouse_arg(p)
    p.add_argument(
        "--write",
        action="store_true",
        help="allow statements that write (COPY, ATTACH, CREATE ...); default: read-only queries",
    )
    p.add_argument("--format", default="table", choices=FORMATS)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    import duckdb

    from deskscore.sql import connect
    from deskscore.sql.loader import sandbox, writing_statements

    root = existing_warehouse(args.warehouse)
    con = connect(root)
    if not getattr(args, "write", False):
        writes = writing_statements(con, args.query)
        if writes:
            raise UserError(
                f"{', '.join(sorted(set(writes)))} statement(s) refused: the warehouse is opened "
                "read-only; pass --write to run statements that write"
            )
        sandbox(con, root)
    try:
        relation = con.sql(args.query)
    except duckdb.Error as exc:
        raise UserError(f"{exc}\n(views: see 'deskscore sql \"SHOW TABLES\"')") from None
    if relation is None:
        return 0
    say(render_relation(relation, args.format), args.format)
    return 0

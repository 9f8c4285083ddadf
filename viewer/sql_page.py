"""The SQL page's queries: run as `deskscore sql` runs them, on a connection that can read no
file and write none (sql.confine), made for each query with only the views it reads.

A query that tries to write (COPY ... TO, EXPORT DATABASE, ATTACH) or to read a file by name
is refused by DuckDB itself; whatever a query creates lives in its own in-memory connection
and is gone when the page is sent.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, NamedTuple

SHOWN_ROWS = 1000
"""Rows the page shows (the CSV download has them all)."""


class Result(NamedTuple):
    """A query's columns and rows, or the one-line reason it failed."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    error: str | None = None


def run_query(warehouse: Path, query: str, limit: int | None = SHOWN_ROWS) -> Result:
    """`query` over the warehouse's views, read-only; at most `limit` rows (None: all)."""
    import duckdb

    from deskscore.sql.confine import confined_connect, error_line

    if not query.strip():
        return Result([], [])
    try:
        con = confined_connect(warehouse, None, only=query)
    except duckdb.Error as exc:
        return Result([], [], error_line(exc))
    try:
        relation = con.sql(query)
        if relation is None:
            return Result([], [])
        rows = (relation if limit is None else relation.limit(limit)).fetchall()
        return Result(list(relation.columns), rows)
    except duckdb.PermissionException as exc:
        return Result([], [], f"{error_line(exc)} (the SQL page is read-only)")
    except (duckdb.Error, OverflowError, ValueError) as exc:
        return Result([], [], error_line(exc))
    finally:
        con.close()


def as_csv(result: Result) -> str:
    """The result as CSV text, a header row first."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(result.columns)
    writer.writerows(result.rows)
    return buf.getvalue()

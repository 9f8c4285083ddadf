"""Two warehouses compared row by row, table by table and view by view, through the views
`connect` defines: what the runner tests and benchmarks/runners.py check when the same jobs
ran on different Beam runners.

Each relation's rows are taken from both warehouses and compared with `EXCEPT ALL` both ways
(duplicates count), so two warehouses agree on a relation only when they hold the same
multiset of rows. Every column is compared: no table records when, where or by which job
process a row was written, so the same jobs over the same sources give the same rows.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple


class RelationDiff(NamedTuple):
    """One table or view of two warehouses: its rows in each, and the rows of each side that
    the other lacks."""

    name: str
    left_rows: int
    right_rows: int
    only_left: int
    only_right: int

    @property
    def same(self) -> bool:
        return self.left_rows == self.right_rows and not self.only_left and not self.only_right


def relations(con: Any) -> list[str]:
    """The tables and views of a `connect` connection (raw tables, staging views,
    intermediate building blocks, marts), by name."""
    rows = con.sql("SELECT table_name FROM information_schema.tables ORDER BY table_name")
    return [name for (name,) in rows.fetchall()]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def compare_warehouses(
    left: str | os.PathLike[str],
    right: str | os.PathLike[str],
) -> list[RelationDiff]:
    """Every relation that holds rows in either warehouse, compared (see the module), sorted
    by name."""
    import duckdb

    from deskscore.sql.loader import connect

    sides = connect(left), connect(right)
    for con in sides:
        con.execute("SET threads TO 1")  # sums of doubles in one order, whatever the machine
    out = []
    for name in relations(sides[0]):
        tables = [con.sql(f"SELECT * FROM {_quote(name)}").to_arrow_table() for con in sides]
        if not (tables[0].num_rows or tables[1].num_rows):
            continue
        pair = duckdb.connect()
        pair.register("l", tables[0])
        pair.register("r", tables[1])

        def count(query: str, pair: Any = pair) -> int:
            return int(pair.sql(f"SELECT count(*) FROM ({query})").fetchall()[0][0])

        out.append(
            RelationDiff(
                name,
                tables[0].num_rows,
                tables[1].num_rows,
                count("SELECT * FROM l EXCEPT ALL SELECT * FROM r"),
                count("SELECT * FROM r EXCEPT ALL SELECT * FROM l"),
            )
        )
        pair.close()
    for con in sides:
        con.close()
    return out


__all__ = ["RelationDiff", "compare_warehouses", "relations"]

"""Apply the SQL files to a DuckDB connection over a warehouse folder.

`raw_<table>` reads the table's Parquet files (union_by_name, so a column that only newer
files have is kept, not silently dropped); a table with no files yet gets a typed empty
relation, so every view exists and every query works on a fresh warehouse.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

from deskscore.schemas import TABLES

DUCKDB_TYPES = {
    "string": "VARCHAR",
    "json": "VARCHAR",
    "bool": "BOOLEAN",
    "int32": "INTEGER",
    "int64": "BIGINT",
    "float64": "DOUBLE",
    "timestamp": "TIMESTAMPTZ",
    "list<string>": "VARCHAR[]",
    "list<list<string>>": "VARCHAR[][]",
}


def _sql_files(folder: str) -> list[tuple[str, str]]:
    base = resources.files("deskscore.sql").joinpath(folder)
    files = sorted((p.name, p.read_text()) for p in base.iterdir() if p.name.endswith(".sql"))
    return [(name.removesuffix(".sql"), text) for name, text in files]


def staging_names() -> list[str]:
    return [name for name, _ in _sql_files("staging")]


def mart_names() -> list[str]:
    """Marts in the order they are applied (file names sort them; a mart may use earlier ones)."""
    return [
        name.split("_", 1)[1] if name[:2].isdigit() else name for name, _ in _sql_files("marts")
    ]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _raw_relation(name: str, root: Path) -> str:
    table_dir = root / name
    if table_dir.is_dir() and any(table_dir.rglob("*.parquet")):
        glob = _quote(str(table_dir / "**" / "*.parquet"))
        return (
            f"SELECT * FROM read_parquet({glob}, union_by_name = true, hive_partitioning = false)"
        )
    cols = ", ".join(
        f"CAST(NULL AS {DUCKDB_TYPES[f.type]}) AS {f.name}" for f in TABLES[name].fields
    )
    return f"SELECT {cols} WHERE false"


def connect(
    warehouse: str | os.PathLike[str], database: str = ":memory:", read_only: bool = False
) -> Any:
    """A DuckDB connection with every staging view and mart defined over `warehouse`."""
    import duckdb

    root = Path(warehouse).resolve()
    con = duckdb.connect(database, read_only=read_only)
    for name in TABLES:
        con.execute(f"CREATE OR REPLACE TEMP VIEW raw_{name} AS {_raw_relation(name, root)}")
    for _, text in _sql_files("staging"):
        con.execute(text.replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMP VIEW"))
    for _, text in _sql_files("marts"):
        con.execute(text.replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMP VIEW"))
    return con


READ_ONLY_STATEMENTS = frozenset({"SELECT", "EXPLAIN"})
"""Statement types `deskscore sql` runs without `--write`: queries, never COPY/ATTACH/EXPORT."""


def sandbox(con: Any, warehouse: str | os.PathLike[str]) -> None:
    """Confine `con` to reading files under `warehouse` (views keep working; nothing outside
    the warehouse can be read or written), and lock the setting so a query cannot undo it."""
    root = str(Path(warehouse).resolve()).rstrip("/") + "/"
    con.execute("SET allowed_directories = [" + _quote(root) + "]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def writing_statements(con: Any, query: str) -> list[str]:
    """The types of the statements in `query` that are not plain queries (empty: read-only).

    A query that DuckDB cannot split is left to DuckDB, which reports the syntax error.
    """
    import duckdb

    try:
        statements = con.extract_statements(query)
    except duckdb.Error:
        return []
    types = [str(s.type).rsplit(".", 1)[-1] for s in statements]
    return [t for t in types if t not in READ_ONLY_STATEMENTS]

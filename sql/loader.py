"""Apply the SQL files to a DuckDB connection over a warehouse folder.

`raw_<table>` reads the table's Parquet files (union_by_name, so a column that only newer
files have is kept, not silently dropped, and one that no file has yet reads as null); a table with no files yet gets a typed empty
relation, so every view exists and every query works on a fresh warehouse. Then come the
layers, in order: staging (one view per table: rename and cast only), intermediate (shared
building blocks) and marts (what users query).

The metric columns are not written out in the SQL: a file names them with an expression the
loader renders from the metric registry, `{{ name }}` or `{{ name(table) }}` (see
`EXPRESSIONS`). Alone on its line (a trailing comma allowed) an expression becomes one column
per line, indented as it is; inside a line, a comma-separated list.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from deskscore.schemas import TABLES
from deskscore.scorers import metrics

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


LAYERS = ("staging", "intermediate", "marts")
"""The SQL folders, in the order they are applied: each may use the views of those before."""


def _metric_casts(table: str) -> list[str]:
    """Staging: rename and cast each metric column of a score table."""
    return [
        f"CAST({f.name} AS {DUCKDB_TYPES[f.type]}) AS {f.name}" for f in metrics.score_fields(table)
    ]


def _board_columns(table: str) -> list[str]:
    """The leaderboard's figures that `table` stores."""
    return [m.name for m in metrics.board() if (m.table or "run_scores") == table]


def _board_figures() -> list[str]:
    """The leaderboard's figures as it shows them: percentages as 100 x the fraction."""
    return [f"100 * {m.name} AS {m.column}" if m.percent else m.name for m in metrics.board()]


def _rank_order() -> list[str]:
    """What the leaderboard ranks by, the better way first."""
    return [
        f"{name} {'DESC' if metrics.metric(name).direction == 'higher' else 'ASC'} NULLS LAST"
        for name in metrics.RANKED_BY
    ]


def _domain_categories() -> list[str]:
    """show_result.py's domain groups (scorers.success.CATEGORIES) as (domain, category) rows."""
    from deskscore.scorers.success import CATEGORIES

    return [
        f"({_quote(domain)}, {_quote(category)})"
        for category, domains in CATEGORIES.items()
        for domain in domains
    ]


EXPRESSIONS: dict[str, Callable[..., list[str]]] = {
    "metric_casts": _metric_casts,
    "board_columns": _board_columns,
    "board_figures": _board_figures,
    "rank_order": _rank_order,
    "domain_categories": _domain_categories,
}
"""What a SQL file may write between {{ }}, each rendered from the metric registry (or, for
the domain groups, from the scorers that declare them)."""

_EXPRESSION = re.compile(r"\{\{\s*(\w+)\s*(?:\(\s*(\w+)\s*\))?\s*\}\}")


def render(text: str, where: str = "SQL") -> str:
    """`text` with its {{ }} expressions rendered; ValueError naming `where` for an unknown one."""

    def expand(match: re.Match[str]) -> str:
        name, arg = match.groups()
        if name not in EXPRESSIONS:
            known = ", ".join(EXPRESSIONS)
            raise ValueError(f"{where}: unknown expression {{{{ {name} }}}}; known: {known}")
        items = EXPRESSIONS[name](*([arg] if arg else []))
        before = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
        after = text[match.end() :].split("\n", 1)[0]
        alone = not before.strip() and after.strip() in ("", ",")
        return (",\n" + before).join(items) if alone else ", ".join(items)

    return _EXPRESSION.sub(expand, text) if "{{" in text else text


def sql_files(folder: str) -> list[tuple[str, str]]:
    """(name, rendered SQL) of a layer's files, in the order they are applied."""
    base = resources.files("deskscore.sql").joinpath(folder)
    files = sorted((p.name, p.read_text()) for p in base.iterdir() if p.name.endswith(".sql"))
    return [(name.removesuffix(".sql"), render(text, f"{folder}/{name}")) for name, text in files]


def _view_names(folder: str) -> list[str]:
    """Views in the order they are applied (file names sort them; a numeric prefix orders
    those that use each other and is not part of the name)."""
    return [name.split("_", 1)[1] if name[:2].isdigit() else name for name, _ in sql_files(folder)]


def staging_names() -> list[str]:
    return _view_names("staging")


def intermediate_names() -> list[str]:
    return _view_names("intermediate")


def mart_names() -> list[str]:
    return _view_names("marts")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _raw_relation(name: str, root: Path) -> str:
    table_dir = root / name
    cols = ", ".join(
        f"CAST(NULL AS {DUCKDB_TYPES[f.type]}) AS {f.name}" for f in TABLES[name].fields
    )
    if table_dir.is_dir() and any(table_dir.rglob("*.parquet")):
        glob = _quote(str(table_dir / "**" / "*.parquet"))
        # by name with the typed empty relation: a column no file has yet reads as null
        return (
            f"SELECT * FROM read_parquet({glob}, union_by_name = true, hive_partitioning = false)"
            f" UNION ALL BY NAME SELECT {cols} WHERE false"
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
    for folder in LAYERS:
        for _, text in sql_files(folder):
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

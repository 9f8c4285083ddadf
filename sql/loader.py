"""Apply the SQL files to a DuckDB connection over a warehouse folder.

`raw_<table>` reads the table's Parquet files (union_by_name, so a column that only newer
files have is kept, not silently dropped, and one that no file has yet reads as null); a
table with no files yet gets a typed empty relation, so every view exists and every query
works on a fresh warehouse. Then come the
layers, in order: staging (one view per table: rename and cast only), intermediate (shared
building blocks) and marts (what users query).

The metric columns are not written out in the SQL: a file names them with an expression the
loader renders from the metric registry, `{{ name }}` or `{{ name(table) }}` (see
`EXPRESSIONS`). Alone on its line (a trailing comma allowed) an expression becomes one column
per line, indented as it is; inside a line, a comma-separated list.

A connection for one query need not define every view: binding a view reads the footers of
the Parquet files under it, and all of them take longer than most queries. Given the SQL it
will run, `connect` defines only the views that SQL reads, and those they read (`plan`), each
exactly as it always is, in the same order.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from deskscore.schemas import TABLES
from deskscore.sql.references import closure, sees_catalog

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
    from deskscore.scorers import metrics

    return [
        f"CAST({f.name} AS {DUCKDB_TYPES[f.type]}) AS {f.name}" for f in metrics.score_fields(table)
    ]


def _board_columns(table: str) -> list[str]:
    """The leaderboard's figures that `table` stores."""
    from deskscore.scorers import metrics

    return [m.name for m in metrics.board() if (m.table or "run_scores") == table]


def _board_figures() -> list[str]:
    """The leaderboard's figures as it shows them: percentages as 100 x the fraction."""
    from deskscore.scorers import metrics

    return [f"100 * {m.name} AS {m.column}" if m.percent else m.name for m in metrics.board()]


def _rank_order() -> list[str]:
    """What the leaderboard ranks by, the better way first."""
    from deskscore.scorers import metrics

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


def _written(folder: str) -> list[tuple[str, str]]:
    """(file name without .sql, SQL as written) of a layer's files, in the order they are
    applied."""
    base = resources.files("deskscore.sql").joinpath(folder)
    files = sorted((p.name, p) for p in base.iterdir() if p.name.endswith(".sql"))
    return [(name.removesuffix(".sql"), path.read_text()) for name, path in files]


def sql_files(folder: str) -> list[tuple[str, str]]:
    """(name, rendered SQL) of a layer's files, in the order they are applied."""
    return [(name, render(text, f"{folder}/{name}.sql")) for name, text in _written(folder)]


def _view_name(file_name: str) -> str:
    """A numeric prefix orders the files whose views use each other; it is not part of the name."""
    return file_name.split("_", 1)[1] if file_name[:2].isdigit() else file_name


def _view_names(folder: str) -> list[str]:
    """Views in the order they are applied (file names sort them)."""
    return [_view_name(name) for name, _ in _written(folder)]


def staging_names() -> list[str]:
    return _view_names("staging")


def intermediate_names() -> list[str]:
    return _view_names("intermediate")


def mart_names() -> list[str]:
    return _view_names("marts")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def glob_literal(path: str | os.PathLike[str]) -> str:
    """`path` as a DuckDB file pattern that matches only itself: DuckDB takes `*`, `?` and `[`
    in any path it is given as a glob, so each is bracketed (`[[]`), which matches it alone."""
    return re.sub(r"([*?\[])", r"[\1]", os.fspath(path))


def table_files(root: Path) -> dict[str, list[Path]]:
    """Every table's current Parquet files, read at one version: those the warehouse's
    manifest lists, or, for a warehouse written before manifests, every file in the table's
    folder (write-aside temporaries excluded)."""
    from deskscore.schemas.manifest import table_files as listed_files

    listed = listed_files(root)
    out: dict[str, list[Path]] = {}
    for name in TABLES:
        if listed is not None:
            out[name] = listed.get(name, [])
            continue
        table_dir = root / name
        found = table_dir.rglob("*.parquet") if table_dir.is_dir() else ()
        out[name] = sorted(p for p in found if not p.name.startswith("."))
    return out


def empty_relation(name: str) -> str:
    """A typed relation with no rows: a table with no files yet still has every column."""
    from deskscore.scorers import metrics  # noqa: F401  (declares the score tables' metric columns)

    cols = ", ".join(
        f"CAST(NULL AS {DUCKDB_TYPES[f.type]}) AS {f.name}" for f in TABLES[name].fields
    )
    return f"SELECT {cols} WHERE false"


def _raw_relation(name: str, files: list[Path]) -> str:
    """The table's rows: its files, each named literally, or a typed empty relation."""
    if files:
        listed = "[" + ", ".join(_quote(glob_literal(p)) for p in files) + "]"
        # by name with the typed empty relation: a column no file has yet reads as null
        return (
            f"SELECT * FROM read_parquet({listed}, union_by_name = true, hive_partitioning = false)"
            f" UNION ALL BY NAME {empty_relation(name)}"
        )
    return empty_relation(name)


class Plan(NamedTuple):
    """What a connection defines: the tables whose `raw_<table>` relation it reads, and the
    CREATE statements of the views, in the order they are applied."""

    tables: list[str]
    views: list[str]


def plan(only: str | Iterable[str] | None = None) -> Plan:
    """Every relation (None), or those SQL `only` reads: the views and `raw_<table>` relations
    it names as whole words, and those their SQL names, transitively (see sql.references);
    every one still when `only` can see the catalog (SHOW TABLES, information_schema, ...).
    A view is defined as it always is, only not when nothing reads it."""
    texts = [only] if isinstance(only, str) else None if only is None else list(only)
    written = {
        _view_name(name): (f"{folder}/{name}.sql", text)
        for folder in LAYERS
        for name, text in _written(folder)
    }
    rendered: dict[str, str] = {}

    def sql_of(view: str) -> str:
        if view not in rendered:
            where, text = written[view]
            rendered[view] = render(text, where)
        return rendered[view]

    raw = [f"raw_{name}" for name in TABLES]
    if texts is None or any(sees_catalog(text) for text in texts):
        needed = {*raw, *written}
    else:  # a raw_<table> relation reads files, no view
        needed = closure(texts, {*raw, *written}, lambda v: sql_of(v) if v in written else None)
    views = [sql_of(view) for view in written if view in needed]
    return Plan([name for name in TABLES if f"raw_{name}" in needed], views)


def define_views(con: Any, views: Sequence[str]) -> None:
    """The `views` (CREATE statements, in order) as temporary views of `con`."""
    for text in views:
        con.execute(text.replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMP VIEW"))


def connect(
    warehouse: str | os.PathLike[str],
    database: str = ":memory:",
    read_only: bool = False,
    *,
    only: str | Iterable[str] | None = None,
) -> Any:
    """A DuckDB connection with the staging views and marts defined over `warehouse`, as its
    current manifest has it: one consistent version, whatever writers do meanwhile. Every
    view, or, given `only` (the SQL the caller will run, or just the names of the views it
    reads), those it reads (see `plan`): a connection for one query starts faster."""
    import duckdb

    needed = plan(only)
    con = duckdb.connect(database, read_only=read_only)
    if needed.tables:
        files = table_files(Path(warehouse).resolve())
        for name in needed.tables:
            try:
                con.execute(
                    f"CREATE OR REPLACE TEMP VIEW raw_{name} AS {_raw_relation(name, files[name])}"
                )
            except duckdb.Error:  # DuckDB reads the footers here: a file deleted or cut short
                _raise_unreadable(name, files[name])
                raise
    define_views(con, needed.views)
    return con


def _raise_unreadable(name: str, files: Sequence[Path]) -> None:
    """Raise the error naming the first of `files` whose footer cannot be read (what DuckDB
    failed on, as one line that says what to do); return if every one can be."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from deskscore.schemas.manifest import unreadable_file

    for path in files:
        try:
            pq.read_metadata(str(path))
        except (OSError, pa.ArrowException) as exc:
            raise unreadable_file(name, path, exc) from None

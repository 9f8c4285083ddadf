"""A DuckDB connection over the warehouse that DuckDB itself keeps from writing files, and from
reading any but the warehouse's: what `deskscore sql` runs a user's SQL on.

DuckDB's file confinement (`enable_external_access = false` with `allowed_directories`) does
not tell reading from writing: a folder the views may read is one `COPY ... TO` may overwrite.
So here the views do not read files through DuckDB at all. Each table's Parquet files are
handed to DuckDB as an Arrow dataset, fixed when the connection is made (pyarrow reads them;
DuckDB pushes columns and filters down into it), and then DuckDB's own file access is
switched off: no folder allowed (read-only), or only the export folder (`write_dir`), where
files may be written and read back. DuckDB's temporary directory is switched off as well (it
would otherwise be allowed), extensions can be neither installed nor loaded, and
`lock_configuration` makes all of it final: no SET or RESET in the user's SQL undoes it.
DuckDB checks paths as they are written, so a symbolic link a user put in the write folder
leads where it points: that folder should be one of the user's own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from deskscore.schemas import TABLES
from deskscore.schemas.manifest import unreadable_file
from deskscore.sql.loader import define_views, empty_relation, plan, table_files
from deskscore.sql.references import words

LOCKED_SETTINGS = (
    ("temp_directory", "''"),
    ("autoinstall_known_extensions", "false"),
    ("autoload_known_extensions", "false"),
    ("allow_community_extensions", "false"),
    ("allow_persistent_secrets", "false"),
    ("python_enable_replacements", "false"),
)
"""Settings made before file access is switched off: no spill files (DuckDB allows its
temporary directory even when file access is off), no extension fetched or loaded, no secret
stored on disk, no Python variable of the caller's read as a table."""


def _dataset(name: str, files: Sequence[Path]) -> Any:
    """The files of table `name` as one Arrow dataset, every column any file has (a file
    older than a column reads it as nulls, as DuckDB's union_by_name does).

    pyarrow.dataset looks for pandas as it loads: with pandas installed, that import took
    216 ms of a 0.6 s `deskscore sql` query of a mart, and 43 ms once pyarrow has looked
    with pandas hidden (`pyarrow_without_pandas`). DuckDB still converts results to pandas
    for whoever asks for them."""
    from deskscore.schemas.validate import pyarrow_without_pandas

    pyarrow_without_pandas()
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    schemas = []
    for path in files:
        try:
            schemas.append(pq.read_schema(str(path)))
        except (OSError, pa.ArrowException) as exc:  # deleted, cut short, overwritten
            raise unreadable_file(name, path, exc) from None
    schema = pa.unify_schemas(schemas, promote_options="permissive")
    return ds.dataset([str(f) for f in files], schema=schema, format="parquet")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def confine(con: Any, write_dir: str | os.PathLike[str] | None = None) -> None:
    """Switch off `con`'s access to files, except `write_dir` (written and read back) when
    given, and lock its configuration so that SQL run on it cannot undo this."""
    for name, value in LOCKED_SETTINGS:
        con.execute(f"SET {name} = {value}")
    allowed = [] if write_dir is None else [str(Path(write_dir).resolve()).rstrip("/") + "/"]
    con.execute("SET allowed_directories = [" + ", ".join(_quote(d) for d in allowed) + "]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def _datasets_named(only: str | Iterable[str] | None) -> str | list[str] | None:
    """`only` with `raw_<table>` added for each `files_<table>` (a table's Arrow dataset, which
    SQL may read directly) it names, so that the dataset is registered."""
    if only is None:
        return None
    texts = [only] if isinstance(only, str) else list(only)
    named = set().union(*(words(text) for text in texts))
    return [*texts, *(f"raw_{name}" for name in TABLES if f"files_{name}" in named)]


def error_line(exc: BaseException) -> str:
    """The first line of a DuckDB error, without the query excerpt it appends: what a person
    reads when a confined query fails."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def confined_connect(
    warehouse: str | os.PathLike[str],
    write_dir: str | os.PathLike[str] | None = None,
    *,
    only: str | Iterable[str] | None = None,
) -> Any:
    """A DuckDB connection with the views of `sql.connect` over `warehouse` (every one, or
    those the SQL `only` reads: see `sql.loader.plan`), which can read no file and write none,
    except in `write_dir` when given (see the module's docstring). The views are defined
    before the connection is locked down: none can be added after."""
    import duckdb

    needed = plan(_datasets_named(only))
    con = duckdb.connect(":memory:")
    listed = table_files(Path(warehouse).resolve()) if needed.tables else {}
    for name in needed.tables:  # one version of the warehouse for every table
        files = listed[name]
        if files:
            con.register(f"files_{name}", _dataset(name, files))
            # by name with the typed empty relation: a column no file has yet reads as null
            con.execute(
                f"CREATE OR REPLACE TEMP VIEW raw_{name} AS SELECT * FROM files_{name} "
                f"UNION ALL BY NAME {empty_relation(name)}"
            )
        else:
            con.execute(f"CREATE OR REPLACE TEMP VIEW raw_{name} AS {empty_relation(name)}")
    define_views(con, needed.views)
    confine(con, write_dir)
    return con


__all__ = ["LOCKED_SETTINGS", "confine", "confined_connect", "error_line"]

"""DuckDB's own shell on the warehouse's views, read-only: the script it starts with.

pip's duckdb has no shell; the DuckDB command-line program, when installed, is started on an
in-memory database with `-init` this script: every table's Parquet files as `raw_<table>`
(each file named literally, one version of the warehouse), every view over them, then file
access limited to those files (`allowed_paths`) and the configuration locked, so that no SET
in the session undoes it. Unlike `deskscore sql` (sql.confine), the shell reads the files
through DuckDB itself, so they must be allowed: keep COPY away from them.
"""

from __future__ import annotations

import os
from pathlib import Path

from deskscore.sql.confine import LOCKED_SETTINGS
from deskscore.sql.loader import _raw_relation, plan, table_files


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def init_script(warehouse: str | os.PathLike[str]) -> str:
    """The SQL the shell runs first: the views, then the confinement (see the module)."""
    needed = plan(None)
    files = table_files(Path(warehouse).resolve())
    lines = [".bail on"]
    for name in needed.tables:
        lines.append(
            f"CREATE OR REPLACE TEMP VIEW raw_{name} AS {_raw_relation(name, files[name])};"
        )
    for text in needed.views:
        statement = text.replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMP VIEW").strip()
        lines.append(statement if statement.endswith(";") else statement + ";")
    lines += [f"SET {name} = {value};" for name, value in LOCKED_SETTINGS]
    allowed = [str(p) for name in needed.tables for p in files[name]]
    lines.append("SET allowed_paths = [" + ", ".join(_quote(p) for p in allowed) + "];")
    lines.append("SET enable_external_access = false;")
    lines.append("SET lock_configuration = true;")
    lines.append(".bail off")
    return "\n".join(lines) + "\n"


__all__ = ["init_script"]

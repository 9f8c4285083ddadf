"""Which views a piece of SQL reads: the view names it holds as whole words (DuckDB's
identifiers ignore case, quoted or not), and those their own SQL holds, in turn.

A word is a run of letters, digits and underscores, so `n_steps` is not `steps`, and
`main."runs"` or `FROM runs` are `runs`. Finding a name in a comment, a string or a column
alias only defines a view that is not needed, never one fewer. SQL can also read the views
without naming them: listing the catalog (SHOW TABLES, DESCRIBE or DESC alone,
information_schema, duckdb_views(), pg_catalog, sqlite_master, PRAGMA show_tables, EXPORT
DATABASE) or naming a view in a string it computes (query_table('leader' || 'board')). Such SQL
needs every view: `sees_catalog` tells it by the words it holds (DESC, an ORDER BY direction
too, by DuckDB's parser).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable

CATALOG_WORDS = frozenset(
    {"show", "describe", "information_schema", "export", "database", "databases", "query",
     "query_table", "sql_auto_complete", "explain"}
)  # fmt: skip
"""Words of SQL that can see views it does not name: what lists the catalog, and the table
functions that read a view named by a string (which the query may compute)."""
CATALOG_PREFIXES = ("duckdb_", "pg_", "sqlite_", "pragma")
"""Prefixes of the catalog functions and views: duckdb_views(), pg_class, sqlite_master,
pragma_show_tables, PRAGMA show_tables."""

_WORD = re.compile(r"\w+")


def words(text: str) -> set[str]:
    """The words of `text`, lower-cased."""
    return {w.lower() for w in _WORD.findall(text)}


def _describes_tables(text: str) -> bool:
    """Whether `text` holds a DESC statement (every table, described) rather than only ORDER BY
    directions: DuckDB's parser tells (a SHOW_REF node); SQL it does not serialize (a
    statement other than SELECT, a syntax error) counts as one, to be safe."""
    import duckdb

    with duckdb.connect() as con:
        try:
            (tree,) = con.execute("SELECT json_serialize_sql($text)", {"text": text}).fetchone()
        except duckdb.Error:
            return True
    return json.loads(tree)["error"] or "SHOW_REF" in tree


def sees_catalog(text: str) -> bool:
    """Whether SQL `text` may read views it does not name (see the module's docstring)."""
    found = words(text)
    if found & CATALOG_WORDS or any(w.startswith(CATALOG_PREFIXES) for w in found):
        return True
    return "desc" in found and _describes_tables(text)


def closure(
    texts: Iterable[str], names: Collection[str], reads: Callable[[str], str | None]
) -> set[str]:
    """The `names` that `texts` hold as words, and, for each, those its SQL (`reads(name)`,
    None for a relation that reads no view) holds, transitively."""
    known = set(names)
    todo = [n for text in texts for n in words(text) & known]
    found: set[str] = set()
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        text = reads(name)
        if text is not None:
            todo.extend((words(text) & known) - found)
    return found


__all__ = ["CATALOG_PREFIXES", "CATALOG_WORDS", "closure", "sees_catalog", "words"]

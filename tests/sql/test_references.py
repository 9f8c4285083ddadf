"""Which views SQL reads: its words, what the views named read in turn, and the SQL that can
see every view without naming one."""

from __future__ import annotations

import pytest

from deskscore.sql.references import closure, sees_catalog, words


def test_words_are_whole_and_ignore_case() -> None:
    found = words('SELECT n_steps, "Tasks".x FROM main.RUNS -- steps\nJOIN leaderboard2 USING (a)')
    assert {"n_steps", "tasks", "runs", "steps", "leaderboard2"} <= found
    assert "leaderboard" not in found and "step" not in found


def test_the_closure_follows_what_each_named_view_reads() -> None:
    reads = {"mart": "FROM middle JOIN runs", "middle": "FROM runs", "runs": "FROM raw_runs"}
    names = {*reads, "raw_runs", "other"}
    found = closure(["SELECT * FROM MART"], names, reads.get)
    assert found == {"mart", "middle", "runs", "raw_runs"}
    assert closure(["SELECT 1"], names, reads.get) == set()


@pytest.mark.parametrize(
    "sql",
    [
        "SHOW TABLES",
        "show all tables",
        "DESCRIBE",
        "DESC",
        "FROM (DESC) SELECT name",
        "SELECT 1 AS a; desc",
        "CREATE TEMP VIEW v AS DESC",
        "SELECT * FROM t UNION ALL DESC",
        "INSERT INTO t DESC",
        "SELECT table_name FROM information_schema.tables",
        "SELECT view_name FROM duckdb_views()",
        "FROM duckdb_columns",
        "SELECT relname FROM pg_catalog.pg_class",
        "SELECT name FROM sqlite_master",
        "PRAGMA show_tables",
        "FROM pragma_table_info('runs')",
        "FROM query_table('leader' || 'board')",
        "FROM query('SELECT * FROM ' || 'runs')",
        "EXPORT DATABASE 'out'",
        "EXPLAIN SELECT 1",
    ],
)
def test_sql_that_can_list_the_catalog_or_compute_a_view_name_sees_every_view(sql: str) -> None:
    assert sees_catalog(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "SELECT run_id FROM runs ORDER BY run_id DESC",
        "SELECT * FROM leaderboard ORDER BY rank DESC NULLS LAST, label desc",
        "SELECT arg_max(a, b ORDER BY c DESC) FROM steps",
        "SELECT list_sort([2, 1], 'DESC')",
        "SELECT described, shown FROM runs",
    ],
)
def test_sql_that_only_names_its_views_does_not_see_the_others(sql: str) -> None:
    assert not sees_catalog(sql)

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from deskscore.collectors.warehouse import Warehouse
from deskscore.schemas import TABLES
from deskscore.scorers import metrics
from deskscore.sql import DUCKDB_TYPES, connect, intermediate_names, mart_names, staging_names
from deskscore.sql.loader import render, sql_files


def test_there_is_one_staging_view_per_table() -> None:
    assert sorted(staging_names()) == sorted(TABLES)


def test_staging_views_only_rename_and_cast_every_schema_column() -> None:
    staging = dict(sql_files("staging"))
    for name, table in TABLES.items():
        text = staging[name]
        casts = re.findall(r"CAST\((\w+) AS ([\w\[\]]+)\)\s+AS (\w+)", text)
        assert [(c, t) for c, t, _ in casts] == [
            (f.name, DUCKDB_TYPES[f.type]) for f in table.fields
        ], name
        code = "\n".join(line for line in text.splitlines() if not line.startswith("--")).upper()
        assert "JOIN" not in code and "WHERE" not in code


def test_every_view_exists_on_an_empty_warehouse(tmp_path) -> None:
    con = connect(tmp_path)
    for name in [*TABLES, *intermediate_names(), *mart_names()]:
        assert con.sql(f"SELECT count(*) FROM {name}").fetchall() == [(0,)]


def test_a_column_only_newer_files_have_is_kept(tmp_path, old_quarantine_file) -> None:
    """Files written before a column existed must not hide it (union_by_name)."""
    Warehouse(tmp_path).write(
        "quarantine",
        [old_quarantine_file | {"run_id": "r2", "excerpt": "new"}],
        {"benchmark": "osworld", "run_id": "r2"},
    )
    rows = (
        connect(tmp_path).sql("SELECT run_id, excerpt FROM quarantine ORDER BY run_id").fetchall()
    )
    assert rows == [("r1", None), ("r2", "new")]


def test_columns_no_file_has_yet_read_as_null(tmp_path, old_quarantine_file) -> None:
    """A warehouse written before quarantine rows had line_end and n_lines keeps working."""
    con = connect(tmp_path)
    rows = con.sql("SELECT run_id, line_no, line_end, n_lines FROM quarantine").fetchall()
    assert rows == [("r1", None, None, None)]
    assert con.sql("SELECT count(*) FROM leaderboard").fetchall() == [(0,)]


def _reads(text: str) -> tuple[list[str], set[str]]:
    """What a view's header says it reads, and the views its code selects from (FROM and JOIN
    targets that are not its own CTEs)."""
    header = re.search(r"^-- Reads: (.*)\.$", text, re.MULTILINE)
    code = "\n".join(line.split("--", 1)[0] for line in text.splitlines())
    ctes = {c.lower() for c in re.findall(r"(\w+)\s+AS\s*\(", code, re.IGNORECASE)}
    used = {t.lower() for t in re.findall(r"\b(?:FROM|JOIN)\s+(\w+)", code, re.IGNORECASE)}
    return (header.group(1).split(", ") if header else []), used - ctes


@pytest.mark.parametrize("layer", ["intermediate", "marts"])
def test_every_view_above_staging_states_in_its_header_what_it_reads(layer) -> None:
    for name, text in sql_files(layer):
        stated, used = _reads(text)
        header = text[: text.index("CREATE")]
        assert all(line.startswith("--") for line in header.splitlines()), name
        assert stated and set(stated) == used, (name, stated, sorted(used))


def test_each_layer_reads_only_the_layers_before_it() -> None:
    for name, text in sql_files("staging"):
        assert re.findall(r"\bFROM (\w+)", text) == [f"raw_{name}"], name
    before = set(staging_names())
    for layer, names in (("intermediate", intermediate_names()), ("marts", mart_names())):
        for (_, text), name in zip(sql_files(layer), names, strict=True):
            assert _reads(text)[1] <= before, (name, _reads(text)[1] - before)
            before.add(name)  # a later file of the layer may build on it (file names sort)


def test_the_intermediate_views_are_building_blocks_of_the_marts() -> None:
    marts_read = set().union(*(_reads(text)[1] for _, text in sql_files("marts")))
    assert intermediate_names() and set(intermediate_names()) <= marts_read


def test_an_unknown_expression_is_refused_with_the_file_named() -> None:
    with pytest.raises(ValueError, match=r"marts/x.sql: unknown expression \{\{ nope \}\}"):
        render("SELECT {{ nope }}", "marts/x.sql")


def test_an_expression_alone_on_its_line_gives_one_column_per_line() -> None:
    text = render("SELECT\n    a,\n    {{ board_columns(run_costs) }},\n    b\nFROM t", "t")
    costs = [m.name for m in metrics.board() if m.table == "run_costs"]
    assert len(costs) > 1
    assert text.splitlines() == [
        "SELECT",
        "    a,",
        *(f"    {c}," for c in costs),
        "    b",
        "FROM t",
    ]
    assert render("ORDER BY {{ rank_order }}") == (
        "ORDER BY success_rate_human DESC NULLS LAST, wes_plus_single DESC NULLS LAST, "
        "success_rate_run DESC NULLS LAST"
    )


@pytest.fixture(scope="module")
def mixed_warehouse(deskcraft_archive: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The DeskCraft runs and two generated OSWorld runs (one task per domain) side by side,
    scored under one configuration: rows in every mart, as in a demo's warehouse."""
    from deskscore.collectors.synthetic import load_profiles, task_slice, write_run
    from deskscore.pipelines.jobs.ingest import run_ingest
    from deskscore.pipelines.jobs.score import run_score
    from deskscore.pipelines.options import IngestOptions, ScoreOptions

    root = tmp_path_factory.mktemp("mixed")
    wh, results = root / "wh", root / "results"
    shutil.copytree(deskcraft_archive["warehouse"], wh)
    for seed, profile in enumerate(load_profiles()[:2]):
        write_run(results, profile, task_slice(per_domain=1), seed=seed, screenshots="none")
    run_ingest(IngestOptions(str(wh), sources=(str(results),), engine="direct"))
    run_score(ScoreOptions(str(wh), max_steps_scoring=15, engine="direct"))
    return wh


def _defined(con: Any) -> set[str]:
    """The views defined on `con` (the loader's, none of DuckDB's own)."""
    rows = con.sql("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    return {name for (name,) in rows}


def _stated_reads() -> dict[str, set[str]]:
    """What each view reads, as its header states it (staging: its raw relation)."""
    stated = {name: {f"raw_{name}"} for name in staging_names()}
    for layer, names in (("intermediate", intermediate_names()), ("marts", mart_names())):
        for (_, text), name in zip(sql_files(layer), names, strict=True):
            stated[name] = set(_reads(text)[0])
    return stated


def _with_what_it_reads(view: str, stated: dict[str, set[str]]) -> set[str]:
    found, todo = set(), [view]
    while todo:
        name = todo.pop()
        if name not in found:
            found.add(name)
            todo.extend(stated.get(name, ()))
    return found


def _ordered_rows(con: Any, view: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    relation = con.sql(f"SELECT * FROM {view} ORDER BY ALL")
    return relation.columns, relation.fetchall()


@pytest.fixture(scope="module")
def every_view(mixed_warehouse: Path) -> Any:
    con = connect(mixed_warehouse)
    con.execute("SET threads = 1")  # sums add their terms in one order, on both connections
    return con


@pytest.mark.parametrize("mart", mart_names())
def test_a_connection_for_one_mart_defines_it_and_what_it_reads_and_gives_the_same_rows(
    mixed_warehouse: Path, every_view: Any, mart: str
) -> None:
    con = connect(mixed_warehouse, only=f"SELECT * FROM {mart}")
    con.execute("SET threads = 1")
    defined = _defined(con)
    assert _with_what_it_reads(mart, _stated_reads()) <= defined < _defined(every_view)
    columns, rows = _ordered_rows(con, mart)
    assert rows, f"the warehouse has no {mart} rows: the comparison would prove nothing"
    assert (columns, rows) == _ordered_rows(every_view, mart)


def test_a_connection_for_sql_that_names_no_view_defines_none(tmp_path: Path) -> None:
    con = connect(tmp_path, only="SELECT 42 AS answer")
    assert _defined(con) == set()
    assert con.sql("SELECT 42 AS answer").fetchall() == [(42,)]
    assert _defined(connect(tmp_path, only=["runs", "leaderboard"])) >= {"runs", "leaderboard"}


@pytest.fixture(scope="module")
def empty_warehouse(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """A warehouse with no file yet, and a connection with every view over it."""
    root = tmp_path_factory.mktemp("empty")
    return root, connect(root)


@pytest.mark.parametrize(
    "sql",
    [
        "SHOW TABLES",
        "DESC",
        "SELECT name, column_names FROM (DESCRIBE) ORDER BY name",
        "SELECT table_name FROM information_schema.tables ORDER BY 1",
        "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY 1",
        "PRAGMA show_tables",
        "SELECT count(*) FROM query_table('leader' || 'board')",
    ],
)
def test_sql_that_lists_the_catalog_sees_every_view_as_ever(
    empty_warehouse: tuple[Path, Any], sql: str
) -> None:
    root, every_view = empty_warehouse
    expected = every_view.sql(sql).fetchall()
    assert connect(root, only=sql).sql(sql).fetchall() == expected
    assert len(expected) > len(mart_names()) or "query_table" in sql


def test_a_data_file_cut_short_is_one_error_naming_it_not_duckdbs(tmp_path) -> None:
    from deskscore.schemas.manifest import WarehouseDamaged

    wh = Warehouse(tmp_path)
    row = {"run_id": "r1", "benchmark": "b", "source": "s", "location": "f", "reason": "x"}
    wh.write("quarantine", [row | {"message": "m"}], {"benchmark": "b", "run_id": "r1"})
    [path] = wh.files("quarantine")
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(WarehouseDamaged, match="not a readable Parquet file") as caught:
        connect(tmp_path, only="SELECT * FROM quarantine")
    assert str(path) in str(caught.value) and "--force" in str(caught.value)

from __future__ import annotations

import re
from importlib import resources

from deskscore.collectors.warehouse import Warehouse
from deskscore.schemas import TABLES
from deskscore.sql import DUCKDB_TYPES, connect, mart_names, staging_names


def test_there_is_one_staging_view_per_table() -> None:
    assert sorted(staging_names()) == sorted(TABLES)


def test_staging_views_only_rename_and_cast_every_schema_column() -> None:
    for name, table in TABLES.items():
        text = resources.files("deskscore.sql").joinpath("staging", f"{name}.sql").read_text()
        casts = re.findall(r"CAST\((\w+) AS ([\w\[\]]+)\)\s+AS (\w+)", text)
        assert [(c, t) for c, t, _ in casts] == [
            (f.name, DUCKDB_TYPES[f.type]) for f in table.fields
        ], name
        code = "\n".join(line for line in text.splitlines() if not line.startswith("--")).upper()
        assert "JOIN" not in code and "WHERE" not in code


def test_every_view_exists_on_an_empty_warehouse(tmp_path) -> None:
    con = connect(tmp_path)
    for name in [*TABLES, *mart_names()]:
        assert con.sql(f"SELECT count(*) FROM {name}").fetchall() == [(0,)]


def test_a_column_only_newer_files_have_is_kept(tmp_path) -> None:
    """Files written before a column existed must not hide it (union_by_name)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    wh = Warehouse(tmp_path)
    q = {
        "run_id": "r1",
        "benchmark": "osworld",
        "source": "s",
        "location": "f",
        "reason": "x",
        "message": "m",
    }
    wh.write(
        "quarantine",
        [q | {"run_id": "r2", "excerpt": "new"}],
        {"benchmark": "osworld", "run_id": "r2"},
    )
    old = pa.table({k: [v] for k, v in q.items()})
    target = wh.partition_dir("quarantine", {"benchmark": "osworld", "run_id": "r1"})
    target.mkdir(parents=True)
    pq.write_table(old, target / "data.parquet")
    rows = (
        connect(tmp_path).sql("SELECT run_id, excerpt FROM quarantine ORDER BY run_id").fetchall()
    )
    assert rows == [("r1", None), ("r2", "new")]

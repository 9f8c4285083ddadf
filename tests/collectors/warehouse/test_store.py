from __future__ import annotations

import pyarrow.parquet as pq

from deskscore.collectors.warehouse import Warehouse, schema_version_of
from deskscore.schemas import SCHEMA_VERSION


def _q(i: int) -> dict:
    return {
        "run_id": "r1",
        "benchmark": "osworld",
        "source": "s",
        "location": f"f{i}",
        "reason": "x",
        "message": "m",
    }


def test_partitions_are_laid_out_by_benchmark_and_run(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    path = wh.write("quarantine", [_q(1)], {"benchmark": "osworld", "run_id": "r1"})
    assert (
        path.relative_to(tmp_path).as_posix()
        == "quarantine/benchmark=osworld/run_id=r1/data.parquet"
    )
    assert schema_version_of(path) == SCHEMA_VERSION


def test_writing_the_same_rows_twice_gives_identical_bytes(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    part = {"benchmark": "osworld", "run_id": "r1"}
    first = wh.write("quarantine", [_q(1), _q(2)], part).read_bytes()
    second = wh.write("quarantine", [_q(1), _q(2)], part).read_bytes()
    assert first == second
    assert [p.name for p in wh.files("quarantine")] == ["data.parquet"]


def test_a_rewrite_replaces_the_partition_and_leaves_no_temporaries(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    part = {"benchmark": "osworld", "run_id": "r1"}
    wh.write("quarantine", [_q(1), _q(2)], part)
    wh.write("quarantine", [_q(3)], part)
    assert wh.read("quarantine").column("location").to_pylist() == ["f3"]
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".parquet"]


def test_hostile_partition_values_stay_inside_the_table(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    path = wh.write("quarantine", [_q(1)], {"benchmark": "../../etc", "run_id": "a/b"})
    assert tmp_path / "quarantine" in path.parents
    assert ".." not in path.relative_to(tmp_path).parts


def test_reading_an_empty_table_gives_its_schema(tmp_path) -> None:
    table = Warehouse(tmp_path).read("steps")
    assert table.num_rows == 0
    assert "step_num" in table.schema.names
    assert pq is not None


def test_a_file_written_before_a_column_existed_reads_it_as_null(
    tmp_path, old_quarantine_file
) -> None:
    wh = Warehouse(tmp_path)
    table = wh.read("quarantine")
    assert table.column("excerpt").to_pylist() == [None]
    assert wh.read("quarantine", columns=["location", "line_no"]).to_pylist() == [
        {"location": "f", "line_no": None}
    ]

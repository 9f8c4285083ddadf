from __future__ import annotations

import pytest

from deskscore.schemas import SCHEMA_VERSION, TABLES, arrow_schema, conform_rows
from deskscore.scorers import metrics  # noqa: F401  (fills the score tables' metric columns)


def test_every_field_of_every_table_is_documented() -> None:
    for table in TABLES.values():
        assert table.doc
        for field in table.fields:
            assert len(field.doc) > 10, f"{table.name}.{field.name} needs a docstring"


def test_keys_and_partitions_name_real_columns() -> None:
    for table in TABLES.values():
        assert set(table.key) <= set(table.columns), table.name
        assert set(table.partition) <= set(table.columns), table.name
        assert len(set(table.columns)) == len(table.columns), f"{table.name} repeats a column"


def test_arrow_schema_carries_docs_and_version() -> None:
    schema = arrow_schema("steps")
    assert schema.metadata[b"deskscore.schema_version"] == str(SCHEMA_VERSION).encode()
    assert schema.field("step_num").metadata[b"doc"].startswith(b"The runner's step_num")
    assert not schema.field("run_id").nullable
    assert schema.field("x").nullable


def test_conform_rows_fills_missing_columns_with_null() -> None:
    table = conform_rows(
        "quarantine",
        [
            {
                "run_id": "r",
                "benchmark": "b",
                "source": "s",
                "location": "l",
                "reason": "x",
                "message": "m",
            }
        ],
    )
    assert table.num_rows == 1
    assert table.column("line_no").to_pylist() == [None]


def test_conform_rows_rejects_an_invented_column() -> None:
    with pytest.raises(ValueError, match="columns the schema lacks"):
        conform_rows("runs", [{"run_id": "r", "made_up": 1}])


def test_conform_rows_rejects_null_in_a_required_field() -> None:
    with pytest.raises(ValueError, match="required field 'source'"):
        conform_rows(
            "quarantine",
            [{"run_id": "r", "benchmark": "b", "location": "l", "reason": "x", "message": "m"}],
        )

from __future__ import annotations

import pytest

from deskscore.schemas import SCHEMA_VERSION, TABLES, arrow_schema, conform_rows
from deskscore.schemas.validate import ColumnRows, conform_columns
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


def _full_quarantine_row(**changes: object) -> dict[str, object]:
    row: dict[str, object] = {
        "run_id": "r", "benchmark": "b", "source": "s", "location": "l", "line_no": 3,
        "line_end": None, "n_lines": None, "reason": "x", "message": "m", "excerpt": None,
    }  # fmt: skip
    row.update(changes)
    return row


def test_conform_rows_reads_full_rows_as_cell_by_cell_does() -> None:
    """Rows holding every column take the transposing path; mixing in one short row takes
    the cell-by-cell one: the same rows give the same table either way."""
    full = [_full_quarantine_row(line_no=i, excerpt=f"e{i}") for i in range(5)]
    assert set(full[0]) == set(arrow_schema("quarantine").names)
    short = {k: v for k, v in _full_quarantine_row(line_no=9).items() if k != "excerpt"}
    mixed = conform_rows("quarantine", [*full, short])
    alone = conform_rows("quarantine", full)
    assert mixed.slice(0, 5).equals(alone)
    assert mixed.column("excerpt").to_pylist() == ["e0", "e1", "e2", "e3", "e4", None]
    assert alone.column("line_no").to_pylist() == [0, 1, 2, 3, 4]


def test_conform_rows_rejects_a_stranger_among_as_many_keys() -> None:
    """A row with as many keys as the table has columns, one of them unknown, is refused."""
    row = _full_quarantine_row()
    del row["excerpt"]
    row["excerptt"] = "typo"
    with pytest.raises(ValueError, match=r"columns the schema lacks: \['excerptt'\]"):
        conform_rows("quarantine", [_full_quarantine_row(), row])


def _as_columns(rows: list[dict[str, object]]) -> dict[str, list[object]]:
    return {k: [r.get(k) for r in rows] for k in rows[0]}


def test_rows_held_as_columns_conform_to_the_same_table_as_the_rows() -> None:
    rows = [_full_quarantine_row(line_no=i, excerpt=None if i % 2 else f"e{i}") for i in range(7)]
    assert conform_columns("quarantine", _as_columns(rows)).equals(conform_rows("quarantine", rows))
    short = [{k: v for k, v in r.items() if k != "excerpt"} for r in rows]
    assert conform_columns("quarantine", _as_columns(short)).equals(
        conform_rows("quarantine", short)
    )  # a missing column is null, as a missing key is
    assert conform_columns("quarantine", {}).num_rows == 0


def test_rows_held_as_columns_are_refused_for_the_same_faults_with_the_same_words() -> None:
    invented = _as_columns([_full_quarantine_row(excerptt="typo")])
    with pytest.raises(ValueError, match=r"columns the schema lacks: \['excerptt'\]"):
        conform_columns("quarantine", invented)
    rows = [_full_quarantine_row(line_no=1), _full_quarantine_row(line_no=2, source=None)]
    with pytest.raises(ValueError) as by_rows:
        conform_rows("quarantine", rows)
    with pytest.raises(ValueError) as by_columns:
        conform_columns("quarantine", _as_columns(rows))
    assert str(by_columns.value) == str(by_rows.value)
    assert "required field 'source' is null in row" in str(by_rows.value)


def test_column_rows_read_as_the_rows_they_hold_and_then_are_those_rows() -> None:
    rows = [_full_quarantine_row(line_no=i) for i in range(3)]
    held = ColumnRows(_as_columns(rows))
    assert len(held) == 3 and held.columns is not None  # nothing built yet
    assert held == rows and rows == held and held != rows[:2] and held != "abc"
    assert held.columns is None  # read as dicts: the dicts are the rows from now on
    held[1]["reason"] = "changed"
    assert [r["reason"] for r in held] == ["x", "changed", "x"]
    [first, *_] = held
    assert first == rows[0]
    assert repr(ColumnRows({"a": [1]})) == "ColumnRows([{'a': 1}])"
    assert ColumnRows({}) == [] and len(ColumnRows({})) == 0
    with pytest.raises(ValueError, match="different lengths"):
        ColumnRows({"a": [1, 2], "b": [1]})


def test_building_arrays_does_not_import_pandas(fresh_python) -> None:
    """pyarrow's first array would import pandas (0.4 s, 50 MB per process) to ask whether
    a list is a pandas object; conform_rows lets it ask with pandas hidden. pandas stays
    usable afterwards for whoever wants it."""
    code = (
        "import sys\n"
        "from deskscore.schemas import conform_rows\n"
        "import pyarrow as pa\n"
        "row = dict(run_id='r', benchmark='b', source='s', location='l', reason='x', message='m')\n"
        "t = conform_rows('quarantine', [row])\n"
        "pa.array([1, 2]); pa.array(['x'])\n"
        "assert 'pandas' not in sys.modules, 'pandas was imported'\n"
        "try:\n"
        "    import pandas  # noqa\n"
        "except ImportError:\n"
        "    sys.exit(0)\n"
        "assert len(t.to_pandas()) == 1\n"
    )
    fresh_python(code)

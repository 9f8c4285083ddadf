from __future__ import annotations

import csv
import io
import json

from deskscore.pipelines.cli.output import render

COLUMNS = ["agent", "success", "n"]
ROWS = [("a-long-agent-name", 41.4, 3), ("b", 5.0, None)]


def test_tables_align_numbers_right_and_text_left() -> None:
    lines = render(COLUMNS, ROWS).splitlines()
    assert lines[0].startswith("agent")
    success_end = lines[0].index("success") + len("success")
    assert lines[2][:success_end].endswith("41.40")
    assert lines[3][:success_end].endswith(" 5.00")
    assert lines[2].index("41.40") > lines[0].index("success")
    assert lines[-1] == "(2 rows)"


def test_csv_and_json_round_trip() -> None:
    parsed = list(csv.reader(io.StringIO(render(COLUMNS, ROWS, "csv"))))
    assert parsed[0] == COLUMNS and parsed[2] == ["b", "5.000000000000", ""]
    assert json.loads(render(COLUMNS, ROWS, "json"))[1] == {"agent": "b", "success": 5.0, "n": None}


def test_markdown_has_a_header_rule_with_numeric_alignment() -> None:
    lines = render(COLUMNS, ROWS, "md").splitlines()
    assert lines[0].startswith("| agent")
    assert lines[1].endswith(":|")


def test_markdown_escapes_a_pipe_in_cells_and_headers_so_each_row_keeps_its_columns() -> None:
    lines = render(["c|d", "e"], [("a|b", 1)], "md").splitlines()
    assert lines[0].startswith("| c\\|d ") and lines[2].startswith("| a\\|b ")
    unescaped = [line.replace("\\|", "") for line in lines]
    assert {line.count("|") for line in unescaped} == {3}  # two columns in every row
    assert "a|b" in render(["c|d"], [("a|b",)], "table")  # tables and csv keep the text as is

"""`deskscore sql` cannot change the warehouse nor read outside it unless `--write` is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.main import main


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    root = tmp_path / "wh"
    Warehouse(root).write(
        "quarantine",
        [{"run_id": "r", "benchmark": "osworld", "source": "s", "location": "a/traj.jsonl",
          "line_no": 3, "reason": "blank_line", "message": "a/traj.jsonl:3: blank"}],
        {"benchmark": "osworld", "run_id": "r"},
    )  # fmt: skip
    return root


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize(
    "statement",
    [
        "COPY (SELECT 1 AS a) TO '{root}/quarantine/x.parquet'",
        "ATTACH '{root}/side.duckdb' AS side",
        "EXPORT DATABASE '{root}/export'",
        "SELECT 1; COPY (SELECT 1) TO '{root}/y.csv'",
    ],
)
def test_statements_that_write_are_refused_without_write(
    warehouse: Path, statement: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _listing(warehouse)
    assert main(["sql", statement.format(root=warehouse), "--warehouse", str(warehouse)]) == 2
    err = capsys.readouterr().err
    assert "read-only" in err and "--write" in err
    assert _listing(warehouse) == before


def test_files_outside_the_warehouse_cannot_be_read(
    warehouse: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("token\nabc\n")
    assert main(["sql", f"SELECT * FROM read_csv('{secret}')", "--warehouse", str(warehouse)]) == 2
    assert "abc" not in capsys.readouterr().out


def test_queries_still_read_the_views(warehouse: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "sql",
        "SELECT line_no FROM quarantine",
        "--warehouse",
        str(warehouse),
        "--format",
        "csv",
    ]
    assert main(argv) == 0
    assert capsys.readouterr().out.split() == ["line_no", "3"]


def test_write_allows_a_copy_into_the_warehouse(warehouse: Path) -> None:
    target = warehouse / "exports" / "q.csv"
    target.parent.mkdir()
    query = f"COPY (SELECT line_no FROM quarantine) TO '{target}'"
    assert main(["sql", query, "--warehouse", str(warehouse), "--write"]) == 0
    assert target.read_text().split() == ["line_no", "3"]


def test_filters_of_other_commands_are_parameters_not_sql(warehouse: Path) -> None:
    from deskscore.pipelines.cli.common import UserError
    from deskscore.pipelines.cli.cost import cost_text
    from deskscore.pipelines.cli.leaderboard import leaderboard_text
    from deskscore.pipelines.cli.scored import where
    from deskscore.scorers.config import ScoreConfig
    from deskscore.sql import connect

    hostile = "x' OR '1'='1"
    with pytest.raises(UserError, match=r"no run in .* is scored yet"):  # matched nothing
        leaderboard_text(str(warehouse), "csv", human_version=hostile)
    condition, params = where(ScoreConfig(hostile, 15, "deskscore"))
    assert hostile not in condition
    count = connect(warehouse).sql(
        f"SELECT count(*) FROM leaderboard WHERE {condition}", params=params
    )
    assert count.fetchall() == [(0,)]
    assert "x' OR" not in cost_text(
        str(warehouse), "csv", run_ids=[hostile, "'); DROP TABLE x; --"]
    )


QUERY_IN_A_FRESH_PROCESS = """
import sys
from deskscore.pipelines.cli.main import main
code = main(["sql", "SELECT line_no FROM quarantine", "--warehouse", sys.argv[1], "--format", "csv"])
print("pandas" in sys.modules, code)
import duckdb  # whoever asks for pandas still gets it
print(type(duckdb.sql("SELECT 1 AS a").df()).__name__)
"""


def test_a_query_of_the_views_does_not_import_pandas(warehouse: Path) -> None:
    import subprocess
    import sys

    pytest.importorskip("pandas")
    out = subprocess.run(
        [sys.executable, "-c", QUERY_IN_A_FRESH_PROCESS, str(warehouse)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.split() == ["line_no", "3", "False", "0", "DataFrame"]

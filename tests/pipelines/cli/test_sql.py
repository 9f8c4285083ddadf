"""`deskscore sql`: DuckDB itself keeps the query from writing files (anywhere, with `--write`
anywhere but the export folder) and from reading any file but the warehouse's, through its
views; errors, whenever DuckDB raises them, are one line."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.main import COMMANDS, main
from deskscore.sql import connect, intermediate_names, mart_names, staging_names

MODES = {
    "read-only": [],
    "write to the export area": ["--write"],
    "write to --out": ["--write", "--out", "{out}"],
}
"""How `deskscore sql` is run: the options, `{out}` standing for a folder outside the warehouse."""


@pytest.fixture(scope="module")
def warehouse(small_archive: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three runs ingested and scored (with costs), so every view has rows to give."""
    root = tmp_path_factory.mktemp("sql") / "wh"
    sources = [str(small_archive["results"]), str(small_archive["zip"])]
    assert main(["ingest", *sources, "--warehouse", str(root), "--engine", "direct"]) == 0
    assert main(["score", "--warehouse", str(root), "--engine", "direct"]) == 0
    return root


def _snapshot(folder: Path, skip: str | None = None) -> dict[str, str]:
    """Every file under `folder` (but the subfolder `skip`) and a digest of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not (skip and p.relative_to(folder).parts[0] == skip)
    }


def _argv(warehouse: Path, query: str, mode: str, out: Path, *extra: str) -> list[str]:
    options = [o.format(out=out) for o in MODES[mode]]
    return ["sql", query, "--warehouse", str(warehouse), *options, *extra]


ATTACKS = [
    "EXPLAIN ANALYZE COPY (SELECT 'x' AS a) TO '{data}' (FORMAT parquet)",
    "COPY (SELECT 'x' AS a) TO '{data}' (FORMAT parquet)",
    "COPY (SELECT 1 AS a) TO '{warehouse}/steps/extra.parquet' (FORMAT parquet)",
    "COPY (SELECT 1 AS a) TO '{outside}/x.csv'",
    "COPY (SELECT 1 AS a) TO '{cwd}/.tmp/x.csv'",
    "SELECT * FROM read_csv('/etc/passwd', sep = ':')",
    "SELECT * FROM read_csv('{outside}/secret.csv')",
    "SELECT content FROM read_text('{outside}/secret.csv')",
    "SELECT * FROM read_parquet('{data}')",
    "SELECT * FROM glob('{outside}/*')",
    "ATTACH '{outside}/side.duckdb' AS side",
    "EXPORT DATABASE '{outside}/export'",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "RESET enable_external_access",
    "SET lock_configuration = false",
    "SET allowed_directories = ['/']",
    "SET temp_directory = '{outside}'",
    "SET enable_external_access = true; COPY (SELECT 1 AS a) TO '{outside}/y.csv'",
]
"""Statements that would write a file outside the export folder, read one outside the warehouse
(or one of the warehouse's by name), load code, or undo the settings that forbid all that."""


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A folder outside the warehouse holding a secret, the --out folder, and a working
    directory with the ./.tmp folder DuckDB would otherwise take as its temporary directory."""
    places = {"outside": tmp_path / "outside", "out": tmp_path / "out", "cwd": tmp_path / "cwd"}
    places["outside"].mkdir()
    (places["cwd"] / ".tmp").mkdir(parents=True)
    (places["outside"] / "secret.csv").write_text("token\nsk-secret-value\n")
    monkeypatch.chdir(places["cwd"])
    return places


def _attack(query: str, warehouse: Path, places: dict[str, Path]) -> str:
    data = Warehouse(warehouse).files("steps")[0]
    return query.format(data=data, warehouse=warehouse, **places)


def _untouched(warehouse: Path, places: dict[str, Path]) -> tuple[dict[str, str], ...]:
    """What must not change: the warehouse (but its export area), the other folders, and the
    --out folder, which no refused statement may have written in."""
    return (
        _snapshot(warehouse, skip="exports"),
        *(_snapshot(p) if p.exists() else {} for p in places.values()),
    )


@pytest.mark.parametrize("mode", MODES)
def test_no_statement_writes_outside_the_export_folder_or_reads_outside_the_warehouse(
    warehouse: Path, places: dict[str, Path], mode: str
) -> None:
    import duckdb

    from deskscore.sql.confine import confined_connect

    write_dir = None if mode == "read-only" else places["out"]
    con = confined_connect(warehouse, write_dir)
    before = _untouched(warehouse, places)
    for attack in ATTACKS:
        with pytest.raises(duckdb.Error, match=r"Permission|locked|disabled") as refused:
            con.sql(_attack(attack, warehouse, places)).fetchall()
        assert "sk-secret-value" not in str(refused.value), attack
    assert _untouched(warehouse, places) == before
    n = connect(warehouse).sql("SELECT count(*) FROM steps").fetchall()
    assert con.sql("SELECT count(*) FROM steps").fetchall() == n != [(0,)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("attack", [ATTACKS[0], ATTACKS[5], ATTACKS[-1]])
def test_deskscore_sql_refuses_in_one_line_and_leaves_every_file_as_it_was(
    warehouse: Path,
    places: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    attack: str,
    mode: str,
) -> None:
    before = _untouched(warehouse, places)
    assert main(_argv(warehouse, _attack(attack, warehouse, places), mode, places["out"])) == 2
    captured = capsys.readouterr()
    assert _untouched(warehouse, places) == before
    assert "root:" not in captured.out
    assert captured.err.startswith("deskscore sql: ") and captured.err.count("\n") == 1


def _rows(relation: Any) -> list[tuple[Any, ...]]:
    """The rows in an order that does not depend on the last bits of their floats."""

    def key(row: tuple[Any, ...]) -> str:
        return repr([round(v, 6) if isinstance(v, float) else v for v in row])

    return sorted(relation.fetchall(), key=key)


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Equal rows, floats to 1e-9 (a sum may add its terms in another order)."""
    return len(a) == len(b) and all(
        math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(x) and math.isnan(y))
        if isinstance(x, float) and isinstance(y, float)
        else x == y
        for x, y in zip(a, b, strict=True)
    )


def test_every_view_gives_the_rows_it_gives_over_the_warehouse_files(warehouse: Path) -> None:
    from deskscore.sql.confine import confined_connect

    plain, confined = connect(warehouse), confined_connect(warehouse)
    for view in staging_names() + intermediate_names() + mart_names():
        query = f"SELECT * FROM {view}"
        expected, got = plain.sql(query), confined.sql(query)
        assert (got.columns, got.types) == (expected.columns, expected.types), view
        got_rows, expected_rows = _rows(got), _rows(expected)
        assert len(got_rows) == len(expected_rows), view
        assert all(map(_same, got_rows, expected_rows)), view
    for view in ("steps", "runs", "leaderboard", "cost_per_run", "per_domain"):
        assert plain.sql(f"SELECT count(*) FROM {view}").fetchall() != [(0,)], view


@pytest.mark.parametrize("mode", MODES)
def test_the_views_answer_in_every_mode(
    warehouse: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    views = [*staging_names(), "leaderboard", "cost_per_run"]  # all of them: the test above
    query = " UNION ALL ".join(f"SELECT '{v}' AS view, count(*) AS n FROM {v}" for v in views)
    assert main(_argv(warehouse, query, mode, tmp_path / "out", "--format", "json")) == 0
    counts = {r["view"]: r["n"] for r in json.loads(capsys.readouterr().out)}
    assert counts == dict(connect(warehouse).sql(query).fetchall())
    assert list(counts) == views and counts["steps"] > 0


def test_write_writes_in_the_export_area_and_reads_it_back(
    warehouse: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = "COPY (SELECT run_id FROM runs ORDER BY run_id) TO 'runs.csv'"
    assert main(["sql", copy, "--warehouse", str(warehouse), "--write"]) == 0
    written = warehouse / "exports" / "runs.csv"
    runs = [r for (r,) in connect(warehouse).sql("SELECT run_id FROM runs ORDER BY 1").fetchall()]
    assert written.read_text().split() == ["run_id", *runs]
    capsys.readouterr()
    back = ["sql", "SELECT count(*) AS n FROM 'runs.csv'", "--warehouse", str(warehouse)]
    assert main([*back, "--write", "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["n", str(len(runs))]
    assert main(back) == 2  # read-only: not even the export area is read by name
    assert "read-only" in capsys.readouterr().err


def test_write_writes_in_the_out_folder_only(
    warehouse: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reports"
    query = "COPY (SELECT * FROM leaderboard) TO 'board.parquet' (FORMAT parquet)"
    assert main(["sql", query, "--warehouse", str(warehouse), "--write", "--out", str(out)]) == 0
    assert (out / "board.parquet").stat().st_size > 0
    stray = f"COPY (SELECT 1 AS a) TO '{warehouse / 'exports' / 'x.csv'}'"
    assert main(["sql", stray, "--warehouse", str(warehouse), "--write", "--out", str(out)]) == 2
    assert str(out) in capsys.readouterr().err
    assert not (warehouse / "exports" / "x.csv").exists()


@pytest.mark.parametrize("out", ["{warehouse}", "{warehouse}/steps", "{warehouse}/.."])
def test_an_out_folder_that_holds_the_tables_is_refused(
    warehouse: Path, capsys: pytest.CaptureFixture[str], out: str
) -> None:
    argv = ["sql", "SELECT 1", "--warehouse", str(warehouse), "--write"]
    assert main([*argv, "--out", out.format(warehouse=warehouse)]) == 2
    assert "--out" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("out", "message"),
    [("{file}", "--out {file}: is a file"), ("{file}/x", "--out {file}/x: cannot make the folder")],
)
def test_write_to_an_out_folder_that_cannot_be_made_says_so_without_a_traceback(
    warehouse: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], out: str, message: str
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    argv = ["sql", "SELECT 1", "--warehouse", str(warehouse), "--write"]
    assert main([*argv, "--out", out.format(file=afile)]) == 2
    err = capsys.readouterr().err
    assert message.format(file=afile) in err and "Traceback" not in err
    assert afile.read_text() == "x"


def test_out_without_write_is_refused(
    warehouse: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sql", "SELECT 1", "--warehouse", str(warehouse), "--out", str(tmp_path)]) == 2
    assert "--write" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("SELECT error('the agent loops')", "the agent loops"),
        ("SELECT CAST(task_id || 'x' AS INTEGER) FROM steps", "Conversion Error"),
        ("SELECT INTERVAL 100000000 YEARS AS forever", "cannot be shown"),
    ],
)
def test_an_error_raised_while_fetching_is_one_line_naming_what_to_do(
    warehouse: Path, capsys: pytest.CaptureFixture[str], query: str, named: str
) -> None:
    assert main(["sql", query, "--warehouse", str(warehouse)]) == 2
    err = capsys.readouterr().err
    assert named in err and err.count("\n") == 1
    assert "fix the query" in err or "cast it" in err


def test_json_output_holds_decimals_and_intervals(
    warehouse: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    query = "SELECT 1.25 AS price, INTERVAL 90 SECOND AS took"
    assert main(["sql", query, "--warehouse", str(warehouse), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"price": "1.25", "took": "0:01:30"}]


def _views(con: Any) -> set[str]:
    rows = con.sql("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    return {name for (name,) in rows}


def test_a_query_defines_only_the_views_it_reads(
    warehouse: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from deskscore.sql import confine

    made: list[Any] = []
    real = confine.confined_connect

    def kept(*args: Any, **kwargs: Any) -> Any:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(confine, "confined_connect", kept)
    queries = ("SELECT 1", "SELECT count(*) FROM files_runs", "SELECT count(*) FROM leaderboard")
    for query in queries:
        assert main(["sql", query, "--warehouse", str(warehouse), "--format", "csv"]) == 0
    no_view, dataset, mart = map(_views, made)
    assert no_view == set()
    assert dataset == {"files_runs", "raw_runs"}  # the Arrow dataset, and the view over it
    assert {"leaderboard", "run_labels", "runs", "raw_runs", "run_scores"} <= mart
    assert "per_level" not in mart and "verdict_agreement" not in mart
    counts = capsys.readouterr().out.split()
    plain = connect(warehouse)
    assert counts[-1] == str(plain.sql(queries[-1]).fetchall()[0][0])
    assert counts[-3] == str(plain.sql("SELECT count(*) FROM runs").fetchall()[0][0]) != "0"


def test_a_query_naming_no_view_loads_neither_pyarrow_nor_the_other_commands(
    warehouse: Path,
) -> None:
    script = (
        "import json, sys\n"
        "from deskscore.pipelines.cli.main import main\n"
        f"code = main(['sql', 'SELECT 1', '--warehouse', {str(warehouse)!r}])\n"
        "print(json.dumps([code, sorted(sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    code, modules = json.loads(done.stdout.splitlines()[-1])
    assert code == 0
    assert "pyarrow" not in modules and "numpy" not in modules and "polars" not in modules
    loaded = {m.rsplit(".", 1)[1] for m in modules if m.startswith("deskscore.pipelines.cli.")}
    assert loaded & set(COMMANDS) == {"sql"}

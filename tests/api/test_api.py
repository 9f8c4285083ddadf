"""The Python API, used as a notebook would: `import deskscore` and nothing else of deskscore
(the archives are generated first, which is not part of the API)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

import deskscore
from deskscore.collectors.synthetic import load_profiles, task_slice, write_run


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two generated runs under one result folder."""
    root = tmp_path_factory.mktemp("api") / "results"
    profiles, tasks = load_profiles(), task_slice(per_domain=2)
    for i in range(2):
        write_run(root, profiles[i], tasks, seed=i, screenshots="none")
    return root


@pytest.fixture(scope="module")
def warehouse(archive: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    wh = tmp_path_factory.mktemp("api_wh") / "wh"
    deskscore.ingest(str(archive), wh, engine="direct")
    deskscore.score(wh, max_steps_scoring=50, engine="direct")
    return wh


def _cli_json(*args: str) -> object:
    out = subprocess.run(
        [sys.executable, "-m", "deskscore.pipelines.cli.main", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def test_import_deskscore_loads_nothing_heavy_until_a_name_is_used() -> None:
    code = (
        "import sys, deskscore\n"
        "heavy = {'duckdb', 'polars', 'pyarrow', 'apache_beam', 'numpy'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
        "deskscore.connect\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "[]"
    assert "apache_beam" not in out[1]


def test_the_public_names_are_listed_and_documented() -> None:
    for name in ("connect", "ingest", "score", "check", "leaderboard", "export", "episodes"):
        assert name in deskscore.__all__
        assert getattr(deskscore, name).__doc__
    assert "formats" in dir(deskscore)
    assert deskscore.__version__[0].isdigit()
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = deskscore.nope


def test_ingest_and_score_return_what_the_commands_print_as_json(
    archive: Path, tmp_path: Path
) -> None:
    wh = tmp_path / "wh"
    summary = deskscore.ingest([str(archive)], wh, engine="direct")
    assert summary["runs_found"] == 2 and summary["runs_written"] == 2
    assert all(row["reconciled"] for row in summary["per_source"])
    again = _cli_json("ingest", str(archive), "--warehouse", str(wh), "--format", "json")
    assert again["sources_unchanged"] == summary["sources_read"]
    scored = deskscore.score(wh, max_steps_scoring=30, engine="direct")
    assert scored["runs_scored"] == 2
    assert scored["configuration"]["max_steps_scoring"] == 30
    rescored = _cli_json(
        "score", "--warehouse", str(wh), "--max-steps-scoring", "30", "--format", "json"
    )
    assert rescored["runs_unchanged"] == 2 and rescored["described"] == scored["described"]
    assert deskscore.check(wh, sources=True)["ok"]


def test_connect_gives_every_view_read_only(warehouse: Path, tmp_path: Path) -> None:
    con = deskscore.connect(warehouse)
    views = {name for (name,) in con.sql("SHOW TABLES").fetchall()}
    assert {"runs", "episodes", "run_scores", "leaderboard"} <= views
    frame = con.sql("SELECT run_id, n_tasks_run FROM run_scores ORDER BY run_id").pl()
    assert isinstance(frame, pl.DataFrame) and frame.height == 2
    arrow = con.sql("SELECT count(*) AS n FROM episodes").arrow().read_all()  # a batch reader
    assert arrow.column("n")[0].as_py() > 0
    with pytest.raises(Exception, match="Permission"):
        con.execute(f"COPY (SELECT 1) TO '{tmp_path / 'x.csv'}'")
    assert not (tmp_path / "x.csv").exists()


def test_leaderboard_is_the_commands_json_as_a_polars_frame(warehouse: Path) -> None:
    board = deskscore.leaderboard(warehouse)
    printed = _cli_json("leaderboard", "--warehouse", str(warehouse), "--format", "json")
    assert board.columns == list(printed[0])
    assert board.to_dicts() == printed
    assert board["rank"].to_list() == [1, 2]
    with_ci = deskscore.leaderboard(warehouse, ci=True)
    assert any(c.endswith("_ci_low") for c in with_ci.columns)
    by_domain = deskscore.leaderboard(warehouse, by="domain")
    assert set(by_domain["domain"]) >= {"chrome", "os"}
    assert by_domain.height == 2 * by_domain["domain"].n_unique()
    with pytest.raises(ValueError, match="by='nope'"):
        deskscore.leaderboard(warehouse, by="nope")


def test_export_writes_parquet_that_pyarrow_reads_back(warehouse: Path, tmp_path: Path) -> None:
    [written] = deskscore.export(warehouse, "leaderboard", tmp_path / "board.parquet")
    table = pq.read_table(tmp_path / "board.parquet")
    assert written.rows == table.num_rows == deskscore.leaderboard(warehouse).height
    assert table.column("label").to_pylist() == deskscore.leaderboard(warehouse)["label"].to_list()
    with pytest.raises(deskscore.UserError, match="warehouse's folder"):
        deskscore.export(warehouse, "runs", warehouse / "runs.parquet")


def test_settings_find_the_warehouse_when_none_is_given(
    warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DESKSCORE_WAREHOUSE", raising=False)
    with pytest.raises(deskscore.UserError, match="no warehouse at warehouse"):
        deskscore.connect()
    (tmp_path / "deskscore.toml").write_text(f'warehouse = "{warehouse}"\n')
    assert deskscore.leaderboard().height == 2
    monkeypatch.setenv("DESKSCORE_WAREHOUSE", str(tmp_path / "elsewhere"))
    with pytest.raises(deskscore.UserError, match="elsewhere"):
        deskscore.connect()


def test_episodes_and_formats_read_rows_without_a_warehouse(archive: Path) -> None:
    assert "osworld" in deskscore.formats.names()
    read = list(deskscore.episodes(str(archive)))
    assert len(read) == 2 * len(task_slice(per_domain=2))
    first = read[0].read
    assert first.episode["task_id"] and first.episode["n_steps"] == len(first.steps)

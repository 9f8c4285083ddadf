"""`deskscore export`: views, tables and queries to Parquet, CSV, JSON and a Hugging Face
datasets folder, through the same confinement as `deskscore sql`."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from deskscore.pipelines.cli.main import main
from deskscore.sql import connect


@pytest.fixture(scope="module")
def warehouse(small_archive: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("export") / "wh"
    sources = [str(small_archive["results"]), str(small_archive["zip"])]
    assert main(["ingest", *sources, "--warehouse", str(root), "--engine", "direct"]) == 0
    assert main(["score", "--warehouse", str(root), "--engine", "direct"]) == 0
    return root


def _rows(warehouse: Path, sql: str) -> list[tuple]:
    return connect(warehouse).sql(sql).fetchall()


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_a_view_exports_with_every_row_and_column(warehouse: Path, tmp_path: Path, fmt: str):
    out = tmp_path / f"runs.{fmt}"
    assert main(["export", "run_scores", "--warehouse", str(warehouse), "--format", fmt,
                 "--out", str(out)]) == 0  # fmt: skip
    expected = _rows(warehouse, "SELECT run_id, n_tasks_run FROM run_scores ORDER BY run_id")
    if fmt == "parquet":
        got = pq.read_table(out).select(["run_id", "n_tasks_run"]).to_pylist()
        got = [(r["run_id"], r["n_tasks_run"]) for r in got]
    elif fmt == "csv":
        with out.open() as f:
            got = [(r["run_id"], int(r["n_tasks_run"])) for r in csv.DictReader(f)]
    else:
        got = [(r["run_id"], r["n_tasks_run"]) for r in json.loads(out.read_text())]
    assert sorted(got) == expected


def test_a_query_exports_its_rows(warehouse: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "q.parquet"
    query = "SELECT domain, count(*) AS n FROM episodes GROUP BY domain ORDER BY domain"
    assert main(["export", query, "--warehouse", str(warehouse), "--out", str(out),
                 "--summary", "json"]) == 0  # fmt: skip
    [summary] = json.loads(capsys.readouterr().out)
    assert summary["name"] == "query_1" and summary["rows"] == pq.read_metadata(out).num_rows
    assert [tuple(r.values()) for r in pq.read_table(out).to_pylist()] == _rows(warehouse, query)


def test_a_query_cannot_write_outside_the_output_folder(
    warehouse: Path, tmp_path: Path, capsys
) -> None:
    outside = tmp_path / "elsewhere.csv"
    sql = f"SELECT 1 AS x; COPY (SELECT 1) TO '{outside}'"
    out = tmp_path / "out" / "x.csv"
    assert main(["export", sql, "--warehouse", str(warehouse), "--format", "csv",
                 "--out", str(out)]) == 2  # fmt: skip
    assert not outside.exists() and not out.exists()
    assert "reads the warehouse through its views only" in capsys.readouterr().err


def test_an_export_beside_the_warehouse_cannot_write_into_it(
    warehouse: Path, tmp_path: Path, capsys
) -> None:
    """The output's folder may hold the warehouse (the working folder, say): the query still
    writes in a fresh folder of its own only."""
    before = {p: p.read_bytes() for p in warehouse.rglob("*") if p.is_file()}
    victim = next(p for p in before if p.suffix == ".parquet")
    sql = f"SELECT 1 AS x; COPY (SELECT 1) TO '{victim}' (FORMAT parquet)"
    beside = warehouse.parent / "beside.csv"
    assert main(["export", sql, "--warehouse", str(warehouse), "--format", "csv",
                 "--out", str(beside)]) == 2  # fmt: skip
    assert {p: p.read_bytes() for p in warehouse.rglob("*") if p.is_file()} == before
    assert main(["export", "runs", "--warehouse", str(warehouse), "--format", "csv",
                 "--out", str(beside)]) == 0  # fmt: skip
    assert "run_id" in beside.read_text().splitlines()[0].split(",")
    assert not [p for p in warehouse.parent.iterdir() if p.name.startswith(".deskscore-export")]


def test_export_refuses_the_warehouse_folder_and_bad_items(
    warehouse: Path, tmp_path: Path, capsys
) -> None:
    before = sorted(p.name for p in warehouse.rglob("*"))
    args = ["export", "runs", "--warehouse", str(warehouse)]
    assert main([*args, "--out", str(warehouse / "tables" / "x.parquet")]) == 2
    assert "warehouse's folder" in capsys.readouterr().err
    assert main(["export", "no_such_view", "--warehouse", str(warehouse),
                 "--out", str(tmp_path / "x.parquet")]) == 2  # fmt: skip
    assert "no_such_view" in capsys.readouterr().err
    assert main(["export", "runs", "episodes", "--warehouse", str(warehouse),
                 "--out", str(tmp_path / "x.parquet")]) == 2  # fmt: skip
    assert "one file" in capsys.readouterr().err
    assert sorted(p.name for p in warehouse.rglob("*")) == before


def _front_matter(card: str) -> list[dict[str, str]]:
    """The configs of a dataset card's YAML header, read by the documented convention:
    `configs:` then `- config_name:` items, each with `data_files:` `- split:` `path:`."""
    head = card.split("---\n")[1]
    configs = []
    for block in re.split(r"\n- config_name: ", head.split("configs:\n", 1)[1])[0:]:
        name = block.removeprefix("- config_name: ").split("\n", 1)[0]
        path = re.search(r'path: "([^"]+)"', block)
        split = re.search(r"- split: (\w+)", block)
        if path and split:
            configs.append({"name": name, "split": split.group(1), "path": path.group(1)})
    return configs


def test_hf_export_is_a_folder_datasets_loads(warehouse: Path, tmp_path: Path) -> None:
    out = tmp_path / "release"
    query = "SELECT run_id, success_rate_run FROM run_scores ORDER BY run_id"
    assert main(["export", "leaderboard", "episode_scores", query, "--format", "hf",
                 "--warehouse", str(warehouse), "--out", str(out)]) == 0  # fmt: skip
    card = (out / "README.md").read_text()
    assert card.startswith("---\nconfigs:\n")
    configs = _front_matter(card)
    assert [c["name"] for c in configs] == ["leaderboard", "episode_scores", "query_3"]
    for c in configs:
        assert c["split"] == "train" and c["path"].startswith("data/")
        assert pq.read_metadata(out / c["path"]).num_rows > 0
    n_episodes = _rows(warehouse, "SELECT count(*) FROM episode_scores")[0][0]
    assert pq.read_metadata(out / configs[1]["path"]).num_rows == n_episodes
    try:  # Hugging Face's own loader, in a folder where the repo's datasets/ cannot shadow it
        import importlib.util

        found = importlib.util.find_spec("datasets")
    except ValueError:
        found = None
    if found is None or "site-packages" not in str(found.origin):
        pytest.skip("Hugging Face datasets is not installed (pip install datasets)")
    code = (
        "import json, sys, datasets\n"
        "d = datasets.load_dataset(sys.argv[1], sys.argv[2], split='train')\n"
        "print(json.dumps({'rows': d.num_rows, 'columns': d.column_names}))\n"
    )
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    loaded = subprocess.run(
        [sys.executable, "-c", code, str(out), "episode_scores"],
        capture_output=True, text=True, check=True, cwd=tmp_path, env=env,
    )  # fmt: skip
    got = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert got["rows"] == n_episodes and "run_id" in got["columns"]


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one line `deskscore export` refuses `argv` with (exit 2, no traceback)."""
    assert main(["export", *argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    return err


def test_export_into_an_existing_folder_says_so_without_a_traceback(
    warehouse: Path, tmp_path: Path, capsys
) -> None:
    err = _refused(capsys, "runs", "--warehouse", str(warehouse), "--format", "csv",
                   "--out", str(tmp_path))  # fmt: skip
    assert f"--out {tmp_path}: is a folder; name the file to write" in err
    err = _refused(capsys, "runs", "--warehouse", str(warehouse), "--out", "")
    assert "--out is empty" in err


def test_export_hf_onto_an_existing_file_says_so_and_leaves_it(
    warehouse: Path, tmp_path: Path, capsys
) -> None:
    existing = tmp_path / "existing.csv"
    existing.write_text("hi\n")
    err = _refused(capsys, "runs", "--warehouse", str(warehouse), "--format", "hf",
                   "--out", str(existing))  # fmt: skip
    assert "is a file, and --format hf writes a folder" in err
    assert existing.read_text() == "hi\n"


def test_export_where_no_folder_can_be_made_names_the_folder(
    warehouse: Path, tmp_path: Path, capsys
) -> None:
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" / "x.csv"
    err = _refused(capsys, "runs", "--warehouse", str(warehouse), "--format", "csv",
                   "--out", str(out))  # fmt: skip
    assert f"--out {out}: cannot write in {tmp_path / 'afile'}" in err


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json", "hf"])
def test_a_query_that_fails_while_running_says_so_in_one_line_as_sql_does(
    warehouse: Path, tmp_path: Path, capsys, fmt: str
) -> None:
    query = "SELECT 'abc'::INT AS x"
    assert main(["sql", query, "--warehouse", str(warehouse)]) == 2
    said_by_sql = capsys.readouterr().err.split(": ", 1)[1]
    err = _refused(capsys, query, "--warehouse", str(warehouse), "--format", fmt,
                   "--out", str(tmp_path / "out"))  # fmt: skip
    assert err.split(": ", 1)[1] == said_by_sql
    assert "Could not convert string 'abc'" in err and "fix the query" in err
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]  # nothing written


def test_json_export_writes_nan_and_infinity_as_null_as_sql_prints_them(
    warehouse: Path, tmp_path: Path, capsys
) -> None:
    query = 'SELECT \'-inf\'::DOUBLE AS "x ""q""", \'nan\'::FLOAT AS y, 1.5::DOUBLE AS z, 2 AS i'
    out = tmp_path / "o.json"
    assert main(["export", query, "--warehouse", str(warehouse), "--format", "json",
                 "--out", str(out)]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["sql", query, "--warehouse", str(warehouse), "--format", "json"]) == 0
    printed = capsys.readouterr().out

    def refuse(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")

    exported = json.loads(out.read_text(), parse_constant=refuse)
    assert exported == [{'x "q"': None, "y": None, "z": 1.5, "i": 2}]
    assert exported == json.loads(printed)
    twice = "SELECT 1.0::DOUBLE AS a, 'nan'::DOUBLE AS a"  # one name, two columns
    assert main(["export", twice, "--warehouse", str(warehouse), "--format", "json",
                 "--out", str(out)]) == 0  # fmt: skip
    assert json.loads(out.read_text(), parse_constant=refuse) == [{"a": 1.0, "a_1": None}]

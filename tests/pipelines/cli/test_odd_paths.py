"""Paths with glob characters: a warehouse or a source folder named with `[`, `*` or `?` is
that folder, never a pattern (DuckDB and the source list take any such path as a glob)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from deskscore.pipelines.cli.main import main
from deskscore.sql import connect

ODD = "odd [1] *? name"


@pytest.fixture(scope="module")
def odd_source(small_archive: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs in a folder named with glob characters, beside a folder its pattern matches."""
    base = tmp_path_factory.mktemp("odd")
    source = Path(shutil.copytree(small_archive["results"], base / f"results {ODD}"))
    shutil.copytree(small_archive["zipped_run"], base / "results odd 1 xy name")
    return source


@pytest.mark.slow  # every command end to end
def test_every_command_works_on_a_warehouse_named_with_glob_characters(
    odd_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wh = str(tmp_path / f"warehouse {ODD}")
    assert main(["ingest", str(odd_source), "--warehouse", wh]) == 0
    assert main(["score", "--warehouse", wh, "--no-costs"]) == 0
    assert main(["check", "--warehouse", wh]) == 0
    assert main(["leaderboard", "--warehouse", wh, "--format", "csv"]) == 0
    assert main(["loops", "--warehouse", wh]) == 0
    assert main(["sql", "SELECT count(DISTINCT run_id) AS n FROM runs", "--warehouse", wh]) == 0
    out = capsys.readouterr().out.rstrip().splitlines()
    assert "check passed: nothing lost, no orphan rows, one schema version" in out
    assert out[-2:] == ["2", "(1 row)"]
    [(runs,)] = connect(wh).sql("SELECT count(*) FROM runs").fetchall()
    assert runs == 2


def test_a_source_folder_named_with_glob_characters_is_that_folder(
    odd_source: Path, tmp_path: Path
) -> None:
    wh = tmp_path / "wh"
    assert main(["ingest", str(odd_source), "--warehouse", str(wh)]) == 0
    sources = connect(wh).sql("SELECT DISTINCT source FROM runs").fetchall()
    assert sources == [(str(odd_source),)]


def test_a_pattern_that_is_no_path_is_still_a_glob(odd_source: Path, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    pattern = str(odd_source.parent / "results odd [0-9] xy name")
    assert main(["ingest", pattern, "--warehouse", str(wh)]) == 0
    [(source,)] = connect(wh).sql("SELECT DISTINCT source FROM runs").fetchall()
    assert source == str(odd_source.parent / "results odd 1 xy name")

"""What every command shares: a job that writes into a warehouse it cannot write says so, and
a --run the warehouse does not hold is an error, not an empty table."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskscore.collectors.warehouse import Warehouse
from deskscore.collectors.warehouse.lock import LOCK_NAME
from deskscore.pipelines.cli.main import main


@pytest.fixture(scope="module")
def warehouse(small_archive: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("common") / "wh"
    assert main(["ingest", str(small_archive["results"]), "--warehouse", str(root),
                 "--engine", "direct"]) == 0  # fmt: skip
    assert main(["score", "--warehouse", str(root), "--engine", "direct"]) == 0
    return root


@pytest.mark.parametrize("command", ["ingest", "score"])
def test_a_job_on_a_warehouse_it_cannot_write_says_so_without_a_traceback(
    command: str, small_archive: dict[str, Path], tmp_path: Path, capsys
) -> None:
    wh = tmp_path / "wh"
    (wh / LOCK_NAME).mkdir(parents=True)  # its lock cannot be opened, as in a read-only folder
    sources = [str(small_archive["run0"])] if command == "ingest" else []
    assert main([command, *sources, "--warehouse", str(wh), "--engine", "direct"]) == 2
    err = capsys.readouterr().err
    assert f"cannot take the writer lock {wh / LOCK_NAME}" in err and "Traceback" not in err
    assert f"needs write access to the warehouse folder {wh}" in err


@pytest.mark.parametrize("command", ["leaderboard", "loops", "cost", "report"])
@pytest.mark.parametrize("run", ["no-such-run", "openai/gpt-5.4"])  # a typo, a run's label
def test_a_run_the_warehouse_does_not_hold_is_an_error_listing_its_runs(
    command: str, run: str, warehouse: Path, tmp_path: Path, capsys
) -> None:
    extra = ["--out", str(tmp_path / "r.html")] if command == "report" else []
    assert main([command, "--warehouse", str(warehouse), "--run", run, *extra]) == 2
    out, err = capsys.readouterr()
    run_ids = sorted(r["run_id"] for r in Warehouse(warehouse).read("runs").to_pylist())
    assert f"no run {run} in the warehouse at {warehouse} (its runs: {run_ids[0]}" in err
    assert out == "" and "Traceback" not in err

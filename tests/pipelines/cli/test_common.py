"""What every command shares: a job that writes into a warehouse it cannot write says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskscore.collectors.warehouse.lock import LOCK_NAME
from deskscore.pipelines.cli.main import main


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

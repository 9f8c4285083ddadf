"""`deskscore cost --prices` writes the cost tables: under the warehouse's writer lock only."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import pytest

from deskscore.collectors.warehouse.lock import writer_lock
from deskscore.pipelines.cli.main import main

COST_TABLES = ("llm_call_costs", "episode_costs", "run_costs")


def _cost_files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for table in COST_TABLES
        for p in sorted((root / table).rglob("*"))
        if p.is_file()
    }


def test_repricing_writes_nothing_while_another_job_holds_the_writer_lock(
    small_archive: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wh = tmp_path / "wh"
    assert main(["ingest", str(small_archive["zip"]), "--warehouse", str(wh)]) == 0
    assert main(["score", "--warehouse", str(wh)]) == 0
    prices = Path(__file__).resolve().parents[3] / "datasets" / "prices.csv"
    cheaper = tmp_path / "prices.csv"
    with prices.open(newline="") as f:
        rows = list(csv.DictReader(f))
    with cheaper.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({**r, "input_per_mtok": f"{float(r['input_per_mtok']) / 2}"} for r in rows)
    before = _cost_files(wh)
    assert before
    capsys.readouterr()
    with writer_lock(wh, "another job"):
        assert main(["cost", "--warehouse", str(wh), "--prices", str(cheaper), "--wait", "0"]) == 2
    assert "another deskscore job (pid" in capsys.readouterr().err
    assert _cost_files(wh) == before
    assert main(["cost", "--warehouse", str(wh), "--prices", str(cheaper)]) == 0
    assert _cost_files(wh) != before

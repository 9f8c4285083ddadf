"""The report reads screenshots from the archives: a FIFO that replaced one since the ingest is
skipped (the page is built without its thumbnail), never waited on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from deskscore.collectors.synthetic import load_profiles, task_slice, write_run
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.jobs.score import run_score
from deskscore.pipelines.options import IngestOptions, ScoreOptions


def test_screenshots_replaced_by_fifos_after_ingest_do_not_block_the_report(
    tmp_path: Path,
) -> None:
    results = tmp_path / "results"
    write_run(results, load_profiles()[0], task_slice(per_domain=1), seed=3, screenshots="tiny")
    wh = tmp_path / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(results),), engine="direct"))
    run_score(ScoreOptions(str(wh), max_steps_scoring=50, engine="direct"))
    shots = sorted(results.rglob("*.png"))
    assert shots
    for shot in shots:
        shot.unlink()
        os.mkfifo(shot)
    out = tmp_path / "report.html"
    cmd = [sys.executable, "-m", "deskscore.pipelines.cli.main", "report", "--warehouse",
           str(wh), "--out", str(out)]  # fmt: skip
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    except subprocess.TimeoutExpired:  # subprocess.run has killed it
        pytest.fail("deskscore report blocked on a FIFO")
    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    assert 'class="thumb"' not in page  # no screenshot could be read; the page is whole

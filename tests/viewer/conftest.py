"""A warehouse for the viewer's tests: two agents on the same tasks with tiny screenshots, the
looping one packed as a zip, ingested, hashed and scored with Beam's direct engine."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the viewer extra is not installed")

from deskscore.collectors.synthetic import load_profiles, task_slice, write_run, write_run_zip
from deskscore.pipelines.jobs.hash import run_hash
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.jobs.score import run_score
from deskscore.pipelines.options import HashOptions, IngestOptions, ScoreOptions

LOOPY, SWIFT = 3, 0
"""The demo profiles used: loopy-7b (loops often) zipped, atlas-swift as a folder."""


@pytest.fixture(scope="session")
def viewer_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("viewer")
    profiles = load_profiles()
    tasks = task_slice(per_domain=2)
    zipped = write_run_zip(
        root / "loopy.zip", profiles[LOOPY], tasks, seed=3, screenshots="tiny", prefix="loopy"
    )
    folder = root / "results"
    write_run(folder, profiles[SWIFT], tasks, seed=0, screenshots="tiny")
    wh = root / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(zipped), str(folder)), engine="direct"))
    run_hash(HashOptions(str(wh)))
    run_score(ScoreOptions(str(wh), max_steps_scoring=50, engine="direct"))
    return wh


@contextmanager
def viewer_at(warehouse: Path) -> Iterator[str]:
    """`deskscore view --no-browser` over `warehouse` in a process of its own; yields the URL
    it prints, and stops it after."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "deskscore.pipelines.cli.main", "view", "--warehouse",
         str(warehouse), "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if not found:
            proc.kill()
            raise AssertionError(
                f"no URL printed: {line!r} {proc.stderr.read() if proc.stderr else ''}"
            )
        yield found.group(0)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="session")
def viewer_url(viewer_warehouse: Path) -> Iterator[str]:
    with viewer_at(viewer_warehouse) as url:
        yield url

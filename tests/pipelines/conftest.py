"""Generated archives shared by the pipeline tests (small: a slice of the real task list)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskscore.collectors.synthetic import load_profiles, task_slice, write_run, write_zip


@pytest.fixture(scope="session")
def small_archive(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two runs as folders under one result dir, and a third run packed as a zip."""
    root = tmp_path_factory.mktemp("archive")
    profiles = load_profiles()
    tasks = task_slice()
    results = root / "results"
    runs = [write_run(results, profiles[i], tasks, seed=i, screenshots="none") for i in range(2)]
    zipped_run = write_run(root / "to_zip", profiles[2], tasks, seed=7, screenshots="none")
    zip_path = write_zip(zipped_run, root / "run3.zip")
    return {
        "results": results,
        "run0": runs[0],
        "run1": runs[1],
        "zip": zip_path,
        "zipped_run": zipped_run,
    }


@pytest.fixture(scope="session")
def hostile_warehouse(hostile_run: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`hostile_run` ingested, scored and priced (copy it before changing it)."""
    from deskscore.pipelines.jobs.ingest import run_ingest
    from deskscore.pipelines.jobs.score import run_score
    from deskscore.pipelines.options import IngestOptions, ScoreOptions

    wh = tmp_path_factory.mktemp("hostile_wh") / "wh"
    sources = (str(hostile_run["root"]),)
    run_ingest(
        IngestOptions(str(wh), sources=sources, layout=hostile_run["layout"], engine="direct")
    )
    run_score(ScoreOptions(str(wh), max_steps_scoring=50, engine="direct"))
    return wh

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

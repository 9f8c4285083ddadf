"""The same pipelines on another Beam runner, and the package its workers would install."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from deskscore.collectors.synthetic import load_profiles, task_slice, write_run_zip
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.options import IngestOptions

ROOT = Path(__file__).resolve().parents[3]
CODE_FOLDERS = ("schemas", "scorers", "collectors", "pipelines", "sql", "datasets")
SHIPPED = (".py", ".sql", ".csv", ".json")


def _rows(warehouse: Path, name: str) -> list[tuple]:
    data = Warehouse(warehouse).read(name).drop_columns(["source_stamp"] if name == "runs" else [])
    return sorted(tuple(map(repr, row.values())) for row in data.to_pylist())


def test_the_portable_runner_writes_the_same_tables_as_the_local_one(tmp_path: Path) -> None:
    tasks = task_slice(per_domain=1)
    profiles = load_profiles()
    for i in range(2):
        write_run_zip(tmp_path / f"r{i}.zip", profiles[i], tasks, seed=i, prefix=f"r{i}")
    sources = [str(tmp_path / "*.zip")]
    run_ingest(IngestOptions(str(tmp_path / "local"), sources=tuple(sources), workers=1))
    portable = run_ingest(
        IngestOptions(
            str(tmp_path / "portable"),
            sources=tuple(sources),
            beam_args=[
                "--runner=PortableRunner",
                "--job_endpoint=embed",
                "--environment_type=LOOPBACK",
            ],
        )
    )
    assert portable.runs_written == 2
    for name in ("runs", "episodes", "steps", "llm_calls"):
        assert _rows(tmp_path / "local", name) == _rows(tmp_path / "portable", name), name


def _project_files() -> set[str]:
    """deskscore's own code and data files, as `deskscore/<package>/...` paths."""
    out = set()
    for folder in CODE_FOLDERS:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in SHIPPED and "__pycache__" not in path.parts:
                out.add(f"deskscore/{folder}/{path.relative_to(ROOT / folder).as_posix()}")
    return out


@pytest.mark.skipif(
    subprocess.run([sys.executable, "-m", "build", "--version"], capture_output=True).returncode,
    reason="the 'build' package (a dev dependency) is not installed",
)
def test_the_package_setup_file_ships_to_workers_carries_every_module_and_data_file(
    tmp_path: Path,
) -> None:
    from apache_beam.runners.portability.stager import Stager

    sdist = Path(Stager._build_setup_package(str(ROOT / "pyproject.toml"), str(tmp_path)))
    with tarfile.open(sdist) as tar:
        assert any(n.endswith("/pyproject.toml") for n in tar.getnames())
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "wheel"), str(sdist)],
        check=True,
    )  # fmt: skip
    wheel = next((tmp_path / "wheel").glob("*.whl"))
    shipped = set(zipfile.ZipFile(wheel).namelist())
    wanted = {f for f in _project_files() if "/tests/" not in f}
    assert wanted - shipped == set()

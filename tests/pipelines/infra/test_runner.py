"""The same pipelines on another Beam runner, and the package its workers would install."""

from __future__ import annotations

import socket
import subprocess
import sys
import tarfile
import time
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


# ------------------------------------------------------------------ the Dask runner's options


def test_the_short_dask_runner_name_is_resolved_with_one_partition_per_element() -> None:
    from deskscore.pipelines.infra.runner import RUNNER_ALIASES, runner_args

    full = RUNNER_ALIASES["DaskRunner"]
    assert runner_args(["--runner=DaskRunner"], 7) == [f"--runner={full}", "--dask_npartitions=7"]
    assert runner_args(["--runner", "DaskRunner"], 3) == ["--runner", full, "--dask_npartitions=3"]
    chosen = ["--runner=DaskRunner", "--dask_npartitions=2"]
    assert runner_args(chosen, 7) == [f"--runner={full}", "--dask_npartitions=2"]
    assert runner_args(["--runner=PortableRunner"], 7) == ["--runner=PortableRunner"]


def test_the_dask_extra_installs_beams_dask_runner_for_the_pinned_beam() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    beam = next(d for d in extras["beam"] if d.startswith("apache-beam"))  # the beam extra's
    extra = extras["dask"]
    assert beam.replace("apache-beam", "apache-beam[dask]") in extra
    assert {d.split(">")[0] for d in extra} >= {"dask", "distributed"}


def test_the_dask_runner_without_the_dask_extra_fails_in_one_line(monkeypatch) -> None:
    from deskscore.pipelines.infra.runner import RunnerUnavailable, check_runner

    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    with pytest.raises(RunnerUnavailable, match=r"pip install 'deskscore\[dask\]'"):
        check_runner(["--runner=apache_beam.runners.dask.dask_runner.DaskRunner"])


def _silent_listener() -> socket.socket:
    """A port that accepts connections and never answers (a scheduler's dashboard, say)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    return server


@pytest.mark.parametrize("listening", [False, True], ids=["nothing-listens", "not-a-scheduler"])
def test_a_dask_address_where_no_scheduler_answers_fails_in_one_line_before_the_warehouse_is_touched(
    listening: bool, tmp_path: Path, capsys
) -> None:
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    from deskscore.pipelines.cli.main import main
    from deskscore.pipelines.infra.dask_cluster import free_port

    server = _silent_listener() if listening else None
    port = server.getsockname()[1] if server else free_port()
    started = time.monotonic()
    try:
        code = main(
            ["ingest", str(tmp_path / "none"), "--warehouse", str(tmp_path / "wh"),
             "--runner=DaskRunner", f"--dask_client_address=tcp://127.0.0.1:{port}",
             "--dask_connection_timeout=1"]
        )  # fmt: skip
    finally:
        if server:
            server.close()
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert f"no Dask scheduler answers at tcp://127.0.0.1:{port}" in err
    assert "dask scheduler" in err and "--dask_client_address" in err
    assert time.monotonic() - started < 15
    assert not (tmp_path / "wh").exists()

"""The light install (`pip install deskscore`, no extra): score.py, ingest and score on the
local engine run without Apache Beam, Docker's client, matplotlib or Starlette, which they never
import; the commands that need one of them say which extra to install.

Each case runs in a subprocess whose imports of those four packages fail, as they would
where they are not installed (.ci/run also installs the light variant for real)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from deskscore.collectors.synthetic import load_profiles, task_slice, write_run

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = ("apache_beam", "docker", "matplotlib", "starlette")

_WITHOUT_EXTRAS = f"""
import importlib.abc, importlib.util, runpy, sys
MISSING = {EXTRAS!r}
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in MISSING:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Missing())
_find = importlib.util.find_spec
importlib.util.find_spec = lambda name, package=None: (
    None if name.split(".")[0] in MISSING else _find(name, package))
script, sys.argv = sys.argv[1], sys.argv[1:]
try:
    if script == "deskscore":
        from deskscore.pipelines.cli.main import main
        code = main(sys.argv[1:])
    else:
        runpy.run_path(script, run_name="__main__")
        code = 0
except SystemExit as stop:
    code = stop.code
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set(MISSING))
print("LOADED", loaded, file=sys.stderr)
sys.exit(code)
"""


def _light(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _WITHOUT_EXTRAS, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("light") / "results"
    return write_run(root, load_profiles()[0], task_slice(per_domain=1), seed=3, screenshots="none")


def test_ingest_and_score_run_without_any_extra(run_folder: Path, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    ingest = _light("deskscore", "ingest", str(run_folder), "--warehouse", wh, cwd=tmp_path)
    assert ingest.returncode == 0, ingest.stderr
    assert "LOADED []" in ingest.stderr
    for engine in ("direct", "local"):
        score = _light("deskscore", "score", "--warehouse", wh, "--engine", engine, "--force",
                       cwd=tmp_path)  # fmt: skip
        assert score.returncode == 0, score.stderr
        assert "scored 1 run(s)" in score.stdout and "LOADED []" in score.stderr


def test_score_py_runs_without_any_extra(run_folder: Path, tmp_path: Path) -> None:
    args = ["--result-path", str(run_folder), "--human-version", "verified"]
    p = _light(str(ROOT / "score.py"), *args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "Single Action WES+:" in p.stdout and "LOADED []" in p.stderr
    full = subprocess.run(
        [sys.executable, str(ROOT / "score.py"), *args], capture_output=True, text=True,
        cwd=tmp_path, check=True,
    )  # fmt: skip
    assert p.stdout == full.stdout


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["score", "--engine", "beam"], "beam"),
        (["report", "--out", "r.html"], "report"),
        (["sandbox", "build"], "collect"),
        (["view", "--no-browser"], "viewer"),
    ],
)
def test_a_command_that_needs_an_extra_names_it(
    run_folder: Path, tmp_path: Path, args: list[str], extra: str
) -> None:
    wh = str(tmp_path / "wh")
    assert _light("deskscore", "ingest", str(run_folder), "--warehouse", wh,
                  cwd=tmp_path).returncode == 0  # fmt: skip
    p = (
        _light("deskscore", *args, "--warehouse", wh, cwd=tmp_path)
        if args[0] != "sandbox"
        else (_light("deskscore", *args, cwd=tmp_path))
    )
    assert p.returncode == 2
    assert f"pip install 'deskscore[{extra}]'" in p.stderr and "Traceback" not in p.stderr


def test_beams_options_without_beam_point_at_the_extra(tmp_path: Path) -> None:
    p = _light("deskscore", "score", "--warehouse", "wh", "--runner=FlinkRunner", cwd=tmp_path)
    assert p.returncode == 2 and "pip install 'deskscore[beam]'" in p.stderr


def test_score_py_without_deskscore_says_how_to_install_it(tmp_path: Path) -> None:
    """Run by an interpreter that cannot import deskscore (-I -S: no site-packages), from
    another folder, e.g. OSWorld-Human's: the hint installs this checkout, not `.`."""
    p = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "score.py"), "--help"],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert p.returncode == 1
    assert f"pip install '{ROOT}'" in p.stderr and "-e ." not in p.stderr

"""Progress from worker processes reaches the display of the process that started them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from deskscore.pipelines.infra import progress


def test_ticks_in_another_process_are_summed_by_the_display(tmp_path: Path) -> None:
    code = "from deskscore.pipelines.infra import progress\nfor _ in range(7): progress.tick('episodes')"
    env = {**os.environ, progress.ENV: str(tmp_path)}
    for _ in range(2):  # two worker processes
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
    assert progress._worker_totals(str(tmp_path)) == {"episodes": 14}


def test_without_a_display_a_tick_writes_nothing(tmp_path: Path) -> None:
    code = "from deskscore.pipelines.infra import progress\nprogress.tick('episodes')"
    env = {k: v for k, v in os.environ.items() if k != progress.ENV}
    subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, check=True)
    assert list(tmp_path.iterdir()) == []


DISPLAY = """
import os, sys, time
from deskscore.pipelines.infra import progress
with progress.show("test", ["episodes"]):
    print(os.environ[progress.ENV], flush=True)
    time.sleep(float(sys.argv[1]))
"""


def _display(tmp: Path, seconds: float) -> tuple[subprocess.Popen[str], Path]:
    """A display in a process of its own, its temp folder `tmp`; the process and its folder."""
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen(
        [sys.executable, "-c", DISPLAY, str(seconds)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def test_a_killed_display_s_folder_is_removed_by_the_next_display_and_a_live_one_is_kept(
    tmp_path: Path,
) -> None:
    killed, dead_folder = _display(tmp_path, 60)
    live, live_folder = _display(tmp_path, 60)
    legacy = tmp_path / f"{progress.PREFIX}older"  # an older version's: no owner file
    legacy.mkdir()
    try:
        killed.kill()
        killed.wait()
        assert dead_folder.is_dir() and (dead_folder / progress.OWNER).is_file()
        done, own_folder = _display(tmp_path, 0)
        assert done.wait(60) == 0
        assert not dead_folder.exists(), "the killed display's folder was left"
        assert not own_folder.exists()
        assert live_folder.is_dir(), "a running display's folder was removed"
        assert legacy.is_dir()
        assert progress.sweep_abandoned(str(tmp_path)) == 0
    finally:
        live.kill()
        live.wait()
    assert progress.sweep_abandoned(str(tmp_path)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [legacy.name]

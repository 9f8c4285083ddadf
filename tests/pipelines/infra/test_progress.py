"""Progress from worker processes reaches the display of the process that started them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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
    print(os.environ[progress.ENV], file=sys.__stdout__, flush=True)  # the display has stdout
    time.sleep(float(sys.argv[1]))
"""


def _display(tmp: Path, seconds: float) -> tuple[subprocess.Popen[str], Path]:
    """A display in a process of its own, its temp folder `tmp`; the process and its folder."""
    env = {**os.environ, "TMPDIR": str(tmp), "TTY_COMPATIBLE": "1"}  # displayed, though piped
    proc = subprocess.Popen(
        [sys.executable, "-c", DISPLAY, str(seconds)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
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


QUIET = """
import os, sys
from deskscore.pipelines.infra import progress
with progress.show("test", ["episodes"]):
    progress.tick("episodes")
    print(progress.ENV in os.environ, "rich" in sys.modules, sorted(os.listdir(sys.argv[1])),
          file=sys.__stdout__)  # a display takes stdout over
"""


def test_where_stderr_is_no_terminal_nothing_is_set_up_for_a_display(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    for extra in ({}, {"TTY_COMPATIBLE": "0"}, {"FORCE_COLOR": ""}):
        out = subprocess.run(
            [sys.executable, "-c", QUIET, str(tmp_path)],
            env={**env, **extra, "TMPDIR": str(tmp_path)},
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert out.stdout.split() == ["False", "False", "[]"], (extra, out.stdout)
    shown = subprocess.run(
        [sys.executable, "-c", QUIET, str(tmp_path)],
        env={**env, "TTY_COMPATIBLE": "1", "TMPDIR": str(tmp_path)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert shown.stdout.startswith("True True ['deskscore-progress-")


class _Stream:
    def __init__(self, answer: bool | None) -> None:
        self.answer = answer

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        if self.answer is None:
            raise ValueError("I/O operation on closed file")
        return self.answer


@pytest.mark.parametrize("tty_compatible", [None, "", "0", "1", "2"])
@pytest.mark.parametrize("force_color", [None, "", "0", "1"])
@pytest.mark.parametrize("isatty", [True, False, None])
def test_a_stream_rich_would_display_on_is_never_taken_for_no_terminal(
    monkeypatch: pytest.MonkeyPatch, tty_compatible: str | None, force_color: str | None,
    isatty: bool | None,
) -> None:  # fmt: skip
    from rich.console import Console

    for name, value in (("TTY_COMPATIBLE", tty_compatible), ("FORCE_COLOR", force_color)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    stream = _Stream(isatty)
    rich_says = Console(file=stream).is_terminal  # type: ignore[arg-type]
    assert progress._may_be_terminal(stream) or not rich_says
    if not rich_says:
        assert progress._may_be_terminal(stream) == (
            tty_compatible == "1" or bool(force_color) or (tty_compatible != "0" and bool(isatty))
        )

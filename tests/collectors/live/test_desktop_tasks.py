"""The desktop task set: every task's evaluator is implemented, scores 0 on the state its
setup leaves and 1 on the state its solution makes; its generated files open.

The desktop here is a folder standing for the user's home: the real controller client runs
each task's setup steps against it (uploads written there, commands run by bash with HOME
set to it, applications not launched), and the evaluators read it back through the client.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from deskscore.collectors.live import desktop_files
from deskscore.collectors.live.client import Controller
from deskscore.collectors.live.desktop_solutions import SOLUTIONS
from deskscore.collectors.live.evaluators import evaluate, missing_parts
from deskscore.collectors.live.tasks import load_tasks

TASKS_FILE = str(resources.files("deskscore.datasets").joinpath("desktop_tasks.json"))
TASKS = load_tasks(TASKS_FILE).tasks
APPS = {
    "libreoffice_calc": "libreoffice",
    "libreoffice_writer": "libreoffice",
    "libreoffice_impress": "libreoffice",
    "chrome": "chromium",
    "gimp": "gimp",
    "vlc": "vlc",
    "thunderbird": "thunderbird",
    "editor": "mousepad",
    "files": "pcmanfm",
    "os": "xterm",
}


class FolderDesktop(Controller):
    """The controller client on a folder: files and commands go to `home`; launches are
    recorded instead of run."""

    def __init__(self, home: Path) -> None:
        super().__init__("http://127.0.0.1:9", sleep=lambda s: None)
        self.home = home
        self.launched: list[Any] = []

    def _path(self, path: str) -> Path:
        if path.startswith("~/"):
            return self.home / path[2:]
        return Path(path)

    def file(self, path: str) -> bytes | None:
        local = self._path(path)
        return local.read_bytes() if local.is_file() else None

    def upload(self, path: str, data: bytes) -> None:
        local = self._path(path)
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(data)

    def launch(self, command: str | Sequence[str], shell: bool = False) -> None:
        self.launched.append(command)

    def execute(
        self, command: str | Sequence[str], *, shell: bool = False, setup: bool = False
    ) -> dict[str, Any]:
        assert isinstance(command, list) and command[:2] == ["bash", "-c"], command
        env = {"PATH": os.environ["PATH"], "HOME": str(self.home), "LC_ALL": "C"}
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=self.home, timeout=60
        )
        return {
            "status": "success",
            "output": done.stdout,
            "error": done.stderr,
            "returncode": done.returncode,
        }


def _set_up(task: Mapping[str, Any], tmp_path: Path) -> FolderDesktop:
    home = tmp_path / "home"
    home.mkdir()
    desktop = FolderDesktop(home)
    desktop.run_setup(task["config"])
    return desktop


def _score(desktop: FolderDesktop, task: Mapping[str, Any]) -> float | None:
    evaluation = evaluate(desktop, task["evaluator"], last_action="DONE")
    assert evaluation.status == "ok", evaluation.details
    return evaluation.score


def _opens(name: str, data: bytes) -> None:
    """The generated file opens with the library its application's files are read with."""
    if name.endswith(".xlsx"):
        import openpyxl

        assert openpyxl.load_workbook(io.BytesIO(data)).sheetnames
    elif name.endswith(".docx"):
        import docx

        assert docx.Document(io.BytesIO(data)).paragraphs
    elif name.endswith(".pptx"):
        import pptx

        assert len(pptx.Presentation(io.BytesIO(data)).slides) > 0
    elif name.endswith(".png"):
        from PIL import Image

        with Image.open(io.BytesIO(data)) as im:
            im.verify()
    elif name.startswith("chromium/"):
        assert isinstance(json.loads(data), dict)
    else:
        assert data.decode("utf-8").strip()


def test_the_set_has_thirty_tasks_over_every_application() -> None:
    assert len(TASKS) >= 30
    assert load_tasks(TASKS_FILE).problems == []
    assert {t["domain"] for t in TASKS} == set(APPS)
    assert set(SOLUTIONS) == {t["id"] for t in TASKS}


@pytest.mark.parametrize("task", TASKS, ids=[t["id"] for t in TASKS])
def test_task_scores_zero_untouched_and_one_when_solved(
    task: Mapping[str, Any], tmp_path: Path
) -> None:
    assert missing_parts(task["evaluator"]) == []
    desktop = _set_up(task, tmp_path)
    launched = [c[0] if isinstance(c, list) else c for c in desktop.launched]
    assert launched == [APPS[task["domain"]]]
    assert _score(desktop, task) == 0.0
    SOLUTIONS[task["id"]](desktop.home)
    assert _score(desktop, task) == 1.0


@pytest.mark.parametrize("task", TASKS, ids=[t["id"] for t in TASKS])
def test_task_inputs_are_generated_files_that_open(task: Mapping[str, Any]) -> None:
    names = [
        f["generated"]
        for step in task["config"]
        if step["type"] == "upload_file"
        for f in step["parameters"]["files"]
    ]
    assert names
    for name in names:
        data = desktop_files.build(name)
        assert data == desktop_files.build(name)
        _opens(name, data)


def test_every_generated_file_opens() -> None:
    for name in desktop_files.FILES:
        _opens(name, desktop_files.build(name))


def test_an_unknown_generated_file_is_named_in_the_error() -> None:
    with pytest.raises(KeyError, match=r"no generated file 'nope\.xlsx'"):
        desktop_files.build("nope.xlsx")

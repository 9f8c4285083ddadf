"""`deskscore collect` on the desktop image: the scripted agent works LibreOffice, GIMP,
Chromium, VLC, Thunderbird, mousepad, pcmanfm and xterm with pyautogui alone, and the
project's evaluators score the files the applications leave: 1 for the plan that does the
task, 0 for the plan that leaves a wrong state. One task per application (the others run
with DESKSCORE_DESKTOP_TASKS=all, or name them: DESKSCORE_DESKTOP_TASKS=id,id), each in
a fresh container.

DESKSCORE_DESKTOP_SHOTS=FOLDER saves the last screenshot of each right episode there as
`<task>.png` (the docs' screenshots)."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from deskscore.collectors.live.providers import LABEL_RUN
from deskscore.collectors.live.record import ScreenshotStore
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
DATASETS = ROOT / "datasets"
ONE_PER_APPLICATION = (
    "calc_sum_formula",
    "writer_center_title",
    "impress_delete_slide",
    "gimp_mirror",
    "chromium_bookmark_folder",
    "vlc_one_instance",
    "thunderbird_spellcheck_off",
    "editor_fix_typo",
    "files_move_report",
    "terminal_count_lines",
)


def picked() -> list[dict[str, Any]]:
    tasks = json.loads((DATASETS / "desktop_tasks.json").read_text())
    wanted = os.environ.get("DESKSCORE_DESKTOP_TASKS")
    if wanted == "all":
        return tasks
    ids = wanted.split(",") if wanted else ONE_PER_APPLICATION
    return [t for t in tasks if t["id"] in ids]


def collect(tasks_file: Path, plan: str, warehouse: Path, image: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["collect", "--tasks", str(tasks_file),
                     "--agent", f"scripted:{DATASETS / plan}",
                     "--provider", "docker", "--image", image, "--parallel", "2",
                     "--warehouse", str(warehouse), "--benchmark", "desktop",
                     "--settle", "1"])  # fmt: skip
    assert code == 0, out.getvalue()
    return out.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("plan", "score"), [("desktop_plans.json", 1.0), ("desktop_plans_wrong.json", 0.0)]
)
def test_desktop_tasks_scored_by_their_evaluators(
    docker_engine: Any, desktop_image: str, tmp_path: Path, plan: str, score: float
) -> None:
    tasks = picked()
    if not os.environ.get("DESKSCORE_DESKTOP_TASKS"):
        assert {t["related_apps"][0] for t in tasks} == {
            "libreoffice_calc", "libreoffice_writer", "libreoffice_impress", "gimp", "chrome",
            "vlc", "thunderbird", "mousepad", "file_manager", "terminal",
        }  # fmt: skip
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    log = collect(tmp_path / "tasks.json", plan, tmp_path / "wh", desktop_image)
    wh = Warehouse(tmp_path / "wh")
    episodes = {e["task_id"]: e for e in wh.read("episodes").to_pylist()}
    verdicts = {k: (e["result_status"], e["score"]) for k, e in episodes.items()}
    assert verdicts == {t["id"]: ("ok", score) for t in tasks}, log
    steps = wh.read("steps").to_pylist()
    assert {s["task_id"] for s in steps} == set(episodes)
    refs = wh.read("screenshot_refs").to_pylist()
    assert {r["task_id"] for r in refs} == set(episodes)  # every episode's screens are kept
    [run] = wh.read("runs").to_pylist()
    assert not docker_engine.containers.list(
        all=True, filters={"label": f"{LABEL_RUN}={run['run_id']}"}
    )
    shots = os.environ.get("DESKSCORE_DESKTOP_SHOTS")
    if shots and score == 1.0:
        store = ScreenshotStore(str(tmp_path / "wh"))
        Path(shots).mkdir(parents=True, exist_ok=True)
        for task_id in episodes:
            last = max((r for r in refs if r["task_id"] == task_id), key=lambda r: r["step_idx"])
            data = store.read(last["screenshot_path"]) or b""
            Path(shots, f"{task_id}.png").write_bytes(data)

"""`deskscore collect` with the docker provider: each episode in a fresh sandbox container
(Xvfb, a window manager, xterm and a text editor), two at a time."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from deskscore.collectors.live.providers import LABEL_RUN
from deskscore.collectors.live.tasks import load_tasks
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
PICKED = ("L1_editor_append_line", "L1_editor_fix_letter", "INTERACTIVE_os_greeting_change",
          "L1_os_screen_resolution")  # fmt: skip


def test_bundled_tasks_are_solved_in_sandbox_containers(
    docker_engine: Any, sandbox_image: str, tmp_path: Path
) -> None:
    tasks = [t for t in load_tasks().tasks if t["id"] in PICKED]
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["collect", "--tasks", str(tmp_path / "tasks.json"),
                     "--agent", f"scripted:{ROOT / 'datasets' / 'sandbox_plans.json'}",
                     "--provider", "docker", "--image", sandbox_image, "--parallel", "2",
                     "--warehouse", str(tmp_path / "wh"), "--benchmark", "sandbox",
                     "--settle", "0.3"])  # fmt: skip
    assert code == 0, out.getvalue()
    wh = Warehouse(tmp_path / "wh")
    episodes = {e["task_id"]: e for e in wh.read("episodes").to_pylist()}
    assert {k: (e["result_status"], e["score"]) for k, e in episodes.items()} == dict.fromkeys(
        PICKED, ("ok", 1.0)
    )
    steps = wh.read("steps").to_pylist()
    edits = sorted(
        (s for s in steps if s["task_id"] == "L1_editor_fix_letter"), key=lambda s: s["step_idx"]
    )
    assert [s["action_kind"] for s in edits] == ["multi", "done"]  # click, keys, type, save
    inter = [
        r
        for r in wh.read("interactions").to_pylist()
        if r["task_id"] == "INTERACTIVE_os_greeting_change"
    ]
    assert sorted(r["type"] for r in inter) == ["initial_instruction", "new_instruction"]
    [run] = wh.read("runs").to_pylist()
    assert run["n_task_folders"] == 4 and "docker" in run["args_json"]
    # every container the run started (labelled with its run id) is gone
    assert not docker_engine.containers.list(
        all=True, filters={"label": f"{LABEL_RUN}={run['run_id']}"}
    )

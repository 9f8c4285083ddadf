"""UI-TARS submissions: data.json (steps, score in the last inner step) and meta.json (query)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deskscore.collectors.layout import discover
from deskscore.collectors.osworld import EpisodeRead
from deskscore.collectors.source import open_source
from deskscore.collectors.uitars import read_uitars_episode
from deskscore.schemas import conform_rows

QUERY = "Open the settings and turn on dark mode"
STEPS = [
    {"step": 1, "screenshot": "step_1.png",
     "inner_step": [{"action": "pyautogui.click(100, 200)", "response": "Thought: the gear icon",
                     "score": 0}]},
    {"step": 2, "inner_step": [{"action": "pyautogui.typewrite('dark')", "score": 0}]},
    {"step": 3, "inner_step": [{"action": "DONE", "score": 1.0}]},
]  # fmt: skip


def write_task(
    root: Path, name: str, data: object, meta: object = None, raw: bytes | None = None
) -> None:
    folder = root / "uitars-run" / name
    folder.mkdir(parents=True)
    (folder / "data.json").write_bytes(raw if raw is not None else json.dumps(data).encode())
    (folder / "meta.json").write_text(json.dumps({"query": QUERY} if meta is None else meta))
    (folder / "step_1.png").write_bytes(b"png")


def read_all(root: Path) -> list[EpisodeRead]:
    src = open_source(str(root))
    runs = discover(src.files())
    assert [r.format for r in runs] == ["uitars"]
    reads = [
        read_uitars_episode(src, run, t, run_id="r", benchmark="osworld")
        for run in runs
        for t in run.tasks
    ]
    conform_rows("episodes", [r.episode for r in reads])
    conform_rows("steps", [s for r in reads for s in r.steps])
    conform_rows("step_actions", [a for r in reads for a in r.actions])
    conform_rows("quarantine", [q for r in reads for q in r.quarantine])
    return reads


def test_each_data_element_is_a_step_and_the_last_inner_score_is_the_result(tmp_path: Path) -> None:
    write_task(tmp_path, QUERY[:20], STEPS)
    [(ep, steps, quarantine, _)] = read_all(tmp_path)
    assert quarantine == []
    assert (ep["domain"], ep["task_id"], ep["source_task_id"]) == ("uitars", QUERY[:20], QUERY[:20])
    assert ep["instruction"] == QUERY
    assert ep["n_lines"] == len(STEPS) == ep["n_steps"] == len(steps)
    assert (ep["score"], ep["result_status"]) == (1.0, "ok")
    assert ep["traj_file"] == f"uitars-run/{QUERY[:20]}/data.json"
    assert [s["action_kind"] for s in steps] == ["click", "type", "done"]
    assert {s["action_format"] for s in steps} == {"dict"}
    assert ep["ended_by"] == "done" and ep["n_turns"] == 3
    assert steps[0]["response"] == "Thought: the gear icon"
    assert steps[0]["screenshot_path"] == f"uitars-run/{QUERY[:20]}/step_1.png"
    assert [json.loads(s["extra"]) for s in steps] == STEPS  # nothing of a step is dropped


@pytest.mark.parametrize(
    ("data", "raw", "status", "reason"),
    [(None, b'[{"inner_step": [', "unparseable", "invalid_json"),
     ({"steps": []}, None, "unparseable", "unexpected_shape"),
     ([], None, "empty", "empty_result"),
     ([{"inner_step": []}], None, "unparseable", "unparseable_result"),
     ([{"inner_step": [{"score": "nan"}]}], None, "unparseable", "unparseable_result"),
     ([{"inner_step": [{"score": True}]}], None, "ok", None)],
)  # fmt: skip
def test_malformed_data_json_becomes_quarantine(
    tmp_path: Path, data: object, raw: bytes | None, status: str, reason: str | None
) -> None:
    write_task(tmp_path, "task", data, raw=raw)
    [(ep, steps, quarantine, _)] = read_all(tmp_path)
    assert ep["result_status"] == status
    assert [q["reason"] for q in quarantine] == ([reason] if reason else [])
    assert ep["n_lines"] == len(steps)


def test_meta_without_a_query_is_quarantined(tmp_path: Path) -> None:
    write_task(tmp_path, "task", STEPS, meta={"question": QUERY})
    [(ep, _, quarantine, _)] = read_all(tmp_path)
    assert ep["instruction"] is None and ep["score"] == 1.0
    assert [(q["location"], q["reason"]) for q in quarantine] == [
        ("uitars-run/task/meta.json", "unexpected_shape")
    ]

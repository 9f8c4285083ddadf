"""A DeskCraft task folder: OSWorld files plus phases, the interaction log and CALL_USER."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deskscore.collectors.deskcraft import (
    MAX_JSON_BYTES,
    interaction_rows,
    merge_interactions,
    metric_scores,
    read_deskcraft_episode,
)
from deskscore.collectors.layout import discover, is_deskcraft_stem
from deskscore.collectors.osworld import QuarantineRows
from deskscore.collectors.source import open_source
from deskscore.schemas import conform_rows

RUN = "pyautogui/screenshot/evocua"
STEM = "INTERACTIVE_calc_interactive_calc_002"
STANDARD = "L2_calc_4f989467-8112-445d-8f1d-d0b905bd6d74"


def line(turn: int, action: Any, phase: int | None = 1, **kw: Any) -> str:
    rec = {
        "step_num": turn,
        "action_timestamp": f"20260302@0900{turn:02d}",
        "action": action,
        "response": kw.pop("response", f"turn {turn}"),
        "reward": 0,
        "done": action in ("DONE", "FAIL"),
        "info": kw.pop("info", {}),
        "screenshot_file": f"step_{turn}.png",
        **kw,
    }
    if phase is not None:
        rec["phase"] = phase
    return json.dumps(rec)


LOG = [
    {"step": 0, "phase": 1, "type": "initial_instruction", "user_message": "Copy a column",
     "timestamp": "20260302@090000"},
    {"step": 2, "phase": 1, "type": "clarify", "user_message": "The Revenue column",
     "phase_complete": True, "timestamp": "20260302@090002"},
    {"step": 4, "phase": 2, "type": "new_instruction", "user_message": "Now save it",
     "phase_complete": True, "timestamp": "20260302@090004"},
]  # fmt: skip

TRAJ = [
    line(1, "import pyautogui; pyautogui.click(10, 20)"),
    line(2, "CALL_USER", response="[CALL_USER] Which column?"),
    line(3, "import pyautogui; pyautogui.hotkey('ctrl', 'c')", phase=2),
    line(4, "DONE", phase=2),
    line(5, "import pyautogui; pyautogui.hotkey('ctrl', 's')", phase=3),
    line(6, "DONE", phase=3, info={"done": True}),
]


def write_task(
    root: Path,
    stem: str = STEM,
    *,
    traj: list[str] | None = None,
    log: Any = LOG,
    result: str | None = "1.0\n",
    files: dict[str, bytes | str] | None = None,
) -> Path:
    folder = root / RUN / "calc" / stem
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "traj.jsonl").write_text("".join(t + "\n" for t in (TRAJ if traj is None else traj)))
    if result is not None:
        (folder / "result.txt").write_text(result)
    if log is not None:
        (folder / "interaction_log.json").write_text(
            log if isinstance(log, str) else json.dumps(log)
        )
    for name, data in (files or {}).items():
        (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    return folder


def read(root: Path, stem: str = STEM):
    source = open_source(str(root))
    runs = discover(source.files())
    [run] = [r for r in runs if r.format == "deskcraft"]
    [task] = [t for t in run.tasks if t.task_id == stem]
    return read_deskcraft_episode(source, run, task, run_id="r1", benchmark="deskcraft")


def test_stem_folders_are_found_as_deskcraft_runs_by_default(tmp_path: Path) -> None:
    write_task(tmp_path)
    write_task(tmp_path, STANDARD, log=None)
    (tmp_path / RUN / "calc" / "notes").mkdir()
    (tmp_path / RUN / "calc" / "notes" / "result.txt").write_text("1\n")
    [run] = discover(open_source(str(tmp_path)).files())
    assert run.format == "deskcraft" and run.run_path == RUN
    assert sorted(t.task_id for t in run.tasks) == sorted([STANDARD, STEM])
    assert {t.domain for t in run.tasks} == {"calc"}


def test_a_layout_pattern_marks_stem_folders_as_deskcraft(tmp_path: Path) -> None:
    write_task(tmp_path)
    runs = discover(open_source(str(tmp_path)).files(), "*/*/{run}/{domain}/{task_id}")
    assert [r.format for r in runs] == ["deskcraft"]


def test_a_stem_must_name_the_app_folder_it_sits_in() -> None:
    assert is_deskcraft_stem("L1_calc_x", "calc")
    assert is_deskcraft_stem("INTERACTIVE_multi_app_interactive_multiapp_c2w_001", "multi_app")
    assert not is_deskcraft_stem("L1_calc_x", "gimp")
    assert not is_deskcraft_stem("L4_calc_x", "calc")
    assert not is_deskcraft_stem("0a1b2c3d-1111-4222-8333-444455556666", "calc")


def test_call_user_is_an_interaction_not_an_environment_step(tmp_path: Path) -> None:
    write_task(tmp_path)
    out = read(tmp_path)
    ep = out.read.episode
    kinds = [s["action_kind"] for s in out.read.steps]
    assert kinds == ["click", "call_user", "hotkey", "done", "hotkey", "done"]
    assert ep["n_lines"] == 6 and len(out.read.steps) == 6  # every line is accounted for
    assert ep["n_steps"] == 5 and ep["n_turns"] == 5  # the question is not a step
    assert ep["last_action_kind"] == "done" and ep["ended_by"] == "done"
    assert [s["phase"] for s in out.read.steps] == [1, 1, 2, 2, 3, 3]
    assert out.read.quarantine == []


def test_interactions_are_the_log_with_the_question_before_its_answer(tmp_path: Path) -> None:
    write_task(tmp_path)
    rows = read(tmp_path).interactions
    assert [(r["seq"], r["type"], r["step"], r["phase"]) for r in rows] == [
        (0, "initial_instruction", None, 1),
        (1, "call_user", 2, 1),
        (2, "clarify", 2, 1),
        (3, "new_instruction", 4, 2),
    ]
    assert rows[1]["message"] == "Which column?"
    assert rows[2]["message"] == "The Revenue column" and rows[2]["phase_complete"] is True
    assert rows[0]["timestamp"] == datetime(2026, 3, 2, 9, 0, 0)
    assert rows[0]["timestamp_raw"] == "20260302@090000"
    assert conform_rows("interactions", rows).num_rows == 4


def test_task_instruction_jsonl_is_not_a_trajectory(tmp_path: Path) -> None:
    write_task(
        tmp_path,
        files={"task_instruction.jsonl": json.dumps({"instruction": "Copy", "phases": 2}) + "\n"},
    )
    out = read(tmp_path)
    assert out.read.episode["traj_file"].endswith("traj.jsonl")
    assert out.read.episode["instruction"] == "Copy"
    assert out.read.quarantine == []


def test_a_log_that_records_the_question_is_not_doubled(tmp_path: Path) -> None:
    log = [*LOG[:1], {"step": 2, "phase": 1, "type": "call_user", "message": "Which?"}, *LOG[1:]]
    write_task(tmp_path, log=log)
    types = [r["type"] for r in read(tmp_path).interactions]
    assert types.count("call_user") == 1


def test_a_standard_task_has_no_interactions_and_no_phase(tmp_path: Path) -> None:
    traj = [line(1, "import pyautogui; pyautogui.click(1, 2)", None), line(2, "DONE", None)]
    write_task(tmp_path, STANDARD, traj=traj, log=None)
    out = read(tmp_path, STANDARD)
    assert out.interactions == []
    assert [s["phase"] for s in out.read.steps] == [None, None]
    assert out.read.episode["n_steps"] == 2


def test_archived_metric_scores_are_read_and_normalised(tmp_path: Path) -> None:
    details = {"conj": "or", "metrics": [{"func": "a", "score": 0}, {"func": "b", "score": 1}]}
    write_task(tmp_path, files={"eval_details.json": json.dumps(details)})
    got = json.loads(read(tmp_path).read.episode["metric_scores_json"])
    assert got == {
        "conj": "or",
        "metrics": [{"func": "a", "score": 0.0}, {"func": "b", "score": 1.0}],
    }
    assert metric_scores([1, 0.5]) == ({"conj": None, "metrics": [{"func": None, "score": 1.0},
                                                                  {"func": None, "score": 0.5}]}, None)  # fmt: skip


@pytest.mark.parametrize(
    "bad",
    [
        {"conj": "xor", "metrics": [1]},
        {"metrics": []},
        [True],
        ["1"],
        {"metrics": [{"score": None}]},
    ],
)
def test_bad_metric_scores_are_quarantined(tmp_path: Path, bad: Any) -> None:
    write_task(tmp_path, files={"eval_details.json": json.dumps(bad)})
    out = read(tmp_path)
    assert out.read.episode.get("metric_scores_json") is None
    assert [q["reason"] for q in out.read.quarantine] == ["bad_metric_scores"]


HOSTILE_LOGS = {
    "truncated": (json.dumps(LOG)[:70], "invalid_json"),
    "not a list": (json.dumps({"step": 1}), "not_a_list"),
    "deep": ("[" * 50_000 + "]" * 50_000, "invalid_json"),
    "not utf-8": (b"\xff\xfe[]", "not_utf8"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_LOGS))
def test_a_hostile_log_is_quarantined_and_the_episode_is_still_read(
    tmp_path: Path, name: str
) -> None:
    content, reason = HOSTILE_LOGS[name]
    folder = write_task(tmp_path, log=None)
    path = folder / "interaction_log.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    out = read(tmp_path)
    [q] = out.read.quarantine
    assert q["reason"] == reason
    assert q["location"].endswith(f"{STEM}/interaction_log.json")
    assert "interaction_log.json" in q["message"]
    assert out.read.episode["n_steps"] == 5 and len(out.read.steps) == 6
    assert [r["type"] for r in out.interactions] == ["call_user"]  # the trajectory still tells


def test_a_huge_log_is_not_read(tmp_path: Path) -> None:
    folder = write_task(tmp_path, log=None)
    with open(folder / "interaction_log.json", "wb") as f:
        f.truncate(MAX_JSON_BYTES + 1)  # sparse: no disk is spent
    out = read(tmp_path)
    assert [q["reason"] for q in out.read.quarantine] == ["too_large"]


def test_bad_entries_are_quarantined_one_by_one_and_the_rest_kept(tmp_path: Path) -> None:
    log = [
        LOG[0],
        "not an entry",
        {"step": 1, "phase": 1},  # no type
        {"step": "two", "phase": [1], "type": "clarify", "user_message": 5,
         "phase_complete": "yes", "timestamp": "yesterday"},
        LOG[2],
    ]  # fmt: skip
    write_task(tmp_path, log=log)
    out = read(tmp_path)
    reasons = sorted(q["reason"] for q in out.read.quarantine)
    assert reasons == ["bad_interaction", "bad_interaction_field", "not_an_object"]
    field_q = next(q for q in out.read.quarantine if q["reason"] == "bad_interaction_field")
    assert "entry 3" in field_q["message"]
    for name in ("step", "phase", "user_message", "phase_complete", "timestamp"):
        assert name in field_q["message"]
    kept = [r for r in out.interactions if r["type"] == "clarify"]
    assert kept == [{**kept[0], "step": None, "phase": None, "message": None,
                     "phase_complete": None, "timestamp": None}]  # fmt: skip
    assert [r["type"] for r in out.interactions] == [
        "initial_instruction",
        "clarify",
        "call_user",
        "new_instruction",
    ]
    assert conform_rows("quarantine", out.read.quarantine).num_rows == 3


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
_entry = st.fixed_dictionaries(
    {},
    optional={
        "step": _json | st.integers(-(2**40), 2**40),
        "phase": _json,
        "type": _json | st.sampled_from(["clarify", "new_instruction", "initial_instruction"]),
        "user_message": _json,
        "phase_complete": _json,
        "timestamp": _json | st.just("20260302@090000"),
    },
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_entry | _json, max_size=6) | _json)
def test_any_json_log_gives_conforming_rows_or_quarantine(entries: Any) -> None:
    q = QuarantineRows("src", "r", "deskcraft")
    keys = {"benchmark": "deskcraft", "run_id": "r", "domain": "calc", "task_id": STEM}
    rows = merge_interactions(interaction_rows(entries, path="p", keys=keys, q=q), [])
    conform_rows("interactions", rows)
    conform_rows("quarantine", q.rows)
    n = len(entries) if isinstance(entries, list) else 1
    dropped = sum(1 for r in q.rows if r["reason"] != "bad_interaction_field")
    assert len(rows) + dropped == n

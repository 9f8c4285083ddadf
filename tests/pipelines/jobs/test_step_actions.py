"""step_actions through ingest: every call of every step reaches the warehouse, SQL reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deskscore.collectors.synthetic import load_profiles, task_slice, write_run
from deskscore.pipelines.cli.check import check_warehouse
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.options import IngestOptions
from deskscore.sql import connect

TASK = "00000000-1111-4222-8333-444444444444"  # no real task: only this run has it
ACTIONS = [
    "pyautogui.hotkey('win'); pyautogui.write('VLC media player'); pyautogui.press('enter')",
    "import subprocess\nimport time\nsubprocess.run(['wmctrl', '-ic', '0x04200003'])\n"
    "time.sleep(1)",
    "import pyautogui as pg\npg.click(x=35, y=405)  # the icon\ntime.sleep(3)",
    "pyautogui.click(10, 20)\npyautogui.write('cut off",
    "WAIT",
    {"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "s"]}},
    "DONE",
]


def _handwritten_run(root: Path) -> Path:
    """One OSWorld task folder whose steps are chained, multi-line, cut off and dict actions."""
    task = root / "pyautogui" / "screenshot" / "hand" / "chrome" / TASK
    task.mkdir(parents=True)
    lines = [{"step_num": i + 1, "action_timestamp": f"20250101@1200{i:02d}", "action": a,
              "response": "", "reward": 0, "done": a == "DONE", "info": {}}
             for i, a in enumerate(ACTIONS)]  # fmt: skip
    lines.insert(4, {"Error": "VM crashed"})
    (task / "traj.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (task / "result.txt").write_text("0.0\n")
    return root


@pytest.fixture(scope="module")
def warehouse(small_archive, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("step_actions")
    hand = _handwritten_run(root / "hand")
    c13 = write_run(root / "c13", load_profiles()[4], task_slice(per_domain=1), seed=3)
    wh = root / "wh"
    sources = (str(small_archive["results"]), str(small_archive["zip"]), str(hand), str(c13))
    run_ingest(IngestOptions(str(wh), sources=sources, engine="direct"))
    return wh


def test_every_step_with_an_action_has_its_calls_and_none_dangles(warehouse: Path) -> None:
    con = connect(warehouse)
    key = "(run_id, domain, task_id, step_idx)"
    ((without, orphans, formats),) = con.sql(
        f"""
        SELECT
            (SELECT count(*) FROM steps WHERE action_kind <> 'error' AND action_format <> 'none'
               AND {key} NOT IN (SELECT {key} FROM step_actions)),
            (SELECT count(*) FROM step_actions WHERE {key} NOT IN (SELECT {key} FROM steps)),
            (SELECT list(DISTINCT action_format ORDER BY action_format) FROM steps)
        """
    ).fetchall()
    assert (without, orphans) == (0, 0)
    assert {"code", "claude", "computer_13", "special"} <= set(formats)
    assert check_warehouse(warehouse).ok


def test_a_step_of_one_call_has_the_steps_kind_position_and_text(warehouse: Path) -> None:
    con = connect(warehouse)
    rows = con.sql(
        """
        SELECT s.action_kind, s.x, s.y, s.text, a.kind, a.x, a.y, a.text
        FROM steps s JOIN step_actions a USING (run_id, domain, task_id, step_idx)
        WHERE (run_id, domain, task_id, step_idx) IN (
            SELECT (run_id, domain, task_id, step_idx) FROM step_actions
            GROUP BY ALL HAVING count(*) = 1)
        """
    ).fetchall()
    assert len(rows) > 100
    assert all(r[:4] == r[4:] for r in rows), [r for r in rows if r[:4] != r[4:]][:3]


def test_chained_and_multi_line_steps_are_stored_call_by_call(warehouse: Path) -> None:
    con = connect(warehouse)
    steps = con.sql(
        f"SELECT step_idx, action_kind, text FROM steps WHERE task_id = '{TASK}' ORDER BY step_idx"
    ).fetchall()
    assert steps == [
        (0, "multi", "win"), (1, "bash", "wmctrl -ic 0x04200003"), (2, "click", None),
        (3, "multi", None), (4, "error", None), (5, "wait", None), (6, "hotkey", "ctrl+s"),
        (7, "done", None),
    ]  # fmt: skip
    calls = con.sql(
        f"""
        SELECT step_idx, action_idx, kind, func, x, y, text, keys, seconds, effective, parser
        FROM step_actions WHERE task_id = '{TASK}' ORDER BY step_idx, action_idx
        """
    ).fetchall()
    assert calls == [
        (0, 0, "hotkey", "pyautogui.hotkey", None, None, "win", ["win"], None, True, "ast"),
        (0, 1, "type", "pyautogui.write", None, None, "VLC media player", None, None, True, "ast"),
        (0, 2, "press", "pyautogui.press", None, None, "enter", ["enter"], None, True, "ast"),
        (1, 0, "bash", "subprocess.run", None, None, "wmctrl -ic 0x04200003", None, None, True,
         "ast"),
        (1, 1, "wait", "time.sleep", None, None, None, None, 1.0, False, "ast"),
        (2, 0, "click", "pyautogui.click", 35.0, 405.0, None, None, None, True, "ast"),
        (2, 1, "wait", "time.sleep", None, None, None, None, 3.0, False, "ast"),
        (3, 0, "click", "pyautogui.click", 10.0, 20.0, None, None, None, True, "regex"),
        (3, 1, "type", "pyautogui.write", None, None, None, None, None, True, "regex"),
        (5, 0, "wait", None, None, None, None, None, None, True, "word"),
        (6, 0, "hotkey", "HOTKEY", None, None, "ctrl+s", ["ctrl", "s"], None, True, "dict"),
        (7, 0, "done", None, None, None, None, None, None, True, "word"),
    ]  # fmt: skip

"""The scripted agent's plans for the desktop tasks: one that does each task and one that
leaves it wrong, both with pyautogui's keyboard and mouse alone (run on real desktops by
test_collect_desktop.py)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from deskscore.collectors.live.agents import special_of

DATASETS = Path(__file__).resolve().parents[3] / "datasets"
ALLOWED = {
    ("pyautogui", "press"),
    ("pyautogui", "hotkey"),
    ("pyautogui", "typewrite"),
    ("pyautogui", "click"),
    ("pyautogui", "doubleClick"),
    ("time", "sleep"),
}


def plans(name: str) -> dict[str, list[str]]:
    return json.loads((DATASETS / name).read_text())["tasks"]


def calls(code: str) -> set[tuple[str, str]]:
    """(module, function) of every call in `code`; any other statement fails the parse."""
    found = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call):
            func = node.func
            assert isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name), code
            found.add((func.value.id, func.attr))
        elif isinstance(node, ast.Import | ast.ImportFrom | ast.Assign | ast.With):
            raise AssertionError(f"not an input action: {code}")
    return found


def test_every_desktop_task_has_a_right_and_a_wrong_plan() -> None:
    tasks = {t["id"] for t in json.loads((DATASETS / "desktop_tasks.json").read_text())}
    right, wrong = plans("desktop_plans.json"), plans("desktop_plans_wrong.json")
    assert set(right) == set(wrong) == tasks
    for task_id in tasks:
        assert right[task_id] != wrong[task_id], task_id
        assert right[task_id][-1] == wrong[task_id][-1] == "DONE"


def test_plans_only_press_keys_type_click_and_wait() -> None:
    for name in ("desktop_plans.json", "desktop_plans_wrong.json"):
        for task_id, turns in plans(name).items():
            used = set()
            for turn in turns:
                if not special_of(turn):
                    used |= calls(turn)
            assert used <= ALLOWED, (name, task_id, used - ALLOWED)
            assert used - {("time", "sleep")}, task_id  # it does something

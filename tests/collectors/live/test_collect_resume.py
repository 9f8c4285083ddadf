"""Killing the collector mid-episode and resuming: nothing recorded is lost, nothing is
recorded twice, and the final state the verdict reads holds each action once."""

from __future__ import annotations

import contextlib
import fnmatch
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from deskscore.collectors.live.record import LIVE_DIR, LiveEpisode
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.main import main

TERMINAL = "pyautogui.click(400, 250); "
TASK = {
    "id": "L1_os_three_lines",
    "domain": "os",
    "instruction": "Write one, two and three, one per line, into k/a.txt in your home folder.",
    "config": [
        {
            "type": "execute",
            "parameters": {"command": ["bash", "-c", "rm -rf ~/k && mkdir -p ~/k"]},
        },
        {"type": "launch", "parameters": {"command": ["xterm", "-geometry", "90x24+40+40"]}},
        {"type": "sleep", "parameters": {"seconds": 0.5}},
    ],
    "evaluator": {
        "func": "exact_match",
        "result": {"type": "vm_file", "path": "~/k/a.txt"},
        "expected": {"type": "rule", "rules": {"expected": "one\ntwo\nthree\n"}},
    },
}


def type_line(text: str) -> str:
    return f"pyautogui.typewrite({text!r})"


def setup_files(tmp_path: Path, plan: list[Any]) -> list[str]:
    (tmp_path / "tasks.json").write_text(json.dumps([TASK]))
    (tmp_path / "plan.json").write_text(json.dumps({TASK["id"]: plan}))
    return ["collect", "--tasks", str(tmp_path / "tasks.json"), "--agent",
            f"scripted:{tmp_path / 'plan.json'}", "--warehouse", str(tmp_path / "wh"),
            "--benchmark", "sandbox", "--settle", "0.2"]  # fmt: skip


def units(tmp_path: Path) -> list[Path]:
    """The recorded units while the collector runs: a unit's temporary folder may vanish (its
    rename) while it is being listed, so the listing is walked, skipping what went away."""
    found = []
    for folder, dirs, _ in os.walk(tmp_path / "wh" / LIVE_DIR):
        found += [Path(folder, d) for d in dirs if fnmatch.fnmatch(d, "0*-*")]
    return sorted(found)


def kill_when(proc: subprocess.Popen, tmp_path: Path, ready: Any, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready(units(tmp_path)):
        assert proc.poll() is None, proc.communicate()[0]
        assert time.monotonic() < deadline, "the collector never got there"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(10) == -signal.SIGKILL


def resume(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*argv, "--resume"])
    return code, out.getvalue()


def steps_of(tmp_path: Path) -> list[dict[str, Any]]:
    return sorted(Warehouse(tmp_path / "wh").read("steps").to_pylist(), key=lambda s: s["step_idx"])


def test_a_collector_killed_between_turns_resumes_from_the_last_recorded_step(
    host_desktop: Any, tmp_path: Path
) -> None:
    # the third turn "thinks" for 1.5 s: the kill lands while the agent is deciding
    plan = [TERMINAL + type_line("echo one > ~/k/a.txt\n"), type_line("echo two >> ~/k/a.txt\n"),
            {"think_s": 1.5, "actions": [type_line("echo three >> ~/k/a.txt\n")]}, "DONE"]  # fmt: skip
    argv = setup_files(tmp_path, plan)
    argv += ["--provider", "local", "--url", host_desktop.base_url]
    proc = subprocess.Popen([sys.executable, "-m", "deskscore.pipelines.cli.main", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    kill_when(proc, tmp_path, lambda us: sum(u.name.endswith("-turn") for u in us) >= 2)
    [live_dir] = {u.parent for u in units(tmp_path)}
    live = LiveEpisode(tmp_path / "wh", "sandbox", live_dir.parent.parent.name, "os", TASK["id"])
    before = [r for u in live.units() for r in u.tables.get("steps", ())]
    assert len(before) == 2 and not Warehouse(tmp_path / "wh").read("episodes").num_rows
    code, out = resume(argv)
    assert code == 0, out
    assert "continued after turn 2" in out
    steps = steps_of(tmp_path)
    assert [s["step_idx"] for s in steps] == [0, 1, 2, 3]
    assert [s["step_num"] for s in steps] == [1, 2, 3, 4]
    keep = ("action_text", "action_timestamp", "screenshot_path", "response", "step_num")
    assert [{k: s[k] for k in keep} for s in steps[:2]] == [{k: s[k] for k in keep} for s in before]
    [episode] = Warehouse(tmp_path / "wh").read("episodes").to_pylist()
    # the file on the desktop holds every line once: no step ran twice, none was lost
    assert (host_desktop.home / "k" / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert (episode["score"], episode["n_steps"], episode["ended_by"]) == (1.0, 4, "done")
    refs = Warehouse(tmp_path / "wh").read("screenshot_refs").to_pylist()
    assert sorted(r["step_idx"] for r in refs) == [0, 1, 2, 3]
    assert not list((tmp_path / "wh" / LIVE_DIR).rglob("episode.json"))


def test_a_collector_killed_inside_a_turn_restarts_the_episode_cleanly(
    host_desktop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deskscore.collectors.live import collect

    plan = [TERMINAL + type_line("echo one > ~/k/a.txt; echo two >> ~/k/a.txt\n"),
            type_line("echo three >> ~/k/a.txt\n"), "DONE"]  # fmt: skip
    argv = setup_files(tmp_path, plan)
    argv += ["--provider", "local", "--url", host_desktop.base_url]
    real_step = collect.Collector._step
    calls = {"n": 0}

    def step_then_die(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:  # the second action: its turn has started, it has not run
            raise KeyboardInterrupt
        return real_step(self, *args, **kwargs)

    monkeypatch.setattr(collect.Collector, "_step", step_then_die)
    with pytest.raises(KeyboardInterrupt):
        main(argv)
    assert [u.name.split("-", 1)[1] for u in units(tmp_path)][-1] == "act"
    monkeypatch.setattr(collect.Collector, "_step", real_step)
    code, out = resume(argv)
    assert code == 0, out
    assert "restarted: the kill came inside a turn" in out
    steps = steps_of(tmp_path)
    assert [s["step_idx"] for s in steps] == [0, 1, 2]
    assert steps[0]["action_text"].startswith(TERMINAL) and steps[-1]["action_kind"] == "done"
    assert (host_desktop.home / "k" / "a.txt").read_text() == "one\ntwo\nthree\n"
    [episode] = Warehouse(tmp_path / "wh").read("episodes").to_pylist()
    assert episode["score"] == 1.0

"""The DeskCraft generator: plans that follow the interactive protocol, written as runners do."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from deskscore.collectors.deskcraft_tasks import load_bundled_tasks
from deskscore.collectors.synthetic import deskcraft
from deskscore.collectors.synthetic.deskcraft import (
    AGENTS,
    SETTINGS_FILE,
    load_agents,
    plan_episode,
    plan_run,
    run_root,
    task_slice,
    write_archive,
    write_run,
)

TASKS = load_bundled_tasks()


def test_plans_are_deterministic_and_cover_the_real_task_ids() -> None:
    a = plan_run(AGENTS[0], TASKS, seed=3)
    b = plan_run(AGENTS[0], TASKS, seed=3)
    assert [(p.task_id, p.score, len(p.turns)) for p in a] == [
        (p.task_id, p.score, len(p.turns)) for p in b
    ]
    assert {(p.app, p.task_id) for p in a} == {(t["domain"], t["task_id"]) for t in TASKS}
    c = plan_run(AGENTS[0], TASKS, seed=4)
    assert [p.score for p in a] != [p.score for p in c]


def test_every_plan_keeps_to_the_protocol() -> None:
    for agent in AGENTS:
        for p in plan_run(agent, TASKS):
            assert p.n_env_steps <= agent.max_steps
            if p.hit_budget:  # the budget ran out: the task is unfinished
                assert p.n_env_steps == agent.max_steps and (p.score != 1.0 or p.tampered)
            if p.split == "standard":
                assert p.n_asks == 0 and all(t.user is None and t.phase is None for t in p.turns)
                continue
            phases = [t.phase for t in p.turns]
            assert phases == sorted(phases) and set(phases) <= set(range(1, len(p.triggers) + 1))
            for t in p.turns:
                if t.kind == "ask":
                    assert t.user is not None and t.user["type"] == "clarify"
                    waited = p.triggers[t.phase - 1] == "agent_asks"
                    assert t.user["phase_complete"] is waited
            if p.score == 1.0:
                assert p.final_action == "done" or p.tampered
                if p.asks_expected and not p.tampered:
                    assert p.asked_when_expected  # the phase cannot end without a question


def test_a_step_count_phase_is_interrupted_after_its_steps() -> None:
    task = next(t for t in TASKS if t["triggers"] and t["triggers"][0] == "step_count:3")
    p = plan_episode(AGENTS[0], task)
    first = [t for t in p.turns if t.phase == 1]
    assert [t.kind for t in first] == ["step", "step", "step"]
    assert first[-1].user == {"type": "new_instruction", "phase": 2, "phase_complete": True}


def test_written_files_follow_deskcraft_runners(tmp_path: Path) -> None:
    tasks = task_slice(per_group=1)
    plans = write_run(tmp_path, AGENTS[1], tasks)
    root = run_root(tmp_path, AGENTS[1])
    assert json.loads((root / "args.json").read_text())["max_steps"] == AGENTS[1].max_steps
    for p in plans:
        folder = root / p.app / p.task_id
        lines = [json.loads(x) for x in (folder / "traj.jsonl").read_text().splitlines()]
        assert len(lines) == len(p.turns)
        assert [x["action"] == "CALL_USER" for x in lines] == [t.kind == "ask" for t in p.turns]
        assert (folder / "result.txt").exists() == (p.score is not None)
        assert (folder / "eval_details.json").exists() == (p.metrics is not None)
        if p.split == "interactive":
            log = json.loads((folder / "interaction_log.json").read_text())
            assert log[0]["type"] == "initial_instruction" and log[0]["step"] == 0
            assert len(log) == 1 + sum(1 for t in p.turns if t.user is not None)
            assert all("phase" in x for x in lines)
        else:
            assert not (folder / "interaction_log.json").exists()
            assert all("phase" not in x for x in lines)


def test_the_archive_is_played_by_the_agents_of_the_settings_file(tmp_path: Path) -> None:
    settings = json.loads(resources.files("deskscore.datasets").joinpath(SETTINGS_FILE).read_text())
    names = [a["name"] for a in settings["agents"]]
    assert [a.name for a in AGENTS] == names and len(names) >= 2
    plans = write_archive(tmp_path, tasks=task_slice(per_group=1)[:4])
    assert list(plans) == names
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)


def test_steps_are_drawn_from_the_settings_step_actions(tmp_path: Path) -> None:
    settings = json.loads(resources.files("deskscore.datasets").joinpath(SETTINGS_FILE).read_text())
    heads = {t.split("(")[0] for t in settings["step_actions"]}
    plans = write_run(tmp_path, AGENTS[0], task_slice(per_group=1))
    root = run_root(tmp_path, AGENTS[0])
    seen = set()
    for p in plans:
        lines = (root / p.app / p.task_id / "traj.jsonl").read_text().splitlines()
        for turn, line in zip(p.turns, lines, strict=True):
            if turn.kind == "step":
                seen.add(json.loads(line)["action"].split("(")[0])
    assert seen == heads


def test_an_agent_with_a_misspelt_field_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = json.loads(resources.files("deskscore.datasets").joinpath(SETTINGS_FILE).read_text())
    settings["agents"][1]["skil"] = settings["agents"][1].pop("skill")
    monkeypatch.setattr(deskcraft, "_settings", lambda: settings)
    load_agents.cache_clear()
    try:
        with pytest.raises(ValueError, match="skil"):
            load_agents()
    finally:
        load_agents.cache_clear()

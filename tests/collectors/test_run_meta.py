"""Run-level facts from args.json, the runner's summaries and the folder levels."""

from __future__ import annotations

import json
from pathlib import Path

from deskscore.collectors.layout import RunFolder, discover
from deskscore.collectors.osworld import read_episode
from deskscore.collectors.run_meta import levels_meta, read_run_meta
from deskscore.collectors.source import open_source
from deskscore.schemas import conform_rows

A = "0a1b2c3d-1111-4222-8333-444455556666"
B = "bb5e4c0d-f964-439c-97b6-bdb9747de3f4"
TRAJ = b'{"step_num": 1, "action": "DONE", "action_timestamp": "20250101@120000"}\n'


def tasks(run: str) -> dict[str, bytes | str]:
    base = f"{run}/" if run else ""
    return {
        f"{base}chrome/{A}/traj.jsonl": TRAJ,
        f"{base}chrome/{A}/result.txt": "1\n",
        f"{base}thunderbird/{B}/traj.jsonl": TRAJ,
    }


def meta_of(root: Path) -> tuple[RunFolder, object]:
    src = open_source(str(root))
    [run] = discover(src.files())
    meta = read_run_meta(src, run, run_id="run-1", benchmark="osworld")
    conform_rows("runs", [meta.run])
    conform_rows("quarantine", meta.quarantine)
    return run, meta


def test_args_json_beside_the_domains_gives_the_run_facts(tmp_path: Path, write_tree) -> None:
    run_path = "results/pyautogui/screenshot/gpt-4o"
    args = {"action_space": "computer_13", "observation_type": "som", "model": "gpt-4o",
            "max_steps": 50, "domain": "all"}  # fmt: skip
    write_tree(tmp_path, {**tasks(run_path), f"{run_path}/args.json": json.dumps(args)})
    run, meta = meta_of(tmp_path)
    row = meta.run
    assert (row["action_space"], row["observation_type"], row["model"]) == (
        "computer_13",
        "som",
        "gpt-4o",
    )
    assert row["max_steps"] == 50 and row["agent"] == "gpt-4o"
    assert json.loads(row["args_json"]) == args
    assert row["n_task_folders"] == 2 == len(run.tasks)
    assert row["run_path"] == run_path and row["format"] == "osworld"
    assert row["source"] == str(tmp_path.resolve())
    assert meta.quarantine == [] and meta.reported == {}


def test_without_args_the_folder_levels_name_a_model_with_a_slash(
    tmp_path: Path, write_tree
) -> None:
    run_path = "zip-prefix/pyautogui/screenshot/ByteDance-Seed/UI-TARS-1.5-7B"
    write_tree(tmp_path, tasks(run_path))
    _, meta = meta_of(tmp_path)
    row = meta.run
    assert (row["action_space"], row["observation_type"], row["model"]) == (
        "pyautogui",
        "screenshot",
        "ByteDance-Seed/UI-TARS-1.5-7B",
    )
    assert row["agent"] == "ByteDance-Seed/UI-TARS-1.5-7B"
    assert row["max_steps"] is None and row["args_json"] is None


def test_levels_without_a_model_or_without_an_action_space() -> None:
    assert levels_meta("pyautogui/screenshot") == ("pyautogui", "screenshot", None)
    assert levels_meta("claude_computer_use/screenshot/claude-3-7/trial_1") == (
        "claude_computer_use",
        "screenshot",
        "claude-3-7/trial_1",
    )
    assert levels_meta("my-runs/agent-x") == (None, None, None)
    assert levels_meta("") == (None, None, None)


def test_agent_falls_back_to_the_run_path_then_the_source_name(tmp_path: Path, write_tree) -> None:
    write_tree(tmp_path / "a", tasks("my-runs/agent-x"))
    assert meta_of(tmp_path / "a")[1].run["agent"] == "my-runs/agent-x"
    write_tree(tmp_path / "bare-run", tasks(""))
    assert meta_of(tmp_path / "bare-run")[1].run["agent"] == "bare-run"


def test_args_json_at_the_result_dir_is_used_only_for_its_own_model(
    tmp_path: Path, write_tree
) -> None:
    args = json.dumps({"model": "gpt-4o", "max_steps": 15})
    write_tree(
        tmp_path / "same", {**tasks("res/pyautogui/screenshot/gpt-4o"), "res/args.json": args}
    )
    assert meta_of(tmp_path / "same")[1].run["max_steps"] == 15
    write_tree(tmp_path / "other", {**tasks("res/pyautogui/screenshot/o3"), "res/args.json": args})
    row = meta_of(tmp_path / "other")[1].run
    assert row["max_steps"] is None and row["model"] == "o3"


def test_summary_results_json_above_the_run_gives_reported_results(
    tmp_path: Path, write_tree
) -> None:
    run_path = "res/pyautogui/screenshot/gpt-4o"
    summary = [
        {"application": "chrome", "task_id": A, "status": "completed", "score": 1.0,
         "timestamp": "2025-07-01T10:00:00"},
        {"application": "thunderbird", "task_id": B, "status": "error", "score": 0,
         "timestamp": "2025-07-01T10:05:00", "err_message": "VM lost"},
        ["not", "an", "item"],
    ]  # fmt: skip
    write_tree(tmp_path, {**tasks(run_path), "res/summary/results.json": json.dumps(summary)})
    src = open_source(str(tmp_path))
    [run] = discover(src.files())
    meta = read_run_meta(src, run, run_id="run-1", benchmark="osworld")
    assert meta.run["summary_source"] == "summary/results.json"
    assert meta.reported[("chrome", A)] == {
        "reported_score": 1.0,
        "reported_status": "completed",
        "err_message": None,
    }
    assert meta.reported[("thunderbird", B)]["err_message"] == "VM lost"
    assert [q["reason"] for q in meta.quarantine] == ["unexpected_shape"]
    reads = {
        t.domain: read_episode(
            src,
            run,
            t,
            run_id="run-1",
            benchmark="osworld",
            reported=meta.reported.get((t.domain, t.task_id)),
        )
        for t in run.tasks
    }
    assert reads["thunderbird"].episode["reported_status"] == "error"
    assert reads["thunderbird"].episode["err_message"] == "VM lost"
    assert reads["chrome"].episode["reported_score"] == 1.0


def test_all_result_json_is_read_as_a_python_literal(tmp_path: Path, write_tree) -> None:
    run_path = "pyautogui/screenshot/gpt-4o"
    literal = repr({"chrome": {A: 1.0}, "thunderbird": {B: False}})
    write_tree(tmp_path, {**tasks(run_path), f"{run_path}/all_result.json": literal})
    _, meta = meta_of(tmp_path)
    assert meta.run["summary_source"] == "all_result.json"
    assert meta.reported[("chrome", A)]["reported_score"] == 1.0
    assert meta.reported[("thunderbird", B)]["reported_score"] == 0.0


def test_all_result_json_that_cannot_be_matched_or_parsed_is_quarantined(
    tmp_path: Path, write_tree
) -> None:
    run_path = "pyautogui/screenshot/gpt-4o"
    write_tree(tmp_path / "list", {**tasks(run_path), f"{run_path}/all_result.json": "[1.0, 0.0]"})
    _, meta = meta_of(tmp_path / "list")
    assert meta.reported == {} and meta.run["summary_source"] is None
    assert [q["reason"] for q in meta.quarantine] == ["unexpected_shape"]
    code = "__import__('os').system('echo no')"
    write_tree(tmp_path / "code", {**tasks(run_path), f"{run_path}/all_result.json": code})
    _, meta = meta_of(tmp_path / "code")
    assert [q["reason"] for q in meta.quarantine] == ["invalid_literal"]


def test_bad_args_json_is_quarantined_and_the_run_still_has_its_facts(
    tmp_path: Path, write_tree
) -> None:
    run_path = "pyautogui/a11y_tree/gpt-4o"
    write_tree(tmp_path, {**tasks(run_path), f"{run_path}/args.json": '{"model": "gpt-4o",'})
    _, meta = meta_of(tmp_path)
    assert [(q["location"], q["reason"]) for q in meta.quarantine] == [
        (f"{run_path}/args.json", "invalid_json")
    ]
    assert meta.run["observation_type"] == "a11y_tree" and meta.run["args_json"] is None


def test_fingerprint_is_stable_and_follows_the_run_files(tmp_path: Path, write_tree) -> None:
    run_path = "pyautogui/screenshot/gpt-4o"
    write_tree(tmp_path, tasks(run_path))
    first = meta_of(tmp_path)[1].run["fingerprint"]
    assert meta_of(tmp_path)[1].run["fingerprint"] == first
    write_tree(tmp_path, {f"{run_path}/chrome/{A}/result.txt": "0.5\n"})
    assert meta_of(tmp_path)[1].run["fingerprint"] != first

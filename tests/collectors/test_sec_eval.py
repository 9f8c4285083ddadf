"""Real Claude computer-use runs (OSWorld-Sec-Eval) read with an explicit layout."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from deskscore.collectors.layout import discover
from deskscore.collectors.osworld import EpisodeRead, read_episode
from deskscore.collectors.run_meta import read_run_meta
from deskscore.collectors.source import open_source
from deskscore.schemas import conform_rows


@pytest.fixture(scope="module")
def reads(sec_eval_dir: Path) -> list[EpisodeRead]:
    src = open_source(str(sec_eval_dir))
    [run] = discover(src.files(), "{domain}/{task_id}")
    assert run.run_path == "" and run.format == "osworld"
    return [
        read_episode(src, run, t, run_id="sec", benchmark="osworld-sec-eval") for t in run.tasks
    ]


def test_layout_finds_the_24_runs_in_two_scenarios(reads: list[EpisodeRead]) -> None:
    assert len(reads) == 24
    assert Counter(r.episode["domain"] for r in reads) == {
        "execute_binary": 12,
        "prompt_injection": 12,
    }
    assert all(r.episode["task_id"].startswith("20250226@") for r in reads)


def test_every_trajectory_line_is_a_step_row_or_quarantined(
    reads: list[EpisodeRead], sec_eval_dir: Path
) -> None:
    for r in reads:
        path = sec_eval_dir / r.episode["task_path"] / "traj.jsonl"
        with open(path, encoding="utf-8") as f:
            python_lines = sum(1 for _ in f)
        assert r.episode["n_lines"] == python_lines
        assert len(r.steps) + r.episode["n_quarantined"] == python_lines, path


def test_several_actions_per_model_turn_are_seen(reads: list[EpisodeRead]) -> None:
    multi = [r for r in reads if r.episode["n_steps"] > r.episode["n_turns"] > 0]
    assert multi
    for r in multi:
        turns = Counter(s["step_num"] for s in r.steps if s["action_kind"] != "error")
        assert max(turns.values()) > 1


def test_all_rows_conform_to_the_warehouse_schemas(
    reads: list[EpisodeRead], sec_eval_dir: Path
) -> None:
    conform_rows("episodes", [r.episode for r in reads])
    conform_rows("steps", [s for r in reads for s in r.steps])
    conform_rows("quarantine", [q for r in reads for q in r.quarantine])
    src = open_source(str(sec_eval_dir))
    [run] = discover(src.files(), "{domain}/{task_id}")
    meta = read_run_meta(src, run, run_id="sec", benchmark="osworld-sec-eval")
    conform_rows("runs", [meta.run])
    assert meta.run["n_task_folders"] == 24


def test_scores_match_the_result_files(reads: list[EpisodeRead], sec_eval_dir: Path) -> None:
    with_result = 0
    for r in reads:
        result = sec_eval_dir / r.episode["task_path"] / "result.txt"
        if result.exists():
            with_result += 1
            expected = float(result.read_text().splitlines()[0].strip())
            assert r.episode["result_status"] == "ok"
            assert math.isclose(r.episode["score"], expected)
        else:
            assert (r.episode["result_status"], r.episode["score"]) == ("missing", None)
    assert 0 < with_result < len(reads)


def test_timeout_errors_end_their_episodes(reads: list[EpisodeRead]) -> None:
    errored = [r.episode for r in reads if r.episode["n_error_lines"]]
    assert errored and all(e["ended_by"] == "error" for e in errored)
    assert all(e["err_message"] for e in errored)
    shots = [s for r in reads for s in r.steps if s["screenshot_file"]]
    assert shots and all(s["screenshot_path"] for s in shots)

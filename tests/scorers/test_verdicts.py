"""The evaluator's rules recomputed offline, and how they meet the archived score."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from deskscore.collectors.actions import parse_action
from deskscore.schemas import TABLES, conform_rows
from deskscore.scorers.verdicts import (
    EPISODE_INPUTS,
    agrees,
    archived_score,
    conj_score,
    episode_verdicts,
    final_fail_score,
    infeasible_score,
    info_says_fail,
    last_action_is_fail,
    parse_metric_scores,
)


def step(action: Any, info: Any = None) -> dict[str, Any]:
    return {"action_kind": parse_action(action)["action_kind"], "info_json": json.dumps(info or {})}


def episode(score: float | None = 1.0, status: str = "ok", metrics: Any = None) -> dict[str, Any]:
    return {
        "benchmark": "deskcraft",
        "run_id": "r",
        "domain": "calc",
        "task_id": "L1_calc_x",
        "score": score,
        "result_status": status,
        "result_raw": None if score is None else str(score),
        "metric_scores_json": json.dumps(metrics) if metrics is not None else None,
    }


def test_every_shape_of_a_final_fail_is_seen() -> None:
    for action in (
        "FAIL",
        {"action_type": "FAIL"},
        {"action_type": "tool_use", "name": "computer", "command": "FAIL", "input": {}},
    ):
        assert last_action_is_fail([step("import pyautogui; pyautogui.click(1, 2)"), step(action)])
    # the environment's answer counts too, whatever shape the runner logged the action in
    assert last_action_is_fail([step({"action": "odd"}, {"fail": True})])


def test_only_the_last_executed_action_counts() -> None:
    fail_then_click = [step("FAIL"), step("import pyautogui; pyautogui.click(1, 2)")]
    assert last_action_is_fail(fail_then_click) is False
    asked_after_fail = [
        step("FAIL"),
        step("CALL_USER"),
        {"action_kind": "error", "info_json": None},
    ]
    assert (
        last_action_is_fail(asked_after_fail) is True
    )  # questions and runner errors are not actions
    assert last_action_is_fail([]) is None
    assert last_action_is_fail([step("CALL_USER")]) is None


def test_info_fail_needs_a_true_fail() -> None:
    assert info_says_fail('{"fail": true}') and info_says_fail({"fail": True})
    assert (
        not info_says_fail('{"fail": 1}') and not info_says_fail("{") and not info_says_fail(None)
    )


def test_the_rules_give_the_evaluators_scores() -> None:
    assert infeasible_score(True) == 1.0 and infeasible_score(False) == 0.0
    assert infeasible_score(None) == 0.0  # nothing executed: not a FAIL
    assert final_fail_score(True) == 0.0 and final_fail_score(False) is None
    assert conj_score([1, 0.5]) == 0.75
    assert conj_score([1, 0, 1]) == 0.0
    assert conj_score([0.5, 0.2], "or") == 0.5
    assert conj_score([0, 1], "or") == 1.0
    assert conj_score([]) is None and conj_score([float("nan")]) is None


@given(st.lists(st.floats(0, 1), min_size=1, max_size=6))
def test_conj_scores_stay_in_range_and_and_is_never_above_or(scores: list[float]) -> None:
    a, o = conj_score(scores, "and"), conj_score(scores, "or")
    assert 0 <= a <= o + 1e-12 and o <= 1  # a mean is at most the max, up to rounding


def test_an_infeasible_task_gets_only_the_infeasible_rule() -> None:
    rows = episode_verdicts(episode(1.0), last_is_fail=True, infeasible=True)
    assert [(r["source"], r["rule"], r["score"], r["agrees_with_archived"]) for r in rows] == [
        ("archived", "result_txt", 1.0, None),
        ("recomputed", "infeasible", 1.0, True),
    ]
    rows = episode_verdicts(episode(1.0), last_is_fail=False, infeasible=True)
    assert rows[1]["score"] == 0.0 and rows[1]["agrees_with_archived"] is False


def test_a_final_fail_contradicting_result_txt_is_reported_not_corrected() -> None:
    rows = episode_verdicts(episode(1.0), last_is_fail=True, infeasible=False)
    archived, final_fail = rows
    assert archived["score"] == 1.0 and archived["passed"] is True
    assert final_fail["rule"] == "final_fail" and final_fail["score"] == 0.0
    assert final_fail["agrees_with_archived"] is False
    assert conform_rows("verdicts", rows).num_rows == 2


def test_the_conj_rule_needs_archived_metric_scores() -> None:
    assert [
        r["rule"] for r in episode_verdicts(episode(0.5), last_is_fail=False, infeasible=False)
    ] == ["result_txt"]
    metrics = {"metrics": [{"func": "a", "score": 1}, {"func": "b", "score": 0}]}
    rows = episode_verdicts(episode(0.5, metrics=metrics), last_is_fail=False, infeasible=False)
    assert rows[1]["rule"] == "conj" and rows[1]["score"] == 0.0
    assert rows[1]["agrees_with_archived"] is False
    assert json.loads(rows[1]["details"]) == {"conj": "and", "metric_scores": [1.0, 0.0]}
    rows = episode_verdicts(episode(1.0, metrics=metrics), last_is_fail=False, infeasible=False,
                            task_conj="or")  # fmt: skip
    assert rows[1]["rule"] == "or" and rows[1]["score"] == 1.0 and rows[1]["agrees_with_archived"]
    with_file_conj = {**metrics, "conj": "and"}
    rows = episode_verdicts(episode(0.0, metrics=with_file_conj), last_is_fail=False,
                            infeasible=False, task_conj="or")  # fmt: skip
    assert rows[1]["rule"] == "conj"  # what the runner archived wins over the task file


def test_partial_credit_is_compared_as_a_score() -> None:
    metrics = {"metrics": [0.5, 0.5]}
    rows = episode_verdicts(episode(0.5, metrics=metrics), last_is_fail=False, infeasible=False)
    assert rows[0]["passed"] is False and rows[1]["score"] == 0.5
    assert rows[1]["agrees_with_archived"] is True


def test_without_an_archived_score_nothing_agrees_or_disagrees() -> None:
    rows = episode_verdicts(episode(None, status="missing"), last_is_fail=True, infeasible=False)
    assert [(r["rule"], r["agrees_with_archived"]) for r in rows] == [("final_fail", None)]
    rows = episode_verdicts(
        episode(None, status="unparseable"), last_is_fail=True, infeasible=False
    )
    assert (
        rows[0]["rule"] == "result_txt" and rows[0]["score"] is None and rows[0]["passed"] is None
    )
    assert rows[1]["agrees_with_archived"] is None


def test_an_unknown_task_gets_no_rule_that_depends_on_its_evaluator() -> None:
    rows = episode_verdicts(episode(1.0), last_is_fail=True, infeasible=None)
    assert [r["rule"] for r in rows] == ["result_txt"]


def test_archived_scores_and_agreement_are_total() -> None:
    assert archived_score({"score": float("nan"), "result_status": "ok"}) is None
    assert archived_score({"score": True, "result_status": "ok"}) is None
    assert archived_score({"score": 2.0, "result_status": "ok"}) == 2.0  # as written
    assert agrees(1.0, 1.0 + 1e-12) and agrees(None, 1.0) is None
    assert parse_metric_scores("{") is None and parse_metric_scores('{"metrics": [true]}') is None
    assert parse_metric_scores('{"metrics": [1, 0.5], "conj": "or"}') == ("or", [1.0, 0.5])


def test_the_rules_look_at_no_episode_column_but_the_inputs(watched) -> None:
    wrap, seen = watched
    shapes = [episode(), episode(0.0, metrics={"conj": "or", "scores": [0.0, 1.0]}),
              episode(None, "missing"), episode(0.5, metrics=[1.0, 0.5])]  # fmt: skip
    for shape in shapes:
        row = wrap(dict.fromkeys(TABLES["episodes"].columns) | shape)
        for infeasible in (True, False, None):
            for last_is_fail in (True, False, None):
                episode_verdicts(row, last_is_fail=last_is_fail, infeasible=infeasible)
    assert {"metric_scores_json", "result_raw"} <= seen <= set(EPISODE_INPUTS)

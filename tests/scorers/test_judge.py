"""TreeCUA's k-consecutive-passes rule, and the judge's prompt and reply contract."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deskscore.scorers.judge import check_k, k_consecutive
from deskscore.scorers.judge_prompt import (
    MAX_TRAJECTORY_CHARS,
    InteractionView,
    Shot,
    StepView,
    bounded,
    build_prompt,
    parse_reply,
    pick_evenly,
)

T, F = True, False


# --------------------------------------------------------------------------- the k rule


@pytest.mark.parametrize(
    ("outcomes", "k", "rounds", "expected"),
    [
        ([T, T], 2, None, (True, True, 1.0, 2)),
        ([T, F], 2, None, (True, False, 0.5, 2)),
        ([F], 2, None, (True, False, 0.0, 1)),  # two in a row impossible after a miss
        ([T], 2, None, (False, None, 1.0, 1)),  # undecided: one more round needed
        ([], 2, None, (False, None, None, 0)),
        ([F, T, T], 2, 3, (True, True, 2 / 3, 3)),
        ([T, F], 2, 3, (True, False, 0.5, 2)),  # one round left cannot make two in a row
        ([T, F, T, T], 2, 4, (True, True, 0.75, 4)),
        ([F, F], 2, 4, (False, None, 0.0, 2)),  # two rounds left: still possible
        ([F, F, F], 2, 4, (True, False, 0.0, 3)),
        ([T], 1, None, (True, True, 1.0, 1)),
        ([F, T], 1, 2, (True, True, 0.5, 2)),
        ([T, T, F], 3, None, (True, False, 2 / 3, 3)),
    ],
)
def test_k_consecutive_decides_as_early_as_possible(outcomes, k, rounds, expected) -> None:
    d = k_consecutive(outcomes, k, rounds)
    assert (d.decided, d.passed, d.score, d.rounds_played) == pytest.approx(expected)


def test_outcomes_after_the_decision_are_ignored() -> None:
    assert k_consecutive([T, T, F, F], 2, 4) == k_consecutive([T, T], 2, 4)
    assert k_consecutive([F, T, T], 2, 2) == k_consecutive([F], 2, 2)


@pytest.mark.parametrize(("k", "rounds"), [(0, None), (2, 1), (3, 2), (-1, 5)])
def test_a_k_or_round_budget_that_cannot_work_is_refused(k, rounds) -> None:
    with pytest.raises(ValueError):
        check_k(k, rounds)


@given(st.lists(st.booleans(), max_size=8), st.integers(1, 4), st.integers(0, 4))
def test_the_rule_is_k_passes_in_a_row_within_the_budget(outcomes, k, extra) -> None:
    budget = k + extra
    d = k_consecutive(outcomes, k, budget)
    played = outcomes[: d.rounds_played]
    streaks = "".join("1" if o else "0" for o in played)
    if d.decided and d.passed:
        assert streaks.endswith("1" * k) and "1" * k not in streaks[:-1]
    elif d.decided:
        assert "1" * k not in streaks
        trailing = len(streaks) - len(streaks.rstrip("1"))
        assert trailing + budget - len(played) < k  # success had become impossible
    else:
        assert len(played) == len(outcomes[:budget]) < budget  # more rounds are needed
    if played:
        assert d.score == sum(played) / len(played)


# --------------------------------------------------------------------------- screenshots


@pytest.mark.parametrize(
    ("n", "count", "expected"),
    [
        (10, 1, [9]),
        (10, 2, [0, 9]),
        (10, 4, [0, 3, 6, 9]),
        (3, 6, [0, 1, 2]),
        (0, 3, []),
        (5, 0, []),
    ],
)
def test_screenshots_are_picked_evenly_with_the_last(n, count, expected) -> None:
    assert pick_evenly(n, count) == expected


@given(st.integers(0, 200), st.integers(0, 20))
def test_picked_screenshots_are_bounded_distinct_and_end_at_the_last(n, count) -> None:
    picked = pick_evenly(n, count)
    assert len(picked) == min(n, count) and picked == sorted(set(picked))
    if picked:
        assert picked[-1] == n - 1 and picked[0] >= 0


# --------------------------------------------------------------------------- the prompt


def _steps(n: int, response: str = "I click the button.") -> list[StepView]:
    return [StepView(i, i + 1, "click", f"pyautogui.click({i}, {i})", response) for i in range(n)]


def test_the_prompt_holds_instruction_actions_user_messages_and_captioned_shots() -> None:
    steps = [
        StepView(0, 1, "click", "pyautogui.click(1, 2)", "Open the menu."),
        StepView(1, 1, "type", "pyautogui.write('x')", "Open the menu."),
        StepView(2, 2, "call_user", "CALL_USER", "Which file?"),
        StepView(3, 3, "done", "DONE", "Finished."),
    ]
    talk = [InteractionView(2, "call_user", "Which file?"), InteractionView(2, "clarify", "a.txt")]
    prompt = build_prompt(
        task_label="chrome/abc",
        instruction="Rename the file.",
        steps=steps,
        interactions=talk,
        shots=[Shot(3, "data:image/jpeg;base64,AAAA"), Shot(0, "data:image/jpeg;base64,BBBB")],
        ended_by="done",
    )
    system, user = prompt.messages
    assert system["role"] == "system" and '"verdict"' in system["content"]
    parts = user["content"]
    text = parts[0]["text"]
    assert "Task: chrome/abc\nInstruction:\nRename the file." in text
    assert text.count("Open the menu.") == 1  # one turn, two actions: its reasoning once
    assert text.index("step 2: (type)") < text.index("[agent asks the user]: Which file?")
    assert text.index("[user, clarify]: a.txt") < text.index("[turn 3]")
    assert "it ended with done" in text
    kinds = [p["type"] for p in parts]
    assert kinds == ["text", "text", "image_url", "text", "image_url", "text"]
    assert parts[1]["text"] == "Screenshot after step 1 of 4:"  # in step order
    assert parts[4]["image_url"]["url"].endswith("AAAA")


def test_the_hash_changes_with_any_part_of_the_messages_and_only_then() -> None:
    base = dict(task_label="d/t", instruction="Do it.", steps=_steps(3))
    h = build_prompt(**base).hash
    assert build_prompt(**base).hash == h
    assert build_prompt(**{**base, "instruction": "Do it!"}).hash != h
    assert build_prompt(**{**base, "steps": _steps(4)}).hash != h
    assert build_prompt(**base, shots=[Shot(2, "data:image/jpeg;base64,AA")]).hash != h


def test_a_long_trajectory_is_bounded_keeping_its_start_and_end() -> None:
    steps = _steps(400, response="x" * 2000)
    prompt = build_prompt(task_label="d/t", instruction="i", steps=steps)
    text = prompt.messages[1]["content"][0]["text"]
    assert len(text) < MAX_TRAJECTORY_CHARS + 1000
    assert "step 1: " in text and "step 400: " in text and "step 200: " not in text
    assert prompt.blocks_left_out > 0 and "turn(s) left out" in text
    assert "[... cut ...]" in text  # each response is clipped too


def test_bounded_keeps_short_texts_whole() -> None:
    assert bounded(["a", "b"], 10) == ("a\nb", 0)
    text, left_out = bounded(["x" * 50], 10)
    assert len(text) <= 10 and left_out == 0


# --------------------------------------------------------------------------- replies


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ('{"verdict": "pass", "reason": "done"}', "pass"),
        ('  {"verdict": "FAIL", "reason": "no"}\n', "fail"),
        ('Here it is:\n```json\n{"verdict": "pass", "reason": "ok"}\n```\nThanks.', "pass"),
        ('```\n{"verdict": "fail", "reason": "r", "confidence": 0.9}\n```', "fail"),
    ],
)
def test_replies_that_follow_the_contract_are_read(text, verdict) -> None:
    parsed = parse_reply(text)
    assert (parsed.verdict, parsed.problem) == (verdict, None)
    assert parsed.passed is (verdict == "pass")


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "pass",
        "The task passed.",
        '{"verdict": "maybe", "reason": "?"}',
        '{"verdict": "pass"}',
        '{"verdict": "pass", "reason": 3}',
        '["pass", "ok"]',
        '{"verdict": "pass", "reason": "unterminated"',
        "```json\nnot json\n```",
        json.dumps({"result": {"verdict": "pass", "reason": "nested"}}),
    ],
)
def test_anything_else_is_an_unparseable_round(text) -> None:
    parsed = parse_reply(text)
    assert parsed.verdict is None and parsed.problem and not parsed.passed


@given(st.text(max_size=300))
def test_reading_a_reply_never_raises(text) -> None:
    parsed = parse_reply(text)
    assert (parsed.verdict is None) == (parsed.problem is not None)

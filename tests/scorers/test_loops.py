"""Loop detection on generated trajectories whose loops (and near misses) are known."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from deskscore.schemas import TABLES, conform_rows
from deskscore.scorers.loops import (
    ACTION_BOILERPLATE,
    DETECTOR_VERSION,
    SIGNALS,
    LoopParams,
    action_core,
    detect_loops,
    episode_loop_summary,
    length_bound_ok,
)

# --------------------------------------------------------------------------- builders

PLAN = "I can see the toolbar; I will open the Format menu to change the font of the title."
OTHER = "The dialog closed, so now I will type the new file name into the name field."


def click(x: float, y: float, response: str | None = PLAN, **kw: Any) -> dict[str, Any]:
    return {"kind": "click", "text": f"pyautogui.click({x:g}, {y:g})", "x": x, "y": y} | {
        "response": response,
        **kw,
    }


def act(kind: str, text: str, response: str | None = OTHER, **kw: Any) -> dict[str, Any]:
    return {"kind": kind, "text": text, "response": response, **kw}


def press(key: str = "enter", response: str | None = None, **kw: Any) -> dict[str, Any]:
    return act("press", f"pyautogui.press('{key}')", response, **kw)


def write(text: str, response: str | None = OTHER, **kw: Any) -> dict[str, Any]:
    return act("type", f"pyautogui.write('{text}', interval=0.03)", response, **kw)


def done() -> dict[str, Any]:
    return act("done", "DONE", "The task is complete.")


def error() -> dict[str, Any]:
    return {"kind": "error", "text": None, "response": None, "turn": None}


def episode(
    specs: list[dict[str, Any]],
    *,
    run: str = "run-a",
    task: str = "task-1",
    domain: str = "gimp",
    max_steps: int | None = None,
    ended_by: str | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(steps, episodes) of one episode: each spec is a turn of its own unless it says
    `turn`; `phash` and coordinates only where given; error specs are runner error lines."""
    rows, turn = [], 0
    for i, spec in enumerate(specs):
        if spec["kind"] != "error":
            turn = spec.get("turn") or turn + 1
        rows.append(
            {
                "run_id": run,
                "benchmark": "osworld",
                "domain": domain,
                "task_id": task,
                "step_idx": i,
                "step_num": None if spec["kind"] == "error" else turn,
                "action_kind": spec["kind"],
                "action_text": spec.get("text"),
                "response": spec.get("response"),
                "x": spec.get("x"),
                "y": spec.get("y"),
                "phash": spec.get("phash"),
            }
        )
    schema = {
        "step_idx": pl.Int32,
        "step_num": pl.Int32,
        "x": pl.Float64,
        "y": pl.Float64,
        "phash": pl.Int64,
    }
    steps = pl.DataFrame(rows, schema_overrides=schema, infer_schema_length=None)
    executed = [r for r in rows if r["action_kind"] != "error"]
    last = executed[-1]["action_kind"] if executed else None
    if ended_by is None:
        ended_by = last if last in ("done", "fail") else "none"
    eps = pl.DataFrame(
        [
            {
                "run_id": run,
                "domain": domain,
                "task_id": task,
                "ended_by": ended_by,
                "n_steps": len(executed),
                "n_turns": len({r["step_num"] for r in executed}),
                "max_steps": max_steps,
            }
        ],
        schema_overrides={"n_steps": pl.Int32, "n_turns": pl.Int32, "max_steps": pl.Int32},
    )
    return steps, eps


def combine(*parts: tuple[pl.DataFrame, pl.DataFrame]) -> tuple[pl.DataFrame, pl.DataFrame]:
    return pl.concat([p[0] for p in parts]), pl.concat([p[1] for p in parts])


def spans_of(
    specs: list[dict[str, Any]], params: LoopParams | None = None, **kw: Any
) -> list[dict[str, Any]]:
    _, spans = detect_loops(*episode(specs, **kw), params)
    return spans.to_dicts()


def pair_flags(a: dict[str, Any], b: dict[str, Any], params: LoopParams | None = None) -> dict:
    """The flags of the second of two steps (compared with the first)."""
    flags, _ = detect_loops(*episode([a, b]), params)
    return flags.row(1, named=True)


# --------------------------------------------------------------------------- the three outcomes


def test_a_loop_the_agent_leaves_is_recovered() -> None:
    specs = [write("report"), click(500, 300), click(500, 302), click(501, 302), write("q3")]
    [span] = spans_of([*specs, done()])
    assert (span["first_step"], span["last_step"], span["length"]) == (1, 3, 3)
    assert span["looping_steps"] == 2
    assert span["outcome"] == "recovered"
    assert span["signals"] == ["response", "action", "coords"]
    assert json.loads(span["signal_counts_json"]) == {
        "response": 2,
        "action": 2,
        "coords": 2,
        "phash": 0,
    }
    assert span["detector_version"] == DETECTOR_VERSION


def test_a_loop_followed_only_by_done_or_a_stop_is_abandoned() -> None:
    loop = [write("report"), click(500, 300), click(500, 300), click(500, 300)]
    [span] = spans_of([*loop, done()])
    assert span["outcome"] == "abandoned"
    [stopped] = spans_of(loop)  # no budget known: the episode just stopped
    assert stopped["outcome"] == "abandoned"
    [errored] = spans_of([*loop, error()])  # the runner's error line is not a step
    assert (errored["last_step"], errored["outcome"]) == (3, "abandoned")


def test_a_loop_that_runs_into_the_step_budget_is_a_step_limit() -> None:
    loop = [write("report"), click(500, 300), click(500, 300), click(500, 300)]
    [span] = spans_of(loop, max_steps=4)
    assert span["outcome"] == "step_limit"
    [under] = spans_of(loop, max_steps=5)  # it stopped before the budget
    assert under["outcome"] == "abandoned"


def test_an_unknown_budget_is_inferred_from_episodes_cut_at_the_same_turn() -> None:
    looped = episode([write("a"), click(500, 300), click(500, 300), click(500, 300)], task="t1")
    other_cut = episode(
        [press("tab"), click(40, 900), write("dog food"), click(1500, 20)], task="t2"
    )
    finished = episode([write("e"), done()], task="t3")
    [span] = detect_loops(*combine(looped, other_cut, finished))[1].to_dicts()
    assert span["outcome"] == "step_limit"  # two episodes stopped at 4 turns: the budget
    [alone] = detect_loops(*combine(looped, finished))[1].to_dicts()
    assert alone["outcome"] == "abandoned"  # one episode stopping proves no budget
    cut_by_error = episode([press("tab"), click(40, 900), write("dog food"), click(1500, 20)])
    errored = (cut_by_error[0].with_columns(task_id=pl.lit("t4")), cut_by_error[1])
    errored = (errored[0], errored[1].with_columns(task_id=pl.lit("t4"), ended_by=pl.lit("error")))
    [by_error] = detect_loops(*combine(looped, errored))[1].to_dicts()
    assert by_error["outcome"] == "abandoned"  # a runner error is no budget
    no_inference = LoopParams(infer_budget=False)
    [known_only] = detect_loops(*combine(looped, other_cut), no_inference)[1].to_dicts()
    assert known_only["outcome"] == "abandoned"


def test_runner_error_lines_inside_a_loop_do_not_break_it() -> None:
    specs = [write("a"), click(10, 10), click(10, 10), error(), click(10, 10), write("b")]
    [span] = spans_of(specs)
    assert (span["first_step"], span["last_step"]) == (1, 4)
    assert (span["length"], span["looping_steps"]) == (3, 2)  # executed steps only
    assert span["outcome"] == "recovered"


# --------------------------------------------------------------------------- near misses


def _texts_around_threshold() -> tuple[str, str, str]:
    """A text, one scoring exactly 90 against it and one just under 90."""
    base = "the quick brown fox jumps over the lazy dog " * 2 + "and runs home"
    base = base[:100]
    at = "".join("#" if i % 10 == 0 else c for i, c in enumerate(base))  # 10 substitutions
    under = at[:-1]  # and one deletion
    return base, at, under


def test_texts_just_under_the_threshold_do_not_fire() -> None:
    base, at, under = _texts_around_threshold()
    assert fuzz.ratio(base, under) < 90 <= fuzz.ratio(base, at)
    same_key = press("tab", response=base)
    fired = pair_flags(same_key, press("tab", response=at))
    assert fired["response"] and fired["repeats"]
    missed = pair_flags(same_key, press("tab", response=under))
    assert not missed["response"] and not missed["repeats"]


def test_clicks_51_px_apart_are_not_the_same_place() -> None:
    a = act("move", "pyautogui.moveTo(100, 100)", None, x=100, y=100, phash=0x0F0F)
    assert pair_flags(a, click(150, 100, response=None, phash=0x0F0F))["repeats"]
    far = pair_flags(a, click(151, 100, response=None, phash=0x0F0F))
    assert far["phash"] and not far["coords"] and not far["repeats"]


def test_screens_four_bits_apart_do_not_look_the_same() -> None:
    a = write("hello", response=PLAN, phash=0)
    three = pair_flags(a, write("quarterly report", response=PLAN, phash=0b0111))
    assert three["phash"] and three["repeats"]
    four = pair_flags(a, write("quarterly report", response=PLAN, phash=0b1111))
    assert four["response"] and not four["phash"] and not four["repeats"]


@pytest.mark.parametrize(
    ("a", "b", "bits"),
    [(-1, -2, 1), (0, -(2**63), 1), (-(2**63), 2**63 - 1, 64), (-1, 0b0111 ^ -1, 3)],
)
def test_hash_distance_counts_the_bits_of_negative_hashes_too(a: int, b: int, bits: int) -> None:
    """phash is stored signed: the distance is over the 64 bits, not over |a ^ b|."""
    assert bin((a ^ b) & (2**64 - 1)).count("1") == bits
    flags = pair_flags(write("hello", phash=a), write("quarterly report", phash=b))
    assert flags["phash"] is (bits <= LoopParams().phash_max_distance)


def test_hash_distance_is_the_same_without_numpy_2s_bit_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """numpy 1.26 (admitted) has no bitwise_count: the fallback counts the same bits."""
    import numpy as np

    from deskscore.scorers.loops import _popcount

    values = np.random.default_rng(0).integers(-(2**63), 2**63 - 1, 1000, dtype=np.int64)
    values[:3] = [-1, 0, -(2**63)]
    expected = [bin(int(v) & (2**64 - 1)).count("1") for v in values]
    assert _popcount(values).tolist() == expected
    if hasattr(np, "bitwise_count"):
        monkeypatch.delattr(np, "bitwise_count")
    assert _popcount(values).tolist() == expected


def test_the_loop_stage_detects_without_polars() -> None:
    """A scoring worker's memory is its imports plus one run: find_loops works on Arrow
    tables and neither it nor the loop stage imports Polars (about 45 MB per process)."""
    code = (
        "import sys, pyarrow as pa\n"
        "from deskscore.scorers.loops import find_loops\n"
        "import deskscore.pipelines.stages.loops\n"
        "rows = [dict(run_id='r', benchmark='b', domain='d', task_id='t', step_idx=i,\n"
        "  step_num=i, action_kind='click', action_text='pyautogui.click(5, 5)',\n"
        "  response='same plan', x=5.0, y=5.0, phash=None) for i in range(3)]\n"
        "eps = [dict(run_id='r', domain='d', task_id='t', ended_by='none', n_steps=3,\n"
        "  n_turns=3, max_steps=3)]\n"
        "flags, spans = find_loops(pa.Table.from_pylist(rows), pa.Table.from_pylist(eps))\n"
        "print(spans.to_pylist()[0]['outcome'], spans.num_rows, 'polars' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["step_limit", "1", "False"]


def test_two_identical_actions_of_one_turn_are_not_a_loop() -> None:
    same_turn = [press("down", response=PLAN, turn=1), press("down", response=PLAN, turn=1)]
    flags, spans = detect_loops(*episode(same_turn))
    second = flags.row(1, named=True)
    assert second["action"] and not second["response"] and second["n_available"] == 1
    assert spans.is_empty()
    two_turns = [press("down", response=PLAN), press("down", response=PLAN)]
    assert len(spans_of(two_turns)) == 1  # across turns the shared text does count


def test_two_identical_press_enter_alone_are_not_a_loop() -> None:
    flags, spans = detect_loops(*episode([press("enter"), press("enter")]))
    assert flags.row(1, named=True)["n_available"] == 1 and spans.is_empty()
    different_plans = [press("enter", response=PLAN), press("enter", response=OTHER)]
    assert spans_of(different_plans) == []  # 1 of 2 available signals
    assert len(spans_of([press("enter"), press("enter")], LoopParams(min_available=1))) == 1


# --------------------------------------------------------------------------- missing data


def test_signals_without_data_on_both_sides_do_not_vote() -> None:
    cases = [
        (click(5, 5, phash=1), click(5, 5, phash=1), 4),
        (click(5, 5, response=None, phash=1), click(5, 5, phash=1), 3),
        (click(5, 5, response=None), click(5, 5, response=None), 2),
        (press("a", response=None), click(5, 5, response=None, phash=3), 1),
        (write("x", response=""), write("y", response=PLAN), 1),  # empty text is no text
    ]
    for a, b, available in cases:
        assert pair_flags(a, b)["n_available"] == available, (a, b)


def test_without_responses_or_screenshots_two_agreeing_signals_still_loop() -> None:
    bare = [write("a", response=None), click(700, 40, response=None)]
    bare += [click(702, 41, response=None), click(699, 40, response=None)]
    [span] = spans_of(bare)
    assert span["signals"] == ["action", "coords"]
    moved = [write("a", response=None), click(700, 40, response=None)]
    moved += [click(200, 900, response=None)]
    assert spans_of(moved) == []  # only the action kind agrees, the place does not


def test_the_rule_adapts_to_the_signals_available() -> None:
    # 3 available, 2 fire: loop; required never exceeds what is available
    assert pair_flags(click(5, 5, response=None, phash=9), click(5, 5, response=None, phash=-9))[
        "repeats"
    ]
    strict = LoopParams(min_signals=3)
    both = (click(5, 5, response=None), click(5, 5, response=None))
    assert pair_flags(*both, strict)["repeats"]  # 3 asked, 2 available, both fire
    assert not pair_flags(*both, LoopParams(min_available=3))["repeats"]


# --------------------------------------------------------------------------- spans


def test_a_single_repeat_is_a_span_unless_two_looping_steps_are_required() -> None:
    specs = [write("a"), click(5, 5), click(5, 5), write("b")]
    assert [s["length"] for s in spans_of(specs)] == [2]
    flags, spans = detect_loops(*episode(specs), LoopParams(min_looping_steps=2))
    assert spans.is_empty()
    assert flags.get_column("repeats").sum() == 1 and flags.get_column("looping").sum() == 0


def test_two_loops_in_one_episode_are_two_spans() -> None:
    specs = [click(5, 5), click(5, 5), write("a"), write("b", response=PLAN)]
    specs += [click(900, 900, response=OTHER), click(901, 900, response=OTHER), done()]
    spans = spans_of(specs)
    assert [(s["first_step"], s["last_step"], s["outcome"]) for s in spans] == [
        (0, 1, "recovered"),
        (4, 5, "abandoned"),
    ]


def test_boilerplate_does_not_make_unrelated_clicks_alike() -> None:
    a = "import pyautogui; pyautogui.click(1869, 689)"
    b = "import pyautogui; pyautogui.click(1615, 65)"
    assert fuzz.ratio(a, b) >= 90  # scored raw they would look alike
    cores = action_core(pa.array([a, b])).to_pylist()
    assert cores == ["pyautogui.click(1869, 689)", "pyautogui.click(1615, 65)"]
    flags = pair_flags(act("click", a, None, x=1869, y=689), act("click", b, None, x=1615, y=65))
    assert not flags["action"]
    jittered = "import pyautogui; pyautogui.click(1868, 689)"
    flags = pair_flags(act("click", a, None), act("click", jittered, None))
    assert flags["action"]


_PIECES = ["import", "from", " ", "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1f", ";",
           "time.sleep(", ")", '"', "key", ":", ",", "interval", "=", "0.5", ".", "pyautogui",
           ".click(", "12", "x_1", "é", "\u00a0", "\u2003", "٣", "ß"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join), max_size=12))
def test_action_core_strips_what_pythons_regex_engine_strips(texts: list[str]) -> None:
    """ASCII texts are cleaned by Arrow's RE2, the others by Python's engine: every text comes
    out as ACTION_BOILERPLATE read by Python's engine leaves it (the vertical tab and the
    separators 0x1c-0x1f, which RE2 does not count as whitespace, and non-ASCII letters, digits
    and spaces included)."""
    import re

    pattern = re.compile(ACTION_BOILERPLATE)
    expected = [pattern.sub("", t).strip(" ;\n\t") for t in texts]
    assert action_core(pa.array([*texts, None], pa.string())).to_pylist() == [*expected, None]


def test_spans_conform_to_the_loop_spans_table() -> None:
    specs = [write("a"), click(5, 5, phash=7), click(5, 5, phash=7), click(5, 6, phash=6)]
    _, spans = detect_loops(*episode(specs, max_steps=4))
    assert spans.columns == TABLES["loop_spans"].columns
    table = conform_rows("loop_spans", spans.to_dicts())
    assert table.num_rows == 1
    assert spans.row(0, named=True)["signals"] == list(SIGNALS)


def test_the_order_of_the_input_rows_does_not_matter() -> None:
    parts = [
        episode([write("a"), click(5, 5), click(5, 5), write("b")], task="t1"),
        episode([click(9, 9), click(9, 9), click(9, 9)], task="t2", max_steps=3),
        episode([click(1, 1)], task="t1", run="run-b"),
    ]
    steps, eps = combine(*parts)
    flags, spans = detect_loops(steps, eps)
    shuffled_flags, shuffled_spans = detect_loops(steps.sample(fraction=1.0, seed=3), eps)
    assert shuffled_spans.equals(spans)
    assert shuffled_flags.sort("run_id", "task_id", "step_idx").equals(
        flags.sort("run_id", "task_id", "step_idx")
    )


def test_episode_summary_counts_looping_steps_and_their_share() -> None:
    steps, eps = combine(
        episode([write("a"), click(5, 5), click(5, 5), click(5, 5)], task="t1"),
        episode([write("alpha"), write("quarterly report")], task="t2"),
    )
    flags, spans = detect_loops(steps, eps)
    summary = {r["task_id"]: r for r in episode_loop_summary(flags).to_dicts()}
    assert summary["t1"]["looping_steps"] == spans.get_column("looping_steps").sum() == 2
    assert summary["t1"]["looping_share"] == pytest.approx(2 / 4)
    assert summary["t2"]["looping_steps"] == 0


def test_no_steps_and_one_step_give_no_spans() -> None:
    steps, eps = episode([click(1, 1)])
    assert detect_loops(steps.clear(), eps)[1].columns == TABLES["loop_spans"].columns
    flags, spans = detect_loops(steps, eps)
    assert flags.height == 1 and spans.is_empty()


def test_frames_missing_a_column_are_refused_with_its_name() -> None:
    steps, eps = episode([click(1, 1)])
    with pytest.raises(ValueError, match="phash"):
        detect_loops(steps.drop("phash"), eps)
    with pytest.raises(ValueError, match="max_steps"):
        detect_loops(steps, eps.drop("max_steps"))


# --------------------------------------------------------------------------- parameters


def test_the_detector_version_names_every_parameter() -> None:
    custom = LoopParams(text_threshold=85, coord_radius=30, phash_max_distance=5)
    assert custom.version != DETECTOR_VERSION
    for part in ("text>=85", "coords<=30px", "phash<=5", "signals>=2", "span>=1"):
        assert part in custom.version
    with pytest.raises(ValueError):
        LoopParams(min_signals=5)
    with pytest.raises(ValueError):
        LoopParams(text_threshold=120)


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="abcde ", max_size=40),
    st.text(alphabet="abcde ", max_size=40),
    st.sampled_from([50.0, 80.0, 90.0, 95.0, 100.0]),
)
def test_the_length_bound_never_rules_out_a_similar_pair(a: str, b: str, threshold: float) -> None:
    allowed = length_bound_ok(len(a), len(b), threshold)
    if fuzz.ratio(a, b) >= threshold and (a or b):
        assert allowed


def test_importing_the_scorer_stays_light() -> None:
    code = "import sys, deskscore.scorers.loops; print(sorted({'polars', 'rapidfuzz', 'numpy'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

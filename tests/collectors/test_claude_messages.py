"""messages.json of Anthropic computer-use runs: the instruction and each turn's reasoning,
matched to the steps of that turn, on the 24 real Sec-Eval runs and on hand-made files."""

from __future__ import annotations

import ast
import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deskscore.collectors import formats
from deskscore.collectors.claude_messages import (
    EXECUTED_PREFIX,
    MESSAGES_FILE,
    TASK_MARKER,
    match_turns,
    parse_conversation,
)
from deskscore.collectors.layout import TaskFolder, discover
from deskscore.collectors.osworld import read_episode_calls
from deskscore.collectors.source import open_source
from deskscore.schemas import conform_rows

LAYOUT = "{domain}/{task_id}"


def _read(root: Path, layout: str | None = LAYOUT) -> list[tuple[TaskFolder, Any, Any]]:
    """Each task folder with its read by the osworld format and by the bare OSWorld reader."""
    src = open_source(str(root))
    [run] = discover(src.files(), layout)
    assert run.format == "osworld"
    out = []
    for t in run.tasks:
        full = formats.OSWORLD.read_episode(src, run, t, run_id="r", benchmark="b")
        bare = read_episode_calls(src, run, t, run_id="r", benchmark="b")
        out.append((t, full, bare))
    return out


def _expected(folder: Path) -> tuple[str, dict[int, str], int]:
    """What the rule says, worked out from the raw files alone: the instruction, the reply
    each traj line should carry (by line number), and the number of turns."""
    messages = json.loads((folder / MESSAGES_FILE).read_text())
    system = messages[0]["content"][0]["text"]
    instruction = system.split(TASK_MARKER)[-1].strip()
    replies, executed = [], []
    for i, m in enumerate(messages):
        if m["role"] == "assistant":
            replies.append(m["content"][0]["text"])
            quoted = messages[i + 1]["content"][0]["text"][len(EXECUTED_PREFIX) :]
            executed.append(ast.literal_eval(quoted.strip()))
    lines = [json.loads(x) for x in (folder / "traj.jsonl").read_text().splitlines()]
    by_step: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for no, rec in enumerate(lines, 1):
        if "step_num" in rec:
            by_step[rec["step_num"]].append((no, rec["action"]))
    reply_of_line = {}
    for k, (reply, actions) in enumerate(zip(replies, executed, strict=True), 1):
        assert [a for _, a in by_step.get(k, [])] == actions  # the rule holds on the raw files
        reply_of_line.update({no: reply for no, _ in by_step.get(k, [])})
    return instruction, reply_of_line, len(replies)


@pytest.fixture(scope="module")
def sec_reads(sec_eval_dir: Path) -> list[tuple[TaskFolder, Any, Any]]:
    return _read(sec_eval_dir)


def test_every_sec_eval_run_gets_its_instruction_and_each_turns_reply_on_its_steps(
    sec_reads: list, sec_eval_dir: Path
) -> None:
    assert len(sec_reads) == 24
    for task, full, _ in sec_reads:
        instruction, reply_of_line, _ = _expected(sec_eval_dir / task.path)
        assert full.read.episode["instruction"] == instruction
        got = {s["line_no"]: s["response"] for s in full.read.steps}
        for line_no, response in got.items():
            assert response == reply_of_line.get(line_no), (task.path, line_no)
        assert [q for q in full.read.quarantine if q["location"].endswith(MESSAGES_FILE)] == []


def test_every_sec_eval_turn_is_matched_and_only_the_final_turn_is_left_without_a_reply(
    sec_reads: list, sec_eval_dir: Path
) -> None:
    n_turns = 0
    for task, full, _ in sec_reads:
        conv = parse_conversation(
            json.loads((sec_eval_dir / task.path / MESSAGES_FILE).read_text())
        )
        m = match_turns(conv, full.read.steps)
        _, _, turns = _expected(sec_eval_dir / task.path)
        assert len(conv.turns) == turns and m.offset == 0 and m.unmatched == []
        assert m.matched == list(range(1, turns + 1))
        n_turns += turns
        executed = [s for s in full.read.steps if s["action_kind"] != "error"]
        last = [s for s in executed if s["step_num"] > turns]
        assert len(m.after_last) <= 1 and {s["step_num"] for s in last} == set(m.after_last)
        # the final turn is the DONE the agent ended with; aborted runs have none
        assert [s["action_kind"] for s in last] == (["done"] if m.after_last else [])
        assert all(s["response"] is None for s in last)
        assert all(s["response"] is not None for s in executed if s["step_num"] <= turns)
    assert n_turns == 164


def test_reading_messages_changes_nothing_but_instruction_responses_and_their_notes(
    sec_reads: list,
) -> None:
    for _, full, bare in sec_reads:
        assert bare.read.episode["instruction"] is None
        assert {**full.read.episode, "instruction": None} == bare.read.episode
        assert [{**s, "response": None} for s in full.read.steps] == bare.read.steps
        assert full.llm_calls == bare.llm_calls
        assert (
            len(full.read.steps) + full.read.episode["n_quarantined"]
            == (full.read.episode["n_lines"])
        )
    conform_rows("episodes", [f.read.episode for _, f, _ in sec_reads])
    conform_rows("steps", [s for _, f, _ in sec_reads for s in f.read.steps])


def _copy_run(sec_eval_dir: Path, tmp_path: Path, name: str = "20250226@163146-failed") -> Path:
    src = sec_eval_dir / "execute_binary" / name
    dst = tmp_path / "execute_binary" / name
    dst.mkdir(parents=True)
    for f in ("traj.jsonl", "result.txt", MESSAGES_FILE):
        shutil.copy(src / f, dst / f)
    return dst


def _one(root: Path) -> Any:
    [(_, full, bare)] = _read(root)
    return full, bare


def test_a_window_of_the_last_turns_is_matched_by_the_executed_lists(
    sec_eval_dir: Path, tmp_path: Path
) -> None:
    folder = _copy_run(sec_eval_dir, tmp_path)
    messages = json.loads((folder / MESSAGES_FILE).read_text())
    assistants = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    # keep the system prompt and the turns from the 4th on, as a prompt window does
    start = assistants[3] - 1
    (folder / MESSAGES_FILE).write_text(json.dumps([messages[0], *messages[start:]]))
    full, _ = _one(tmp_path)
    conv = parse_conversation(json.loads((folder / MESSAGES_FILE).read_text()))
    m = match_turns(conv, full.read.steps)
    assert m.offset == 3 and m.unmatched == [] and len(m.matched) == len(conv.turns)
    first_reply = messages[assistants[3]]["content"][0]["text"]
    assert {s["response"] for s in full.read.steps if s["step_num"] == 4} == {first_reply}
    assert all(s["response"] is None for s in full.read.steps if s["step_num"] <= 3)


def test_a_turn_whose_actions_differ_is_quarantined_and_the_others_keep_their_replies(
    sec_eval_dir: Path, tmp_path: Path
) -> None:
    folder = _copy_run(sec_eval_dir, tmp_path)
    messages = json.loads((folder / MESSAGES_FILE).read_text())
    assistants = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    messages[assistants[1] + 1]["content"][0]["text"] = EXECUTED_PREFIX + " ['pyautogui.click()']"
    (folder / MESSAGES_FILE).write_text(json.dumps(messages))
    full, bare = _one(tmp_path)
    [row] = [q for q in full.read.quarantine if q["location"].endswith(MESSAGES_FILE)]
    assert row["reason"] == "unmatched_turns" and "turn 2" in row["message"]
    assert f"{folder.parent.name}/{folder.name}/{MESSAGES_FILE}" in row["message"]
    assert all(s["response"] is None for s in full.read.steps if s["step_num"] == 2)
    assert all(s["response"] for s in full.read.steps if s["step_num"] in (1, 3))
    assert len(full.read.steps) == len(bare.read.steps)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'[{"role": "system", "content": [{"type": "te', "invalid_json"),
        (b"\xff\xfe not text", "not_utf8"),
        (b'{"role": "assistant"}', "unexpected_shape"),
    ],
)
def test_a_bad_messages_file_is_one_quarantine_row_and_the_run_reads_as_osworld(
    sec_eval_dir: Path, tmp_path: Path, content: bytes, reason: str
) -> None:
    folder = _copy_run(sec_eval_dir, tmp_path)
    (folder / MESSAGES_FILE).write_bytes(content)
    full, bare = _one(tmp_path)
    [row] = [q for q in full.read.quarantine if q not in bare.read.quarantine]
    assert row["reason"] == reason and row["location"].endswith(MESSAGES_FILE)
    assert full.read.episode == bare.read.episode and full.read.steps == bare.read.steps


def test_a_run_without_messages_reads_exactly_as_osworld(
    sec_eval_dir: Path, tmp_path: Path
) -> None:
    folder = _copy_run(sec_eval_dir, tmp_path)
    (folder / MESSAGES_FILE).unlink()
    full, bare = _one(tmp_path)
    assert full == bare


def test_the_executed_list_that_is_no_literal_is_named(sec_eval_dir: Path, tmp_path: Path) -> None:
    folder = _copy_run(sec_eval_dir, tmp_path)
    messages = json.loads((folder / MESSAGES_FILE).read_text())
    first = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    messages[first + 1]["content"][0]["text"] = EXECUTED_PREFIX + " [pyautogui.click("
    (folder / MESSAGES_FILE).write_text(json.dumps(messages))
    full, _ = _one(tmp_path)
    [row] = [q for q in full.read.quarantine if q["location"].endswith(MESSAGES_FILE)]
    assert row["reason"] == "invalid_literal" and "turn 1" in row["message"]
    assert all(s["response"] is None for s in full.read.steps if s["step_num"] == 1)
    assert all(s["response"] for s in full.read.steps if s["step_num"] == 2)


# ---- tool_use / tool_result blocks ----------------------------------------------------------

UUID = "0a1b2c3d-1111-4222-8333-444455556666"


def _claude_action(tid: str | None, inp: dict, code: str) -> dict:
    action = {"name": "computer", "input": inp, "action_type": "tool_use", "command": code}
    if tid:
        action["id"] = tid
    return action


def _tool_use_run(root: Path, with_ids: bool, code_only: bool = False) -> Path:
    """A two-turn conversation with tool_use blocks and the traj.jsonl its runner writes."""
    turns = [
        ("I click the menu.", [("toolu_1", {"action": "left_click", "coordinate": [10, 20]})]),
        ("Now I type the name and press enter.", [
            ("toolu_2", {"action": "type", "text": "report"}),
            ("toolu_3", {"action": "key", "text": "Return"}),
        ]),
    ]  # fmt: skip
    codes = {"toolu_1": "pyautogui.click(10, 20)", "toolu_2": "pyautogui.write('report')",
             "toolu_3": "pyautogui.press('enter')"}  # fmt: skip
    messages: list[dict] = [{"role": "user", "content": "Write the report and save it."}]
    lines = []
    for k, (text, uses) in enumerate(turns, 1):
        blocks = [{"type": "text", "text": text}]
        blocks += [
            {"type": "tool_use", "id": i, "name": "computer", "input": inp} for i, inp in uses
        ]
        messages.append({"role": "assistant", "content": blocks})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": i, "content": [{"type": "text", "text": "ok"}]}
            for i, _ in uses
        ]})  # fmt: skip
        for i, inp in uses:
            action: Any = codes[i] if code_only else _claude_action(i if with_ids else None, inp,
                                                                     codes[i])  # fmt: skip
            lines.append({"step_num": k, "action": action, "done": False, "info": {}})
    lines.append({"step_num": 3, "action": "DONE", "done": True, "info": {"done": True}})
    folder = root / "os" / UUID
    folder.mkdir(parents=True)
    (folder / MESSAGES_FILE).write_text(json.dumps(messages))
    (folder / "traj.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (folder / "result.txt").write_text("1\n")
    return folder


@pytest.mark.parametrize(
    ("with_ids", "code_only"), [(True, False), (False, False), (False, True)], ids=str
)
def test_tool_use_turns_are_matched_by_id_then_input_then_position(
    tmp_path: Path, with_ids: bool, code_only: bool
) -> None:
    _tool_use_run(tmp_path, with_ids, code_only)
    [(_, full, _)] = _read(tmp_path, layout=None)
    assert full.read.episode["instruction"] == "Write the report and save it."
    replies = [s["response"] for s in full.read.steps]
    assert replies == [
        "I click the menu.",
        "Now I type the name and press enter.",
        "Now I type the name and press enter.",
        None,
    ]
    assert [q for q in full.read.quarantine if q["location"].endswith(MESSAGES_FILE)] == []


def test_a_tool_use_turn_matching_no_action_is_quarantined(tmp_path: Path) -> None:
    folder = _tool_use_run(tmp_path, with_ids=True)
    lines = (folder / "traj.jsonl").read_text().splitlines()
    (folder / "traj.jsonl").write_text("\n".join([lines[0], lines[-1]]) + "\n")
    [(_, full, _)] = _read(tmp_path, layout=None)
    [row] = [q for q in full.read.quarantine if q["location"].endswith(MESSAGES_FILE)]
    assert row["reason"] == "unmatched_turns" and "turn 2" in row["message"]
    assert [s["response"] for s in full.read.steps] == ["I click the menu.", None]


@pytest.mark.parametrize(
    "obj",
    [
        None,
        3,
        "text",
        [],
        [1, "a", None],
        {"messages": "x"},
        [{"role": "assistant"}],
        [{"role": "assistant", "content": [{"type": "tool_use"}, 5, None]}],
        [{"role": "assistant", "content": "hi"}, {"role": "user", "content": EXECUTED_PREFIX}],
        {"system": "x " + TASK_MARKER + " do it", "messages": [{"role": "user", "content": {}}]},
    ],
)
def test_any_json_value_is_read_without_raising(obj: Any) -> None:
    conv = parse_conversation(obj)
    rows = [{"step_idx": 0, "step_num": 1, "action_kind": "click", "action_text": "x",
             "response": None, "extra": None}]  # fmt: skip
    match_turns(conv, rows)
    assert all(isinstance(r, str) and isinstance(w, str) for r, w in conv.problems)


def test_the_light_read_of_score_py_does_not_read_messages(
    sec_eval_dir: Path, tmp_path: Path
) -> None:
    _copy_run(sec_eval_dir, tmp_path)
    src = open_source(str(tmp_path))
    [run] = discover(src.files(), LAYOUT)
    light = formats.OSWORLD.light(src, run, run.tasks[0], run_id="r", benchmark="b")
    assert light.episode["instruction"] is None
    assert light.quarantine == []


def test_the_sec_eval_runs_in_osworld_folders_ingest_reconcile_and_check(
    sec_eval_dir: Path, tmp_path: Path
) -> None:
    """The 24 runs, their folders renamed by uuid as OSWorld names them (so discovery needs
    no layout): every line is a step row or quarantined, and `check` re-counts them."""
    import uuid

    from deskscore.pipelines.cli.check import check_warehouse
    from deskscore.pipelines.jobs.ingest import run_ingest
    from deskscore.pipelines.options import IngestOptions
    from deskscore.sql import connect

    archive = tmp_path / "archive"
    for folder in sorted(p for p in sec_eval_dir.glob("*/*") if p.is_dir()):
        dst = archive / folder.parent.name / str(uuid.uuid5(uuid.NAMESPACE_URL, folder.name))
        dst.mkdir(parents=True)
        for f in folder.iterdir():
            if f.suffix != ".png":
                shutil.copy(f, dst / f.name)
    wh = tmp_path / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(archive),), engine="direct"))
    con = connect(wh)
    lines, quarantined, with_instruction = con.sql(
        "SELECT sum(n_lines), sum(n_quarantined), count(instruction) FROM episodes"
    ).fetchall()[0]
    steps, replies = con.sql("SELECT count(*), count(response) FROM steps").fetchall()[0]
    assert with_instruction == 24 and lines == steps + quarantined
    assert 0 < replies < steps
    result = check_warehouse(wh)
    assert result.ok, result.problems


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["role", "content", "type", "text", "id", "input", "messages", "x"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@given(obj=_JSON)
@settings(max_examples=300, deadline=None)
def test_reading_a_conversation_never_raises(obj: Any) -> None:
    conv = parse_conversation(obj)
    rows = [{"step_idx": i, "step_num": i + 1, "action_kind": "click", "action_text": "x",
             "response": None, "extra": None} for i in range(3)]  # fmt: skip
    m = match_turns(conv, rows)
    assert set(m.replies) <= {0, 1, 2}

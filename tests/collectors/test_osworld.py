"""One OSWorld task folder to episode, step and quarantine rows, from folders, zips and URLs."""

from __future__ import annotations

import io
import json
import math
import random
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from deskscore.collectors.actions import action_rows, parse_action
from deskscore.collectors.human import load_bundled
from deskscore.collectors.ids import thunderbird_old_to_new
from deskscore.collectors.layout import discover
from deskscore.collectors.osworld import (
    EpisodeRead,
    count_lines,
    first_step_indexes,
    parse_result,
    read_episode,
    split_lines,
    summarise,
)
from deskscore.collectors.source import Source, open_source
from deskscore.collectors.synthetic import load_profiles, write_run
from deskscore.schemas import TABLES, conform_rows

TASK = "0a1b2c3d-1111-4222-8333-444455556666"
RUN = "pyautogui/screenshot/ByteDance-Seed/UI-TARS-1.5-7B"
SHOT_1 = "step_1_20250101@120000.png"
SHOT_2 = "step_2_20250101@120001123456.png"
SHOT_4 = "step_4_20250101@120010.png"


def rec(
    step_num: object, stamp: str, action: object, shot: str | None = None, **kw: object
) -> bytes:
    record = {
        "step_num": step_num,
        "action_timestamp": stamp,
        "action": action,
        "reward": 0,
        "done": False,
        "info": {},
        "screenshot_file": shot or f"step_{step_num}_{stamp}.png",
    }
    record.update(kw)
    return json.dumps(record).encode()


CLAUDE = {
    "name": "computer",
    "input": {"action": "left_click", "coordinate": [10, 20]},
    "id": "toolu_01",
    "action_type": "tool_use",
    "command": "pyautogui.click(10, 20)",
    "raw_response": "I will click the button",
}
OPERATOR = {
    "action_space": "pyautogui",
    "action": "pyautogui.typewrite('abc')",
    "pending_checks": [],
    "call_id": "call_1",
}
TRAJ_LINES = [
    rec(1, "20250101@120000", "import pyautogui\npyautogui.click(100, 200)", SHOT_1),
    rec(2, "20250101@120001123456", CLAUDE, SHOT_2),
    rec(2, "20250101@120002", {"action_type": "TYPING", "text": "hello"}),  # same turn, no png
    rec(3, "20250101@120005", OPERATOR),
    b"   ",
    b'{"step_num": 3, "action": "caf\xe9"}',
    json.dumps({"Error": "VM crashed"}).encode(),
    rec(
        4,
        "20250101@120010",
        "DONE",
        SHOT_4,
        done=True,
        info={"done": True},
        response="All done",
        plan="step by step",
    ),
    b'{"step_num": 5, "action": "pyautogui.cli',
]
TRAJ = b"\n".join(TRAJ_LINES)  # the truncated last line has no newline


def task_tree(prefix: str = RUN, domain: str = "chrome", task: str = TASK) -> dict[str, bytes]:
    base = f"{prefix}/{domain}/{task}"
    return {
        f"{base}/traj.jsonl": TRAJ,
        f"{base}/result.txt": b"1.0\n",
        f"{base}/{SHOT_1}": b"png1",
        f"{base}/{SHOT_2}": b"png2",
        f"{base}/{SHOT_4}": b"png4",
        f"{base}/runtime.log": b"log",
    }


def read_all(
    src: Source, reported: dict | None = None, layout: str | None = None
) -> list[EpisodeRead]:
    out = []
    for run in discover(src.files(), layout):
        for task in run.tasks:
            out.append(
                read_episode(src, run, task, run_id="run-1", benchmark="osworld", reported=reported)
            )
    return out


def conforms(reads: list[EpisodeRead]) -> None:
    conform_rows("episodes", [r.episode for r in reads])
    conform_rows("steps", [s for r in reads for s in r.steps])
    conform_rows("step_actions", [a for r in reads for a in r.actions])
    conform_rows("quarantine", [q for r in reads for q in r.quarantine])


def test_every_line_of_a_mixed_trajectory_becomes_a_step_or_quarantine_row(
    tmp_path: Path, write_tree
) -> None:
    src = open_source(str(write_tree(tmp_path, task_tree())))
    [read] = read_all(src)
    conforms([read])
    ep, steps, quarantine, _ = read
    traj = tmp_path / RUN / "chrome" / TASK / "traj.jsonl"
    with open(traj, encoding="latin-1") as f:
        python_lines = sum(1 for _ in f)
    assert ep["n_lines"] == python_lines == 9
    assert len(steps) + ep["n_quarantined"] == ep["n_lines"]
    assert [s["line_no"] for s in steps] == [1, 2, 3, 4, 7, 8]
    assert [s["step_idx"] for s in steps] == list(range(6))
    assert [(q["line_no"], q["reason"]) for q in quarantine] == [
        (5, "blank_line"),
        (6, "not_utf8"),
        (9, "invalid_json"),
    ]
    msg = quarantine[2]["message"]
    assert f"{RUN}/chrome/{TASK}/traj.jsonl:9" in msg and "truncated or invalid JSON" in msg
    assert quarantine[2]["excerpt"] == TRAJ_LINES[-1].decode()
    assert [(s["action_format"], s["action_kind"]) for s in steps] == [
        ("code", "click"),
        ("claude", "click"),
        ("computer_13", "type"),
        ("operator", "type"),
        ("none", "error"),
        ("special", "done"),
    ]


def test_episode_counts_turns_errors_and_how_it_ended(tmp_path: Path, write_tree) -> None:
    src = open_source(str(write_tree(tmp_path, task_tree())))
    [(ep, steps, _, _)] = read_all(src)
    assert ep["n_steps"] == 5
    assert ep["n_turns"] == 4  # step_num 2 holds two actions
    assert ep["n_error_lines"] == 1 and ep["n_quarantined"] == 3
    assert ep["last_action_kind"] == "done" and ep["ended_by"] == "done"
    assert ep["err_message"] == "VM crashed"
    assert ep["started_at"] == datetime(2025, 1, 1, 12, 0, 0)
    assert ep["ended_at"] == datetime(2025, 1, 1, 12, 0, 10)
    assert (ep["result_raw"], ep["score"], ep["result_status"]) == ("1.0", 1.0, "ok")
    assert ep["traj_file"] == f"{RUN}/chrome/{TASK}/traj.jsonl"
    assert ep["task_path"] == f"{RUN}/chrome/{TASK}"
    assert ep["domain"] == "chrome" and ep["task_id"] == ep["source_task_id"] == TASK
    assert [s["step_num"] for s in steps] == [1, 2, 2, 3, None, 4]


def test_a_full_read_holds_its_rows_as_columns_that_read_as_the_same_rows(
    tmp_path: Path, write_tree
) -> None:
    src = open_source(str(write_tree(tmp_path, task_tree())))
    [(ep, steps, _, actions)] = read_all(src)
    assert steps.columns is not None and actions.columns is not None  # no dict per row
    # the episode's figures come from the columns, and are what its rows as dicts give
    as_dicts = [dict(s) for s in steps]
    figures = summarise(as_dicts, ep["n_quarantined"])
    assert {k: ep[k] for k in figures if k != "last_error"} == {
        k: v for k, v in figures.items() if k != "last_error"
    }
    assert first_step_indexes(as_dicts) == {1: 0, 2: 1, 3: 3, 4: 5}
    # each step's sub-actions, in order, as one step's action_rows gives them
    originals = [json.loads(line)["action"] for line in (TRAJ_LINES[i] for i in (0, 1, 2, 3, 7))]
    executed = [s for s in as_dicts if s["action_kind"] != "error"]
    expected = [
        row
        for step, action in zip(executed, originals, strict=True)
        for row in action_rows(step, parse_action(action)["actions"])
    ]
    assert [dict(a) for a in actions] == expected
    assert [(a["step_idx"], a["action_idx"]) for a in actions] == [(0, 0), (1, 0), (2, 0),
                                                                   (3, 0), (5, 0)]  # fmt: skip


def test_step_columns_keep_timestamps_screenshots_responses_and_extra_keys(
    tmp_path: Path, write_tree
) -> None:
    src = open_source(str(write_tree(tmp_path, task_tree())))
    [(_, steps, _, _)] = read_all(src)
    first, claude, typing, _, error, done = steps
    assert first["ts"] == datetime(2025, 1, 1, 12, 0, 0)
    assert claude["ts"] == datetime(2025, 1, 1, 12, 0, 1, 123456)
    assert claude["action_timestamp"] == "20250101@120001123456"
    assert (first["x"], first["y"]) == (100.0, 200.0)
    assert first["screenshot_path"] == f"{RUN}/chrome/{TASK}/{SHOT_1}"
    assert typing["screenshot_file"] == "step_2_20250101@120002.png"
    assert typing["screenshot_path"] is None  # named, but not in the folder
    assert claude["response"] == "I will click the button"  # the dict action's raw_response
    assert done["response"] == "All done"  # the record's own response key wins
    assert json.loads(done["extra"]) == {"plan": "step by step"}
    assert first["extra"] is None
    assert done["info_json"] == '{"done":true}' and first["info_json"] == "{}"
    assert (done["reward"], done["done"]) == (0.0, True)
    assert error["action_text"] == "VM crashed" and error["extra"] is None


def test_error_as_last_record_ends_the_episode_as_error(tmp_path: Path, write_tree) -> None:
    traj = b"\n".join([rec(1, "20250101@120000", "pyautogui.click(1, 2)"), b'{"Error": "timeout"}'])
    write_tree(tmp_path, {f"run/os/{TASK}/traj.jsonl": traj})
    [(ep, _, _, _)] = read_all(open_source(str(tmp_path)))
    assert ep["ended_by"] == "error" and ep["last_action_kind"] == "click"
    assert ep["result_status"] == "missing" and ep["score"] is None
    assert ep["err_message"] == "timeout"


def test_fail_and_no_terminal_action(tmp_path: Path, write_tree) -> None:
    write_tree(
        tmp_path,
        {
            f"run/os/{TASK}/traj.jsonl": rec(1, "20250101@120000", "FAIL", info={"fail": True}),
            f"run/vlc/{TASK}/traj.jsonl": rec(1, "20250101@120000", "WAIT"),
        },
    )
    eps = {r.episode["domain"]: r.episode for r in read_all(open_source(str(tmp_path)))}
    assert eps["os"]["ended_by"] == "fail"
    assert eps["vlc"]["ended_by"] == "none" and eps["vlc"]["last_action_kind"] == "wait"


def zip_of(files: dict[str, bytes], prefix: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo(prefix), b"")
        for rel, data in files.items():
            zf.writestr(prefix + rel, data)
            folder, _, name = rel.rpartition("/")
            zf.writestr(f"__MACOSX/{prefix}{folder}/._{name}", b"\x00\x05\x16\x07")
    return buf.getvalue()


PATH_COLUMNS = {"task_path", "traj_file", "screenshot_path", "location", "source", "message"}


def without_paths(read: EpisodeRead) -> tuple:
    def strip(row: dict) -> dict:
        return {k: v for k, v in row.items() if k not in PATH_COLUMNS}

    return strip(read.episode), [strip(s) for s in read.steps], [strip(q) for q in read.quarantine]


def test_a_zip_of_the_same_tree_read_in_place_gives_the_same_rows(
    tmp_path: Path, write_tree
) -> None:
    files = {**task_tree(), **task_tree(domain="gimp")}
    from_dir = read_all(open_source(str(write_tree(tmp_path / "tree", files))))
    archive = tmp_path / "run.zip"
    archive.write_bytes(zip_of(files, "release-2025/"))
    src = open_source(str(archive))
    from_zip = read_all(src)
    assert src.kind == "zip" and not (tmp_path / "release-2025").exists()
    assert [without_paths(r) for r in from_zip] == [without_paths(r) for r in from_dir]
    conforms(from_zip)
    for z, d in zip(from_zip, from_dir, strict=True):
        assert z.episode["task_path"] == "release-2025/" + d.episode["task_path"]
        assert [s["screenshot_path"] for s in z.steps] == [
            s["screenshot_path"] and "release-2025/" + s["screenshot_path"] for s in d.steps
        ]


def test_an_fsspec_memory_tree_gives_the_same_rows(tmp_path: Path, write_tree) -> None:
    import fsspec

    files = task_tree()
    from_dir = read_all(open_source(str(write_tree(tmp_path, files))))
    fs = fsspec.filesystem("memory")
    for rel, data in files.items():
        fs.pipe_file(f"/osworld-mem/{rel}", data)
    try:
        from_mem = read_all(open_source("memory://osworld-mem"))
    finally:
        fs.rm("/osworld-mem", recursive=True)
    assert [without_paths(r) for r in from_mem] == [without_paths(r) for r in from_dir]
    assert from_mem[0].episode["task_path"] == from_dir[0].episode["task_path"]


def test_old_thunderbird_ids_map_to_new_ones_but_other_domains_keep_theirs(
    tmp_path: Path, write_tree
) -> None:
    old = "bb5e4c0d-f964-439c-97b6-bdb9747de3f4"
    new = thunderbird_old_to_new()[old]
    assert new.startswith("dfac9ee8")
    files = {**task_tree(domain="thunderbird", task=old), **task_tree(domain="chrome", task=old)}
    reads = read_all(open_source(str(write_tree(tmp_path, files))))
    got = {(r.episode["domain"], r.episode["source_task_id"]): r for r in reads}
    tb = got[("thunderbird", old)]
    assert tb.episode["task_id"] == new
    assert {s["task_id"] for s in tb.steps} == {new}
    assert got[("chrome", old)].episode["task_id"] == old


def test_a_run_without_model_level_and_one_with_a_trial_level(tmp_path: Path, write_tree) -> None:
    files = {
        **task_tree(prefix="pyautogui/screenshot"),
        **task_tree(prefix="out/a11y/gpt-4o/trial-3"),
    }
    reads = read_all(open_source(str(write_tree(tmp_path, files))))
    assert sorted(r.episode["task_path"] for r in reads) == [
        f"out/a11y/gpt-4o/trial-3/chrome/{TASK}",
        f"pyautogui/screenshot/chrome/{TASK}",
    ]
    assert all(r.episode["n_steps"] == 5 for r in reads)


def osworld_human_result(text: str) -> float:
    """OSWorld-Human score.py's reading of result.txt, for comparison."""
    top = io.StringIO(text, newline=None).readlines()[0].strip()
    try:
        return float(top)
    except ValueError:
        if top == "True":
            return 1.0
        if top == "False":
            return 0.0
        raise


@pytest.mark.parametrize(
    ("text", "score"),
    [("1\n", 1.0), ("0", 0.0), ("1.0\n", 1.0), ("0.5\n", 0.5), ("True\n", 1.0),
     ("False\n", 0.0), (" 1 \r\n2\n", 1.0), ("1e0", 1.0), ("1_0", 10.0), ("0.25\rjunk", 0.25)],
)  # fmt: skip
def test_result_values_parse_as_osworld_human_reads_them(text: str, score: float) -> None:
    raw, got, status = parse_result(text)
    assert status == "ok" and got == score == osworld_human_result(text)
    assert raw == _first(text).strip()


def _first(text: str) -> str:
    return io.StringIO(text, newline=None).readline().rstrip("\n")


@pytest.mark.parametrize(
    ("text", "status"),
    [("", "empty"), ("\n", "empty"), ("garbage\n", "unparseable"), ("true\n", "unparseable"),
     ("nan\n", "unparseable"), ("-inf", "unparseable"), ("\n1\n", "unparseable")],
)  # fmt: skip
def test_empty_and_unparseable_results_have_no_score(text: str, status: str) -> None:
    _, score, got = parse_result(text)
    assert (score, got) == (None, status)


@pytest.mark.parametrize(
    ("content", "status", "score", "reason"),
    [(b"1\n", "ok", 1.0, None), (b"0\n", "ok", 0.0, None), (b"1.0", "ok", 1.0, None),
     (b"0.5\n", "ok", 0.5, None), (b"True\n", "ok", 1.0, None), (b"False", "ok", 0.0, None),
     (b"", "empty", None, "empty_result"),
     (b"garbage\n", "unparseable", None, "unparseable_result"),
     (b"inf\n", "unparseable", None, "unparseable_result"), (None, "missing", None, None)],
)  # fmt: skip
def test_result_file_variants_in_an_episode(
    tmp_path: Path,
    write_tree,
    content: bytes | None,
    status: str,
    score: float | None,
    reason: str | None,
) -> None:
    files = {f"run/os/{TASK}/traj.jsonl": rec(1, "20250101@120000", "DONE")}
    if content is not None:
        files[f"run/os/{TASK}/result.txt"] = content
    [read] = read_all(open_source(str(write_tree(tmp_path, files))))
    conforms([read])
    assert (read.episode["result_status"], read.episode["score"]) == (status, score)
    assert [q["reason"] for q in read.quarantine] == ([reason] if reason else [])
    if reason:
        assert read.quarantine[0]["location"] == f"run/os/{TASK}/result.txt"
    if content == b"inf\n":
        assert "not a finite number" in read.quarantine[0]["message"]


def test_count_lines_matches_python_text_iteration_on_generated_bytes(tmp_path: Path) -> None:
    rng = random.Random(20250226)
    pieces = [b"a", b"{}", b" ", b"\n", b"\r", b"\r\n", b"\n\r", b"\xc3\xa9", b"\t"]
    p = tmp_path / "lines.txt"
    samples = [b"", b"\n", b"\r", b"\r\n", b"x", b"x\r", b"\r\r\n\n"]
    samples += [b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 40))) for _ in range(400)]
    for data in samples:
        p.write_bytes(data)
        with open(p, encoding="utf-8") as f:
            python_lines = [line.removesuffix("\n") for line in f]
        assert count_lines(data) == len(python_lines), data
        assert [b.decode() for b in split_lines(data)] == python_lines, data


def test_odd_records_keep_their_values_in_extra_and_json_extensions_are_accepted(
    tmp_path: Path,
    write_tree,
) -> None:
    lines = [
        b"\xef\xbb\xbf" + rec(1, "20250101@120000", "WAIT"),  # BOM before the first record
        b'{"step_num": "2", "action": "WAIT", "reward": NaN, "done": 1, "phase": 2}',
        b'{"step_num": true, "action": "WAIT", "response": {"text": "hi"}, "screenshot_file": 7}',
        b'{"step_num": 4, "action": "WAIT", "response": "bad \\ud800 surrogate"}',
        b"[1, 2]",
        b'{"step_num": 99999999999, "action": "WAIT", "action_timestamp": "someday"}',
    ]
    write_tree(tmp_path, {f"run/os/{TASK}/traj.jsonl": b"\r\n".join(lines) + b"\r\n"})
    [read] = read_all(open_source(str(tmp_path)))
    conforms([read])
    s1, s2, s3, s4, s6 = read.steps
    assert read.episode["n_lines"] == 6 and read.episode["n_quarantined"] == 1
    assert read.quarantine[0]["reason"] == "not_an_object" and read.quarantine[0]["line_no"] == 5
    assert s1["action_kind"] == "wait" and s1["step_num"] == 1
    assert s2["step_num"] is None and math.isnan(s2["reward"]) and s2["phase"] == 2
    assert json.loads(s2["extra"]) == {"step_num": "2", "done": 1}
    assert s3["step_num"] is None and json.loads(s3["extra"]) == {
        "step_num": True,
        "screenshot_file": 7,
    }
    assert json.loads(s3["response"]) == {"text": "hi"}
    assert s4["response"] == "bad \ufffd surrogate"
    assert s6["step_num"] is None and s6["ts"] is None and s6["action_timestamp"] == "someday"
    assert read.episode["n_turns"] == 2


def test_several_jsonl_files_read_the_last_and_quarantine_the_others(
    tmp_path: Path, write_tree
) -> None:
    base = f"run/os/{TASK}"
    write_tree(
        tmp_path,
        {
            f"{base}/a_first.jsonl": rec(1, "20250101@120000", "WAIT"),
            f"{base}/b_last.jsonl": rec(1, "20250101@120000", "DONE"),
        },
    )
    [read] = read_all(open_source(str(tmp_path)))
    assert read.episode["traj_file"] == f"{base}/b_last.jsonl"
    assert read.episode["last_action_kind"] == "done"
    assert [(q["location"], q["reason"]) for q in read.quarantine] == [
        (f"{base}/a_first.jsonl", "unread_trajectory")
    ]
    assert read.episode["n_quarantined"] == 0


def test_result_only_folder_is_an_episode_without_steps(tmp_path: Path, write_tree) -> None:
    write_tree(tmp_path, {f"run/os/{TASK}/result.txt": b"0\n"})
    [read] = read_all(open_source(str(tmp_path)))
    conforms([read])
    ep = read.episode
    assert (ep["traj_file"], ep["n_lines"], ep["n_steps"], ep["n_turns"]) == (None, 0, 0, 0)
    assert ep["ended_by"] == "none" and ep["score"] == 0.0 and read.steps == []


def test_reported_results_and_agent_s_instruction_are_carried(tmp_path: Path, write_tree) -> None:
    base = f"run/os/{TASK}"
    write_tree(
        tmp_path,
        {
            f"{base}/traj.jsonl": b'{"Error": "from the trajectory"}\n',
            f"{base}/instruction.txt": "Open the terminal ✓\n".encode(),
        },
    )
    reported = {"reported_score": 0.0, "reported_status": "error", "err_message": "from summary"}
    [read] = read_all(open_source(str(tmp_path)), reported=reported)
    ep = read.episode
    assert ep["instruction"] == "Open the terminal ✓"
    assert (ep["reported_score"], ep["reported_status"]) == (0.0, "error")
    assert ep["err_message"] == "from summary"  # the summary's own message wins
    assert ep["ended_by"] == "error" and ep["n_steps"] == 0


def test_unreadable_trajectory_member_becomes_quarantine_not_an_exception(tmp_path: Path) -> None:
    buf = io.BytesIO()
    payload = rec(1, "20250101@120000", "DONE")
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(f"run/os/{TASK}/traj.jsonl", payload)
        zf.writestr(f"run/os/{TASK}/result.txt", b"1\n")
    archive = tmp_path / "crc.zip"
    archive.write_bytes(buf.getvalue().replace(b"DONE", b"DUNE"))
    [read] = read_all(open_source(str(archive)))
    conforms([read])
    assert [q["reason"] for q in read.quarantine] == ["unreadable_file"]
    assert read.episode["n_lines"] == 0 and read.episode["score"] == 1.0


def test_rows_have_exactly_the_table_columns(tmp_path: Path, write_tree) -> None:
    [read] = read_all(open_source(str(write_tree(tmp_path, task_tree()))))
    assert set(read.episode) == set(TABLES["episodes"].columns)
    assert all(set(s) == set(TABLES["steps"].columns) for s in read.steps)
    assert all(set(q) <= set(TABLES["quarantine"].columns) for q in read.quarantine)


def test_counting_without_steps_gives_the_same_episode_and_quarantine(tmp_path) -> None:
    """score.py reads with steps=False; its episode rows must be the full read's, exactly."""
    tasks = load_bundled("verified")[::9]
    for i, profile in enumerate(load_profiles()):
        write_run(tmp_path / f"r{i}", profile, tasks, seed=i, screenshots="none")
    broken = next(tmp_path.rglob("traj.jsonl"))
    broken.write_bytes(
        broken.read_bytes() + b'{"step_num": 9, "action": "DONE"\n\n[1]\n{"Error": "x"}\n'
    )
    source = open_source(str(tmp_path))
    compared = 0
    for run in discover(source.files()):
        for task in run.tasks:
            full = read_episode(source, run, task, run_id="r", benchmark="osworld")
            light = read_episode(source, run, task, run_id="r", benchmark="osworld", steps=False)
            assert light.episode == full.episode, task.path
            assert light.quarantine == full.quarantine, task.path
            assert light.steps == []
            compared += 1
    assert compared == len(tasks) * len(load_profiles())


# ---- bounded memory: caps, streamed lines, runs of lines in one quarantine row ---------------


def _one_task_zip(tmp_path: Path, traj: bytes, result: bytes = b"1\n") -> str:
    path = tmp_path / "run.zip"
    path.write_bytes(
        zip_of({f"os/{TASK}/traj.jsonl": traj, f"os/{TASK}/result.txt": result}, "run")
    )
    return str(path)


def _line_rows(read: EpisodeRead) -> list[dict]:
    return [q for q in read.quarantine if q["location"] == read.episode["traj_file"]]


def test_consecutive_blank_lines_are_one_quarantine_row_with_their_range(tmp_path: Path) -> None:
    step = rec(1, "20250101@120000", "DONE")
    traj = b"\n" * 20_000 + step + b"\n" + b"\n\n\n" + b"not json\n" * 2
    [read] = read_all(open_source(_one_task_zip(tmp_path, traj)))
    conforms([read])
    rows = [(q["reason"], q["line_no"], q["line_end"], q["n_lines"]) for q in _line_rows(read)]
    assert rows == [
        ("blank_line", 1, 20_000, 20_000),
        ("blank_line", 20_002, 20_004, 3),
        ("invalid_json", 20_005, 20_006, 2),
    ]
    ep = read.episode
    assert ep["n_lines"] == count_lines(traj) == 20_006
    assert len(read.steps) + ep["n_quarantined"] == ep["n_lines"]
    assert "traj.jsonl:1-20000: 20000 consecutive lines" in _line_rows(read)[0]["message"]


def test_a_line_with_an_integer_past_pythons_digit_limit_says_so_in_a_users_words(
    tmp_path: Path,
) -> None:
    """json refuses integers of more than 4,300 digits with advice to call
    sys.set_int_max_str_digits(), which no user of deskscore can follow."""
    step = rec(1, "20250101@120000", "DONE")
    traj = step + b"\n" + b'{"step_num": 2, "reward": ' + b"7" * 5000 + b"}\n" + step + b"\n"
    [read] = read_all(open_source(_one_task_zip(tmp_path, traj)))
    [row] = _line_rows(read)
    assert (row["reason"], row["line_no"]) == ("invalid_json", 2)
    assert "an integer of more than 4300 digits, which is not read" in row["message"]
    assert "set_int_max_str_digits" not in row["message"]
    assert len(read.steps) == 2


@pytest.mark.parametrize("cap", ["DESKSCORE_MAX_RUN_LINES", "DESKSCORE_MAX_RUN_BYTES"])
def test_lines_after_the_runs_budget_are_counted_in_one_row(
    tmp_path: Path, write_tree, monkeypatch, cap: str
) -> None:
    from deskscore.collectors import limits

    line = rec(1, "20250101@120000", "pyautogui.click(1, 2)")
    tree = {f"{RUN}/chrome/{t}/traj.jsonl": (line + b"\n") * 8 for t in (TASK, "0b" + TASK[2:])}
    monkeypatch.setenv(cap, "10" if cap.endswith("LINES") else str(10 * len(line)))
    with limits.run_budget():
        reads = read_all(open_source(str(write_tree(tmp_path / "src", tree))))
    conforms(reads)
    assert [len(r.steps) for r in reads] == [8, 2]
    [over] = _line_rows(reads[1])
    assert (over["reason"], over["line_no"], over["line_end"], over["n_lines"]) == (
        "over_run_cap",
        3,
        8,
        6,
    )
    assert cap in over["message"]
    for r in reads:
        assert r.episode["n_lines"] == 8
        assert len(r.steps) + r.episode["n_quarantined"] == 8


def test_one_overlong_trajectory_leaves_its_runs_other_tasks_read(
    tmp_path: Path, write_tree, monkeypatch
) -> None:
    """A task of 20 lines against a run budget of 13: before the per-file cap it spent the
    budget, and the other tasks were quarantined whole (scored as 0 steps)."""
    from deskscore.collectors import limits

    line = rec(1, "20250101@120000", "pyautogui.click(1, 2)")
    names = ["0a" + TASK[2:], "0b" + TASK[2:], "0c" + TASK[2:]]
    tree = {
        f"{RUN}/chrome/{t}/traj.jsonl": (line + b"\n") * n
        for t, n in zip(names, (20, 4, 4), strict=True)
    }
    monkeypatch.setenv("DESKSCORE_MAX_RUN_LINES", "13")
    monkeypatch.setenv("DESKSCORE_MAX_TRAJECTORY_LINES", "5")
    with limits.run_budget():
        reads = read_all(open_source(str(write_tree(tmp_path / "src", tree))))
    conforms(reads)
    assert [len(r.steps) for r in reads] == [5, 4, 4]
    [over] = _line_rows(reads[0])
    assert (over["reason"], over["line_no"], over["line_end"], over["n_lines"]) == (
        "over_trajectory_cap",
        6,
        20,
        15,
    )
    assert "DESKSCORE_MAX_TRAJECTORY_LINES" in over["message"]
    assert not _line_rows(reads[1]) and not _line_rows(reads[2])


def test_a_line_over_the_document_cap_is_quarantined_with_its_length(
    tmp_path: Path, monkeypatch
) -> None:
    huge = b'{"action": "' + b"x" * 5000 + b'"}'
    traj = (
        rec(1, "20250101@120000", "WAIT") + b"\n" + huge + b"\n" + rec(2, "20250101@120001", "DONE")
    )
    monkeypatch.setenv("DESKSCORE_MAX_DOCUMENT_BYTES", "1000")
    [read] = read_all(open_source(_one_task_zip(tmp_path, traj)))
    conforms([read])
    assert [s["line_no"] for s in read.steps] == [1, 3]
    [row] = _line_rows(read)
    assert (row["reason"], row["line_no"], row["n_lines"]) == ("line_too_long", 2, 1)
    assert (
        f"{len(huge)} bytes" in row["message"] and "DESKSCORE_MAX_DOCUMENT_BYTES" in row["message"]
    )
    assert row["excerpt"].startswith('{"action": "xxx') and len(row["excerpt"]) <= 200


def test_a_trajectory_member_over_the_file_cap_is_quarantined_not_read(
    tmp_path: Path, monkeypatch
) -> None:
    traj = rec(1, "20250101@120000", "DONE") + b"\n" + b"\n" * 5000
    monkeypatch.setenv("DESKSCORE_MAX_FILE_BYTES", "4096")
    [read] = read_all(open_source(_one_task_zip(tmp_path, traj)))
    conforms([read])
    [row] = [q for q in read.quarantine if q["reason"] == "too_large"]
    assert row["location"].endswith("traj.jsonl") and row["line_no"] is None
    assert "DESKSCORE_MAX_FILE_BYTES" in row["message"] and "4096-byte limit" in row["message"]
    assert read.episode["n_lines"] == 0 and read.steps == []


def test_a_huge_result_value_is_stored_as_an_excerpt_and_its_score_kept(tmp_path: Path) -> None:
    value = b"0." + b"0" * (10 << 20) + b"1"  # 10 MB, and a number: float() reads 0.0
    junk = b"J" * (10 << 20)
    for result, score, status in ((value, 0.0, "ok"), (junk, None, "unparseable")):
        [read] = read_all(open_source(_one_task_zip(tmp_path, b"", result + b"\n")))
        conforms([read])
        ep = read.episode
        assert (ep["score"], ep["result_status"]) == (score, status)
        assert len(ep["result_raw"]) <= 201 and ep["result_raw"].endswith("…")
        assert all(len(q["message"]) < 2000 for q in read.quarantine)

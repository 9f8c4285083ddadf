"""inspect_ai `.eval` logs of OSWorld runs: samples to rows (pure, on the log's JSON), the
missing extra, and, with inspect_ai installed, a log made offline ingested, scored and checked
(epochs as trials) from a folder, as a file and from an fsspec folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from deskscore.collectors import inspect_log
from deskscore.collectors.layout import RunFolder, TaskFolder, discover
from deskscore.collectors.synthetic import load_profiles, task_slice, write_run
from deskscore.pipelines.cli.check import check_warehouse
from deskscore.pipelines.cli.main import main
from deskscore.sql import connect

KNOWN = "0f84bef9-9790-432e-92b7-eece357603fb"
UNKNOWN = "not-an-osworld-task"
MAKER = Path(__file__).with_name("make_inspect_log.py")


def _usage(inp: int) -> dict:
    return {"input_tokens": inp, "output_tokens": 7, "total_tokens": inp + 7,
            "input_tokens_cache_read": 5, "input_tokens_cache_write": None,
            "reasoning_tokens": None}  # fmt: skip


def _sample(**over: object) -> dict:
    """An EvalSample as JSON, shaped as inspect_evals' OSWorld task logs it."""
    calls = [
        ("c1", "computer", {"action": "left_click", "coordinate": [10, 20]}),
        ("c2", "computer", {"action": "type", "text": "hello"}),
        ("c3", "bash", {"cmd": "ls"}),
        ("c4", "submit", {"answer": "```FAIL cannot be done```"}),
    ]
    messages: list[dict] = [
        {"id": "s", "role": "system", "content": "You are an agent."},
        {"id": "u", "role": "user", "content": "Open the file."},
        {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "Click, type."}],
         "tool_calls": [{"id": i, "function": f, "arguments": a} for i, f, a in calls[:2]]},
        {"id": "t1", "role": "tool", "tool_call_id": "c1", "content": "clicked"},
        {"id": "t2", "role": "tool", "tool_call_id": "c2", "content": [{"type": "image"}],
         "error": {"type": "timeout", "message": "took too long"}},
        {"id": "a2", "role": "assistant", "content": "A shell.",
         "tool_calls": [{"id": "c3", "function": "bash", "arguments": {"cmd": "ls"}}]},
        {"id": "t3", "role": "tool", "tool_call_id": "c3", "content": "a.txt"},
        {"id": "a3", "role": "assistant", "content": "No.",
         "tool_calls": [{"id": "c4", "function": "submit", "arguments": calls[3][2]}]},
    ]  # fmt: skip
    events = [
        {"event": "model", "model": "m", "timestamp": "2026-01-01T00:00:00+00:00",
         "working_time": 1.5, "output": {"usage": _usage(100),
                                         "choices": [{"message": {"id": "a1"}}]}},
        {"event": "tool", "id": "c1", "timestamp": "2026-01-01T00:00:02+00:00",
         "working_time": 0.25},
        {"event": "tool", "id": "c2", "timestamp": "2026-01-01T00:00:03.5+00:00"},
        {"event": "model", "model": "m", "timestamp": "2026-01-01T00:00:04+00:00",
         "working_time": 2.0, "output": {"usage": _usage(200),
                                         "choices": [{"message": {"id": "a3"}}]}},
    ]  # fmt: skip
    sample = {
        "id": KNOWN, "epoch": 1, "input": "Open the file.", "messages": messages,
        "events": events, "scores": {"osworld_scorer": {"value": 1}},
        "model_usage": {"m": _usage(300)}, "total_time": 9.5, "working_time": 8.0,
        "error": None, "metadata": {"snapshot": "chrome", "source": "x"},
    }  # fmt: skip
    return sample | over


def _read(sample: dict, domain: str = "chrome"):
    task = TaskFolder("x.eval/samples/s_epoch_1.json", domain, sample.get("id") or KNOWN, ())
    return inspect_log.sample_episode(sample, task, source="/src", run_id="r", benchmark="b")


def test_every_tool_call_is_a_step_of_its_turn_with_its_result_and_timing() -> None:
    read = _read(_sample())
    steps = read.read.steps
    assert [(s["step_num"], s["line_no"], s["action_kind"]) for s in steps] == [
        (1, 1, "click"),
        (1, 2, "type"),
        (2, 3, "bash"),
        (3, 4, "fail"),
    ]
    assert (steps[0]["x"], steps[0]["y"], steps[1]["text"], steps[2]["text"]) == (
        10,
        20,
        "hello",
        "ls",
    )
    assert steps[0]["response"] == steps[1]["response"] == "Click, type."
    assert steps[3]["action_text"] == "```FAIL cannot be done```"
    extra = [json.loads(s["extra"]) for s in steps]
    assert extra[0] == {"tool": "computer", "tool_call_id": "c1", "result": "clicked"}
    assert extra[1]["error"] == "took too long" and extra[1]["result"] == ""
    assert steps[0]["action_s"] == 0.25 and steps[1]["dt_s"] == 1.5
    assert steps[2]["ts"] is None and steps[2]["dt_s"] is None


def test_the_episode_holds_instruction_reward_times_and_counts() -> None:
    episode = _read(_sample()).read.episode
    assert episode["instruction"] == "Open the file."
    assert (episode["result_status"], episode["score"], episode["result_raw"]) == ("ok", 1.0, "1")
    assert (episode["n_lines"], episode["n_steps"], episode["n_turns"]) == (4, 4, 3)
    assert episode["ended_by"] == "fail" and episode["last_action_kind"] == "fail"
    assert (episode["total_time_s"], episode["working_time_s"]) == (9.5, 8.0)
    assert episode["traj_file"] == episode["task_path"] == "x.eval/samples/s_epoch_1.json"


def test_model_events_are_the_calls_of_the_turns_they_answered() -> None:
    calls = _read(_sample()).llm_calls
    assert [(c["call_idx"], c["step_num"], c["step_idx"]) for c in calls] == [(0, 1, 0), (1, 3, 3)]
    assert [(c["prompt_tokens"], c["cached_prompt_tokens"]) for c in calls] == [(105, 5), (205, 5)]
    assert {c["usage_format"] for c in calls} == {"inspect_ai"}
    assert [c["latency_s"] for c in calls] == [1.5, 2.0]


def test_without_model_events_the_usage_totals_are_read_per_model() -> None:
    [call] = _read(_sample(events=[])).llm_calls
    assert (call["model"], call["prompt_tokens"], call["step_num"]) == ("m", 305, None)


def test_an_errored_sample_has_no_result_and_says_why() -> None:
    episode = _read(_sample(error={"message": "evaluator crashed"})).read.episode
    assert (episode["result_status"], episode["score"]) == ("missing", None)
    assert episode["err_message"] == "evaluator crashed" and episode["ended_by"] == "error"


@pytest.mark.parametrize(
    ("value", "status", "score"),
    [("C", "ok", 1.0), ("I", "ok", 0.0), (0.5, "ok", 0.5), (True, "ok", 1.0),
     ("nan", "unparseable", None), ({"a": 1}, "unparseable", None), (None, "missing", None)],
)  # fmt: skip
def test_score_values_as_inspect_writes_them(value, status, score) -> None:
    episode = _read(_sample(scores={"osworld_scorer": {"value": value}})).read.episode
    assert (episode["result_status"], episode["score"]) == (status, score)


def test_a_task_outside_the_bundled_index_is_kept_under_an_unknown_domain() -> None:
    read = _read(_sample(id=UNKNOWN), domain=inspect_log.UNKNOWN_DOMAIN).read
    [row] = read.quarantine
    assert row["reason"] == "unknown_task" and UNKNOWN in row["message"]
    assert inspect_log.task_domains()[KNOWN] == "libreoffice_impress"
    assert UNKNOWN not in inspect_log.task_domains()


def test_logs_are_found_in_folders_and_as_the_source_itself() -> None:
    runs = discover(["logs/a.eval", "logs/b.eval", "logs/notes.txt"])
    assert [(r.run_path, r.format) for r in runs] == [
        ("logs/a.eval", "inspect"),
        ("logs/b.eval", "inspect"),
    ]
    members = ["header.json", "_journal/start.json", f"samples/{KNOWN}_epoch_1.json"]
    [run] = discover(members)
    assert (run.run_path, run.format) == ("", "inspect")


def test_without_inspect_ai_a_log_is_one_quarantine_row_and_ingest_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deskscore.collectors.synthetic import load_profiles, task_slice, write_run

    monkeypatch.setattr(inspect_log, "available", lambda: False)
    source = tmp_path / "mixed"
    (source / "logs").mkdir(parents=True)
    (source / "logs" / "run.eval").write_bytes(b"not read")
    write_run(source / "results", load_profiles()[0], task_slice(per_domain=1), seed=1)
    wh = str(tmp_path / "wh")
    assert main(["ingest", str(source), "--warehouse", wh, "--engine", "direct"]) == 0
    con = connect(wh)
    [(reason, message)] = con.sql("SELECT reason, message FROM quarantine").fetchall()
    assert reason == "missing_extra" and inspect_log.INSTALL in message and "run.eval" in message
    assert con.sql("SELECT format, count(*) FROM runs GROUP BY ALL").fetchall() == [("osworld", 1)]
    assert check_warehouse(wh).ok


def test_a_file_that_is_no_log_is_reported_not_fatal(tmp_path: Path, capsys) -> None:
    if not inspect_log.available():
        pytest.skip("inspect_ai is not installed: pip install 'deskscore[inspect]'")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "broken.eval").write_bytes(b"PK\x03\x04 truncated")
    # beside a run that reads, the broken log is a quarantine row
    write_run(tmp_path / "logs" / "results", load_profiles()[0], task_slice(per_domain=1), seed=1)
    wh = str(tmp_path / "wh")
    assert main(["ingest", str(tmp_path / "logs"), "--warehouse", wh, "--engine", "direct"]) == 0
    [(reason,)] = connect(wh).sql("SELECT reason FROM quarantine").fetchall()
    assert reason == "unreadable_log"
    # alone, it is an ingest that found nothing to read: it says why, and leaves no warehouse
    (tmp_path / "alone").mkdir()
    (tmp_path / "alone" / "broken.eval").write_bytes(b"PK\x03\x04 truncated")
    other = tmp_path / "wh2"
    assert main(["ingest", str(tmp_path / "alone"), "--warehouse", str(other)]) == 2
    assert "unreadable_log" in capsys.readouterr().out and not other.exists()


# ---- a real log, made offline with inspect_ai ----------------------------------------------


@pytest.fixture(scope="module")
def eval_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not inspect_log.available():
        pytest.skip("inspect_ai is not installed: pip install 'deskscore[inspect]'")
    out = tmp_path_factory.mktemp("inspect") / "logs"
    subprocess.run([sys.executable, str(MAKER), str(out)], check=True, cwd=out.parent,
                   capture_output=True, timeout=600)  # fmt: skip
    [log] = out.glob("*.eval")
    return log


@pytest.fixture(scope="module")
def ingested(eval_log: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    wh = tmp_path_factory.mktemp("inspect-wh") / "wh"
    assert main(["ingest", str(eval_log.parent), "--warehouse", str(wh), "--engine", "direct"]) == 0
    assert main(["score", "--warehouse", str(wh), "--no-costs", "--engine", "direct"]) == 0
    return wh


def test_each_epoch_of_a_log_is_a_run_and_the_epochs_are_one_group(ingested: Path) -> None:
    con = connect(ingested)
    runs = con.sql(
        "SELECT trial, run_group, format, model, n_task_folders FROM runs ORDER BY trial"
    ).fetchall()
    assert [r[0] for r in runs] == ["1", "2"] and len({r[1] for r in runs}) == 1
    assert {(r[2], r[3], r[4]) for r in runs} == {("inspect", "mockllm/model", 2)}
    args = json.loads(con.sql("SELECT any_value(args_json) FROM runs").fetchall()[0][0])
    assert (args["task"], args["epochs"], args["message_limit"]) == ("osworld_like", 2, 75)


def test_samples_become_episodes_steps_and_calls(ingested: Path) -> None:
    con = connect(ingested)
    episodes = con.sql(
        "SELECT r.trial, e.domain, e.task_id, e.n_lines, e.result_status, e.score, e.ended_by, "
        "e.err_message IS NOT NULL, e.instruction FROM episodes e JOIN runs r USING (run_id) "
        "ORDER BY r.trial, e.task_id"
    ).fetchall()
    assert [e[:8] for e in episodes] == [
        ("1", "libreoffice_impress", KNOWN, 5, "ok", 1.0, "done", False),
        ("1", "unknown", UNKNOWN, 5, "ok", 0.0, "done", False),
        ("2", "libreoffice_impress", KNOWN, 5, "ok", 0.0, "done", False),
        ("2", "unknown", UNKNOWN, 5, "missing", None, "error", True),
    ]
    assert episodes[0][8] == "Make the background of the slide blue."
    steps = con.sql(
        "SELECT action_kind, x, y, text, step_num FROM steps WHERE task_id = ? "
        "AND run_id = (SELECT run_id FROM runs WHERE trial = '1') ORDER BY step_idx",
        params=[KNOWN],
    ).fetchall()
    assert steps == [
        ("screenshot", None, None, None, 1),
        ("click", 640.0, 400.0, None, 2),
        ("type", None, None, "blue", 3),
        ("hotkey", None, None, "ctrl+s", 4),
        ("done", None, None, None, 5),
    ]
    calls = con.sql(
        "SELECT count(*), min(prompt_tokens), max(cached_prompt_tokens), min(step_num), "
        "max(step_num) FROM llm_calls"
    ).fetchall()
    assert calls == [(20, 120, 20, 1, 5)]


def test_epochs_give_trial_figures_and_check_passes(ingested: Path) -> None:
    con = connect(ingested)
    rows = con.sql(
        "SELECT k, n_trials, n_tasks, n_tasks_k, pass_at_k, pass_hat_k FROM trial_scores ORDER BY k"
    ).fetchall()
    # the OSWorld task: 2 runs, 1 success; the other: epoch 1 failed, epoch 2 errored (not run)
    assert rows == [(1, 2, 2, 2, (0.5 + 0.0) / 2, (0.5 + 0.0) / 2), (2, 2, 2, 1, 1.0, 0.0)]
    result = check_warehouse(ingested)
    assert result.ok, result.problems
    assert "2 run(s); 2 re-counted from their source" in result.facts


def _rows(wh: str) -> list[tuple]:
    return (
        connect(wh)
        .sql(
            "SELECT r.trial, s.task_id, s.step_idx, s.action_kind, s.action_text FROM steps s "
            "JOIN runs r USING (run_id) ORDER BY ALL"
        )
        .fetchall()
    )


def test_a_log_given_as_a_file_or_in_an_fsspec_folder_reads_the_same(
    eval_log: Path, ingested: Path, tmp_path: Path
) -> None:
    import fsspec

    as_file = str(tmp_path / "file-wh")
    assert main(["ingest", str(eval_log), "--warehouse", as_file, "--engine", "direct"]) == 0
    fs = fsspec.filesystem("memory")
    fs.pipe(f"/inspect-logs/{eval_log.name}", eval_log.read_bytes())
    remote = str(tmp_path / "remote-wh")
    assert (
        main(["ingest", "memory://inspect-logs", "--warehouse", remote, "--engine", "direct"]) == 0
    )
    fs.rm("/inspect-logs", recursive=True)
    assert _rows(as_file) == _rows(remote) == _rows(str(ingested))
    assert check_warehouse(as_file).ok


def test_a_changed_log_is_read_again(eval_log: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    copy = Path(shutil.copy(eval_log, logs / eval_log.name))
    wh = str(tmp_path / "wh")
    assert main(["ingest", str(logs), "--warehouse", wh, "--engine", "direct"]) == 0
    hashes = connect(wh).sql("SELECT content_hash FROM runs ORDER BY trial").fetchall()
    with zipfile.ZipFile(copy, "a") as z:  # other bytes, same samples
        z.comment = b"edited"
    assert main(["ingest", str(logs), "--warehouse", wh, "--engine", "direct", "--force"]) == 0
    assert connect(wh).sql("SELECT content_hash FROM runs ORDER BY trial").fetchall() != hashes


def test_a_run_of_one_sample_reads_like_the_whole_epoch(eval_log: Path) -> None:
    from deskscore.collectors.source import open_source

    with open_source(str(eval_log.parent)) as source:
        task = TaskFolder(f"{eval_log.name}/samples/{KNOWN}_epoch_1.json", "libreoffice_impress",
                          KNOWN, ())  # fmt: skip
        run = RunFolder(eval_log.name, "inspect", (task,), "1", eval_log.name)
        one = inspect_log.read_log_episode(source, run, task, run_id="r", benchmark="b")
        whole = inspect_log.read_log(source, run, run_id="r", benchmark="b")
    assert one == whole[0]

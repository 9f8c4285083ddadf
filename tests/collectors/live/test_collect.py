"""`deskscore collect` end to end on a real X desktop (Xvfb on this machine, reached through
the local provider): the scripted agent and the bundled sandbox tasks, then the OpenAI-
compatible agent and the LLM user against real chat servers on 127.0.0.1."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deskscore.collectors.live.providers import HostProvider
from deskscore.collectors.live.tasks import load_tasks
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.main import main
from deskscore.pipelines.options import IngestOptions, ScoreOptions

BUNDLED = {t["id"]: t for t in load_tasks().tasks}
PLANS = json.loads(
    (Path(__file__).resolve().parents[3] / "datasets" / "sandbox_plans.json").read_text()
)
TERMINAL = "pyautogui.click(400, 250); "
AGENT_KEY = "sk-agent-e2e-0123456789abcdef"
USER_KEY = "sk-user-e2e-0123456789abcdef"


def _unavailable(reason: str) -> None:
    if os.environ.get("DESKSCORE_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"{reason} (DESKSCORE_REQUIRE_SANDBOX=1: these tests must run here)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProvider]:
    """One host desktop for the module, reached as an already running controller."""
    if shutil.which("Xvfb") is None or importlib.util.find_spec("pyautogui") is None:
        _unavailable("the host desktop needs Xvfb and pyautogui")
    home = tmp_path_factory.mktemp("home")
    provider = HostProvider(home=home)
    provider.start()
    yield provider
    provider.stop()


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def task_file(path: Path, tasks: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps(tasks))
    return str(path)


@pytest.fixture(scope="module")
def collected(desktop: HostProvider, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("collect")
    wrong = {**BUNDLED["L1_os_hello_file"], "id": "L1_os_wrong_text",
             "config": BUNDLED["L1_os_hello_file"]["config"][1:],
             "instruction": "Write Hello, sandbox! into hello2.txt in your home folder.",
             "evaluator": {"func": "exact_match", "result": {"type": "vm_file", "path": "~/hello2.txt"},
                           "expected": {"type": "rule", "rules": {"expected": "Hello, sandbox!\n"}}}}  # fmt: skip
    unjudged = {**BUNDLED["L1_os_hello_file"], "id": "L1_os_unjudged",
                "config": BUNDLED["L1_os_hello_file"]["config"][1:],  # no cleanup of hello.txt
                "evaluator": {"func": "compare_pdf_file",
                              "result": {"type": "vm_file", "path": "~/a.pdf"},
                              "expected": {"type": "cloud_file", "path": "https://example.org/a.pdf"}}}  # fmt: skip
    tasks = [BUNDLED["L1_os_hello_file"], BUNDLED["INTERACTIVE_os_tidy_downloads"], wrong, unjudged]
    plans = {"L1_os_hello_file": PLANS["tasks"]["L1_os_hello_file"],
             "INTERACTIVE_os_tidy_downloads": PLANS["tasks"]["INTERACTIVE_os_tidy_downloads"],
             "L1_os_wrong_text": [TERMINAL + "pyautogui.typewrite('echo wrong > ~/hello2.txt\\n')",
                                  "pyautogui.typewrite('ls ~\\n')", "DONE"],
             "L1_os_unjudged": ["DONE"]}  # fmt: skip
    (base / "plan.json").write_text(json.dumps(plans))
    warehouse, osworld = base / "wh", base / "osworld"
    argv = ["collect", "--tasks", task_file(base / "tasks.json", tasks),
            "--agent", f"scripted:{base / 'plan.json'}", "--provider", "local",
            "--url", desktop.base_url, "--warehouse", str(warehouse), "--benchmark", "sandbox",
            "--osworld-dir", str(osworld), "--settle", "0.2"]  # fmt: skip
    code, out = run(argv)
    assert code == 0, out
    wh = Warehouse(warehouse)
    tables = {t: wh.read(t).to_pylist() for t in
              ("runs", "episodes", "steps", "step_actions", "screenshot_refs", "screenshots",
               "llm_calls", "interactions")}  # fmt: skip
    return {"warehouse": warehouse, "osworld": osworld, "out": out, "argv": argv,
            "tables": tables, "home": desktop.home}  # fmt: skip


def by_task(
    rows: list[dict[str, Any]], task_id: str, order: str = "step_idx"
) -> list[dict[str, Any]]:
    return sorted((r for r in rows if r["task_id"] == task_id), key=lambda r: r[order])


def test_screenshots_are_real_frames_of_the_display_that_change_as_actions_run(collected) -> None:
    from PIL import Image

    steps = by_task(collected["tables"]["steps"], "L1_os_wrong_text")
    # the first step clicks the terminal, then types: one step of two calls (kind multi)
    assert [s["action_kind"] for s in steps] == ["multi", "type", "done"]
    first = by_task(collected["tables"]["step_actions"], "L1_os_wrong_text", "action_idx")
    assert [(a["step_idx"], a["kind"]) for a in first if a["step_idx"] == steps[0]["step_idx"]] == [
        (steps[0]["step_idx"], "click"),
        (steps[0]["step_idx"], "type"),
    ]
    run = collected["tables"]["runs"][0]
    hashes = []
    for s in steps:
        image = Image.open(Path(run["source"]) / s["screenshot_path"])
        assert image.size == (1280, 720)
        hashes.append(s["screenshot_path"])
    # typing changes the terminal; DONE does nothing, so its frame is the same content
    assert hashes[0] != hashes[1] and hashes[1] == hashes[2]
    shots = {r["content_hash"]: r for r in collected["tables"]["screenshots"]}
    refs = by_task(collected["tables"]["screenshot_refs"], "L1_os_wrong_text")
    assert all(shots[r["content_hash"]]["phash"] is not None for r in refs)
    assert all(s["ts"] is not None and s["action_s"] is not None for s in steps)


def test_verdicts_come_from_the_final_state_of_the_desktop(collected) -> None:
    episodes = {e["task_id"]: e for e in collected["tables"]["episodes"]}
    assert (collected["home"] / "hello.txt").read_text() == "Hello, sandbox!\n"
    assert (collected["home"] / "hello2.txt").read_text() == "wrong\n"
    assert (
        episodes["L1_os_hello_file"]["score"],
        episodes["L1_os_hello_file"]["result_status"],
    ) == (1.0, "ok")
    assert (episodes["L1_os_wrong_text"]["score"], episodes["L1_os_wrong_text"]["ended_by"]) == (
        0.0,
        "done",
    )
    assert episodes["INTERACTIVE_os_tidy_downloads"]["score"] == 1.0
    unjudged = episodes["L1_os_unjudged"]
    assert (unjudged["result_status"], unjudged["score"]) == ("unevaluated", None)
    assert "compare_pdf_file" in unjudged["err_message"] and "cloud_file" in unjudged["err_message"]


def test_call_user_is_an_exchange_never_a_step(collected) -> None:
    steps = by_task(collected["tables"]["steps"], "INTERACTIVE_os_tidy_downloads")
    assert [(s["step_num"], s["phase"], s["action_kind"]) for s in steps] == [
        (2, 2, "multi"),
        (3, 2, "done"),
    ]
    rows = by_task(collected["tables"]["interactions"], "INTERACTIVE_os_tidy_downloads", "seq")
    assert [(r["seq"], r["step"], r["phase"], r["type"], r["phase_complete"]) for r in rows] == [
        (0, None, 1, "initial_instruction", None),
        (1, 1, 1, "call_user", None),
        (2, 1, 1, "clarify", True),
    ]
    assert rows[1]["message"].startswith("How would you like")
    assert (
        rows[2]["message"] == BUNDLED["INTERACTIVE_os_tidy_downloads"]["phases"][1]["instruction"]
    )
    assert all(r["timestamp"] is not None for r in rows)


def test_the_warehouse_tables_are_complete(collected) -> None:
    from deskscore.pipelines.cli.check import check_warehouse

    t = collected["tables"]
    [run] = t["runs"]
    assert (run["format"], run["benchmark"], run["n_task_folders"]) == ("live", "sandbox", 4)
    assert len(t["episodes"]) == 4 and sum(e["n_steps"] for e in t["episodes"]) == len(t["steps"])
    refs = {(r["task_id"], r["step_idx"]): r["content_hash"] for r in t["screenshot_refs"]}
    assert set(refs) == {(s["task_id"], s["step_idx"]) for s in t["steps"]}
    assert set(refs.values()) == {r["content_hash"] for r in t["screenshots"]}
    assert t["llm_calls"] == []  # the scripted agent calls no model
    result = check_warehouse(collected["warehouse"])
    assert result.ok, result.problems
    assert not (collected["warehouse"] / "_live" / "sandbox" / run["run_id"]).exists() or not any(
        (collected["warehouse"] / "_live" / "sandbox" / run["run_id"]).rglob("episode.json")
    )


def test_score_and_leaderboard_read_a_collected_run(collected) -> None:
    from deskscore.pipelines.cli.leaderboard import leaderboard_text
    from deskscore.pipelines.jobs.score import run_score

    run_score(ScoreOptions(str(collected["warehouse"]), loops=False, engine="direct"))
    wh = Warehouse(collected["warehouse"])
    [row] = wh.read("run_scores").to_pylist()
    assert (row["benchmark"], row["n_tasks_run"]) == (
        "sandbox",
        3,
    )  # the unevaluated one did not run
    assert row["success_rate_run"] == pytest.approx(2 / 3)
    text = leaderboard_text(str(collected["warehouse"]), "csv")
    assert "scripted-plan" in text and "66.6" in text


def test_the_osworld_folders_ingest_to_the_same_rows(collected, tmp_path: Path) -> None:
    from deskscore.pipelines.jobs.ingest import run_ingest

    root = collected["osworld"] / "pyautogui" / "screenshot" / "scripted-plan"
    hello = root / "os" / "L1_os_hello_file"
    assert (hello / "result.txt").read_text() == "1.0\n"
    assert len((hello / "traj.jsonl").read_text().splitlines()) == 2
    assert len(list(hello.glob("step_*.png"))) == 2
    assert not (root / "os" / "L1_os_unjudged" / "result.txt").exists()
    run_ingest(
        IngestOptions(
            str(tmp_path / "wh"),
            sources=(str(collected["osworld"]),),
            benchmark="sandbox",
            engine="direct",
        )
    )
    wh = Warehouse(tmp_path / "wh")
    own = ("run_id", "task_path", "traj_file", "screenshot_path", "source_file")

    def strip(rows: list[dict[str, Any]], drop: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        out = [{k: v for k, v in r.items() if k not in own + drop} for r in rows]
        return sorted(out, key=lambda r: json.dumps(r, sort_keys=True, default=str))

    live = collected["tables"]
    assert strip(wh.read("steps").to_pylist()) == strip(live["steps"])
    assert strip(wh.read("step_actions").to_pylist()) == strip(live["step_actions"])
    # the collector knows why an episode has no result; the folders only that it has none
    drop = ("result_status", "err_message", "metric_scores_json")
    ingested = strip(wh.read("episodes").to_pylist(), drop)
    assert ingested == strip(live["episodes"], drop)
    assert strip(wh.read("interactions").to_pylist()) == strip(live["interactions"])


def test_collecting_into_an_existing_run_needs_resume(collected) -> None:
    code, _ = run(collected["argv"])
    assert code == 2
    code, out = run([*collected["argv"], "--resume"])
    assert code == 0 and "4 skipped" in out


# --------------------------------------------------------------------------- models on 127.0.0.1


def test_the_openai_agent_and_the_llm_user_drive_an_interactive_task(
    desktop: HostProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, chat
) -> None:
    agent = chat(
        "I open the file.\n```python\n" + TERMINAL + "pyautogui.typewrite('echo hello > ~/greeting.txt\\n')\n```",
        "Done.\n```DONE```",
        "Changing it.\n```python\npyautogui.typewrite('echo hello world > ~/greeting.txt\\n')\n```",
        "```DONE```",
        model="stub-2026", prompt_tokens=900, completion_tokens=30,
    )  # fmt: skip
    user = chat('{"action": "new_instruction", "message": "Make it say hello world, please.", '
                '"phase_complete": true, "reason": ""}')  # fmt: skip
    monkeypatch.setenv("DESKSCORE_AGENT_BASE_URL", agent.url)
    monkeypatch.setenv("DESKSCORE_AGENT_API_KEY", AGENT_KEY)
    monkeypatch.setenv("DESKSCORE_USER_API_KEY", USER_KEY)
    task = BUNDLED["INTERACTIVE_os_greeting_change"]
    code, out = run(["collect", "--tasks", task_file(tmp_path / "t.json", [task]),
                     "--agent", "openai:stub-model", "--provider", "local",
                     "--url", desktop.base_url, "--warehouse", str(tmp_path / "wh"),
                     "--osworld-dir", str(tmp_path / "ow"), "--user", "llm",
                     "--user-endpoint", user.url, "--user-model", "user-model", "--settle", "0.2"])  # fmt: skip
    assert code == 0, out
    assert (
        all(r["auth"] == f"Bearer {AGENT_KEY}" for r in agent.requests) and len(agent.requests) == 4
    )
    assert [r["auth"] for r in user.requests] == [f"Bearer {USER_KEY}"]
    wh = Warehouse(tmp_path / "wh")
    [episode] = wh.read("episodes").to_pylist()
    assert (
        episode["score"] == 1.0 and (desktop.home / "greeting.txt").read_text() == "hello world\n"
    )
    calls = sorted(wh.read("llm_calls").to_pylist(), key=lambda c: c["call_idx"])
    assert [(c["step_num"], c["prompt_tokens"], c["completion_tokens"], c["model"]) for c in calls] == [
        (1, 901, 30, "stub-2026"), (2, 902, 30, "stub-2026"), (3, 903, 30, "stub-2026"), (4, 904, 30, "stub-2026")]  # fmt: skip
    assert all(
        c["latency_s"] > 0 and c["started_at"] is not None and c["step_idx"] is not None
        for c in calls
    )
    inter = sorted(wh.read("interactions").to_pylist(), key=lambda r: r["seq"])
    assert [(r["type"], r["phase"], r["message"]) for r in inter][1] == (
        "new_instruction", 2, "Make it say hello world, please.")  # fmt: skip
    # the user's words reach the agent; the keys reach nothing we write
    assert "Make it say hello world, please." in json.dumps(agent.requests[2]["body"])
    printed = out + capsys.readouterr().err
    for key in (AGENT_KEY, USER_KEY):
        assert key not in printed
        for f in (tmp_path / "wh").rglob("*"):
            if f.is_file():
                assert key.encode() not in f.read_bytes(), f
        for f in (tmp_path / "ow").rglob("*"):
            if f.is_file():
                assert key.encode() not in f.read_bytes(), f

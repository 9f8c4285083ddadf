"""The `deskscore collect` command line: what it refuses before any desktop starts, and the
bundled task set it defaults to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deskscore.collectors.live.evaluators import missing_parts
from deskscore.collectors.live.tasks import load_tasks
from deskscore.pipelines.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[3]


def test_collect_is_a_deskscore_command_with_the_documented_defaults() -> None:
    args = build_parser().parse_args(["collect", "--agent", "scripted:p.json"])
    assert (args.provider, args.max_steps, args.parallel, args.resume) == ("docker", 15, 1, False)
    assert args.tasks is None and args.osworld_dir is None and args.user == "scripted"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--agent-option", "api_key=sk-123"], "environment only"),
        (["--agent-option", "novalue"], "NAME=VALUE"),
        (["--provider", "local"], "needs --url"),
        (["--provider", "local", "--url", "http://127.0.0.1:9", "--parallel", "2"], "one desktop"),
        (["--provider", "warp"], "unknown provider"),
        (["--max-steps", "0"], "at least 1"),
        (
            ["--user", "llm", "--provider", "local", "--url", "http://127.0.0.1:9"],
            "--user-endpoint",
        ),
    ],
)
def test_collect_refuses_bad_arguments_before_starting_anything(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text("{}")
    code = main(
        ["collect", "--agent", f"scripted:{plan}", "--warehouse", str(tmp_path / "wh"), *extra]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "sk-123" not in err
    assert not (tmp_path / "wh").exists()


def test_an_unknown_agent_is_reported_with_what_to_give(tmp_path: Path, capsys) -> None:
    code = main(["collect", "--agent", "nonsense", "--provider", "local", "--url", "http://127.0.0.1:9",
                 "--warehouse", str(tmp_path / "wh")])  # fmt: skip
    assert (
        code == 2
        and "scripted:PLAN.json, openai[:MODEL] or module:Class" in capsys.readouterr().err
    )


def test_task_files_that_lack_what_a_task_needs_are_reported_by_entry(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"os": [{"id": "a", "instruction": "x"}, {"id": "b"},
                                       {"id": "c", "phases": [{"trigger": {}}]}, "junk"]}))  # fmt: skip
    loaded = load_tasks(path)
    assert [t["id"] for t in loaded.tasks] == ["a"] and loaded.tasks[0]["domain"] == "os"
    assert len(loaded.problems) == 3 and all(str(path) in p for p in loaded.problems)


def test_every_bundled_task_has_a_plan_and_an_evaluator_deskscore_runs() -> None:
    tasks = load_tasks().tasks
    plans = json.loads((ROOT / "datasets" / "sandbox_plans.json").read_text())["tasks"]
    assert len(tasks) >= 12 and {t["id"] for t in tasks} == set(plans)
    assert all(missing_parts(t["evaluator"]) == [] for t in tasks)
    interactive = [t for t in tasks if t.get("phases")]
    triggers = {p["trigger"]["type"] for t in interactive for p in t["phases"]}
    assert triggers == {"agent_asks", "agent_done", "step_count"}
    assert all(t["id"].startswith("INTERACTIVE_" + t["domain"] + "_") for t in interactive)

"""The README's Sec-Eval example run for real: ingest with --layout, score, check. The layout is
recorded with the source and its run, so check re-counts with it and a changed layout is read
again; the scenarios are not OSWorld tasks, so the figures over the human tasks stay empty."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from deskscore.collectors.layout import discover
from deskscore.collectors.source import open_source
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.check import check_warehouse
from deskscore.pipelines.cli.main import main
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.options import IngestOptions
from deskscore.sql import connect

LAYOUT = "{domain}/{task_id}"


def _main(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def sec(sec_eval_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The Sec-Eval runs ingested as the README shows, scored under both rule sets."""
    wh = str(tmp_path_factory.mktemp("sec") / "wh")
    common = ("--warehouse", wh, "--engine", "direct")
    _main("ingest", str(sec_eval_dir), "--layout", LAYOUT, "--agent", "claude-cu", *common)
    scored = _main("score", *common, "--no-costs")
    _main("score", *common, "--no-costs", "--compat", "osworld-human")
    return {"wh": wh, "score_out": scored}


def test_check_passes_on_the_sec_eval_ingest_with_a_layout(sec: dict) -> None:
    result = check_warehouse(sec["wh"])
    assert result.ok, result.problems
    assert "1 run(s); 1 re-counted from their source" in result.facts


def test_check_failed_before_the_layout_was_recorded(sec: dict, tmp_path: Path) -> None:
    """Without the recorded layout check re-counts with default discovery, which finds none
    of the 24 task folders: what it reported before the layout was kept with the run."""
    wh = Warehouse(shutil.copytree(sec["wh"], tmp_path / "wh"))
    [run] = wh.read("runs").to_pylist()
    assert run["layout"] == LAYOUT
    with open_source(run["source"]) as src:
        assert discover(src.files()) == [] and len(discover(src.files(), LAYOUT)[0].tasks) == 24
    wh.write("runs", [run | {"layout": None}], {"benchmark": "osworld", "run_id": run["run_id"]})
    problems = check_warehouse(wh.root).problems
    assert problems == [
        f"runs: {run['source']}! now has 0 task folder(s), the warehouse 24; the source changed "
        "since ingest: re-ingest it"
    ]


def test_the_source_is_recorded_with_its_options(sec: dict, sec_eval_dir: Path) -> None:
    rows = connect(sec["wh"]).sql("SELECT source, benchmark, layout, agent, run_name FROM sources")
    assert rows.fetchall() == [(str(sec_eval_dir), "osworld", LAYOUT, "claude-cu", None)]


def test_a_changed_layout_reads_the_source_again(sec_eval_dir: Path, tmp_path: Path) -> None:
    options = IngestOptions(
        str(tmp_path / "wh"), sources=(str(sec_eval_dir),), layout=LAYOUT, engine="direct"
    )
    uri = str(sec_eval_dir)
    assert run_ingest(options).episodes == 24
    assert run_ingest(options).plan.unchanged == [uri]
    elsewhere = run_ingest(options.replace(layout="{run}/{domain}/{task_id}"))
    assert elsewhere.plan.todo == [uri] and elsewhere.plan.options_changed == (uri,)
    assert elsewhere.runs_found == 0 and elsewhere.runs_dropped == 1  # no run at that depth
    assert connect(options.warehouse).sql("SELECT count(*) FROM runs").fetchall() == [(0,)]
    back = run_ingest(options)  # a source that gave no run has no stamp: read again anyway
    assert back.plan.todo == [uri] and back.episodes == 24
    assert check_warehouse(options.warehouse).ok


def test_a_new_agent_name_rewrites_the_run_row_and_keeps_its_tables(
    sec_eval_dir: Path, tmp_path: Path
) -> None:
    options = IngestOptions(
        str(tmp_path / "wh"), sources=(str(sec_eval_dir),), layout=LAYOUT, engine="direct"
    )
    run_ingest(options)
    wh = Warehouse(options.warehouse)
    steps_before = sorted((p.name, p.stat().st_mtime_ns) for p in wh.files("steps"))
    renamed = run_ingest(options.replace(agent="claude-cu", run_name="sec-eval"))
    assert renamed.plan.options_changed == (str(sec_eval_dir),) and renamed.runs_unchanged == 1
    assert sorted((p.name, p.stat().st_mtime_ns) for p in wh.files("steps")) == steps_before
    rows = connect(options.warehouse).sql(
        "SELECT agent, run_name, label FROM runs JOIN run_labels USING (run_id)"
    )
    assert rows.fetchall() == [("claude-cu", "sec-eval", "sec-eval")]


def test_tasks_outside_the_human_data_leave_the_figures_over_n_empty_with_a_note(
    sec: dict,
) -> None:
    con = connect(sec["wh"])
    [(mean_r,)] = con.sql("SELECT avg(score) FROM episodes WHERE result_status = 'ok'").fetchall()
    [row] = con.sql("SELECT * FROM leaderboard WHERE compat = 'deskscore'").fetchall()
    board = dict(zip(con.sql("SELECT * FROM leaderboard").columns, row, strict=True))
    assert (board["n_tasks_run"], board["n_tasks_matched"], board["n_human_tasks"]) == (20, 0, 369)
    assert board["success_rate_run_pct"] == pytest.approx(100 * mean_r)  # measured: kept
    for column in ("success_rate_human_pct", "wes_plus_single_pct", "wes_plus_grouped_pct",
                   "wes_minus", "wes_single_pct", "wes_grouped_pct"):  # fmt: skip
        assert board[column] is None, column
    assert "none of the 20 task(s) run is a task of OSWorld-Human verified" in board["note"]
    assert "execute_binary, prompt_injection" in board["note"] and "empty" in board["note"]
    [(matched,)] = con.sql(
        "SELECT n_tasks_matched FROM run_scores WHERE compat = 'deskscore'"
    ).fetchall()
    assert matched == 0


def test_under_the_original_rules_they_are_zero_and_the_note_says_so(sec: dict) -> None:
    out = _main(
        "leaderboard", "--warehouse", sec["wh"], "--compat", "osworld-human", "--format", "json"
    )
    [row] = json.loads(out)
    assert row["success_rate_human_pct"] == 0.0 and row["wes_plus_single_pct"] == 0.0
    assert "are 0, as OSWorld-Human's score.py computes them" in row["note"]


def test_the_printed_leaderboard_names_both_success_rates_and_prints_the_note(sec: dict) -> None:
    text = _main("leaderboard", "--warehouse", sec["wh"])
    lines = text.splitlines()
    assert (
        lines[0]
        == "Leaderboard (OSWorld-Human verified, step budget S = max(15, longest run), deskscore rules)"
    )
    assert "OSWorld-Human %" in lines[1] and "show_result %" in lines[1]
    assert "run %" not in lines[1] and "OSWorld %" not in lines[1]
    assert lines[-2] == "notes:" and lines[-1].startswith("  claude-cu: none of the 20 task(s)")
    cells = lines[3].split()
    assert cells[:3] == ["1", "claude-cu", "100.00"]  # show_result %, then empty human figures


def test_score_says_which_runs_matched_no_human_task(sec: dict) -> None:
    assert (
        "1 run(s) matched no task of OSWorld-Human verified (claude-cu): their figures over the "
        "N human tasks are left empty" in sec["score_out"]
    )
    assert (
        "(OSWorld-Human verified, step budget S = max(15, longest run), deskscore rules)"
        in sec["score_out"]
    )

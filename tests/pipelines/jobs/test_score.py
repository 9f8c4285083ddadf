from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.jobs.score import run_score
from deskscore.pipelines.options import IngestOptions, ScoreOptions
from deskscore.sql import connect

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def scored(small_archive, tmp_path_factory) -> Path:
    wh = tmp_path_factory.mktemp("wh")
    run_ingest(
        IngestOptions(
            str(wh),
            sources=(str(small_archive["results"]), str(small_archive["zip"])),
            engine="direct",
        )
    )
    for compat in ("deskscore", "osworld-human"):
        run_score(
            ScoreOptions(
                str(wh),
                human_version="verified",
                max_steps_scoring=50,
                compat=compat,
                engine="direct",
            )
        )
    return wh


def test_sql_per_domain_adds_up_to_the_pipelines_run_figures(scored) -> None:
    con = connect(scored)
    rows = con.sql(
        """
        SELECT r.run_id, r.compat, r.success_rate_human, r.wes_plus_single, r.wes_plus_grouped, r.wes_minus,
               r.wes_single, r.n_human_tasks,
               sum(d.sum_reward_matched), sum(d.sum_wes_plus_single), sum(d.sum_wes_plus_grouped),
               sum(d.sum_wes_minus), sum(d.wes_single_pct * d.n_human_tasks) / 100, sum(d.n_human_tasks)
        FROM run_scores r JOIN per_domain d USING (run_id, human_version, max_steps_scoring, compat)
        GROUP BY ALL
        """
    ).fetchall()
    assert len(rows) == 6
    for run_id, compat, sr, wps, wpg, wm, ws, n, d_sr, d_wps, d_wpg, d_wm, d_ws, d_n in rows:
        assert d_n == n, (run_id, compat)
        for run_level, summed in ((sr, d_sr), (wps, d_wps), (wpg, d_wpg), (wm, d_wm), (ws, d_ws)):
            assert math.isclose(run_level, summed / n, rel_tol=1e-12, abs_tol=1e-12), (
                run_id,
                compat,
            )


def _close(a: float | None, b: float | None) -> bool:
    return a is b is None or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("view", ["per_domain", "per_category"])
def test_osworld_slices_add_up_to_the_pipelines_run_figures(scored, view) -> None:
    """What `leaderboard --by domain|app` prints of OSWorld runs: the slices' counts and sums
    give back each run's run_scores figures, both success rates, WES+ and the step ratio."""
    con = connect(scored)
    rows = con.sql(
        f"""
        SELECT r.run_id, r.compat, r.n_tasks_run, r.n_tasks_matched, r.n_human_tasks,
               r.success_rate_run, r.strict_success_rate_run, r.success_rate_human,
               r.wes_plus_single, r.mean_step_ratio_single,
               sum(d.n_tasks_run), sum(d.n_tasks_matched), sum(d.n_human_tasks),
               sum(d.sum_reward_run), sum(d.n_strict_success), sum(d.sum_reward_matched),
               sum(d.sum_wes_plus_single), sum(d.sum_step_ratio_single), sum(d.n_step_ratio_single),
               count(*)
        FROM run_scores r JOIN {view} d USING (run_id, human_version, max_steps_scoring, compat)
        GROUP BY ALL
        """
    ).fetchall()
    assert len(rows) == 6
    for row in rows:
        key, (n_run, n_matched, n, sr_run, strict, sr_human, wps, ratio) = row[:2], row[2:10]
        d_run, d_matched, d_n, d_sum_run, d_strict, d_sum_human, d_wps, d_ratio, d_n_ratio, k = row[
            10:
        ]
        assert (d_run, d_matched, d_n) == (n_run, n_matched, n), key
        assert k == (10 if view == "per_domain" else 5), (
            key
        )  # 10 domains; 3 groups + os, multi_apps
        for run_level, sliced in (
            (sr_run, d_sum_run / d_run),
            (strict, d_strict / d_run),
            (sr_human, d_sum_human / n),
            (wps, d_wps / n),
            (ratio, d_ratio / d_n_ratio),
        ):
            assert _close(run_level, sliced), key


def test_the_printed_slices_are_the_marts_figures(scored, capsys) -> None:
    from deskscore.pipelines.cli.main import main

    assert (
        main(["leaderboard", "--warehouse", str(scored), "--by", "domain", "--format", "json"]) == 0
    )
    printed = json.loads(capsys.readouterr().out)
    mart = connect(scored).sql(
        "SELECT run_id, domain, n_tasks_run, success_rate_run_pct, success_rate_human_pct, "
        "wes_plus_single_pct FROM per_domain WHERE compat = 'deskscore'"
    )
    assert len(printed) == 30  # 3 runs x 10 domains, of one configuration (deskscore rules)
    expected = {(r[0], r[1]): r[2:] for r in mart.fetchall()}
    got = {
        (r["run_id"], r["domain"]): (
            r["n_tasks_run"], r["success_rate_run_pct"], r["success_rate_human_pct"],
            r["wes_plus_single_pct"],
        )
        for r in printed
    }  # fmt: skip
    assert got == expected


def test_the_leaderboard_ranks_runs_by_osworld_human_success(scored) -> None:
    rows = (
        connect(scored)
        .sql(
            "SELECT rank, success_rate_human_pct FROM leaderboard WHERE compat = 'deskscore' ORDER BY rank"
        )
        .fetchall()
    )
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)
    assert [r[1] for r in rows] == sorted((r[1] for r in rows), reverse=True)


FIGURES = re.compile(
    r"Original OSWorld Result: (?P<sr>[\d.]+)%.*\nSingle Action WES\+: (?P<wps>-?[\d.]+)\n"
    r"Grouped Action WES\+: (?P<wpg>-?[\d.]+)\nWES-: (?P<wm>-?[\d.]+)"
)


def score_py_figures(*args: str) -> tuple[str, ...]:
    """What score.py prints for `args`: success rate, WES+ single and grouped, WES-."""
    command = [sys.executable, str(ROOT / "score.py"), *args]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    figures = FIGURES.search(out)
    assert figures, out
    return figures["sr"], figures["wps"], figures["wpg"], figures["wm"]


def as_score_py_prints(sr: float, wps: float, wpg: float, wm: float) -> tuple[str, ...]:
    """run_scores figures as score.py prints them."""
    return f"{sr * 100:.2f}", f"{wps * 100:.2f}", f"{wpg * 100:.2f}", f"{wm:.2f}"


@pytest.mark.parametrize("run_key", ["run0", "run1", "zip"])
def test_score_py_and_the_pipeline_give_the_same_figures(scored, small_archive, run_key) -> None:
    figures = score_py_figures(
        "--result-path", str(small_archive[run_key]), "--max-steps-scoring", "50",
        "--human-version", "verified",
    )  # fmt: skip
    source = str(small_archive[run_key].resolve())
    (row,) = (
        connect(scored)
        .sql(
            """
        SELECT s.success_rate_human, s.wes_plus_single, s.wes_plus_grouped, s.wes_minus
        FROM run_scores s JOIN runs r USING (run_id)
        WHERE s.compat = 'osworld-human' AND (r.source = $src OR r.source || '/' || r.run_path = $src)
        """,
            params={"src": source},
        )
        .fetchall()
    )
    assert figures == as_score_py_prints(*row)


@pytest.mark.parametrize(("version", "n_tasks"), [("2025-06", 364), ("verified", 369)])
def test_reading_the_human_folder_gives_the_bundled_figures(
    small_archive, human_dirs, tmp_path, version, n_tasks
) -> None:
    from_folder, bundled = tmp_path / "folder", tmp_path / "bundled"
    for wh in (from_folder, bundled):
        run_ingest(
            IngestOptions(str(wh), sources=(str(small_archive["results"]),), engine="direct")
        )
    run_score(
        ScoreOptions(
            str(from_folder),
            human_version=version,
            human_path=str(human_dirs[version]),
            max_steps_scoring=50,
            engine="direct",
        )
    )
    run_score(
        ScoreOptions(str(bundled), human_version=version, max_steps_scoring=50, engine="direct")
    )
    con = connect(from_folder)
    assert con.sql(
        "SELECT count(*), count(instruction), count(*) FILTER (WHERE infeasible) FROM tasks"
    ).fetchall()[0][:2] == (n_tasks, n_tasks)
    assert con.sql("SELECT DISTINCT n_human_tasks FROM run_scores").fetchall() == [(n_tasks,)]
    query = "SELECT run_id, success_rate_human, wes_plus_single, wes_plus_grouped, wes_minus, wes_single FROM run_scores ORDER BY run_id"
    assert con.sql(query).fetchall() == connect(bundled).sql(query).fetchall()


def test_a_uitars_submission_is_matched_by_instruction_like_score_py(
    human_dirs, uitars_run, tmp_path
) -> None:
    run = uitars_run
    wh = tmp_path / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(run),), engine="direct"))
    run_score(
        ScoreOptions(
            str(wh),
            human_version="verified",
            human_path=str(human_dirs["verified"]),
            max_steps_scoring=50,
            compat="osworld-human",
            engine="direct",
        )
    )
    ((sr, wps, wpg, wm, matched),) = (
        connect(wh)
        .sql(
            "SELECT success_rate_human, wes_plus_single, wes_plus_grouped, wes_minus, n_tasks_matched FROM run_scores"
        )
        .fetchall()
    )
    assert matched == 40
    figures = score_py_figures(
        "--result-path", str(run), "--uitars", "--max-steps-scoring", "50",
        "--human-path", str(human_dirs["verified"]),
    )  # fmt: skip
    assert figures == as_score_py_prints(sr, wps, wpg, wm)

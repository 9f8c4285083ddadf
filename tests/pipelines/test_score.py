from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deskscore.pipelines.ingest import run_ingest
from deskscore.pipelines.score import run_score
from deskscore.sql import connect

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scored(small_archive, tmp_path_factory) -> Path:
    wh = tmp_path_factory.mktemp("wh")
    run_ingest([str(small_archive["results"]), str(small_archive["zip"])], str(wh))
    run_score(str(wh), human_version="verified", max_steps_scoring=50, compat="deskscore")
    run_score(str(wh), human_version="verified", max_steps_scoring=50, compat="osworld-human")
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
            assert math.isclose(run_level, summed / n, rel_tol=1e-12, abs_tol=1e-12), (run_id, compat)


def test_the_leaderboard_ranks_runs_by_osworld_human_success(scored) -> None:
    rows = connect(scored).sql(
        "SELECT rank, success_rate_human_pct FROM leaderboard WHERE compat = 'deskscore' ORDER BY rank"
    ).fetchall()
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)
    assert [r[1] for r in rows] == sorted((r[1] for r in rows), reverse=True)


FIGURES = re.compile(
    r"Original OSWorld Result: (?P<sr>[\d.]+)%.*\nSingle Action WES\+: (?P<wps>-?[\d.]+)\n"
    r"Grouped Action WES\+: (?P<wpg>-?[\d.]+)\nWES-: (?P<wm>-?[\d.]+)"
)


@pytest.mark.parametrize("run_key", ["run0", "run1", "zip"])
def test_score_py_and_the_pipeline_give_the_same_figures(scored, small_archive, run_key) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "score.py"), "--result-path", str(small_archive[run_key]),
         "--max-steps-scoring", "50", "--human-version", "verified"],
        capture_output=True, text=True, check=True,
    ).stdout
    figures = FIGURES.search(out)
    assert figures, out
    source = str(small_archive[run_key].resolve())
    (sr, wps, wpg, wm), = connect(scored).sql(
        """
        SELECT s.success_rate_human, s.wes_plus_single, s.wes_plus_grouped, s.wes_minus
        FROM run_scores s JOIN runs r USING (run_id)
        WHERE s.compat = 'osworld-human' AND (r.source = $src OR r.source || '/' || r.run_path = $src)
        """,
        params={"src": source},
    ).fetchall()
    assert figures["sr"] == f"{sr * 100:.2f}"
    assert figures["wps"] == f"{wps * 100:.2f}"
    assert figures["wpg"] == f"{wpg * 100:.2f}"
    assert figures["wm"] == f"{wm:.2f}"

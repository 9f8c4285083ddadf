"""`deskscore score` writes each run figure's interval beside it; `leaderboard --ci` and
`compare` read them, and no existing figure moves."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.main import main
from deskscore.scorers import metrics
from deskscore.scorers.config import ScoreConfig
from deskscore.sql import connect


@pytest.fixture(scope="module")
def scored(small_archive: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    wh = tmp_path_factory.mktemp("intervals") / "wh"
    assert main(["ingest", str(small_archive["results"]), "--warehouse", str(wh)]) == 0
    assert main(["score", "--warehouse", str(wh), "--bootstrap-resamples", "200"]) == 0
    return wh


def test_every_estimate_equals_the_stored_figure(scored: Path) -> None:
    con = connect(str(scored))
    rows = con.sql(
        "SELECT i.run_id, i.metric, i.method, i.estimate, i.ci_low, i.ci_high FROM "
        "run_score_intervals AS i"
    ).fetchall()
    figures = {
        r["run_id"]: r
        for r in con.sql("SELECT * FROM run_scores JOIN run_costs USING (run_id)").pl().to_dicts()
    }
    assert {r[1] for r in rows} >= {"success_rate_human", "wes_plus_single", "wes_single"}
    for run_id, metric, method, estimate, low, high in rows:
        assert estimate == pytest.approx(figures[run_id][metric], rel=1e-9), (metric, method)
        assert low <= estimate + 1e-12 and estimate - 1e-12 <= high, (metric, method)
    resampled = {m.name for m in metrics.metrics() if m.run and m.run.resample}
    assert {r[1] for r in rows if r[2] == "bootstrap"} <= resampled | {
        "cost_per_task_usd",
        "cost_per_success_usd",
    }


def test_a_warehouse_scored_before_intervals_gets_them_on_the_next_score(
    scored: Path, tmp_path: Path
) -> None:
    wh = tmp_path / "wh"
    shutil.copytree(scored, wh)
    store = Warehouse(wh)
    for r in store.read("runs", columns=["benchmark", "run_id"]).to_pylist():
        store.remove("run_score_intervals", r, file=ScoreConfig().file)
    assert connect(str(wh)).sql("SELECT * FROM run_score_intervals").fetchall() == []
    before = connect(str(wh)).sql("SELECT * FROM run_scores ORDER BY ALL").fetchall()
    assert main(["score", "--warehouse", str(wh), "--bootstrap-resamples", "200"]) == 0
    con = connect(str(wh))
    assert con.sql("SELECT * FROM run_scores ORDER BY ALL").fetchall() == before
    assert con.sql("SELECT count(DISTINCT run_id) FROM run_score_intervals").fetchall() == [(2,)]


def test_leaderboard_ci_adds_intervals_and_leaves_the_default_as_it_was(
    scored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["leaderboard", "--warehouse", str(scored), "--format", "csv"]) == 0
    plain = capsys.readouterr().out
    assert main(["leaderboard", "--warehouse", str(scored), "--ci", "pm"]) == 0
    assert "±" in capsys.readouterr().out
    assert main(["leaderboard", "--warehouse", str(scored), "--ci", "interval"]) == 0
    assert "[" in capsys.readouterr().out
    assert main(["leaderboard", "--warehouse", str(scored), "--ci", "pm", "--format", "csv"]) == 0
    with_ci = capsys.readouterr().out.splitlines()
    assert "success_rate_human_pct_ci_low" in with_ci[0]
    header = with_ci[0].split(",")
    kept = [i for i, c in enumerate(header) if not c.endswith(("_se", "_ci_low", "_ci_high"))]
    assert [",".join(line.split(",")[i] for i in kept) for line in with_ci] == plain.splitlines()


def test_compare_agrees_with_the_compare_mart(
    scored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    con = connect(str(scored))
    a, b, n, a_only, b_only = con.sql(
        "SELECT run_a, run_b, n_tasks, a_only, b_only FROM compare ORDER BY run_a LIMIT 1"
    ).fetchall()[0]
    assert main(["compare", a, b, "--warehouse", str(scored), "--by", "domain"]) == 0
    out = capsys.readouterr().out
    assert f"{n} tasks both ran" in out
    assert f"A only {a_only}, B only {b_only}" in out
    assert "verdict: " in out and "strict success by domain" in out
    assert main(["compare", "--all", "--warehouse", str(scored)]) == 0
    assert "Holm" in capsys.readouterr().out
    assert main(["compare", a, "--warehouse", str(scored)]) == 2

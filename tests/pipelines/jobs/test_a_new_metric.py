"""Adding a metric takes one registration: it is then computed, stored, queried and shown."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from deskscore.pipelines.cli.main import main
from deskscore.pipelines.cli.report import build_report
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.jobs.score import run_score
from deskscore.pipelines.options import IngestOptions, ScoreOptions
from deskscore.scorers import metrics
from deskscore.scorers.metrics import (
    EPISODES,
    Aggregate,
    EpisodeFacts,
    Metric,
    PerEpisode,
    RunFacts,
)
from deskscore.sql import connect


def _half_reward(e: EpisodeFacts, run: RunFacts) -> float | None:
    return None if e.reward is None else e.reward / 2


HALF_REWARD = Metric(
    "half_reward",
    version=1,
    direction="higher",
    unit="fraction",
    label="half reward",
    episode=PerEpisode(_half_reward, "Half the episode's reward: r / 2."),
    run=Aggregate(EPISODES, metrics.mean, "Mean r / 2 over the run's episodes with a result."),
    header="half r",
    percent=True,
)


@pytest.fixture
def half_reward() -> Iterator[Metric]:
    metrics.register(HALF_REWARD)
    yield HALF_REWARD
    metrics.unregister(HALF_REWARD.name)


@pytest.fixture
def scored(half_reward, small_archive, tmp_path) -> Path:
    """The small archive ingested and scored in this process (workers=1), so the stages see
    the metric registered here."""
    wh = tmp_path / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(small_archive["results"]),), workers=1))
    run_score(ScoreOptions(str(wh), max_steps_scoring=50, workers=1))
    return wh


def test_one_registration_puts_a_metric_in_every_table_view_and_output(
    scored, tmp_path, capsys
) -> None:
    con = connect(scored)
    episodes = con.sql("SELECT reward, half_reward FROM episode_scores").fetchall()
    assert episodes and any(r not in (None, 0.0) for r, _ in episodes)
    for reward, half in episodes:
        assert half == (None if reward is None else reward / 2)

    runs = con.sql("SELECT run_id, success_rate_run, half_reward FROM run_scores").fetchall()
    assert len(runs) == 2
    for _, rate, half in runs:
        assert math.isclose(half, rate / 2, rel_tol=1e-12)

    board = dict(con.sql("SELECT run_id, half_reward_pct FROM leaderboard").fetchall())
    assert board == {run_id: pytest.approx(100 * half) for run_id, _, half in runs}

    assert main(["leaderboard", "--warehouse", str(scored), "--format", "csv"]) == 0
    header, *lines = capsys.readouterr().out.strip().splitlines()
    column = header.split(",").index("half_reward_pct")
    assert sorted(float(line.split(",")[column]) for line in lines) == pytest.approx(
        sorted(board.values())
    )
    assert main(["leaderboard", "--warehouse", str(scored)]) == 0
    assert "half r" in capsys.readouterr().out

    page = build_report(str(scored), str(tmp_path / "report.html")).path.read_text()
    table = page[page.index('id="leaderboard-table"') :]
    assert ">half r</th>" in table[: table.index("</table>")]


def test_the_metric_is_gone_once_removed(small_archive, tmp_path) -> None:
    assert "half_reward" not in {m.name for m in metrics.metrics()}
    wh = tmp_path / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(small_archive["run0"]),), workers=1))
    run_score(ScoreOptions(str(wh), workers=1, costs=False, loops=False))
    con = connect(wh)
    assert "half_reward" not in con.sql("SELECT * FROM run_scores").columns
    assert "half_reward_pct" not in con.sql("SELECT * FROM leaderboard").columns

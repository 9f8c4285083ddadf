"""The loop marts: episode_loops, loops and loops_long_failures add up to loop_spans."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from deskscore.collectors.human import load_bundled
from deskscore.collectors.synthetic import load_profiles, write_run
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.infra.runner import run_stages
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.options import IngestOptions
from deskscore.pipelines.stages.base import run_keys
from deskscore.pipelines.stages.loops import LoopsStage
from deskscore.sql import connect, mart_names

LOOP_MARTS = ("episode_loops", "loops", "loops_long_failures")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three demo agents (the loopy one included) over two tasks per domain, loops detected."""
    root = tmp_path_factory.mktemp("marts")
    seen: dict[str, int] = {}
    tasks = []
    for row in load_bundled("verified"):
        if seen.get(row["domain"], 0) < 2:
            seen[row["domain"]] = seen.get(row["domain"], 0) + 1
            tasks.append(row)
    profiles = {p.name: p for p in load_profiles()}
    for i, name in enumerate(("atlas-deliberate", "claw-cu", "loopy-7b")):
        write_run(root / "results", profiles[name], tasks, seed=i, screenshots="none")
    run_ingest(IngestOptions(str(root / "wh"), sources=(str(root / "results"),), engine="direct"))
    wh = str(root / "wh")
    run_stages([LoopsStage(wh)], run_keys(Warehouse(wh)))
    return root / "wh"


def test_the_loop_marts_are_applied_after_what_they_use() -> None:
    names = mart_names()
    assert [n for n in names if n in LOOP_MARTS] == list(LOOP_MARTS)


def test_episode_loops_has_every_episode_and_every_looping_step(generated: Path) -> None:
    con = connect(generated)
    [(n_eps, n_rows, spans_sum, mart_sum, n_spans, mart_spans)] = con.sql(
        """
        SELECT (SELECT count(*) FROM episodes), (SELECT count(*) FROM episode_loops),
               (SELECT sum(looping_steps) FROM loop_spans), (SELECT sum(looping_steps) FROM episode_loops),
               (SELECT count(*) FROM loop_spans), (SELECT sum(n_spans) FROM episode_loops)
        """
    ).fetchall()
    assert n_eps == n_rows and spans_sum == mart_sum > 0 and n_spans == mart_spans
    rows = con.sql(
        "SELECT executed_steps, looping_steps, looping_share, n_spans, n_recovered + n_abandoned "
        "+ n_step_limit FROM episode_loops"
    ).fetchall()
    assert any(r[3] == 0 and r[1] == 0 for r in rows)  # episodes without a loop are there
    for steps, looping, share, spans, outcomes in rows:
        assert spans == outcomes
        assert looping <= steps
        if steps:
            assert share == pytest.approx(looping / steps)
        else:
            assert share is None


def test_loops_per_agent_and_domain_add_up_to_the_episodes(generated: Path) -> None:
    con = connect(generated)
    rows = con.sql("SELECT * FROM loops").fetchall()
    cols = con.sql("SELECT * FROM loops").columns
    records = [dict(zip(cols, r, strict=True)) for r in rows]
    assert {r["agent"] for r in records} == {
        a for (a,) in con.sql("SELECT DISTINCT agent FROM runs").fetchall()
    }
    assert (
        sum(r["n_episodes"] for r in records)
        == con.sql("SELECT count(*) FROM episodes").fetchall()[0][0]
    )
    assert (
        sum(r["looping_steps"] for r in records)
        == con.sql("SELECT sum(looping_steps) FROM loop_spans").fetchall()[0][0]
    )
    for r in records:
        assert 0 <= r["episodes_with_loops_share"] <= 1
        assert 0 <= r["looping_share"] <= 1
        assert r["looping_share"] == pytest.approx(r["looping_steps"] / r["executed_steps"])
        assert r["n_recovered"] + r["n_abandoned"] + r["n_step_limit"] == r["n_spans"]
        if r["n_spans"]:
            shares = r["recovered_share"] + r["abandoned_share"] + r["step_limit_share"]
            assert math.isclose(shares, 1.0)
        else:
            assert r["recovered_share"] is None
    loopy = [r for r in records if r["agent"] == "loopy-agent-7b"]
    careful = [r for r in records if r["agent"] == "atlas-deliberate-v2"]
    assert sum(r["looping_steps"] for r in loopy) / sum(r["executed_steps"] for r in loopy) > sum(
        r["looping_steps"] for r in careful
    ) / sum(r["executed_steps"] for r in careful)


# --------------------------------------------------------------------------- long failures


def _write(root: Path) -> Path:
    """Two agents; episodes chosen around the 'failed after 50+ steps' boundaries."""
    wh = Warehouse(root)
    episodes = {
        # (run, task): (executed steps, result_status, score, spans as (looping, outcome))
        ("r1", "long-fail"): (60, "ok", 0.0, [(20, "recovered"), (10, "step_limit")]),
        ("r1", "exactly-50"): (50, "ok", 0.5, [(5, "abandoned")]),
        ("r1", "short-fail"): (49, "ok", 0.0, [(40, "recovered")]),
        ("r1", "long-success"): (80, "ok", 1.0, [(30, "recovered")]),
        ("r1", "no-result"): (70, "missing", None, [(30, "abandoned")]),
        ("r2", "long-fail-no-loop"): (90, "ok", 0.0, []),
    }
    for run, agent in (("r1", "agent-a"), ("r2", "agent-b")):
        part = {"benchmark": "osworld", "run_id": run}
        wh.write(
            "runs",
            [
                {"run_id": run, "benchmark": "osworld", "source": "s", "run_path": run}
                | {"format": "osworld", "agent": agent, "n_task_folders": 1, "max_steps": 100}
            ],
            part,
        )
        eps, spans = [], []
        for (r, task), (n, status, score, loops) in episodes.items():
            if r != run:
                continue
            eps.append(
                {"run_id": run, "benchmark": "osworld", "domain": "os", "task_id": task}
                | {"source_task_id": task, "task_path": f"os/{task}", "n_lines": n}
                | {"n_steps": n, "n_turns": n, "n_error_lines": 0, "n_quarantined": 0}
                | {"result_status": status, "score": score, "ended_by": "none"}
            )
            first = 0
            for looping, outcome in loops:
                spans.append(
                    {"run_id": run, "benchmark": "osworld", "domain": "os", "task_id": task}
                    | {"first_step": first, "last_step": first + looping}
                    | {"length": looping + 1, "looping_steps": looping, "outcome": outcome}
                    | {"detector_version": "test"}
                )
                first += looping + 2
        wh.write("episodes", eps, part)
        wh.write("loop_spans", spans, part)
    return root


def test_long_failures_are_judged_episodes_below_full_marks_with_50_steps_or_more(
    tmp_path: Path,
) -> None:
    con = connect(_write(tmp_path))
    rows = {
        r[0]: r[1:]
        for r in con.sql(
            "SELECT agent, n_episodes, executed_steps, looping_steps, looping_share, n_spans, "
            "recovered_share, abandoned_share, step_limit_share FROM loops_long_failures"
        ).fetchall()
    }
    # agent-a: long-fail (60 steps, 30 looping) and exactly-50 (50 steps, 5 looping, score 0.5)
    n, steps, looping, share, spans, rec, aband, limit = rows["agent-a"]
    assert (n, steps, looping, spans) == (2, 110, 35, 3)
    assert share == pytest.approx(35 / 110)
    assert (rec, aband, limit) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    # agent-b: a long failure without any loop counts, with 0 looping and no outcome split
    n, steps, looping, share, spans, rec, *_ = rows["agent-b"]
    assert (n, steps, looping, share, spans, rec) == (1, 90, 0, 0.0, 0, None)


def test_the_loop_marts_exist_on_an_empty_warehouse(tmp_path: Path) -> None:
    con = connect(tmp_path)
    for name in LOOP_MARTS:
        assert con.sql(f"SELECT count(*) FROM {name}").fetchall() == [(0,)]

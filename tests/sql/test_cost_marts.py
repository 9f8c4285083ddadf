"""The cost and latency marts: quadratic cost growth, latency growth, stage shares, the front."""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from deskscore.collectors.human import load_bundled
from deskscore.collectors.synthetic import AgentProfile, write_run
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.jobs.cost import run_costs
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.options import CostOptions, IngestOptions
from deskscore.sql import connect, mart_names

COST_MARTS = ("latency_breakdown", "latency_by_step", "cost_by_step", "cost_growth",
              "cost_per_run", "cost_pareto")  # fmt: skip


def agent(name: str, history_tokens: int) -> AgentProfile:
    """A weak gpt54-style agent (most episodes run many turns), priced as gpt-5.4."""
    return AgentProfile(
        name=name, model=f"gpt-5.4-{name}", action_space="pyautogui",
        observation_type="screenshot", skill=0.05, efficiency=3.0, max_steps=30, loop_rate=0.0,
        error_rate=0.0, partial_rate=0.0, actions_per_turn=1.0, timestamp_micros=False,
        usage="gpt54", history_tokens=history_tokens,
    )  # fmt: skip


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two agents over 40 tasks: one whose prompt carries the full history, one whose does not.
    Their models ('gpt-5.4-history', 'gpt-5.4-flat') match gpt-5.4 by exact name only after a
    price override, so the run also shows what an override does."""
    root = tmp_path_factory.mktemp("cost_marts")
    tasks = load_bundled("verified")[::9][:40]
    for name, history in (("history", 2000), ("flat", 0)):
        write_run(root / name, agent(name, history), tasks, seed=11, screenshots="none")
    run_ingest(
        IngestOptions(
            str(root / "wh"), sources=(str(root / "history"), str(root / "flat")), engine="direct"
        )
    )
    prices = root / "prices.csv"
    prices.write_text(
        "model,input_per_mtok,cached_input_per_mtok,cache_write_per_mtok,output_per_mtok,"
        "read_on,source\n"
        "gpt-5.4-history,2.50,0.25,,15.00,2026-11-30,test\n"
        "gpt-5.4-flat,2.50,0.25,,15.00,2026-11-30,test\n"
    )
    run_costs(CostOptions(str(root / "wh"), prices=str(prices), engine="direct"))
    return root / "wh"


def test_the_cost_marts_are_applied_after_what_they_use() -> None:
    names = mart_names()
    assert [n for n in names if n in COST_MARTS] == list(COST_MARTS)
    assert names.index("leaderboard") < names.index("latency_breakdown")


def _curve(wh: Path, model: str) -> tuple[np.ndarray, np.ndarray, dict]:
    rel = connect(wh).sql(
        "SELECT c.* FROM cost_by_step AS c JOIN runs AS r USING (run_id) "
        "WHERE r.model = $m AND c.in_fit ORDER BY c.turn",
        params={"m": model},
    )
    rows = [dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()]
    assert len(rows) >= 10
    turns = np.array([r["turn"] for r in rows], dtype=float)
    cumulative = np.array([r["cumulative_cost_usd"] for r in rows])
    return turns, cumulative, rows[0]


def _sse(x: np.ndarray, y: np.ndarray, degree: int) -> float:
    fitted = np.polyval(np.polyfit(x, y, degree), x)
    return float(((y - fitted) ** 2).sum())


def test_a_prompt_that_carries_the_history_makes_cost_grow_quadratically(generated: Path) -> None:
    turns, cumulative, row = _curve(generated, "gpt-5.4-history")
    linear, quadratic = _sse(turns, cumulative, 1), _sse(turns, cumulative, 2)
    assert quadratic < 0.01 * linear  # the quadratic fits far better than a line
    assert np.polyfit(turns, cumulative, 2)[0] > 0
    assert row["growth"] == "quadratic"
    sst = float(((cumulative - cumulative.mean()) ** 2).sum())
    assert row["r2_linear"] == pytest.approx(1 - linear / sst, abs=1e-9)
    assert row["r2_quadratic"] == pytest.approx(1 - quadratic / sst, abs=1e-9)


def test_a_prompt_without_history_makes_cost_grow_linearly(generated: Path) -> None:
    turns, cumulative, row = _curve(generated, "gpt-5.4-flat")
    assert row["growth"] == "linear"
    slope = np.polyfit(turns, cumulative, 1)[0]
    assert abs(np.polyfit(turns, cumulative, 2)[0]) * turns.max() < 0.05 * slope
    growth = connect(generated).sql("SELECT r.model, g.growth FROM cost_growth AS g "
                                    "JOIN runs AS r USING (run_id) ORDER BY r.model").fetchall()  # fmt: skip
    assert growth == [("gpt-5.4-flat", "linear"), ("gpt-5.4-history", "quadratic")]


def test_latency_by_step_medians_come_from_the_step_intervals_and_grow(generated: Path) -> None:
    wh = Warehouse(generated)
    runs = {r["run_id"]: r["agent"] for r in wh.read("runs").to_pylist()}
    turn_s: dict[tuple, list] = defaultdict(list)
    for s in wh.read("steps", columns=["run_id", "task_id", "step_num", "dt_s"]).to_pylist():
        turn_s[(s["run_id"], s["task_id"], s["step_num"])].append(s["dt_s"])
    buckets: dict[tuple, list] = defaultdict(list)
    for (run_id, _, turn), dts in turn_s.items():
        if None not in dts:
            buckets[(runs[run_id], (turn - 1) // 5 * 5 + 1)].append(sum(dts))
    rows = (
        connect(generated)
        .sql("SELECT agent, first_turn, median_turn_s, growth_vs_first FROM latency_by_step")
        .fetchall()
    )
    assert {(a, f): m for a, f, m, _ in rows} == {
        k: statistics.median(v) for k, v in buckets.items()
    }
    last = max(rows, key=lambda r: (r[0] == "gpt-5.4-history", r[1]))
    assert last[3] > 1.5  # latency grows late in a task


def test_stage_shares_add_up_to_the_task_time(generated: Path) -> None:
    groups = (
        connect(generated)
        .sql(
            "SELECT agent, domain, sum(share), sum(seconds), any_value(task_time_s), "
            "count(*) FILTER (WHERE note IS NOT NULL) FROM latency_breakdown GROUP BY ALL"
        )
        .fetchall()
    )
    assert len(groups) == 2 * (1 + len({d for _, d, *_ in groups} - {"(all)"}))
    for _, _, share, seconds, task_time, noted in groups:
        assert share == pytest.approx(1.0) and seconds == pytest.approx(task_time)
        assert noted == 0
    [(planning, calls)] = (
        connect(generated)
        .sql(
            "SELECT sum(seconds), sum(n_calls) FROM latency_breakdown "
            "WHERE domain = '(all)' AND stage = 'planning'"
        )
        .fetchall()
    )
    [(latency, n)] = (
        connect(generated)
        .sql(
            "SELECT sum(c.latency_s), count(*) FROM llm_calls AS c JOIN episode_costs AS e "
            "USING (run_id, domain, task_id) WHERE e.task_time_s IS NOT NULL"
        )
        .fetchall()
    )
    assert planning == pytest.approx(latency) and calls == n


def _run(run_id: str, agent: str) -> dict:
    return {"run_id": run_id, "benchmark": "osworld", "source": "s", "run_path": run_id,
            "format": "osworld", "agent": agent, "n_task_folders": 10}  # fmt: skip


def _cost(run_id: str, success: float | None, per_task: float | None) -> dict:
    return {"run_id": run_id, "benchmark": "osworld", "n_episodes": 10,
            "n_episodes_with_usage": 10, "n_llm_calls": 100, "n_unpriced_calls": 0,
            "cost_usd": None if per_task is None else 10 * per_task,
            "cost_per_task_usd": per_task, "n_tasks_run": 10, "n_successes": 0,
            "success_rate_run": success, "prices": "test"}  # fmt: skip


def test_the_pareto_front_keeps_the_runs_no_other_run_beats_on_both(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path)
    figures = {"a": (0.50, 1.0), "b": (0.60, 2.0), "c": (0.40, 1.5), "d": (0.50, 1.0),
               "e": (0.45, None), "f": (0.60, 3.0)}  # fmt: skip
    for name, (success, per_task) in figures.items():
        part = {"benchmark": "osworld", "run_id": name}
        wh.write("runs", [_run(name, f"agent-{name}")], part)
        wh.write("run_costs", [_cost(name, success, per_task)], part)
    rows = (
        connect(tmp_path)
        .sql("SELECT agent, on_front, dominated_by FROM cost_pareto ORDER BY agent")
        .fetchall()
    )
    assert rows == [
        ("agent-a", True, None),
        ("agent-b", True, None),
        ("agent-c", False, ["agent-a", "agent-d"]),
        ("agent-d", True, None),  # equal to a: neither beats the other
        ("agent-e", None, None),  # no complete cost: not placed
        ("agent-f", False, ["agent-b"]),
    ]

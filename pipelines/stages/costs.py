"""The cost stage: each run's llm_calls (and episodes) -> llm_call_costs, episode_costs, run_costs.

Costs are computed here, once, by `deskscore.scorers.cost` (exact Decimal arithmetic); the SQL
marts only slice these tables. Every run gets all three files, empty ones when its archive
records no model call, so a re-run with another price table replaces what an earlier one wrote.
The price table is loaded before the pipeline starts and travels with the DoFn, so a bad price
file fails the command at once and remote workers need no access to it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics

from deskscore.pipelines.infra import progress
from deskscore.pipelines.infra.memory import per_run
from deskscore.scorers.cost import PriceTable

_EPISODE_COLS = ["run_id", "benchmark", "domain", "task_id", "score", "started_at", "ended_at",
                 "n_turns"]  # fmt: skip
_CALL_COLS = ["run_id", "benchmark", "domain", "task_id", "call_idx", "step_num", "step_idx",
              "stage", "model", "prompt_tokens", "cached_prompt_tokens", "cache_write_tokens",
              "completion_tokens", "reasoning_tokens", "reasoning_in_completion",
              "latency_s"]  # fmt: skip
_ORDER = ("domain", "task_id", "call_idx")


def cost_run(wh: Any, benchmark: str, run_id: str, table: PriceTable) -> dict[str, list[dict]]:
    """One run's llm_call_costs, episode_costs and run_costs rows, from the warehouse."""
    from deskscore.scorers.cost import episode_costs, price_calls, run_cost

    part = {"benchmark": benchmark, "run_id": run_id}
    runs = wh.read("runs", part, columns=["model"]).to_pylist()
    run_model = runs[0]["model"] if runs else None
    episodes = sorted(
        wh.read("episodes", part, columns=_EPISODE_COLS).to_pylist(),
        key=lambda e: (e["domain"], e["task_id"]),
    )
    calls = sorted(
        wh.read("llm_calls", part, columns=_CALL_COLS).to_pylist(),
        key=lambda c: tuple(c[k] for k in _ORDER),
    )
    priced = price_calls(calls, table, run_model)
    per_episode = episode_costs(episodes, calls, priced)
    run_row = run_cost(run_id, benchmark, episodes, per_episode, priced, table.label)
    return {
        "llm_call_costs": priced.rows,
        "episode_costs": per_episode.rows,
        "run_costs": [run_row],
    }


class ComputeCostsFn(beam.DoFn):
    """(benchmark, run_id, ...) -> paths of the run's three cost files."""

    def __init__(self, warehouse: str, table: PriceTable) -> None:
        self.warehouse = warehouse
        self.table = table
        self.runs = Metrics.counter("cost", "cost_runs")
        self.calls = Metrics.counter("cost", "calls_priced")
        self.unpriced = Metrics.counter("cost", "calls_unpriced")

    def setup(self) -> None:
        from deskscore.collectors.warehouse import Warehouse

        self._wh = Warehouse(self.warehouse)

    @per_run
    def process(self, key: Sequence[str]) -> Iterator[str]:
        benchmark, run_id = key[0], key[1]
        tables = cost_run(self._wh, benchmark, run_id, self.table)
        part = {"benchmark": benchmark, "run_id": run_id}
        costs = tables["llm_call_costs"]
        n_unpriced = sum(1 for c in costs if c["cost_usd"] is None)
        self.runs.inc()
        self.calls.inc(len(costs) - n_unpriced)
        self.unpriced.inc(n_unpriced)
        progress.tick("costs")
        for name in ("llm_call_costs", "episode_costs", "run_costs"):
            yield str(self._wh.write(name, tables[name], part))


class ComputeCosts(beam.PTransform):
    """Run keys (tuples starting with benchmark, run_id) -> cost files written."""

    def __init__(self, warehouse: str, table: PriceTable) -> None:
        super().__init__()
        self.fn = ComputeCostsFn(warehouse, table)

    def expand(self, runs: beam.PCollection) -> beam.PCollection:
        return runs | "Spread" >> beam.Reshuffle() | "Cost" >> beam.ParDo(self.fn)


def run_costs(
    warehouse_root: str,
    *,
    prices: str | None = None,
    run_ids: Sequence[str] | None = None,
    beam_args: Sequence[str] = (),
) -> dict[str, int]:
    """Price every run (or `run_ids`) of the warehouse with the bundled price table, overridden
    by the `prices` file; returns the counters. Raises PriceError for a bad price file."""
    from deskscore.collectors.warehouse import Warehouse
    from deskscore.pipelines.infra.runner import counters, pipeline
    from deskscore.scorers.cost import load_prices

    table = load_prices(prices)
    wh = Warehouse(warehouse_root)
    runs = wh.read("runs", columns=["benchmark", "run_id"]).to_pylist()
    keys = sorted(
        {(r["benchmark"], r["run_id"]) for r in runs if not run_ids or r["run_id"] in run_ids}
    )
    if not keys:
        return {"cost_runs": 0}
    p = pipeline(beam_args)
    _ = p | "Runs" >> beam.Create(keys) | "ComputeCosts" >> ComputeCosts(str(wh.root), table)
    result = p.run()
    result.wait_until_finish()
    return counters(result)


__all__ = ["ComputeCosts", "ComputeCostsFn", "cost_run", "run_costs"]

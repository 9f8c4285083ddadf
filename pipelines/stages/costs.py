"""The cost stage: each run's llm_calls (and episodes) -> llm_call_costs, episode_costs, run_costs.

Costs are computed here, once, by `deskscore.scorers.cost` (exact Decimal arithmetic); the SQL
marts only slice these tables. Every run gets all three files, empty ones when its archive
records no model call, so a re-run with another price table replaces what an earlier one wrote.
The price table is loaded before the job starts and travels with the stage, so a bad price
file fails the command at once and remote workers need no access to it.
"""

from __future__ import annotations

from typing import Any

from deskscore.pipelines.stages.base import RunKey, RunStage
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


class CostsStage(RunStage):
    """A run's model calls and episodes, priced -> its llm_call_costs, episode_costs and
    run_costs files (the price table travels with the stage; see the module's doc)."""

    label = "costs"
    writes = ("llm_call_costs", "episode_costs", "run_costs")

    def __init__(self, warehouse: str, table: PriceTable, job: str | None = None) -> None:
        super().__init__(warehouse, job)
        self.table = table

    def run(self, key: RunKey) -> None:
        tables = cost_run(self.wh, key.benchmark, key.run_id, self.table)
        for name in self.writes:
            self.wh.write(name, tables[name], key.partition)


__all__ = ["CostsStage", "cost_run"]

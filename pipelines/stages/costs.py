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
from deskscore.scorers.cost import PriceTable, unpriced_models

_EPISODE_COLS = ["run_id", "benchmark", "domain", "task_id", "score", "started_at", "ended_at",
                 "n_turns"]  # fmt: skip
_ORDER = ("domain", "task_id", "call_idx")


def cost_run(wh: Any, benchmark: str, run_id: str, table: PriceTable) -> dict[str, Any]:
    """One run's llm_call_costs (a pyarrow table), episode_costs and run_costs rows, from the
    warehouse. Calls are priced over columns (`scorers.cost_columns`), or row by row where
    that would not be exact."""
    from deskscore.scorers.cost import EpisodeCosts, episode_costs, price_calls, run_cost
    from deskscore.scorers.cost_columns import CALL_COLUMNS, price_run

    part = {"benchmark": benchmark, "run_id": run_id}
    runs = wh.read("runs", part, columns=["model"]).to_pylist()
    run_model = runs[0]["model"] if runs else None
    episodes = sorted(
        wh.read("episodes", part, columns=_EPISODE_COLS).to_pylist(),
        key=lambda e: (e["domain"], e["task_id"]),
    )
    calls = wh.read("llm_calls", part, columns=list(CALL_COLUMNS))
    calls = calls.sort_by([(k, "ascending") for k in _ORDER])  # stable, as Python's sort
    columns = price_run(calls, episodes, table, run_model)
    if columns is not None:
        per_episode = EpisodeCosts(columns.episodes, columns.exact, columns.priced)
        priced_calls: Any = columns.calls
        unpriced = columns.unpriced_models
    else:
        rows = calls.to_pylist()
        priced = price_calls(rows, table, run_model)
        per_episode = episode_costs(episodes, rows, priced)
        priced_calls = priced.rows
        unpriced = unpriced_models(priced)
    run_row = run_cost(run_id, benchmark, episodes, per_episode, unpriced, table.label)
    return {
        "llm_call_costs": priced_calls,
        "episode_costs": per_episode.rows,
        "run_costs": [run_row],
    }


class CostsStage(RunStage):
    """A run's model calls and episodes, priced -> its llm_call_costs, episode_costs and
    run_costs files (the price table travels with the stage; see the module's doc)."""

    label = "costs"
    writes = ("llm_call_costs", "episode_costs", "run_costs")
    read_in_job = True  # the intervals resample each run's episode_costs of this job

    def __init__(self, warehouse: str, table: PriceTable, job: str | None = None) -> None:
        super().__init__(warehouse, job)
        self.table = table

    def run(self, key: RunKey) -> None:
        tables = cost_run(self.wh, key.benchmark, key.run_id, self.table)
        for name in self.writes:
            self.wh.write(name, tables[name], key.partition)


__all__ = ["CostsStage", "cost_run"]

"""The cost stage: each run's llm_calls (and episodes) -> llm_call_costs, episode_costs, run_costs.

Costs are computed here, once, by `deskscore.scorers.cost` (exact Decimal arithmetic); the SQL
marts only slice these tables. Every run gets all three files, empty ones when its archive
records no model call, so a re-run with another price table replaces what an earlier one wrote.
The price table is loaded before the job starts and travels with the stage, so a bad price
file fails the command at once and remote workers need no access to it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

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
    if not _in_order(calls):  # as ingest writes them, mostly: sorting is then for nothing
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


def _in_order(calls: Any) -> bool:
    """Whether the calls already come in _ORDER, with no null key: each row's keys at least
    the row before's, compared as the sort compares them (strings by code point)."""
    import pyarrow.compute as pc

    n = calls.num_rows
    columns = [calls.column(k) for k in _ORDER]
    if any(c.null_count for c in columns):
        return False
    if n < 2:
        return True
    before, after = [c.slice(0, n - 1) for c in columns], [c.slice(1) for c in columns]
    ordered = pc.less_equal(before[-1], after[-1])
    for a, b in zip(reversed(before[:-1]), reversed(after[:-1]), strict=True):
        ordered = pc.or_(pc.less(a, b), pc.and_(pc.equal(a, b), ordered))
    return bool(pc.all(ordered).as_py())


class EpisodeCost(NamedTuple):
    """What the intervals resample of one episode_costs row."""

    domain: str
    task_id: str
    cost_usd: float | None
    n_llm_calls: int
    n_unpriced_calls: int


class Priced(NamedTuple):
    """A run key with its episode_costs rows as written, in their order: what the cost stage
    hands on, for the intervals of the same job to resample. Carried in the element, the
    one thing every Beam runner passes from a stage to the next, they need not be read back
    from files the job has not committed, so the cost files can go straight into packs
    (`Stage.pack_writes`) instead of being written alone and packed again after the job."""

    key: RunKey
    costs: tuple[EpisodeCost, ...]


class CostsStage(RunStage):
    """A run's model calls and episodes, priced -> its llm_call_costs, episode_costs and
    run_costs files (the price table travels with the stage; see the module's doc)."""

    label = "costs"
    writes = ("llm_call_costs", "episode_costs", "run_costs")

    def __init__(self, warehouse: str, table: PriceTable, job: str | None = None) -> None:
        super().__init__(warehouse, job)
        self.table = table

    def run(self, key: RunKey) -> Priced:
        tables = cost_run(self.wh, key.benchmark, key.run_id, self.table)
        for name in self.writes:
            self.wh.write(name, tables[name], key.partition)
        fields = EpisodeCost._fields
        return Priced(
            key, tuple(EpisodeCost(*(r[f] for f in fields)) for r in tables["episode_costs"])
        )


__all__ = ["CostsStage", "EpisodeCost", "Priced", "cost_run"]

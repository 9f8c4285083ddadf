"""The intervals stage: a run's episodes and figures -> its run_score_intervals file.

It runs after the scores and cost stages of the same run, because it resamples what they
computed: the units of each figure (prepared by `deskscore.scorers.run.run_units`, exactly as
score_run prepares them) and each episode's cost. The maths is `deskscore.scorers.intervals`.
"""

from __future__ import annotations

from typing import Any

from deskscore.pipelines.stages.base import RunKey
from deskscore.pipelines.stages.scores import ConfiguredStage, HumanRefs
from deskscore.scorers.config import ScoreConfig

TABLE = "run_score_intervals"


class IntervalsStage(ConfiguredStage):
    """Standard errors and 95% intervals of each run figure, under one configuration."""

    label = "intervals"
    writes = (TABLE,)

    def __init__(
        self,
        warehouse: str,
        config: ScoreConfig,
        human: HumanRefs,
        human_by_instruction: HumanRefs = (),
        *,
        n_resamples: int,
        seed: int,
        costs: bool = False,
        job: str | None = None,
    ) -> None:
        super().__init__(warehouse, config, human, human_by_instruction, job)
        self.costs = costs
        """The job prices the runs: their episode_costs are this job's pending writes."""
        self.n_resamples = n_resamples
        self.seed = seed

    def setup(self) -> None:
        from deskscore.collectors.warehouse import Warehouse

        super().setup()
        # The cost stage's files of this job are not committed yet: read them from its journal.
        self.priced = Warehouse(self.warehouse, self.job, pending=True) if self.costs else None

    def teardown(self) -> None:
        if self.priced is not None:
            self.priced.close()
        super().teardown()

    def _costs(self, key: RunKey, episodes: list[dict[str, Any]]) -> list:
        from deskscore.scorers.intervals import CostUnit
        from deskscore.scorers.success import is_strict_success
        from deskscore.scorers.wes import usable_reward

        wh = self.priced
        if wh is None or not wh.has_file("episode_costs", key.partition, "data"):
            return []
        score = {(e["domain"], e["task_id"]): e.get("score") for e in episodes}
        cols = ["domain", "task_id", "cost_usd", "n_llm_calls", "n_unpriced_calls"]
        return [
            CostUnit(
                c["domain"],
                c["cost_usd"],
                bool(c["n_llm_calls"]),
                bool(c["n_unpriced_calls"]),
                is_strict_success(usable_reward(score.get((c["domain"], c["task_id"])))),
            )
            for c in wh.read("episode_costs", key.partition, columns=cols).to_pylist()
        ]

    def run(self, key: RunKey) -> None:
        from deskscore.scorers.intervals import interval_rows, run_intervals
        from deskscore.scorers.run import run_units

        episodes: list[dict[str, Any]] = self.wh.read("episodes", key.partition).to_pylist()
        units = run_units(
            episodes,
            self.human_for(key),
            config=self.config,
        )
        intervals = run_intervals(
            units,
            costs=self._costs(key, episodes),
            n_resamples=self.n_resamples,
            seed=self.seed,
        )
        keys = {
            "run_id": key.run_id,
            "benchmark": key.benchmark,
            "human_version": self.config.human_version,
            "max_steps_scoring": self.config.max_steps_scoring,
            "compat": self.config.compat,
        }
        rows = interval_rows(keys, intervals, n_resamples=self.n_resamples, seed=self.seed)
        self.wh.write(TABLE, rows, key.partition, file=self.config.file)


__all__ = ["TABLE", "IntervalsStage"]

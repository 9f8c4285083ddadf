"""The intervals stage: a run's episodes and figures -> its run_score_intervals file.

It runs after the scores and cost stages of the same run, because it resamples what they
computed: the units of each figure (prepared by `deskscore.scorers.run.run_units`, exactly as
score_run prepares them) and each episode's cost, which the cost stage hands on with the run
(`costs.Priced`). The maths is `deskscore.scorers.intervals`.
"""

from __future__ import annotations

from typing import Any

from deskscore.pipelines.stages.base import RunKey
from deskscore.pipelines.stages.costs import Priced
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
        """The job prices the runs: each comes from the cost stage with its episode costs."""
        self.n_resamples = n_resamples
        self.seed = seed

    def _costs(self, priced: Priced, episodes: list[dict[str, Any]]) -> list:
        from deskscore.scorers.intervals import CostUnit
        from deskscore.scorers.success import is_strict_success
        from deskscore.scorers.wes import usable_reward

        score = {(e["domain"], e["task_id"]): e.get("score") for e in episodes}
        return [
            CostUnit(
                c.domain,
                c.cost_usd,
                bool(c.n_llm_calls),
                bool(c.n_unpriced_calls),
                is_strict_success(usable_reward(score.get((c.domain, c.task_id)))),
            )
            for c in priced.costs
        ]

    def run(self, element: RunKey | Priced) -> None:  # type: ignore[override]
        from deskscore.scorers.intervals import interval_rows, run_intervals
        from deskscore.scorers.run import EPISODE_INPUTS, run_units

        priced = element if isinstance(element, Priced) else None
        key = priced.key if priced is not None else element
        if priced is None and self.costs:
            raise ValueError("a priced job's intervals take each run as the cost stage hands it on")
        episodes: list[dict[str, Any]] = self.wh.read(
            "episodes", key.partition, columns=list(EPISODE_INPUTS)
        ).to_pylist()
        units = run_units(
            episodes,
            self.human_for(key),
            config=self.config,
        )
        intervals = run_intervals(
            units,
            costs=self._costs(priced, episodes) if priced is not None else [],
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

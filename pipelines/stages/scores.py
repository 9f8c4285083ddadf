"""The scoring stage: a run's episodes -> its episode_scores and run_scores files.

The maths is `deskscore.scorers.run.score_run`, the same function `score.py` calls; this stage
only reads the run's episodes and writes the two files of the configuration being scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deskscore.pipelines.stages.base import RunKey, RunStage
from deskscore.scorers.config import ScoreConfig

HumanRefs = Sequence[tuple[str, str, int, int]]
"""(domain, task_id, single_steps, grouped_steps) per human task, in the order sums run."""


class ConfiguredStage(RunStage):
    """A per-run stage under one scoring configuration, against the human references: its
    files are the configuration's (`config.file`), and a run is matched to the references its
    format keys by (task id, or instruction: UI-TARS submissions name tasks by instruction)."""

    def __init__(
        self,
        warehouse: str,
        config: ScoreConfig,
        human: HumanRefs,
        human_by_instruction: HumanRefs = (),
        job: str | None = None,
    ) -> None:
        super().__init__(warehouse, job)
        self.config = config
        self.human = list(human)
        self.human_by_instruction = list(human_by_instruction)

    def outputs(self) -> list[tuple[str, str]]:
        return [(name, self.config.file) for name in self.writes]

    def human_for(self, key: RunKey) -> HumanRefs:
        """The references `key`'s run is scored against."""
        from deskscore.collectors.formats import BY_INSTRUCTION, get

        by_instruction = get(key.format).human_key == BY_INSTRUCTION
        return self.human_by_instruction if by_instruction else self.human


class ScoresStage(ConfiguredStage):
    """Score each run against the human references, under one configuration.

    Runs of a format whose tasks key into human data by instruction (UI-TARS submissions name
    tasks by instruction, not id) are scored against `human_by_instruction`, ('uitars',
    instruction, single, grouped) rows.
    """

    label = "runs scored"
    writes = ("episode_scores", "run_scores")

    def run(self, key: RunKey) -> None:
        from deskscore.scorers.run import EPISODE_INPUTS, score_run

        episodes: list[dict[str, Any]] = self.wh.read(
            "episodes", key.partition, columns=list(EPISODE_INPUTS)
        ).to_pylist()
        episode_rows, run_row = score_run(
            episodes,
            self.human_for(key),
            run_id=key.run_id,
            benchmark=key.benchmark,
            config=self.config,
        )
        self.wh.write("episode_scores", episode_rows, key.partition, file=self.config.file)
        self.wh.write("run_scores", [run_row], key.partition, file=self.config.file)

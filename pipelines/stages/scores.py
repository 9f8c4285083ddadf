"""The scoring stage: each run's episodes -> episode_scores and run_scores partitions."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import apache_beam as beam
from apache_beam.metrics import Metrics

from deskscore.pipelines.infra import progress
from deskscore.pipelines.infra.memory import per_run


class ScoreConfig(NamedTuple):
    human_version: str
    max_steps_scoring: int
    compat: str

    @property
    def file(self) -> str:
        """One file per configuration inside a run's partition, so configurations coexist."""
        return f"{self.human_version}-s{self.max_steps_scoring}-{self.compat}"


class ScoreRunFn(beam.DoFn):
    """(benchmark, run_id) -> paths of the written score files."""

    def __init__(
        self,
        warehouse: str,
        human: Sequence[tuple[str, str, int, int]],
        config: ScoreConfig,
        human_by_instruction: Sequence[tuple[str, str, int, int]] = (),
    ) -> None:
        self.warehouse = warehouse
        self.human = list(human)
        self.human_by_instruction = list(human_by_instruction)
        self.config = config
        self.scored = Metrics.counter("score", "runs_scored")
        self.episodes = Metrics.counter("score", "episodes_scored")

    def setup(self) -> None:
        from deskscore.collectors.warehouse import Warehouse

        self._wh = Warehouse(self.warehouse)

    @per_run
    def process(self, key: tuple[str, str, str]) -> Iterator[str]:
        from deskscore.scorers import config as scoring
        from deskscore.scorers.run import score_run

        benchmark, run_id, run_format = key[:3]
        part = {"benchmark": benchmark, "run_id": run_id}
        episodes: list[dict[str, Any]] = self._wh.read("episodes", part).to_pylist()
        episode_rows, run_row = score_run(
            episodes,
            self.human_by_instruction if run_format == "uitars" else self.human,
            run_id=run_id,
            benchmark=benchmark,
            config=scoring.ScoreConfig(
                self.config.human_version, self.config.max_steps_scoring, self.config.compat
            ),
        )
        self.scored.inc()
        progress.tick("runs scored")
        self.episodes.inc(len(episode_rows))
        yield str(self._wh.write("episode_scores", episode_rows, part, file=self.config.file))
        yield str(self._wh.write("run_scores", [run_row], part, file=self.config.file))


class ScoreRuns(beam.PTransform):
    """(benchmark, run_id, format) keys -> score files written.

    UI-TARS submissions name tasks by instruction, not id: they are scored against
    `human_by_instruction`, ('uitars', instruction, single, grouped) rows.
    """

    def __init__(
        self,
        warehouse: str,
        human: Sequence[tuple[str, str, int, int]],
        config: ScoreConfig,
        human_by_instruction: Sequence[tuple[str, str, int, int]] = (),
    ) -> None:
        super().__init__()
        self.fn = ScoreRunFn(warehouse, human, config, human_by_instruction)

    def expand(self, runs: beam.PCollection) -> beam.PCollection:
        return runs | "Spread" >> beam.Reshuffle() | "Score" >> beam.ParDo(self.fn)

"""Stage 3 of ingest: write each run's tables as one partition file per table."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics

from deskscore.pipelines import progress

_EPISODE_KEY = ("domain", "task_id", "source_task_id", "task_path")
STAGE = "ingest"
"""Each stage keeps its own quarantine file in a run's partition, so one never erases another's."""


class WriteRunFn(beam.DoFn):
    """(run_id, {runs, episodes (EpisodeCalls), problems}) -> the run's partition paths, written
    atomically: runs, episodes, steps, llm_calls (an empty file when the archive records no
    call) and this stage's quarantine."""

    def __init__(self, warehouse: str) -> None:
        self.warehouse = warehouse
        self.runs_written = Metrics.counter("ingest", "runs_written")

    def setup(self) -> None:
        from deskscore.collectors.warehouse import Warehouse

        self._wh = Warehouse(self.warehouse)

    def process(self, element: tuple[str, dict[str, Iterable[Any]]]) -> Iterator[str]:
        run_id, groups = element
        runs = list(groups.get("runs", ()))
        problems = list(groups.get("problems", ()))
        outs = sorted(
            groups.get("episodes", ()),
            key=lambda o: tuple(o.read.episode[k] for k in _EPISODE_KEY),
        )
        reads = [o.read for o in outs]
        benchmark = (
            (runs or problems)[0].benchmark if (runs or problems) else reads[0].episode["benchmark"]
        )
        part = {"benchmark": benchmark, "run_id": run_id}
        quarantine = [row for work in runs for row in work.quarantine]
        quarantine += [row for problem in problems for row in problem.quarantine]
        quarantine += [row for read in reads for row in read.quarantine]
        if runs:
            yield str(self._wh.write("runs", [runs[0].run], part))
            yield str(self._wh.write("episodes", [r.episode for r in reads], part))
            yield str(self._wh.write("steps", [s for r in reads for s in r.steps], part))
            calls = [c for o in outs for c in o.llm_calls]
            yield str(self._wh.write("llm_calls", calls, part))
            self.runs_written.inc()
            progress.tick("runs written")
        if quarantine:
            quarantine.sort(key=lambda q: (q["location"], q.get("line_no") or 0, q["reason"]))
            yield str(self._wh.write("quarantine", quarantine, part, file=STAGE))
        else:
            self._wh.remove("quarantine", part, file=STAGE)


class WriteRunTables(beam.PTransform):
    """Join runs, episodes and problems by run id, then write each run's partitions."""

    def __init__(self, warehouse: str) -> None:
        super().__init__()
        self.warehouse = warehouse

    def expand(self, inputs: dict[str, beam.PCollection]) -> beam.PCollection:
        keyed = {
            "runs": inputs["runs"] | "KeyRuns" >> beam.Map(lambda w: (w.run_id, w)),
            "problems": inputs["problems"] | "KeyProblems" >> beam.Map(lambda p: (p.run_id, p)),
            "episodes": inputs["episodes"],
        }
        return (
            keyed
            | "ByRun" >> beam.CoGroupByKey()
            | "Write" >> beam.ParDo(WriteRunFn(self.warehouse))
        )

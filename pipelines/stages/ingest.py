"""Stage 2 of ingest: each run read and written as one unit, and each source's own problems.

A run is read (`pipelines.read.read_run`) and its tables written by the same worker, so no
episode crosses a shuffle and a worker holds one run at a time. A run whose content hash
equals the stored one is not rewritten (its files, and so its scores, stay as they are),
unless `force` is set.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics

from deskscore.pipelines.infra import progress
from deskscore.pipelines.infra.memory import per_run
from deskscore.pipelines.stages.elements import RunWork, SourceProblem

STAGE = "ingest"
"""Each stage keeps its own quarantine file in a run's partition, so one never erases another's."""


def _sorted_quarantine(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda q: (q["location"], q.get("line_no") or 0, q["reason"]))


class IngestRunFn(beam.DoFn):
    """RunWork -> the run's partition paths, written atomically: runs, episodes, steps,
    llm_calls (an empty file when the archive records no call) and this stage's quarantine."""

    def __init__(self, warehouse: str, layout: str | None, force: bool) -> None:
        self.warehouse = warehouse
        self.layout = layout
        self.force = force
        self.episodes = Metrics.counter("ingest", "episodes")
        self.steps = Metrics.counter("ingest", "steps")
        self.lines = Metrics.counter("ingest", "traj_lines")
        self.quarantined = Metrics.counter("ingest", "quarantined")
        self.quarantined_lines = Metrics.counter("ingest", "quarantined_lines")
        self.llm_calls = Metrics.counter("ingest", "llm_calls")
        self.runs_written = Metrics.counter("ingest", "runs_written")
        self.runs_unchanged = Metrics.counter("ingest", "runs_unchanged")
        self.files_written = Metrics.counter("ingest", "files_written")

    def setup(self) -> None:
        from deskscore.collectors.warehouse import Warehouse
        from deskscore.pipelines.stages.read import OpenSources

        self._wh = Warehouse(self.warehouse)
        self._sources = OpenSources(self.layout)

    def _count(self, outs: list[Any]) -> None:
        for out in outs:
            read = out.read
            self.episodes.inc()
            self.steps.inc(len(read.steps))
            self.lines.inc(read.episode["n_lines"])
            self.quarantined.inc(len(read.quarantine))
            self.quarantined_lines.inc(read.episode["n_quarantined"])
            self.llm_calls.inc(len(out.llm_calls))
        progress.tick("episodes", len(outs))

    def _unchanged(self, part: dict[str, str], run: dict[str, Any]) -> bool:
        """Whether the stored run has this content hash; a new source stamp is recorded."""
        stored = self._wh.read("runs", part).to_pylist()
        if len(stored) != 1 or stored[0]["content_hash"] != run["content_hash"]:
            return False
        if stored[0]["source_stamp"] != run["source_stamp"]:
            self._wh.write("runs", [run], part)  # same tables; only the stamp moved
        return True

    @per_run
    def process(self, work: RunWork) -> Iterator[str]:
        from deskscore.collectors.source import SourceError
        from deskscore.pipelines.stages.read import read_run

        part = {"benchmark": work.benchmark, "run_id": work.run_id}
        try:
            source, run = self._sources.run(work.source, work.run_path)
        except SourceError as exc:
            run, problem = None, f"{exc}; the source changed while it was being ingested"
        else:
            problem = f"{work.source}: run {work.run_path or '.'} is gone from the source"
        if run is None:
            row = {
                "run_id": work.run_id,
                "benchmark": work.benchmark,
                "source": work.source,
                "location": work.run_path,
                "line_no": None,
                "reason": "unreadable_source",
                "message": problem + "; ingest it again",
                "excerpt": None,
            }
            yield str(self._wh.write("quarantine", [row], part, file=STAGE))
            return
        read = read_run(source, run, work)
        outs = read.episodes
        self._count(outs)
        if not self.force and self._unchanged(part, read.run):
            self.runs_unchanged.inc()
            progress.tick("runs unchanged")
            return
        reads = [o.read for o in outs]
        quarantine = read.quarantine + [row for r in reads for row in r.quarantine]
        paths = [
            self._wh.write("runs", [read.run], part),
            self._wh.write("episodes", [r.episode for r in reads], part),
            self._wh.write("steps", [s for r in reads for s in r.steps], part),
            self._wh.write("llm_calls", [c for o in outs for c in o.llm_calls], part),
        ]
        if any(o.interactions is not None for o in outs):  # formats that record exchanges
            talk = [i for o in outs for i in o.interactions or ()]
            paths.append(self._wh.write("interactions", talk, part))
        if quarantine:
            paths.append(
                self._wh.write("quarantine", _sorted_quarantine(quarantine), part, file=STAGE)
            )
        else:
            self._wh.remove("quarantine", part, file=STAGE)
        self.runs_written.inc()
        self.files_written.inc(len(paths))
        progress.tick("runs written")
        yield from (str(p) for p in paths)

    def teardown(self) -> None:
        sources = getattr(self, "_sources", None)
        if sources is not None:
            sources.close()


class WriteSourceProblemFn(beam.DoFn):
    """SourceProblem -> the source's own quarantine partition (removed when it has none)."""

    def __init__(self, warehouse: str) -> None:
        self.warehouse = warehouse

    def setup(self) -> None:
        from deskscore.collectors.warehouse import Warehouse

        self._wh = Warehouse(self.warehouse)

    def process(self, problem: SourceProblem) -> Iterator[str]:
        part = {"benchmark": problem.benchmark, "run_id": problem.run_id}
        if problem.quarantine:
            rows = _sorted_quarantine(problem.quarantine)
            yield str(self._wh.write("quarantine", rows, part, file=STAGE))
        else:
            self._wh.remove("quarantine", part, file=STAGE)


class IngestRuns(beam.PTransform):
    """RunWork -> written partition paths; runs are spread over the workers first."""

    def __init__(self, warehouse: str, layout: str | None, force: bool = False) -> None:
        super().__init__()
        self.fn = IngestRunFn(warehouse, layout, force)

    def expand(self, runs: beam.PCollection) -> beam.PCollection:
        return runs | "Spread" >> beam.Reshuffle() | "ReadWrite" >> beam.ParDo(self.fn)


class WriteSourceProblems(beam.PTransform):
    """SourceProblem -> the sources' quarantine partitions."""

    def __init__(self, warehouse: str) -> None:
        super().__init__()
        self.warehouse = warehouse

    def expand(self, problems: beam.PCollection) -> beam.PCollection:
        return problems | "Write" >> beam.ParDo(WriteSourceProblemFn(self.warehouse))

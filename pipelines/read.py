"""Stage 2 of ingest: read each task folder into an episode, its steps and its quarantine."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics

from deskscore.pipelines import progress
from deskscore.pipelines.elements import TaskWork

_OPEN_SOURCES = 8  # a zip's central directory is parsed once per worker, not once per task


class ReadEpisodeFn(beam.DoFn):
    """TaskWork -> (run_id, EpisodeCalls): the episode's rows and its model calls."""

    def __init__(self) -> None:
        self.episodes = Metrics.counter("ingest", "episodes")
        self.steps = Metrics.counter("ingest", "steps")
        self.lines = Metrics.counter("ingest", "traj_lines")
        self.quarantined = Metrics.counter("ingest", "quarantined")
        self.quarantined_lines = Metrics.counter("ingest", "quarantined_lines")
        self.llm_calls = Metrics.counter("ingest", "llm_calls")

    def setup(self) -> None:
        self._sources: OrderedDict[str, Any] = OrderedDict()

    def _source(self, uri: str) -> Any:
        from deskscore.collectors.source import open_source

        if uri in self._sources:
            self._sources.move_to_end(uri)
            return self._sources[uri]
        source = open_source(uri)
        self._sources[uri] = source
        while len(self._sources) > _OPEN_SOURCES:
            _, old = self._sources.popitem(last=False)
            close = getattr(old, "close", None)
            if close:
                close()
        return source

    def process(self, work: TaskWork) -> Iterator[tuple[str, Any]]:
        from deskscore.collectors.layout import RunFolder
        from deskscore.collectors.osworld import EpisodeCalls, read_episode_calls
        from deskscore.collectors.uitars import read_uitars_episode

        source = self._source(work.source)
        run = RunFolder(work.run_path, work.format, ())
        kwargs: dict[str, Any] = {"run_id": work.run_id, "benchmark": work.benchmark}
        if work.format == "uitars":
            out = EpisodeCalls(read_uitars_episode(source, run, work.task, **kwargs), [])
        else:
            out = read_episode_calls(source, run, work.task, reported=work.reported, **kwargs)
        read = out.read
        self.episodes.inc()
        progress.tick("episodes")
        self.steps.inc(len(read.steps))
        self.lines.inc(read.episode["n_lines"])
        self.quarantined.inc(len(read.quarantine))
        self.quarantined_lines.inc(read.episode["n_quarantined"])
        self.llm_calls.inc(len(out.llm_calls))
        yield work.run_id, out

    def teardown(self) -> None:
        for source in getattr(self, "_sources", {}).values():
            close = getattr(source, "close", None)
            if close:
                close()


class ReadEpisodes(beam.PTransform):
    """TaskWork -> (run_id, EpisodeCalls), spread over workers first."""

    def expand(self, tasks: beam.PCollection) -> beam.PCollection:
        return tasks | "Spread" >> beam.Reshuffle() | "Read" >> beam.ParDo(ReadEpisodeFn())

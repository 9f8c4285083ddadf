"""`deskscore ingest`: sources -> runs, episodes, steps and quarantine partitions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import apache_beam as beam

from deskscore.pipelines.discover import PROBLEMS_TAG, RUNS_TAG, DiscoverTasks
from deskscore.pipelines.read import ReadEpisodes
from deskscore.pipelines.runner import counters, pipeline
from deskscore.pipelines.write import WriteRunTables


class IngestResult(NamedTuple):
    counters: dict[str, int]
    files_written: int


def run_ingest(
    sources: Sequence[str],
    warehouse: str,
    *,
    benchmark: str = "osworld",
    layout: str | None = None,
    beam_args: Sequence[str] = (),
) -> IngestResult:
    """Ingest `sources` into `warehouse` with Beam and return the run's counters."""
    p = pipeline(beam_args)
    found = (
        p
        | "Sources" >> beam.Create(sorted(set(sources)))
        | "DiscoverTasks" >> DiscoverTasks(benchmark, layout)
    )
    episodes = found.tasks | "ReadEpisodes" >> ReadEpisodes()
    written = {
        "runs": found[RUNS_TAG],
        "problems": found[PROBLEMS_TAG],
        "episodes": episodes,
    } | "WriteRunTables" >> WriteRunTables(warehouse)
    _ = written | "CountFiles" >> beam.Map(
        lambda _: beam.metrics.Metrics.counter("ingest", "files_written").inc()
    )
    result = p.run()
    result.wait_until_finish()
    values = counters(result)
    return IngestResult(values, values.get("files_written", 0))

"""Stage 1 of ingest: open each source, list it once, and name the runs it holds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics

from deskscore.pipelines.infra import progress
from deskscore.pipelines.stages.elements import RunWork, SourceProblem

PROBLEMS_TAG = "problems"


def _problem_rows(
    source: str, benchmark: str, run_id: str, items: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    return [
        {
            "run_id": run_id,
            "benchmark": benchmark,
            "source": source,
            "location": item.get("location") or "",
            "line_no": item.get("line_no"),
            "reason": item.get("reason") or "source_problem",
            "message": item.get("message") or "",
            "excerpt": item.get("excerpt"),
        }
        for item in items
    ]


class DiscoverFn(beam.DoFn):
    """(source URI, stamp) -> RunWork per run (main), SourceProblem per source (tagged)."""

    def __init__(self, benchmark: str, layout: str | None) -> None:
        self.benchmark = benchmark
        self.layout = layout
        self.files_seen = Metrics.counter("ingest", "files_seen")
        self.runs_found = Metrics.counter("ingest", "runs")
        self.tasks_found = Metrics.counter("ingest", "task_folders")
        self.sources_failed = Metrics.counter("ingest", "sources_unreadable")

    def process(self, planned: tuple[str, str | None]) -> Iterator[Any]:
        """planned: (source URI, its stamp, taken before it is opened: a change while it is
        being read is caught by the next ingest)."""
        from deskscore.collectors.ids import run_id as make_run_id
        from deskscore.collectors.ids import source_id
        from deskscore.collectors.layout import discover
        from deskscore.collectors.source import SourceError, open_source

        uri, stamp = planned
        try:
            source = open_source(uri)
        except SourceError as exc:
            self.sources_failed.inc()
            item = {"location": "", "reason": "unreadable_source", "message": str(exc)}
            yield beam.pvalue.TaggedOutput(
                PROBLEMS_TAG,
                SourceProblem(
                    source_id(uri),
                    self.benchmark,
                    _problem_rows(uri, self.benchmark, source_id(uri), [item]),
                ),
            )
            return
        files = source.files()
        self.files_seen.inc(len(files))
        problems = list(getattr(source, "problems", []) or [])
        runs = discover(files, self.layout)
        if not runs:
            problems.append(
                {
                    "location": "",
                    "reason": "no_task_folders",
                    "message": (
                        f"{source.uri}: no task folders found ({len(files)} files). OSWorld trees are "
                        "found by their <domain>/<uuid>/ folders; for other trees pass --layout, "
                        "e.g. --layout '{domain}/{task_id}'"
                    ),
                }
            )
        sid = source_id(source.uri)  # emitted even when empty: it clears an earlier list
        yield beam.pvalue.TaggedOutput(
            PROBLEMS_TAG,
            SourceProblem(
                sid, self.benchmark, _problem_rows(source.uri, self.benchmark, sid, problems)
            ),
        )
        for run in runs:
            self.runs_found.inc()
            self.tasks_found.inc(len(run.tasks))
            progress.tick("runs found")
            yield RunWork(
                make_run_id(source.uri, run.run_path),
                self.benchmark,
                source.uri,
                run.run_path,
                run.format,
                stamp,
            )
        close = getattr(source, "close", None)
        if close:
            close()


class DiscoverRuns(beam.PTransform):
    """(source, stamp) pairs -> (runs, problems) PCollections."""

    def __init__(self, benchmark: str, layout: str | None) -> None:
        super().__init__()
        self.benchmark = benchmark
        self.layout = layout

    def expand(self, sources: beam.PCollection) -> beam.pvalue.DoOutputsTuple:
        return sources | "Discover" >> beam.ParDo(
            DiscoverFn(self.benchmark, self.layout)
        ).with_outputs(PROBLEMS_TAG, main="runs")

"""Stage 1 of ingest: open each source, find its runs and task folders, read run metadata."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics

from deskscore.pipelines import progress
from deskscore.pipelines.elements import RunWork, SourceProblem, TaskWork

RUNS_TAG = "runs"
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
    """Source URI -> TaskWork per task folder (main), RunWork per run, SourceProblem per source."""

    def __init__(self, benchmark: str, layout: str | None) -> None:
        self.benchmark = benchmark
        self.layout = layout
        self.files_seen = Metrics.counter("ingest", "files_seen")
        self.runs_found = Metrics.counter("ingest", "runs")
        self.tasks_found = Metrics.counter("ingest", "task_folders")
        self.sources_failed = Metrics.counter("ingest", "sources_unreadable")

    def process(self, uri: str) -> Iterator[Any]:
        from deskscore.collectors.ids import run_id as make_run_id
        from deskscore.collectors.ids import source_id
        from deskscore.collectors.layout import discover
        from deskscore.collectors.run_meta import read_run_meta
        from deskscore.collectors.source import SourceError, open_source

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
        if problems:
            sid = source_id(source.uri)
            yield beam.pvalue.TaggedOutput(
                PROBLEMS_TAG,
                SourceProblem(
                    sid, self.benchmark, _problem_rows(source.uri, self.benchmark, sid, problems)
                ),
            )
        for run in runs:
            rid = make_run_id(source.uri, run.run_path)
            meta = read_run_meta(source, run, run_id=rid, benchmark=self.benchmark)
            self.runs_found.inc()
            yield beam.pvalue.TaggedOutput(
                RUNS_TAG, RunWork(rid, self.benchmark, meta.run, meta.quarantine)
            )
            for task in run.tasks:
                self.tasks_found.inc()
                progress.tick("task folders")
                yield TaskWork(
                    source.uri,
                    self.benchmark,
                    rid,
                    run.run_path,
                    run.format,
                    task,
                    meta.reported.get((task.domain, task.task_id)),
                )


class DiscoverTasks(beam.PTransform):
    """Sources -> (tasks, runs, problems) PCollections."""

    def __init__(self, benchmark: str, layout: str | None) -> None:
        super().__init__()
        self.benchmark = benchmark
        self.layout = layout

    def expand(self, sources: beam.PCollection) -> beam.pvalue.DoOutputsTuple:
        return sources | "Discover" >> beam.ParDo(
            DiscoverFn(self.benchmark, self.layout)
        ).with_outputs(RUNS_TAG, PROBLEMS_TAG, main="tasks")

"""The elements that flow between ingest stages: small, picklable, keyed by run."""

from __future__ import annotations

from typing import Any, NamedTuple


class RunWork(NamedTuple):
    """A run found in a source: where to find it again. It carries no task list, so a release
    of hundreds of runs is a few hundred small elements, and a worker reads one run at a time."""

    run_id: str
    benchmark: str
    source: str
    run_path: str
    format: str
    source_stamp: str | None


class SourceProblem(NamedTuple):
    """Something about a whole source (unreadable archive, unsafe member) that belongs to no run."""

    run_id: str
    benchmark: str
    quarantine: list[dict[str, Any]]

"""The elements that flow between ingest stages: small, picklable, keyed by run."""

from __future__ import annotations

from typing import Any, NamedTuple


class RunWork(NamedTuple):
    """A run found in a source, with its `runs` row and the items its metadata quarantined."""

    run_id: str
    benchmark: str
    run: dict[str, Any]
    quarantine: list[dict[str, Any]]


class TaskWork(NamedTuple):
    """One task folder to read: an episode. Carries no other task, so it pickles small."""

    source: str
    benchmark: str
    run_id: str
    run_path: str
    format: str
    task: Any  # collectors.layout.TaskFolder
    reported: dict[str, Any] | None


class SourceProblem(NamedTuple):
    """Something about a whole source (unreadable archive, unsafe member) that belongs to no run."""

    run_id: str
    benchmark: str
    quarantine: list[dict[str, Any]]

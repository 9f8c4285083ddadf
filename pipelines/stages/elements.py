"""The elements ingest hands its stage: small, picklable, keyed by run."""

from __future__ import annotations

from typing import Any, NamedTuple

from deskscore.pipelines.stages.base import RunKey


class RunWork(NamedTuple):
    """A run found in a source: where to find it again. It carries no task list, so a release
    of hundreds of runs is a few hundred small elements, and a worker reads one run at a time."""

    key: RunKey
    run_path: str
    source_stamp: str | None
    """The source's stamp when the ingest was planned (before it was opened)."""
    trial: str | None = None
    """runs.trial: which trial of its configuration the run is (None: not a trial)."""
    run_group: str | None = None
    """runs.run_group: the configuration it is a trial of (None: the run itself)."""

    @property
    def partition(self) -> dict[str, str]:
        return self.key.partition


class SourceListing(NamedTuple):
    """What listing one source found: its runs, how many files it holds, and the problems
    that belong to the source rather than to a run (unreadable archive, unsafe member, no task
    folder)."""

    uri: str
    n_files: int
    n_task_folders: int
    runs: list[RunWork]
    problems: list[dict[str, Any]]
    """Quarantine rows of the source's own partition (run_id = the source's id)."""


class SourceItem(NamedTuple):
    """A source to list and ingest in one go (see `IngestStage.process`): a worker that lists
    it reads its run with the source still open, rather than handing the run back to be
    listed again by whichever worker takes it."""

    uri: str
    stamp: str | None
    benchmark: str
    layout: str | None
    trial_of: str | None = None


class ListedSource(NamedTuple):
    """What `IngestStage.process` yields for a SourceItem: the listing, and whether its runs
    were read there (a source of one run) or are left for the job to hand out (several)."""

    listing: SourceListing
    read: bool

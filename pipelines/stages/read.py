"""Stage 2 of ingest, the reading half: one run's metadata and task folders into rows.

A run is the unit of work: its reader lists the source once per worker (a zip's central
directory is parsed once, not once per task), reads only the members the tables need
(`traj.jsonl`, `result.txt`, `args.json`, usage files; screenshots are listed, never
decompressed) and keeps one run's rows at a time, so memory follows the largest run, not
the size of the release; the caps of `collectors.limits` bound the largest run.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NamedTuple

from deskscore.pipelines.stages.elements import RunWork

INGEST_VERSION = 2
"""Bumped whenever a reader's rows for the same bytes change: part of every run's content
hash, so runs ingested by older readers are redone, never kept as 'unchanged'."""

_EPISODE_KEY = ("domain", "task_id", "source_task_id", "task_path")
_OPEN_SOURCES = 4


class RunRead(NamedTuple):
    """One run's rows: the `runs` row (with its content hash), each episode's EpisodeCalls in
    episode order, and what its metadata quarantined."""

    run: dict[str, Any]
    episodes: list[Any]  # collectors.osworld.EpisodeCalls
    quarantine: list[dict[str, Any]]


def read_run(source: Any, run: Any, work: RunWork) -> RunRead:
    """Read the run `run` (a collectors.layout.RunFolder of `source`) completely, with the
    readers of its format."""
    from deskscore.collectors import limits
    from deskscore.collectors.archives import DigestingSource
    from deskscore.collectors.formats import get
    from deskscore.collectors.trials import shares_root
    from deskscore.schemas import SCHEMA_VERSION

    key = work.key
    fmt = get(key.format)
    digesting = DigestingSource(source)
    meta = fmt.read_run_meta(digesting, run, run_id=key.run_id, benchmark=key.benchmark)
    # a summary at a root the trials share cannot say which trial it scored
    reported = {} if shares_root(run) else meta.reported
    with limits.run_budget():  # one cap on the trajectory lines parsed in the whole run
        episodes = fmt.episodes(
            digesting, run, run_id=key.run_id, benchmark=key.benchmark, reported=reported
        )
    episodes.sort(key=lambda o: tuple(o.read.episode[k] for k in _EPISODE_KEY))
    row = dict(meta.run)
    row["source_stamp"] = work.source_stamp
    row["trial"] = work.trial
    row["run_group"] = work.run_group or key.run_id
    grouped = work.trial is not None or row["run_group"] != key.run_id
    grouping = (f"trial {work.trial} of {row['run_group']}",) if grouped else ()
    row["content_hash"] = digesting.digest(
        f"ingest {SCHEMA_VERSION}.{INGEST_VERSION}", key.benchmark, key.format, *grouping
    )
    return RunRead(row, episodes, list(meta.quarantine))


class OpenSources:
    """The few sources a worker reads from, each opened and listed once (LRU)."""

    def __init__(self, layout: str | None, size: int = _OPEN_SOURCES) -> None:
        self.layout = layout
        self.size = size
        self._open: OrderedDict[str, tuple[Any, dict[str, Any]]] = OrderedDict()

    def run(self, uri: str, run_id: str) -> tuple[Any, Any]:
        """(source, RunFolder of that id, or None when the run is no longer in the source)."""
        from deskscore.collectors.layout import discover_source
        from deskscore.collectors.source import open_source
        from deskscore.collectors.trials import run_identity

        if uri in self._open:
            self._open.move_to_end(uri)
        else:
            source = open_source(uri)
            found, _ = discover_source(source, self.layout)
            runs = {run_identity(source.uri, r)[0]: r for r in found}
            self._open[uri] = (source, runs)
            while len(self._open) > self.size:
                _, (old, _) = self._open.popitem(last=False)
                old.close()
        source, runs = self._open[uri]
        return source, runs.get(run_id)

    def close(self) -> None:
        for source, _ in self._open.values():
            source.close()
        self._open.clear()

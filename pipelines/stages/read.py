"""Stage 2 of ingest, the reading half: one run's metadata and task folders into rows.

A run is the unit of work: its reader lists the source once per worker (a zip's central
directory is parsed once, not once per task), reads only the members the tables need
(`traj.jsonl`, `result.txt`, `args.json`, usage files; screenshots are listed, never
decompressed) and turns each episode's rows into Arrow columns as soon as it is read, so a
worker holds one run's columns, and memory follows the largest run, not the size of the
release; the caps of `collectors.limits` bound the largest run.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NamedTuple

from deskscore.pipelines.stages.elements import RunWork

INGEST_VERSION = 4
"""Bumped whenever a reader's rows for the same bytes change: part of every run's content
hash, so runs ingested by older readers are redone, never kept as 'unchanged'."""

_EPISODE_KEY = ("domain", "task_id", "source_task_id", "task_path")
_OPEN_SOURCES = 4


class RunRead(NamedTuple):
    """One run, read: the `runs` row (with its content hash), its tables as columns (episodes,
    steps, step_actions, llm_calls, and interactions for formats that record exchanges), each
    in episode order, the quarantine rows of its metadata and episodes, and how many episodes
    it has."""

    run: dict[str, Any]
    tables: dict[str, Any]  # table name -> pyarrow.Table
    quarantine: list[dict[str, Any]]
    n_episodes: int


CHUNK_ROWS = 4096
"""Rows a table keeps as Python dicts (or lists, see `schemas.validate.ColumnRows`) before
they become an Arrow chunk: a run's rows are held as Arrow columns (a tenth of the memory of
dicts), never all at once as Python objects."""


class RunColumns:
    """A run's rows turned into Arrow chunks as its episodes are read, then put in episode
    order (by `_EPISODE_KEY`) at the end: each table remembers how many rows each episode
    gave, so reordering is one `take` per table, and none when the episodes came in order."""

    TABLES = ("episodes", "steps", "step_actions", "llm_calls", "interactions")

    def __init__(self) -> None:
        self._rows: dict[str, list[dict[str, Any]]] = {t: [] for t in self.TABLES}
        self._columns: dict[str, dict[str, list[Any]]] = {t: {} for t in self.TABLES}
        """Rows that came as columns (`ColumnRows`), kept as columns; a table buffers rows
        of one kind at a time, so its chunks stay in episode order."""
        self._pending: dict[str, int] = dict.fromkeys(self.TABLES, 0)
        self._chunks: dict[str, list[Any]] = {t: [] for t in self.TABLES}
        self._spans: dict[str, list[int]] = {t: [] for t in self.TABLES}
        self._keys: list[tuple[Any, ...]] = []
        self.quarantine: list[dict[str, Any]] = []
        self.interactions = False
        """Whether any episode's format records exchanges (then the run has the table)."""

    def add(self, episode: Any) -> None:
        """One EpisodeCalls (collectors.osworld), taken apart into the tables' buffers."""
        from deskscore.collectors.actions import derived_action_rows

        read = episode.read
        actions = read.actions if read.actions is not None else derived_action_rows(read.steps)
        if episode.interactions is not None:
            self.interactions = True
        parts = {
            "episodes": [read.episode],
            "steps": read.steps,
            "step_actions": actions,
            "llm_calls": episode.llm_calls,
            "interactions": episode.interactions or [],
        }
        self._keys.append(tuple(read.episode[k] for k in _EPISODE_KEY))
        self.quarantine.extend(read.quarantine)
        for name, rows in parts.items():
            self._spans[name].append(len(rows))
            if not len(rows):
                continue  # an episode without steps leaves the buffer's kind as it is
            columns = getattr(rows, "columns", None)
            if columns is not None:
                held = self._columns[name]
                if self._rows[name] or (held and held.keys() != columns.keys()):
                    self._flush(name)
                    held = self._columns[name]
                if held:
                    for key, values in columns.items():
                        held[key].extend(values)
                else:
                    self._columns[name] = {key: list(values) for key, values in columns.items()}
            else:
                if self._columns[name]:
                    self._flush(name)
                self._rows[name].extend(rows)
            self._pending[name] += len(rows)
            if self._pending[name] >= CHUNK_ROWS:
                self._flush(name)

    @property
    def n_episodes(self) -> int:
        return len(self._keys)

    def _flush(self, name: str) -> None:
        from deskscore.schemas.validate import conform_columns, conform_rows

        if self._rows[name]:
            self._chunks[name].append(conform_rows(name, self._rows[name]))
            self._rows[name] = []
        if self._columns[name]:
            self._chunks[name].append(conform_columns(name, self._columns[name]))
            self._columns[name] = {}
        self._pending[name] = 0

    def tables(self) -> dict[str, Any]:
        """Every table's rows in episode order (interactions only when the format records
        them); the buffers are emptied."""
        import pyarrow as pa

        from deskscore.schemas import arrow_schema

        order = sorted(range(len(self._keys)), key=self._keys.__getitem__)
        out = {}
        for name in self.TABLES:
            if name == "interactions" and not self.interactions:
                continue
            self._flush(name)
            chunks = self._chunks.pop(name)
            table = pa.concat_tables(chunks) if chunks else arrow_schema(name).empty_table()
            if order != sorted(order):
                starts, at = [], 0
                for n in self._spans[name]:
                    starts.append(at)
                    at += n
                spans = self._spans[name]
                take = [i for e in order for i in range(starts[e], starts[e] + spans[e])]
                table = table.take(pa.array(take, type=pa.int64()))
            out[name] = table
        return out


def read_run(source: Any, run: Any, work: RunWork) -> RunRead:
    """Read the run `run` (a collectors.layout.RunFolder of `source`) completely, with the
    readers of its format, each episode turned into columns as soon as it is read."""
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
    columns = RunColumns()
    with limits.run_budget():  # one cap on the trajectory lines parsed in the whole run
        for episode in fmt.iter_episodes(
            digesting, run, run_id=key.run_id, benchmark=key.benchmark, reported=reported
        ):
            columns.add(episode)
    row = dict(meta.run)
    row["source_stamp"] = work.source_stamp
    row["trial"] = work.trial
    row["run_group"] = work.run_group or key.run_id
    grouped = work.trial is not None or row["run_group"] != key.run_id
    grouping = (f"trial {work.trial} of {row['run_group']}",) if grouped else ()
    row["content_hash"] = digesting.digest(
        f"ingest {SCHEMA_VERSION}.{INGEST_VERSION}", key.benchmark, key.format, *grouping
    )
    tables = columns.tables()
    return RunRead(row, tables, list(meta.quarantine) + columns.quarantine, columns.n_episodes)


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

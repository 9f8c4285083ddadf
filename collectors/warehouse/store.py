"""The Parquet warehouse: where each table's files live, how they are written, and how a change
of many files becomes visible at once.

Layout: `<root>/<table>/<key>=<value>/.../<name>--<digest>.parquet`, partitioned by benchmark
and run (never by episode: DuckDB pays ~130 us per file). A file is named by a digest of its
bytes and never changes once written; which files make up the tables is the manifest's
business (`deskscore.schemas.manifest`): a *slot* (table, partition, name) points at one file,
or at a run's row groups inside a pack.

Writes go through a transaction (`Warehouse.transaction()`): every `write`/`remove` of the job,
in whichever worker process, is logged in the job's journal (`_manifest/jobs/<job>/`); at the
end the job commits, and the journal is applied to the manifest in one rename. So a job's
outputs, its "done" records (`sources`, `score_inputs`) and any compaction appear together or
not at all; readers follow the manifest and see one consistent version; a job killed anywhere
leaves the previous version, and its files are collected by the next one. A `Warehouse`
opened without a job commits each write at once (tests, small tools).

Packs: many small runs would make many small files, so `compact` folds the small files of a
table into packs, `<table>/benchmark=<b>/_packs/<name>--<digest>.parquet`, one row group per
run. A slot of a packed run points at its row group; replacing or removing such a run rewrites
the pack without it in the same commit, so no file a reader opens holds a stale row. A job
that writes many runs can also put them into packs as it writes them (`pack_writes`): each
process keeps a pack per table open and journals its runs when the pack is closed and named,
so their rows are written once.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import deskscore.scorers.metrics  # noqa: F401  (declares the score tables' metric columns)
from deskscore.collectors.warehouse.views import Partitions, PendingView, apply_op, op_order
from deskscore.schemas import SCHEMA_VERSION, conform_rows, table
from deskscore.schemas.manifest import (
    CURRENT,
    Entry,
    Manifest,
    current_generation,
    generation_file,
    generation_files,
    manifest_dir,
    read_manifest,
    slot_key,
    split_partition,
    split_slot,
    unreadable_file,
)

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

_SAFE = re.compile(r"[^A-Za-z0-9._@+-]")

PACK_DIR = "_packs"
SMALL_FILE_BYTES = 4 << 20
"""Run files below this size are folded into packs by `compact`."""
PACK_TARGET_BYTES = 32 << 20
"""A pack is closed once it holds this much; bounded so replacing one run rewrites little."""
PACK_MAX_RUNS = 128
"""A pack is also closed once it holds this many runs (row groups). Reading one run's rows
parses the pack's whole footer, about 3.5 KB per run for `runs`' 20 columns: one run's row
group of a 1,000-run pack took 11.8 ms to open and read, of a 128-run pack 1.8 ms, and a score
opened files 34 times per run. Scoring 1,000 runs under a new configuration took 107 s with
packs of at most 128 runs, 153 s with packs of 1,000. A pack holding more (written before)
is split the next time its table is packed."""
LZ4_BELOW_ROWS = 2048
"""Row groups (a run's rows of a table: one row group per run, in a pack or a run's own file)
of fewer rows are compressed with lz4, larger ones with zstd. zstd costs a context per column
chunk, which small row groups pay for every column of every run: a pack of 1,000 runs' `runs`
rows (one each) took 0.37 s to read and 0.97 s to write with zstd, 0.07 s and 0.29 s with lz4,
at the same size; their `episode_scores` (365 rows each) 0.49 s against 0.13 s, 18 against
25 MB. From a run's steps up (thousands of rows) the two read alike and zstd is a third
smaller."""


def _refillable(runs: int, size: int, target_bytes: int) -> bool:
    """Whether packing a pack's table again rewrites it: when it has room for more runs, or
    holds more than a pack may now hold."""
    return runs > PACK_MAX_RUNS or (runs < PACK_MAX_RUNS and size < target_bytes)


def _codec(rows_per_group: float | None) -> str:
    """The compression for row groups of about this many rows (see LZ4_BELOW_ROWS)."""
    return "lz4" if rows_per_group is not None and rows_per_group < LZ4_BELOW_ROWS else "zstd"


def _mean_rows(entries: Iterable[Entry]) -> float | None:
    """Mean rows of the slots (None when the manifest does not record them)."""
    rows = [e.rows for e in entries]
    return None if not rows or None in rows else sum(rows) / len(rows)  # type: ignore[arg-type]


DIRECT_PACK_BYTES = 4 * SMALL_FILE_BYTES
"""A run's table under this much Arrow memory goes straight into a pack when the warehouse
packs writes (`Warehouse(pack_writes=True)`): about a SMALL_FILE_BYTES file, the size below
which `compact` would fold it into a pack afterwards (Arrow holds ~4x its Parquet). A larger
one is written as a file first, and goes into the pack when that file is under
SMALL_FILE_BYTES after all: a run's model calls hold ~10x their Parquet in Arrow, and at 80
archives `compact` folded 18 such files (972,656 calls) in 1.9 s, in one process, after the
workers had finished."""
MIN_SMALL_FILES = 8
"""`compact` leaves a table alone until it has this many small files of one kind."""
KEEP_GENERATIONS = 3
"""Generations kept on disk: a reader that read the manifest up to this many commits ago can
still open every file it lists."""
JOBS_DIR = "jobs"
TMP_DIR = "tmp"


def _segment(value: str) -> str:
    """A partition value as one safe path segment (no separators, no '..')."""
    text = _SAFE.sub("_", str(value)) or "_"
    return "_" if text in {".", ".."} else text


def _file_slot_name(path: Path) -> str:
    """The slot name a data file belongs to: `data--<digest>` -> `data` (a file named before
    digests, `data.parquet`, is its own name)."""
    return path.stem.rsplit("--", 1)[0]


def open_parquet(path: Path) -> pq.ParquetFile:
    """`path` opened with its footer parsed once per process: a scoring job reads a run's
    episodes five times and its steps twice, and packing reads a pack being refilled run by
    run, from packs of many runs whose footers (40 KB of Thrift for 10 runs' row groups) took
    longer to parse than a run's rows to read. The footer is remembered under the file's
    identity and size (`_footer`): a file replaced under the same name is another file."""
    import pyarrow.parquet as pq

    st = os.stat(path)
    return pq.ParquetFile(path, metadata=_footer(str(path), st.st_ino, st.st_size, st.st_mtime_ns))


@functools.lru_cache(maxsize=32)
def _footer(path: str, inode: int, size: int, mtime_ns: int) -> pq.FileMetaData:
    """The footer of the file `path` named when it had this inode, size and time."""
    import pyarrow.parquet as pq

    return pq.read_metadata(path)


def runs_in_pack(path: Path) -> dict[str, list[int]]:
    """run_id -> the row groups holding it, from the pack's footer alone (no data read)."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    col = meta.schema.names.index("run_id")
    out: dict[str, list[int]] = {}
    for i in range(meta.num_row_groups):
        stats = meta.row_group(i).column(col).statistics
        if stats is None or not stats.has_min_max or stats.min != stats.max:
            raise ValueError(f"{path}: row group {i} does not hold exactly one run")
        out.setdefault(str(stats.min), []).append(i)
    return out


def _conform(data: pa.Table, schema: pa.Schema) -> pa.Table:
    """`data` in `schema`: columns a file predates (an older schema) read as nulls. Columns
    already of their declared types are only relabelled: a cast, even to the same types,
    imports pyarrow.compute: 25 ms, a ninth of the imports of a one-run ingest."""
    import pyarrow as pa

    present = set(data.column_names)  # a list built anew at each look: most of a read's cost
    for f in schema:
        if f.name not in present:
            data = data.append_column(f.name, pa.nulls(data.num_rows, f.type))
    data = data.select(schema.names)
    if data.schema.equals(schema, check_metadata=False):
        return pa.Table.from_arrays(data.columns, schema=schema)
    return data.cast(schema)


_BYTES_NAME = re.compile(r"--[0-9a-f]{16}\.parquet$")


def named_by_bytes(file: str) -> bool:
    """Whether a data file's name is its bytes' digest (see `_write_parquet`): such a file is
    never rewritten in place, so what is known of it by name stays true. A file written
    before files were named so (`data.parquet`) may have been."""
    return _BYTES_NAME.search(file) is not None


def _write_parquet(
    root: Path, target_dir: Path, name: str, write: Any, keep: Any = None
) -> Path | None:
    """Write a file with `write(tmp_path)` and give it its final, content-derived name (None:
    `keep(tmp_path)` said not to keep it). The temporary file is made in the warehouse's
    `_manifest/tmp`, which the next writer clears (a write killed before its rename leaves
    nothing among the tables)."""
    tmp = _tmp_file(root, name)
    try:
        write(tmp)
        return _publish(tmp, target_dir, name) if keep is None or keep(tmp) else None
    finally:
        if tmp.exists():
            tmp.unlink()


def _tmp_file(root: Path, name: str) -> Path:
    """A new temporary file's path in `_manifest/tmp` (see `_write_parquet`)."""
    tmp_dir = manifest_dir(root) / TMP_DIR
    tmp_dir.mkdir(parents=True, exist_ok=True)
    return tmp_dir / f"{_segment(name)}.{uuid.uuid4().hex}.tmp"


def _publish(tmp: Path, target_dir: Path, name: str) -> Path:
    """Move a finished temporary file to `target_dir` under its content-derived name."""
    target_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1()
    with open(tmp, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    final = target_dir / f"{_segment(name)}--{digest.hexdigest()[:16]}.parquet"
    os.replace(tmp, final)  # the same bytes under the same name when it exists already
    return final


class _OpenPack:
    """A pack being written, one run's table (a row group) at a time: its temporary file,
    open writer, and the slots of its row groups, in order. Compaction fills one from run
    files (`Warehouse._fold`); a warehouse that packs as it writes keeps one open per table
    (`pack_writes`). Nothing of it is journaled until it is closed and named."""

    def __init__(
        self, root: Path, name: str, slot: str, codec: str, target_bytes: int = PACK_TARGET_BYTES
    ) -> None:
        import pyarrow.parquet as pq

        from deskscore.schemas import arrow_schema

        self.schema = arrow_schema(name)
        self.slot = slot
        self.target_bytes = target_bytes
        self.tmp = _tmp_file(root, slot)
        self.writer: Any = pq.ParquetWriter(self.tmp, self.schema, compression=codec)
        self.slots: list[tuple[str, int]] = []
        self.size = 0
        """Arrow bytes written (in-memory Arrow is ~4x its Parquet)."""

    def add(self, key: str, data: pa.Table) -> None:
        self.writer.write_table(_conform(data, self.schema), row_group_size=1 << 30)
        self.slots.append((key, data.num_rows))
        self.size += data.nbytes

    @property
    def full(self) -> bool:
        """About `target_bytes` of Parquet, or PACK_MAX_RUNS runs."""
        return self.size >= 4 * self.target_bytes or len(self.slots) >= PACK_MAX_RUNS

    def close(self, target_dir: Path) -> Path:
        """The finished pack under its final name (removed when closing it fails)."""
        try:
            self.writer.close()
            return _publish(self.tmp, target_dir, self.slot)
        finally:
            self.tmp.unlink(missing_ok=True)

    def discard(self) -> None:
        """A pack cut short by an error: its temporary file goes."""
        with contextlib.suppress(Exception):
            self.writer.close()
        self.tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def _flocked(path: Path) -> Iterator[None]:
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Compaction:
    """What `compact` did to one table: files folded in, packs written."""

    table: str
    files_in: int
    packs_out: int
    rows: int


class Warehouse:
    """A warehouse rooted at a local (or shared) folder.

    `job`: the transaction this instance writes for (its writes are journaled and become
    visible when the job commits); None commits every write at once. `pending`: reads also
    see the job's uncommitted writes (the job's driver, checking its outputs before it
    commits). `pack_writes` (with a job): a run's small, non-empty table goes straight into
    a pack this instance keeps open (see `DIRECT_PACK_BYTES`), journaled when the pack is
    closed, by `flush_packs` or `close`; so a job of many runs writes each row once, instead
    of a file per run that `compact` then reads and writes again."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        job: str | None = None,
        *,
        pending: bool = False,
        pack_writes: bool = False,
    ) -> None:
        from deskscore.schemas.validate import pyarrow_without_pandas

        if pack_writes and job is None:
            raise ValueError("pack_writes needs a job: a pack is journaled when it is closed")
        pyarrow_without_pandas()  # the warehouse builds arrays: see its doc
        self.root = Path(root).resolve()
        self.job = job
        self.pending = pending
        self._packs: dict[tuple[str, str, str], _OpenPack] | None = {} if pack_writes else None
        """Open packs by (table, partition folder above the run, slot name)."""
        self._cached: tuple[int | None, Manifest] | None = None
        self._pending_view: PendingView | None = None
        self._partitions: Partitions | None = None
        self._journal: Any = None

    # ------------------------------------------------------------------ layout

    def table_dir(self, name: str) -> Path:
        table(name)  # rejects unknown tables
        return self.root / name

    def partition_of(self, name: str, partition: Mapping[str, str]) -> str:
        """The partition's folder path inside its table, e.g. `benchmark=osworld/run_id=ab`."""
        decl = table(name)
        missing = [k for k in decl.partition if k not in partition]
        if missing:
            raise ValueError(f"{name}: partition needs {missing}")
        return "/".join(f"{k}={_segment(partition[k])}" for k in decl.partition)

    def partition_dir(self, name: str, partition: Mapping[str, str]) -> Path:
        rel = self.partition_of(name, partition)
        return self.table_dir(name) / rel if rel else self.table_dir(name)

    # ------------------------------------------------------------------ the manifest

    def manifest(self) -> Manifest:
        """The committed manifest (plus the job's pending writes, when `pending`)."""
        generation = current_generation(self.root)
        if self._cached is None or self._cached[0] != generation:
            self._cached = (generation, committed(self.root))
        manifest = self._cached[1]
        if self.pending and self.job is not None:
            # only what the job's journals gained since the last read is parsed (see views)
            view = self._pending_view
            changed = None
            if view is not None and view.generation == manifest.generation:
                changed = view.update()
            if changed is None:  # a first read, a new generation, or a line out of order
                view = self._pending_view = PendingView(manifest, self._journal_dir())
                changed = view.update()
                assert changed is not None, "a new view applies its lines in commit order"
                self._partitions = None
            manifest = view.manifest
            if self._partitions is not None:
                self._partitions.changed(changed)
        if self._partitions is None or self._partitions.manifest is not manifest:
            self._partitions = Partitions(manifest)
        return manifest

    def _journal_dir(self) -> Path:
        return manifest_dir(self.root) / JOBS_DIR / str(self.job)

    def _slots(self, name: str, partition: Mapping[str, str] | None) -> list[tuple[str, Entry]]:
        manifest = self.manifest()
        if partition is None:
            return sorted(manifest.tables.get(name, {}).items())
        assert self._partitions is not None  # set by manifest()
        return sorted(self._partitions.slots(name, self.partition_of(name, partition)).items())

    def partitions(self, name: str) -> list[dict[str, str]]:
        """The partitions of `name` that hold slots, as their folder segments (which `read`
        takes back), so a table can be read one partition at a time."""
        folders = sorted({split_slot(k)[0] for k, _ in self._slots(name, None)})
        return [split_partition(folder) for folder in folders]

    def slots(self, name: str) -> list[tuple[str, Entry]]:
        """Every slot of `name` (`<partition>/<name>` keys) and where its rows are, sorted,
        for a reader that keeps something per slot (see `Entry`)."""
        return self._slots(name, None)

    def files(self, name: str) -> list[Path]:
        """Every file the table's current version is made of (packs included), sorted."""
        base = self.table_dir(name)
        return sorted({base / e.file for _, e in self._slots(name, None)})

    def snapshot(self) -> dict[str, str]:
        """'table/slot' -> the file (and row groups) its rows are in, for every slot: file
        names derive from their bytes, so two equal snapshots are byte-identical tables."""
        out = {}
        for name, slots in self.manifest().tables.items():
            for key, e in slots.items():
                out[f"{name}/{key}"] = e.file + (f"#{list(e.groups)}" if e.groups else "")
        return dict(sorted(out.items()))

    def has_file(self, name: str, partition: Mapping[str, str], file: str = "data") -> bool:
        """Whether the partition holds slot `file` of table `name` (in its folder or a pack;
        a written file with no rows counts). A listed file gone from disk (deleted by hand)
        does not count, so the job that writes it writes it again."""
        key = slot_key(self.partition_of(name, partition), _segment(file))
        entry = self.manifest().tables.get(name, {}).get(key)
        return entry is not None and (self.table_dir(name) / entry.file).is_file()

    def runs(self, name: str) -> set[str]:
        """The run_ids that have any slot in a run-partitioned table."""
        out = set()
        for key, _ in self._slots(name, None):
            for part in split_slot(key)[0].split("/"):
                if part.startswith("run_id="):
                    out.add(part[len("run_id=") :])
        return out

    # ------------------------------------------------------------------ reading

    def read(
        self,
        name: str,
        partition: Mapping[str, str] | None = None,
        columns: Sequence[str] | None = None,
        file: str | None = None,
    ) -> pa.Table:
        """All rows of a table (or of one partition, or of one slot name of a partition: a
        stage's or a score configuration's), in the table's schema (or just `columns`).

        A column that a file predates (written under an older schema version) reads as nulls.
        """
        return self._read_slots(name, self._slots(name, partition), columns, file)

    def read_partitions(
        self,
        name: str,
        partitions: Iterable[Mapping[str, str]],
        columns: Sequence[str] | None = None,
        file: str | None = None,
    ) -> pa.Table:
        """`read` of several partitions as one table (rows in file and row group order): a
        file (a pack holds up to PACK_MAX_RUNS runs) is opened once for the row groups of all
        of them, where reading partition by partition opened and parsed its footer per run."""
        slots = {k: e for partition in partitions for k, e in self._slots(name, partition)}
        return self._read_slots(name, sorted(slots.items()), columns, file)

    def _read_slots(
        self,
        name: str,
        slots: list[tuple[str, Entry]],
        columns: Sequence[str] | None,
        file: str | None,
    ) -> pa.Table:
        import pyarrow as pa

        from deskscore.schemas import arrow_schema

        schema = arrow_schema(name)
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns], metadata=schema.metadata)
        if file is not None:
            slots = [(k, e) for k, e in slots if split_slot(k)[1] == _segment(file)]
        by_file: dict[str, list[int] | None] = {}
        for _, entry in slots:
            if entry.groups is None:
                by_file[entry.file] = None
            elif by_file.get(entry.file, []) is not None:
                by_file.setdefault(entry.file, []).extend(entry.groups)  # type: ignore[union-attr]
        if not by_file:
            return schema.empty_table()
        base = self.table_dir(name)
        parts = []
        for rel, groups in sorted(by_file.items()):
            # one open per file, footer and rows (read_table would open it again through
            # pyarrow.dataset, whose import alone costs a one-run command 50 ms)
            try:
                with open_parquet(base / rel) as pf:
                    present = set(pf.schema_arrow.names)
                    wanted = [n for n in schema.names if n in present]
                    if groups is None:
                        data = pf.read(columns=wanted)
                    else:
                        data = pf.read_row_groups(sorted(groups), columns=wanted)
            except (OSError, pa.ArrowException) as exc:  # deleted, cut short, overwritten
                raise unreadable_file(name, base / rel, exc) from None
            parts.append(_conform(data, schema))
        return pa.concat_tables(parts)

    # ------------------------------------------------------------------ writing

    def write(
        self,
        name: str,
        rows: Iterable[Mapping[str, Any]] | pa.Table,
        partition: Mapping[str, str],
        file: str = "data",
    ) -> Path | None:
        """Write one slot's rows (replacing what it held); returns the new file's path, or
        None for rows that went into an open pack (`pack_writes`). The write is part of this
        instance's job, or committed at once without one."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        data = rows if isinstance(rows, pa.Table) else conform_rows(name, rows)
        if self.job is None:
            ensure_generation(self.root)
        packable = self._packs is not None and self._packable(name, data)
        if packable and data.nbytes < DIRECT_PACK_BYTES:
            self._pack(name, partition, file, data)
            return None
        self._unpend(name, partition, file)
        path = _write_parquet(
            self.root,
            self.partition_dir(name, partition),
            file,
            lambda tmp: pq.write_table(
                data, tmp, compression=_codec(data.num_rows), write_statistics=True
            ),
            keep=lambda tmp: not packable or tmp.stat().st_size >= SMALL_FILE_BYTES,
        )
        if path is None:
            # a file `compact` would fold into a pack at the end of the job, in one process
            # (a run's model calls: 10x smaller in Parquet than in Arrow): its rows go into
            # this worker's open pack now instead
            self._pack(name, partition, file, data)
            return None
        key = slot_key(self.partition_of(name, partition), _segment(file))
        rel = str(path.relative_to(self.table_dir(name)))
        self._record({"op": "put", "table": name, "slot": key, "file": rel, "rows": data.num_rows})
        return path

    def remove(self, name: str, partition: Mapping[str, str], file: str = "data") -> None:
        """Empty one slot (a run that no longer has rows of this table or stage)."""
        self._unpend(name, partition, file)
        key = slot_key(self.partition_of(name, partition), _segment(file))
        self._record({"op": "delete", "table": name, "slot": key})

    @staticmethod
    def _packable(name: str, data: pa.Table) -> bool:
        """Whether `data` may go into a pack: a run's table (its partition ends with the run)
        of some rows (an empty slot keeps its own file: a pack has no empty row groups)."""
        decl = table(name)
        return bool(decl.partition and decl.partition[-1] == "run_id" and data.num_rows)

    def _pack(self, name: str, partition: Mapping[str, str], file: str, data: pa.Table) -> None:
        """Put `data` (`_packable`) into this instance's open pack of its table and
        partition; a full pack is closed at once."""
        assert self._packs is not None
        folder = self.partition_of(name, partition)
        where = (name, folder.rsplit("/", 1)[0], _segment(file))
        pack = self._packs.get(where)
        if pack is None:
            pack = _OpenPack(self.root, name, where[2], _codec(data.num_rows))
            self._packs[where] = pack
        try:
            pack.add(slot_key(folder, where[2]), data)
        except BaseException:  # a pack cut short is dropped with its runs: the job fails
            del self._packs[where]
            pack.discard()
            raise
        if pack.full:
            self._publish_pack(name, where[1], self._packs.pop(where))

    def _unpend(self, name: str, partition: Mapping[str, str], file: str) -> None:
        """Before a slot is written to its own file or removed: when an open pack holds rows
        of it, the packs are closed first, so their puts come before this operation."""
        if not self._packs:
            return
        key = slot_key(self.partition_of(name, partition), _segment(file))
        if any(k == key for (t, _, _), p in self._packs.items() if t == name for k, _ in p.slots):
            self.flush_packs()

    def _publish_pack(self, name: str, parent: str, pack: _OpenPack) -> int:
        """Close and name `pack` (in `parent`'s pack folder), then point its runs' slots at
        their row groups; returns its rows."""
        base = self.table_dir(name)
        rel = str(pack.close(base / parent / PACK_DIR).relative_to(base))
        for group, (key, n) in enumerate(pack.slots):
            self._record(
                {"op": "put", "table": name, "slot": key, "file": rel, "groups": [group],
                 "rows": n}
            )  # fmt: skip
        return sum(n for _, n in pack.slots)

    def flush_packs(self) -> None:
        """Close and journal every pack this instance has open (see `pack_writes`)."""
        for where in sorted(self._packs or {}):
            assert self._packs is not None
            self._publish_pack(where[0], where[1], self._packs.pop(where))

    def drop_run(self, benchmark: str, run_id: str) -> int:
        """Remove every row of one run from every table (a run no longer in its source);
        returns how many slots it held."""
        from deskscore.schemas import TABLES

        if self.job is None:  # one commit for all of the run's slots
            with self.transaction() as tx:
                return tx.drop_run(benchmark, run_id)
        part = {"benchmark": benchmark, "run_id": run_id}
        n = 0
        for name, decl in TABLES.items():
            if decl.partition != ("benchmark", "run_id"):
                continue
            for key, _ in self._slots(name, part):
                self._record({"op": "delete", "table": name, "slot": key})
                n += 1
        return n

    def _record(self, op: dict[str, Any]) -> None:
        if self.job is None:
            commit(self.root, [op])
            return
        if self._journal is None:
            folder = self._journal_dir()
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl"
            self._journal = open(path, "a", encoding="utf-8")  # noqa: SIM115 (one per instance)
        import json

        op = {**op, "t": time.time_ns()}  # the order of operations across processes
        self._journal.write(json.dumps(op, sort_keys=True) + "\n")
        self._journal.flush()

    def close(self) -> None:
        """Close the open packs (journaling their runs), then the journal."""
        self.flush_packs()
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Warehouse]:
        """A job: yields a Warehouse bound to a new job id (hand `job` to the job's stages so
        worker processes journal under it); on leaving without an error every write of the job
        is committed in one step, on an error none is."""
        ensure_generation(self.root)
        job = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:12]}"
        tx = Warehouse(self.root, job, pending=True)
        try:
            yield tx
        except BaseException:
            tx.close()
            abandon(self.root, job)
            raise
        tx.close()
        commit(self.root, read_journal(self.root, job), job=job)

    # ------------------------------------------------------------------ compaction

    def compact(
        self,
        names: Sequence[str] | None = None,
        *,
        small_bytes: int = SMALL_FILE_BYTES,
        target_bytes: int = PACK_TARGET_BYTES,
        min_files: int = MIN_SMALL_FILES,
    ) -> list[Compaction]:
        """Fold small run files into packs, per table, benchmark and slot name.

        Only files in the current schema version are packed (an older file is left for the
        job that rewrites it). Existing packs below the target size are refilled, so repeated
        compactions converge to few packs of about `target_bytes`; a table is packed once it
        has `min_files` small files, or `min_files` packs of fewer runs than that (the last,
        part-filled packs of jobs that pack as they write). The packs and the slots moving
        into them are one commit (this instance's job's, or their own)."""
        from deskscore.schemas import TABLES

        if self.job is None:
            with self.transaction() as tx:
                return tx.compact(
                    names, small_bytes=small_bytes, target_bytes=target_bytes, min_files=min_files
                )

        done = []
        for name in names or list(TABLES):
            decl = table(name)
            if not decl.partition or decl.partition[-1] != "run_id":
                continue
            base = self.table_dir(name)
            loose: dict[tuple[str, str], list[tuple[str, Entry]]] = {}
            packed: dict[tuple[str, str], list[tuple[str, Entry]]] = {}
            for key, entry in self._slots(name, None):
                if entry.rows == 0:
                    continue  # an empty slot keeps its own file
                partition, slot = split_slot(key)
                group = (partition.rsplit("/", 1)[0], slot)
                if entry.groups is not None:
                    packed.setdefault(group, []).append((key, entry))  # may be refilled
                    continue
                path = base / entry.file
                if path.stat().st_size >= small_bytes or schema_version_of(path) != SCHEMA_VERSION:
                    continue
                loose.setdefault(group, []).append((key, entry))
            files_in = packs_out = rows = 0
            for parent, slot in sorted(set(loose) | set(packed)):
                members = loose.get((parent, slot), [])
                in_packs = packed.get((parent, slot), [])
                runs_in = Counter(e.file for _, e in in_packs)
                small_packs = {
                    file
                    for file, n in runs_in.items()
                    if _refillable(n, (base / file).stat().st_size, target_bytes)
                    and schema_version_of(base / file) == SCHEMA_VERSION
                }
                # packs of a few runs (what is left of packs written as runs came: see
                # `pack_writes`) are merged once there are as many of them as loose files it
                # takes to make a pack
                tiny = [f for f in small_packs if runs_in[f] < min_files]
                if len(members) < min_files and (len(tiny) < min_files or len(tiny) < 2):
                    continue
                refill = [(k, e) for k, e in in_packs if e.file in small_packs]
                n, r = self._fold(name, parent, slot, refill + members, target_bytes)
                files_in += len(members) + len(small_packs)
                packs_out += n
                rows += r
            if files_in:
                done.append(Compaction(name, files_in, packs_out, rows))
        return done

    def _fold(
        self,
        name: str,
        parent: str,
        slot: str,
        members: list[tuple[str, Entry]],
        target_bytes: int,
    ) -> tuple[int, int]:
        """Write `members` (slots of single runs, or runs already in packs being refilled) as
        packs of about `target_bytes`, one row group per run in slot order, and point their
        slots at them. Returns (packs written, rows)."""

        base = self.table_dir(name)
        codec = _codec(_mean_rows(e for _, e in members))
        written = rows = 0
        pack: _OpenPack | None = None
        try:
            for key, entry in sorted(members):
                with open_parquet(base / entry.file) as pf:  # a refilled pack: one footer
                    if entry.groups is None:
                        data = pf.read()
                    else:
                        data = pf.read_row_groups(list(entry.groups))
                if not data.num_rows:
                    continue  # an empty slot keeps its own tiny file: a pack has no empty groups
                if pack is None:
                    pack = _OpenPack(self.root, name, slot, codec, target_bytes)
                pack.add(key, data)
                del data  # one run's table in memory at a time, not a pack's
                if pack.full:
                    rows += self._publish_pack(name, parent, pack)
                    written, pack = written + 1, None
            if pack is not None:
                rows += self._publish_pack(name, parent, pack)
                written, pack = written + 1, None
        finally:
            if pack is not None:  # an error on the way: nothing of it is journaled
                pack.discard()
        return written, rows


# ---------------------------------------------------------------------- journal and commit


def read_journal(root: str | os.PathLike[str], job: str) -> list[dict[str, Any]]:
    """A job's operations, in a deterministic order (journal files by name, lines in order)."""
    import json

    folder = manifest_dir(root) / JOBS_DIR / job
    if not folder.is_dir():
        return []
    ops = []
    for path in sorted(folder.glob("*.jsonl")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if line.strip():
                with contextlib.suppress(ValueError):  # a line cut by a kill
                    ops.append((json.loads(line), path.name, i))
    ops.sort(key=lambda o: op_order(*o))
    return [op for op, _, _ in ops]


def apply_ops(
    base: Manifest, ops: Sequence[Mapping[str, Any]], root: str | os.PathLike[str] | None = None
) -> Manifest:
    """`base` with `ops` applied (a put replaces its slot; a delete empties it); with `root`,
    packs that lost slots are rewritten without them (what a commit does; a view of pending
    writes reads slots by row group and needs no rewrite). The generation is unchanged."""
    out = Manifest(base.generation, {t: dict(s) for t, s in base.tables.items()}, [])
    for op in ops:
        apply_op(out, op)
    if root is not None:
        _repack(base, out, root)
    return out


def _repack(base: Manifest, new: Manifest, root: str | os.PathLike[str]) -> None:
    """Packs of `base` some of whose runs moved out in `new`: rewritten with the runs that
    stay, so no file `new` lists holds rows of a slot that no longer points at them."""
    import pyarrow.parquet as pq

    for name, slots in new.tables.items():
        old = base.tables.get(name, {})
        still: dict[str, list[tuple[str, Entry]]] = {}
        for key, entry in slots.items():
            if entry.groups is not None:
                still.setdefault(entry.file, []).append((key, entry))
        lost = {e.file for k, e in old.items() if e.groups is not None and slots.get(k) != e}
        base_dir = Path(root) / name
        for pack in sorted(lost & set(still)):
            members = sorted(still[pack], key=lambda m: m[1].groups or ())
            source = pq.ParquetFile(base_dir / pack)
            groups = [g for _, e in members for g in (e.groups or ())]
            slot = _file_slot_name(Path(pack))
            codec = _codec(_mean_rows(e for _, e in members))

            def write(
                tmp: Path, source: Any = source, groups: list[int] = groups, codec: str = codec
            ) -> None:
                with pq.ParquetWriter(
                    tmp, source.schema_arrow, compression=codec, write_statistics=True
                ) as writer:
                    for g in groups:
                        writer.write_table(source.read_row_group(g), row_group_size=1 << 30)

            path = _write_parquet(Path(root), (base_dir / pack).parent, slot, write)
            rel = str(path.relative_to(base_dir))
            i = 0
            for key, entry in members:
                n = len(entry.groups or ())
                slots[key] = Entry(rel, tuple(range(i, i + n)), entry.rows)
                i += n


def _write_generation(root: Path, manifest: Manifest) -> None:
    import json

    folder = manifest_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    target = generation_file(root, manifest.generation)
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_text(json.dumps(manifest.to_json(), separators=(",", ":")), encoding="utf-8")
    os.replace(tmp, target)
    pointer = folder / CURRENT
    tmp = folder / f".{CURRENT}.{uuid.uuid4().hex}.tmp"
    tmp.write_text(f"{manifest.generation}\n")
    os.replace(tmp, pointer)  # the switch: readers see the new generation from here on


def commit(
    root: str | os.PathLike[str], ops: Sequence[Mapping[str, Any]], *, job: str | None = None
) -> Manifest:
    """Apply `ops` to the current manifest as the next generation, switch to it, then collect
    what no kept generation lists any more (and the job's journal)."""
    root = Path(root).resolve()
    with _flocked(manifest_dir(root) / ".commit.lock"):
        base = committed(root)
        new = apply_ops(base, ops, root)
        new.generation = base.generation + 1
        new.retired = sorted(base.paths() - new.paths())
        if ops or current_generation(root) is None:
            _write_generation(root, new)
        if job is not None:
            abandon(root, job, keep=new.paths())
        _collect(root, new)
    return new


def committed(root: str | os.PathLike[str]) -> Manifest:
    """The current generation, or for a warehouse written before manifests the one its files
    imply (a writer commits that as the first generation before writing anything, see
    `ensure_generation`, so files of a job that never committed are never taken for it)."""
    return read_manifest(root) or scan(root)


def ensure_generation(root: str | os.PathLike[str]) -> None:
    """Make sure the warehouse has a committed generation before anything is written."""
    if current_generation(root) is None:
        commit(root, [])


def abandon(root: str | os.PathLike[str], job: str, keep: set[str] | None = None) -> None:
    """Forget a job's journal; the files it wrote that no manifest lists are deleted."""
    import shutil

    root = Path(root)
    folder = manifest_dir(root) / JOBS_DIR / job
    listed = keep if keep is not None else committed(root).paths()
    for op in read_journal(root, job):
        if op.get("file"):
            rel = f"{op['table']}/{op['file']}"
            if rel not in listed:
                (root / rel).unlink(missing_ok=True)
    shutil.rmtree(folder, ignore_errors=True)


def _collect(root: Path, current: Manifest) -> None:
    """Delete the files no kept generation lists (a file generation g retired was last listed
    by g - 1: it goes once g - 1 leaves the window), then the generations outside the window
    of KEEP_GENERATIONS."""
    folder = manifest_dir(root)
    oldest_kept = current.generation - KEEP_GENERATIONS + 1
    listed = set(current.paths())
    on_disk: dict[int, Path] = {}
    for path in folder.glob("*.json"):
        with contextlib.suppress(ValueError):
            on_disk[int(path.stem)] = path
    # each generation read once: the oldest kept one is needed for both what it lists and
    # what it retired
    files: dict[int, tuple[set[str], list[str]]] = {}
    for g in sorted(on_disk):
        if g < current.generation or g <= oldest_kept:
            with contextlib.suppress(FileNotFoundError, ValueError):
                files[g] = generation_files(root, g)
    for g, (paths, _) in files.items():
        if oldest_kept <= g < current.generation:
            listed |= paths
    for g in sorted(on_disk):
        if g > oldest_kept:
            continue
        for rel in files[g][1] if g in files else ():
            if rel not in listed:
                (root / rel).unlink(missing_ok=True)
        if g < oldest_kept:
            on_disk[g].unlink(missing_ok=True)


def collect_dead_jobs(root: str | os.PathLike[str]) -> int:
    """Journals (and written files) of jobs that never committed, e.g. killed ones; call only
    while holding the writer lock, when no other job can be writing. Returns how many."""
    import shutil

    root = Path(root)
    folder = manifest_dir(root) / JOBS_DIR
    n = 0
    if folder.is_dir():
        for job in sorted(p.name for p in folder.iterdir() if p.is_dir()):
            abandon(root, job)
            n += 1
    shutil.rmtree(manifest_dir(root) / TMP_DIR, ignore_errors=True)  # writes cut short
    return n


# ---------------------------------------------------------------------- older warehouses


def scan(root: str | os.PathLike[str]) -> Manifest:
    """The manifest a warehouse written before manifests implies: every data file under a
    table's folder, packs by their footers' run ids. Generation 0 (not yet committed)."""
    from deskscore.schemas import TABLES

    root = Path(root)
    out = Manifest(0)
    for name, decl in TABLES.items():
        base = root / name
        if not base.is_dir():
            continue
        slots = out.slots(name)
        for path in sorted(base.rglob("*.parquet")):
            if path.name.startswith("."):
                continue
            rel = path.relative_to(base)
            if path.parent.name == PACK_DIR:
                parent = str(rel.parent.parent) if rel.parent.parent != Path(".") else ""
                for run_id, groups in runs_in_pack(path).items():
                    partition = "/".join(p for p in (parent, f"run_id={_segment(run_id)}") if p)
                    key = slot_key(partition, _file_slot_name(path))
                    slots[key] = Entry(str(rel), tuple(groups))
            else:
                partition = str(rel.parent) if rel.parent != Path(".") else ""
                slots[slot_key(partition, _file_slot_name(path))] = Entry(str(rel))
        del decl
    return out


def schema_version_of(path: str | os.PathLike[str]) -> int | None:
    """The schema version a file was written with (None for files not written by deskscore)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(b"deskscore.schema_version")
    return int(raw) if raw else None


__all__ = [
    "PACK_DIR",
    "SCHEMA_VERSION",
    "Compaction",
    "Warehouse",
    "collect_dead_jobs",
    "commit",
    "named_by_bytes",
    "runs_in_pack",
    "scan",
    "schema_version_of",
]

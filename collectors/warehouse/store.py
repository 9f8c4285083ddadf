"""The Parquet warehouse: where each table's partitions live and how they are written.

Layout: `<root>/<table>/<key>=<value>/.../<file>.parquet`, partitioned by benchmark and run
(never by episode: DuckDB pays ~130 us per file). One file per partition and score
configuration; a file is written aside and renamed into place, so a reader sees the old
file or the new one, never half of one, and writing the same rows again gives the same bytes.

Packs: many small runs would make many small files, so `compact` folds the small run files of
a table into packs, `<table>/benchmark=<b>/_packs/<file>--<digest>.parquet`, one row group per
run (its run_id statistics say which run it holds). A run in a pack is read, replaced and
removed through the same calls as a run in its own folder: writing a run again puts it back
in its own file and drops it from its pack, under a lock, so a pack never holds a stale run.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskscore.schemas import SCHEMA_VERSION, conform_rows, table
from deskscore.scorers import metrics  # noqa: F401  (the score tables' metric columns)

if TYPE_CHECKING:
    import pyarrow as pa

_SAFE = re.compile(r"[^A-Za-z0-9._@+-]")


PACK_DIR = "_packs"
SMALL_FILE_BYTES = 4 << 20
"""Run files below this size are folded into packs by `compact`."""
PACK_TARGET_BYTES = 32 << 20
"""A pack is closed once it holds this much; bounded so replacing one run rewrites little."""
MIN_SMALL_FILES = 8
"""`compact` leaves a table alone until it has this many small files of one kind."""


def _segment(value: str) -> str:
    """A partition value as one safe path segment (no separators, no '..')."""
    text = _SAFE.sub("_", str(value)) or "_"
    return "_" if text in {".", ".."} else text


def _data_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.parquet") if not p.name.startswith("."))


def _pack_stem(path: Path) -> str:
    """The file name a pack's runs had in their own folders ('data', 'ingest', a config)."""
    return path.stem.rsplit("--", 1)[0]


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
    """`data` in `schema`: columns a file predates (an older schema) read as nulls."""
    import pyarrow as pa

    for field in schema:
        if field.name not in data.column_names:
            data = data.append_column(field.name, pa.nulls(data.num_rows, field.type))
    return data.select(schema.names).cast(schema)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Serialise pack rewrites in one folder across processes (parallel writers)."""
    import fcntl

    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a+") as handle:
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
    """A warehouse rooted at a local folder."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()

    def table_dir(self, name: str) -> Path:
        table(name)  # rejects unknown tables
        return self.root / name

    def partition_dir(self, name: str, partition: Mapping[str, str]) -> Path:
        decl = table(name)
        missing = [k for k in decl.partition if k not in partition]
        if missing:
            raise ValueError(f"{name}: partition needs {missing}")
        path = self.table_dir(name)
        for key in decl.partition:
            path = path / f"{key}={_segment(partition[key])}"
        return path

    def files(self, name: str) -> list[Path]:
        """Every data file of a table, packs included, sorted (write-aside temporaries excluded)."""
        base = self.table_dir(name)
        if not base.is_dir():
            return []
        return sorted(p for p in base.rglob("*.parquet") if not p.name.startswith("."))

    def _pack_dir(self, name: str, partition: Mapping[str, str]) -> Path | None:
        """Where runs of `partition`'s benchmark are packed; None for tables not kept per run."""
        decl = table(name)
        if not decl.partition or decl.partition[-1] != "run_id":
            return None
        path = self.table_dir(name)
        for key in decl.partition[:-1]:
            path = path / f"{key}={_segment(partition[key])}"
        return path / PACK_DIR

    def _packed(self, name: str, partition: Mapping[str, str]) -> list[tuple[Path, list[int]]]:
        """(pack, row groups) holding the run of `partition`, for every file name."""
        folder = self._pack_dir(name, partition)
        if folder is None:
            return []
        run_id = str(partition["run_id"])
        out = []
        for pack in _data_files(folder):
            groups = runs_in_pack(pack).get(run_id)
            if groups:
                out.append((pack, groups))
        return out

    def _unpack(self, name: str, partition: Mapping[str, str], file: str | None) -> None:
        """Drop the run of `partition` from its packs (of one file name, or all of them)."""
        import pyarrow.parquet as pq

        folder = self._pack_dir(name, partition)
        if folder is None or not folder.is_dir():
            return
        with _locked(folder):
            for pack, groups in self._packed(name, partition):
                if file is not None and _pack_stem(pack) != _segment(file):
                    continue
                source = pq.ParquetFile(pack)
                keep = [i for i in range(source.metadata.num_row_groups) if i not in groups]
                if not keep:
                    pack.unlink(missing_ok=True)
                    continue
                self._write_groups(pack, source, keep)

    @staticmethod
    def _write_groups(target: Path, source: Any, groups: Sequence[int]) -> None:
        """Rewrite `target` with `groups` of `source`, one row group each, atomically."""
        import pyarrow.parquet as pq

        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
        try:
            with pq.ParquetWriter(
                tmp, source.schema_arrow, compression="zstd", write_statistics=True
            ) as writer:
                for i in groups:
                    writer.write_table(source.read_row_group(i), row_group_size=1 << 30)
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                tmp.unlink()

    def write(
        self,
        name: str,
        rows: Iterable[Mapping[str, Any]] | pa.Table,
        partition: Mapping[str, str],
        file: str = "data",
    ) -> Path:
        """Write one partition file atomically; returns its path."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        data = rows if isinstance(rows, pa.Table) else conform_rows(name, rows)
        target = self.partition_dir(name, partition) / f"{_segment(file)}.parquet"
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
        try:
            pq.write_table(data, tmp, compression="zstd", write_statistics=True)
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                tmp.unlink()
        self._unpack(name, partition, file)  # the new file wins; a packed copy would double it
        return target

    def has_file(self, name: str, partition: Mapping[str, str], file: str = "data") -> bool:
        """Whether the partition holds file `file` of table `name`, in its folder or in a pack
        (a file with no rows counts, as long as it was written and not yet packed away)."""
        target = self.partition_dir(name, partition) / f"{_segment(file)}.parquet"
        if target.is_file():
            return True
        return any(_pack_stem(p) == _segment(file) for p, _ in self._packed(name, partition))

    def remove(self, name: str, partition: Mapping[str, str], file: str = "data") -> None:
        """Drop one partition file, if present (a run that no longer has rows of this table),
        and the run's rows of that file name from its pack."""
        target = self.partition_dir(name, partition) / f"{_segment(file)}.parquet"
        target.unlink(missing_ok=True)
        self._unpack(name, partition, file)

    def drop_run(self, benchmark: str, run_id: str) -> int:
        """Remove every row of one run from every table (its folders and its packed rows), for
        a run that is no longer in its source; returns the files removed or rewritten."""
        import shutil

        from deskscore.schemas import TABLES

        part = {"benchmark": benchmark, "run_id": run_id}
        n = 0
        for name, decl in TABLES.items():
            if decl.partition != ("benchmark", "run_id"):
                continue
            folder = self.partition_dir(name, part)
            if folder.is_dir():
                n += len(_data_files(folder))
                shutil.rmtree(folder)
            packed = self._packed(name, part)
            if packed:
                n += len(packed)
                self._unpack(name, part, None)
        return n

    def compact(
        self,
        names: Sequence[str] | None = None,
        *,
        small_bytes: int = SMALL_FILE_BYTES,
        target_bytes: int = PACK_TARGET_BYTES,
        min_files: int = MIN_SMALL_FILES,
    ) -> list[Compaction]:
        """Fold small run files into packs, per table, benchmark and file name.

        Only files in the current schema version are packed (an older file is left for the job
        that rewrites it). Existing packs below the target size are refilled, so repeated
        compactions converge to few packs of about `target_bytes`.
        """

        from deskscore.schemas import TABLES

        done = []
        for name in names or list(TABLES):
            decl = table(name)
            if not decl.partition or decl.partition[-1] != "run_id":
                continue
            groups: dict[tuple[Path, str], list[Path]] = {}
            for path in self.files(name):
                if path.parent.name == PACK_DIR:
                    continue
                if path.stat().st_size >= small_bytes or schema_version_of(path) != SCHEMA_VERSION:
                    continue
                folder = path.parent.parent / PACK_DIR
                groups.setdefault((folder, path.stem), []).append(path)
            files_in = packs_out = rows = 0
            for (folder, stem), paths in sorted(groups.items()):
                if len(paths) < min_files:
                    continue
                with _locked(folder):
                    packs = [
                        p
                        for p in _data_files(folder)
                        if _pack_stem(p) == stem
                        and p.stat().st_size < target_bytes
                        and schema_version_of(p) == SCHEMA_VERSION
                    ]
                    n, r = self._fold(folder, stem, packs, paths, target_bytes)
                files_in += len(paths)
                packs_out += n
                rows += r
            if files_in:
                done.append(Compaction(name, files_in, packs_out, rows))
        return done

    def _fold(
        self, folder: Path, stem: str, packs: list[Path], paths: list[Path], target_bytes: int
    ) -> tuple[int, int]:
        """Write `packs` and run files `paths` as new packs of about `target_bytes`, one run at
        a time in run order (memory holds one run, whatever the number of files); then delete
        what they replace. Returns (packs written, rows)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from deskscore.schemas import arrow_schema

        schema = arrow_schema(folder.parent.parent.name)
        pieces: list[tuple[str, Path, list[int] | None]] = []  # (run_id, file, row groups)
        for pack in packs:
            pieces.extend((run_id, pack, idx) for run_id, idx in runs_in_pack(pack).items())
        folded: list[Path] = []  # run files whose rows go into a pack (or that had none)
        for path in paths:
            run_ids = set(pq.read_table(path, columns=["run_id"]).column(0).to_pylist())
            if len(run_ids) > 1:
                continue  # not one run's file: leave it where it is
            folded.append(path)
            if run_ids:
                pieces.append((run_ids.pop(), path, None))
        pieces.sort(key=lambda p: p[0])

        written: list[Path] = []
        rows = 0
        writer: Any = None
        tmp: Path | None = None
        in_pack: list[str] = []
        size = 0

        def close() -> None:
            nonlocal writer, tmp, size
            if writer is None or tmp is None:
                return
            writer.close()
            digest = hashlib.sha1("\n".join(in_pack).encode()).hexdigest()[:16]
            target = folder / f"{stem}--{digest}.parquet"
            os.replace(tmp, target)
            written.append(target)
            writer, tmp, size = None, None, 0
            in_pack.clear()

        try:
            for run_id, path, groups in pieces:
                if groups is None:
                    data = _conform(pq.read_table(path), schema)
                else:
                    source = pq.ParquetFile(path)
                    data = _conform(
                        pa.concat_tables(source.read_row_group(i) for i in groups), schema
                    )
                if writer is None:
                    tmp = folder / f".{stem}.{uuid.uuid4().hex}.tmp"
                    writer = pq.ParquetWriter(tmp, schema, compression="zstd")
                writer.write_table(data, row_group_size=1 << 30)
                in_pack.append(run_id)
                rows += data.num_rows
                size += data.nbytes
                if size >= 4 * target_bytes:  # in-memory Arrow is ~4x its zstd Parquet
                    close()
            close()
        finally:
            if writer is not None:
                writer.close()
            if tmp is not None and tmp.exists():
                tmp.unlink()
        keep = set(written)
        for old in [*packs, *folded]:
            if old not in keep:
                old.unlink(missing_ok=True)
        for path in folded:
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # the run folder, now empty
        return len(written), rows

    def read(
        self,
        name: str,
        partition: Mapping[str, str] | None = None,
        columns: Sequence[str] | None = None,
        file: str | None = None,
    ) -> pa.Table:
        """All rows of a table (or of one partition, or of one file name of a partition: a
        stage's or a score configuration's), in the table's schema (or just `columns`).

        A column that a file predates (written under an older schema version) reads as nulls.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        from deskscore.schemas import arrow_schema

        schema = arrow_schema(name)
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns], metadata=schema.metadata)
        packed: list[tuple[Path, list[int]]] = []
        if partition is None:
            paths = self.files(name)
        else:
            paths = _data_files(self.partition_dir(name, partition))
            packed = self._packed(name, partition)
            if file is not None:
                paths = [p for p in paths if p.stem == _segment(file)]
                packed = [(p, g) for p, g in packed if _pack_stem(p) == _segment(file)]
        if not paths and not packed:
            return schema.empty_table()
        parts = []
        reads = [(path, None) for path in paths] + [(p, g) for p, g in packed]
        for path, groups in reads:
            present = set(pq.read_schema(path).names)
            wanted = [n for n in schema.names if n in present]
            if groups is None:
                data = pq.read_table(path, columns=wanted)
            else:
                data = pq.ParquetFile(path).read_row_groups(groups, columns=wanted)
            parts.append(_conform(data, schema))
        return pa.concat_tables(parts)


def schema_version_of(path: str | os.PathLike[str]) -> int | None:
    """The schema version a file was written with (None for files not written by deskscore)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(b"deskscore.schema_version")
    return int(raw) if raw else None


__all__ = ["SCHEMA_VERSION", "Compaction", "Warehouse", "runs_in_pack", "schema_version_of"]

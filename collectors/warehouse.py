"""The Parquet warehouse: where each table's partitions live and how they are written.

Layout: `<root>/<table>/<key>=<value>/.../<file>.parquet`, partitioned by benchmark and run
(never by episode: DuckDB pays ~130 us per file). One file per partition and score
configuration; a file is written aside and renamed into place, so a reader sees the old
file or the new one, never half of one, and writing the same rows again gives the same bytes.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskscore.schemas import SCHEMA_VERSION, conform_rows, table

if TYPE_CHECKING:
    import pyarrow as pa

_SAFE = re.compile(r"[^A-Za-z0-9._@+-]")


def _segment(value: str) -> str:
    """A partition value as one safe path segment (no separators, no '..')."""
    text = _SAFE.sub("_", str(value)) or "_"
    return "_" if text in {".", ".."} else text


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
        """Every data file of a table, sorted (write-aside temporaries excluded)."""
        base = self.table_dir(name)
        if not base.is_dir():
            return []
        return sorted(p for p in base.rglob("*.parquet") if not p.name.startswith("."))

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
        return target

    def remove(self, name: str, partition: Mapping[str, str], file: str = "data") -> None:
        """Drop one partition file, if present (a run that no longer has rows of this table)."""
        target = self.partition_dir(name, partition) / f"{_segment(file)}.parquet"
        target.unlink(missing_ok=True)

    def read(
        self,
        name: str,
        partition: Mapping[str, str] | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        """All rows of a table (or of one partition), in the table's schema (or just `columns`).

        A column that a file predates (written under an older schema version) reads as nulls.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        from deskscore.schemas import arrow_schema

        schema = arrow_schema(name)
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns], metadata=schema.metadata)
        if partition is None:
            paths = self.files(name)
        else:
            base = self.partition_dir(name, partition)
            paths = (
                sorted(p for p in base.glob("*.parquet") if not p.name.startswith("."))
                if base.is_dir()
                else []
            )
        if not paths:
            return schema.empty_table()
        parts = []
        for path in paths:
            present = set(pq.read_schema(path).names)
            data = pq.read_table(path, columns=[n for n in schema.names if n in present])
            for field in schema:
                if field.name not in present:
                    data = data.append_column(field.name, pa.nulls(data.num_rows, field.type))
            parts.append(data.select(schema.names).cast(schema))
        return pa.concat_tables(parts)


def schema_version_of(path: str | os.PathLike[str]) -> int | None:
    """The schema version a file was written with (None for files not written by deskscore)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(b"deskscore.schema_version")
    return int(raw) if raw else None


__all__ = ["SCHEMA_VERSION", "Warehouse", "schema_version_of"]

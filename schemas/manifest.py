"""Which files make up each table: the warehouse's manifest, one generation at a time.

A table's rows live in Parquet files, but a file on disk is part of the table only when the
current manifest lists it. Writers add files under new names and then switch the manifest in
one rename (`<root>/_manifest/CURRENT` names the generation file), so a change of many files
(a run's tables, a compaction, a job's outputs with its "done" records) becomes visible all at
once: a reader sees the old generation or the new one, never a mix, and a writer killed at any
point leaves the previous generation intact.

A *slot* is where one file's rows belong: a table, a partition (`benchmark=b/run_id=r`) and a
file name inside it (`data`, a stage's name, a score configuration). Each slot points at a
file, or at some row groups of a pack (a file holding many small runs' rows, one row group
per run). This module is the format both sides share: the warehouse writes it
(`deskscore.collectors.warehouse`), the SQL views read it (`deskscore.sql`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST_DIR = "_manifest"
CURRENT = "CURRENT"
FORMAT = 1
"""Version of the manifest's own layout."""


@dataclass(frozen=True)
class Entry:
    """Where a slot's rows are: a file relative to its table's folder, and the row groups of
    it that hold them (None: the whole file)."""

    file: str
    groups: tuple[int, ...] | None = None
    rows: int | None = None

    def to_json(self) -> Any:
        out: dict[str, Any] = {"file": self.file}
        if self.groups is not None:
            out["groups"] = list(self.groups)
        if self.rows is not None:
            out["rows"] = self.rows
        return out

    @classmethod
    def from_json(cls, value: Any) -> Entry:
        groups = value.get("groups")
        return cls(value["file"], tuple(groups) if groups is not None else None, value.get("rows"))


@dataclass
class Manifest:
    """One generation: per table, slot key -> Entry. Slot keys are `<partition>/<name>`
    (`benchmark=osworld/run_id=ab12/data`), or `<name>` for tables kept as one file."""

    generation: int = 0
    tables: dict[str, dict[str, Entry]] = field(default_factory=dict)
    retired: list[str] = field(default_factory=list)
    """Files (relative to the root) this generation stopped listing: deleted once no reader
    can still be on a generation that lists them."""

    def slots(self, table: str) -> dict[str, Entry]:
        return self.tables.setdefault(table, {})

    def files(self, table: str) -> list[str]:
        """The table's files, relative to its folder, each once, sorted."""
        return sorted({e.file for e in self.tables.get(table, {}).values()})

    def paths(self) -> set[str]:
        """Every file the generation lists, relative to the warehouse root."""
        return {f"{t}/{e.file}" for t, slots in self.tables.items() for e in slots.values()}

    def copy(self) -> Manifest:
        """A manifest whose tables and slots can change without changing this one (entries
        are immutable, so they are shared)."""
        return Manifest(
            self.generation, {t: dict(s) for t, s in self.tables.items()}, list(self.retired)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "generation": self.generation,
            "tables": {
                t: {k: e.to_json() for k, e in sorted(slots.items())}
                for t, slots in sorted(self.tables.items())
                if slots
            },
            "retired": sorted(self.retired),
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Manifest:
        check_format(value)
        tables = {
            t: {k: Entry.from_json(e) for k, e in slots.items()}
            for t, slots in value.get("tables", {}).items()
        }
        return cls(int(value["generation"]), tables, list(value.get("retired", [])))


class WarehouseDamaged(Exception):
    """A warehouse file that cannot be what the manifest says it is (emptied, cut short,
    deleted or overwritten by hand, a disk that lost a write). Not a commit in progress:
    writers replace files by rename, so reading again would not help. The message names the
    file and what to do; the CLI prints it as one line."""


def unreadable_file(table: str, path: Path, exc: BaseException) -> WarehouseDamaged:
    """The error for a data file the manifest lists that cannot be read: a file is never
    changed once written, so one gone or cut short is damage, and writing it again is the way
    back (the same words `deskscore check` reports it with)."""
    what = (
        "missing" if isinstance(exc, FileNotFoundError) else f"not a readable Parquet file ({exc})"
    )
    return WarehouseDamaged(
        f"{table}: {path} is listed but {what}; re-run the job that writes {table} with "
        "--force (`deskscore ingest SOURCE --force` for the tables ingest writes)"
    )


def check_format(value: Mapping[str, Any]) -> Mapping[str, Any]:
    """`value`, a generation's JSON, if it is in this version's layout; else ValueError."""
    if value.get("format") != FORMAT:
        raise ValueError(f"manifest format {value.get('format')!r} is not {FORMAT}")
    return value


def slot_key(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def split_slot(key: str) -> tuple[str, str]:
    """(partition, name) of a slot key."""
    partition, _, name = key.rpartition("/")
    return partition, name


def split_partition(partition: str) -> dict[str, str]:
    """A slot key's partition (`benchmark=b/run_id=r`) as the values it names."""
    return dict(seg.split("=", 1) for seg in partition.split("/") if "=" in seg)


def manifest_dir(root: str | os.PathLike[str]) -> Path:
    return Path(root) / MANIFEST_DIR


def generation_file(root: str | os.PathLike[str], generation: int) -> Path:
    return manifest_dir(root) / f"{generation:09d}.json"


def _loads(data: bytes) -> Any:
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a declared dependency
        return json.loads(data)
    return orjson.loads(data)


def current_generation(root: str | os.PathLike[str]) -> int | None:
    """The generation CURRENT names, or None for a warehouse without a manifest."""
    path = manifest_dir(root) / CURRENT
    try:
        text = path.read_text(errors="replace").strip()
    except FileNotFoundError:
        return None
    if not text.isascii() or not text.isdigit():
        raise _damaged(root, path, f"names no generation ({text[:40]!r})")
    return int(text)


def _damaged(root: str | os.PathLike[str], path: Path, what: str) -> WarehouseDamaged:
    """The error for a manifest file that cannot be read: which file, and the way back.

    Readers do not fall back on their own to an older generation: that would serve tables
    without the last commits and hide the damage, and a writer building on it would make
    the loss final. The newest intact generation is named so that a person decides."""
    older = sorted(
        (int(p.stem) for p in manifest_dir(root).glob("*.json") if p.stem.isdigit()),
        reverse=True,
    )
    for generation in older:
        candidate = generation_file(root, generation)
        if candidate == path:
            continue
        try:
            Manifest.from_json(_loads(candidate.read_bytes()))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        way_back = (
            f"the newest intact generation is {candidate.name}: to go back to it, write "
            f"{generation} into {manifest_dir(root) / CURRENT} and write again what was "
            "committed after it (e.g. `deskscore ingest SOURCE --force`)"
        )
        break
    else:
        way_back = "no intact generation is left: ingest the sources again into a new warehouse"
    return WarehouseDamaged(
        f"{path}: the warehouse's manifest is damaged: it {what}; {way_back}, or restore "
        f"{manifest_dir(root)} from a backup"
    )


_last_parsed: tuple[tuple[int, int, int, int], Manifest] | None = None
"""The generation file this process parsed last, by the identity of the file read (device,
inode, size, mtime): a generation file is replaced, never changed in place, so the same
identity is the same manifest."""


def read_manifest(root: str | os.PathLike[str]) -> Manifest | None:
    """The current generation, or None for a warehouse without a manifest (a folder written
    before manifests existed, or an empty one). A generation collected between reading
    CURRENT and opening it is retried with the newer CURRENT.

    A command opens the warehouse many times (its job, each stage, its checks) and at 1,000
    runs a generation file is 2 MB that takes 40 ms to parse, so a file this process parsed
    already is not parsed again: each caller gets its own copy of the tables."""
    global _last_parsed
    missing = None
    for _ in range(5):
        generation = current_generation(root)
        if generation is None:
            return None
        path = generation_file(root, generation)
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
                last = _last_parsed  # one read of the global: another thread may replace it
                if last is not None and last[0] == key:
                    parsed = last[1]
                else:
                    parsed = _parse(root, path, fh.read())
                    _last_parsed = (key, parsed)
        except FileNotFoundError:
            # a commit collects only generations older than the one CURRENT names: the same
            # generation missing twice is not a commit racing this read
            if generation == missing:
                raise _damaged(root, path, "is missing, though CURRENT names it") from None
            missing = generation
            continue
        return parsed.copy()
    raise RuntimeError(f"{root}: the manifest kept changing while it was read; try again")


def _parse(root: str | os.PathLike[str], path: Path, data: bytes) -> Manifest:
    """The generation in `data`, read from `path` (written whole by one rename, so a file
    that does not parse is damaged, not being written)."""
    try:
        return Manifest.from_json(_loads(data))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _damaged(root, path, f"is not a readable generation ({exc})") from None


def generation_files(root: str | os.PathLike[str], generation: int) -> tuple[set[str], list[str]]:
    """(the files generation `generation` lists, the files it retired), relative to the root,
    from its JSON alone: what collecting old files needs. Building the generation's entries
    (`Manifest.from_json`) cost a commit at 1,000 runs 40 ms for each of the three or four
    generations it looked at."""
    value = check_format(_loads(generation_file(root, generation).read_bytes()))
    listed = {
        f"{t}/{e['file']}" for t, slots in value.get("tables", {}).items() for e in slots.values()
    }
    return listed, list(value.get("retired", []))


def table_files(root: str | os.PathLike[str]) -> dict[str, list[Path]] | None:
    """table -> its current files (absolute), from the manifest; None without one."""
    manifest = read_manifest(root)
    if manifest is None:
        return None
    base = Path(root)
    return {t: [base / t / f for f in manifest.files(t)] for t in manifest.tables}


def iter_entries(
    manifest: Manifest, table: str, partition: str | None = None
) -> Iterator[tuple[str, Entry]]:
    """(slot key, entry) of `table`, only those in `partition` when given."""
    for key, entry in manifest.tables.get(table, {}).items():
        if partition is None or split_slot(key)[0] == partition:
            yield key, entry


__all__ = [
    "CURRENT",
    "MANIFEST_DIR",
    "Entry",
    "Manifest",
    "WarehouseDamaged",
    "check_format",
    "current_generation",
    "generation_file",
    "generation_files",
    "iter_entries",
    "manifest_dir",
    "read_manifest",
    "slot_key",
    "split_partition",
    "split_slot",
    "table_files",
    "unreadable_file",
]

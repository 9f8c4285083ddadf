"""What a `Warehouse` keeps of the manifest between reads, so a read costs what it reads and
not what the warehouse or the job holds: the job's view of its own pending writes, kept up to
date from what its journals gained, and each table's slots by partition.

Both used to be worked out again per read. A job's stages read back writes of the same job
(a hash job's screenshot references, a job's small files when it packs them; a score job's
intervals read the costs just written for the run, until the cost stage handed them on):
parsing the whole journal again at each of those reads cost about 10 ms per 1,000 journal
lines, so a run took longer the more runs came before it in the job, and a job of N runs
took time in N squared. Finding one partition's slots scanned every slot of the table, the
same way.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from deskscore.schemas.manifest import Entry, Manifest, split_slot


def apply_op(manifest: Manifest, op: Mapping[str, Any]) -> None:
    """One journal operation applied to `manifest` in place: a put replaces its slot, anything
    else (a delete, a put of no file) empties it."""
    slots = manifest.slots(op["table"])
    if op["op"] == "put" and op.get("file"):
        groups = op.get("groups")
        slots[op["slot"]] = Entry(op["file"], tuple(groups) if groups else None, op.get("rows"))
    else:
        slots.pop(op["slot"], None)


def op_order(op: Mapping[str, Any], file: str, line: int) -> tuple[Any, str, int]:
    """The order in which a commit applies a job's operations: time, journal file, line."""
    return (op.get("t", 0), file, line)


class PendingView:
    """The committed manifest `base` with a job's journal applied, updated in place from the
    lines the journal files (`folder/*.jsonl`, one per writing process, append-only) gained
    since the last update.

    Lines are taken as a full read (`store.read_journal`) takes them: every line that parses,
    the file's last one too once it parses, before its newline is written (it is read again
    with the file's next bytes); a line still being written is read once it is whole, one cut
    by a kill or corrupt never is. New lines are applied in commit order. A line that
    sorts before an operation already applied to the same slot (another process's clock, or a
    late flush) would change what that slot ends as: then `update` says so, and the owner
    builds a new view from the start, which sorts everything as a commit does."""

    def __init__(self, base: Manifest, folder: Path) -> None:
        self.generation = base.generation
        self.manifest = Manifest(base.generation, {t: dict(s) for t, s in base.tables.items()}, [])
        self._folder = folder
        self._read: dict[str, tuple[int, int]] = {}
        """Journal file name -> (bytes, lines) of its ended lines taken so far."""
        self._tails: dict[str, bytes] = {}
        """Journal file name -> its last line, applied before its newline was written."""
        self._last: dict[tuple[str, str], tuple[Any, str, int]] = {}
        """(table, slot) -> commit order of the operation applied to it last."""

    def update(self) -> list[tuple[str, str]] | None:
        """Apply what the journals gained; the (table, slot) pairs it changed, or None when a
        new line sorts before one already applied to its slot, or a line applied before its
        newline came was not the whole line (nothing was applied then)."""
        lines = self._new_lines()
        if lines is None:
            return None
        new = sorted(lines, key=lambda o: op_order(*o))
        for op, file, line in new:
            if self._last.get((op["table"], op["slot"]), (0, "", -1)) > op_order(op, file, line):
                return None
        changed = []
        for op, file, line in new:
            apply_op(self.manifest, op)
            self._last[(op["table"], op["slot"])] = op_order(op, file, line)
            changed.append((op["table"], op["slot"]))
        return changed

    def _new_lines(self) -> list[tuple[dict[str, Any], str, int]] | None:
        if not self._folder.is_dir():
            return []
        out = []
        for path in sorted(self._folder.glob("*.jsonl")):
            name = path.name
            taken, lines = self._read.get(name, (0, 0))
            tail = self._tails.pop(name, None)
            try:
                if path.stat().st_size == taken + len(tail or b""):
                    if tail is not None:
                        self._tails[name] = tail
                    continue
                with open(path, "rb") as f:
                    f.seek(taken)
                    data = f.read()
            except FileNotFoundError:
                continue
            end = data.rfind(b"\n") + 1
            whole = data[:end].split(b"\n")[:-1]
            rest = data[end:]
            if tail is not None and (whole[0] if whole else rest) != tail:
                return None  # bytes followed the applied line on its line: a full read skips it
            for i, raw in enumerate(whole, start=lines):
                if raw.strip() and not (tail is not None and i == lines):
                    with contextlib.suppress(ValueError):  # a corrupt line: skipped, as in full
                        out.append((json.loads(raw), name, i))
            self._read[name] = (taken + end, lines + len(whole))
            if rest.strip():
                with contextlib.suppress(ValueError):  # still being written: read again later
                    out.append((json.loads(rest), name, lines + len(whole)))
                    self._tails[name] = rest
        return out


class Partitions:
    """Each table's slots grouped by partition folder, for a manifest that may change in place
    (a pending view): built per table on first use, then patched with the slots that changed."""

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest
        self._tables: dict[str, dict[str, dict[str, Entry]]] = {}

    def slots(self, name: str, folder: str) -> dict[str, Entry]:
        """The slots of table `name` whose partition folder is `folder` (key -> entry)."""
        by_folder = self._tables.get(name)
        if by_folder is None:
            by_folder = self._tables[name] = {}
            for key, entry in self.manifest.tables.get(name, {}).items():
                by_folder.setdefault(split_slot(key)[0], {})[key] = entry
        return by_folder.get(folder, {})

    def changed(self, pairs: list[tuple[str, str]]) -> None:
        """Take in slots the manifest changed since (table, slot key pairs)."""
        for name, key in pairs:
            by_folder = self._tables.get(name)
            if by_folder is None:
                continue  # not built yet: it will be from the manifest as it is then
            entry = self.manifest.tables.get(name, {}).get(key)
            folder = by_folder.setdefault(split_slot(key)[0], {})
            if entry is None:
                folder.pop(key, None)
            else:
                folder[key] = entry


__all__ = ["Partitions", "PendingView", "apply_op", "op_order"]

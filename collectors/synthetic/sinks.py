"""Sinks: where a run's files go, a folder or a zip laid out as published archives are.

The run writer hands every file to a sink by its path relative to the run's result_dir, so
the same code writes folders (tests, the demo) and zips (published-style archives) without a
temporary copy on disk.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

_ZIP_DATE = (2025, 7, 1, 12, 0, 0)
_APPLEDOUBLE = bytes.fromhex("0005160700020000") + b"Mac OS X        " + b"\x00\x00"


class DirSink:
    """Writes files under a folder (plain os calls: the demo writes tens of thousands)."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self._made: set[str] = set()

    def write(self, rel: str, data: bytes) -> None:
        """Write `data` to `rel` under the folder, making parent folders once."""
        path = os.path.join(self.root, rel)
        parent = os.path.dirname(path)
        if parent not in self._made:
            os.makedirs(parent, exist_ok=True)
            self._made.add(parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)

    def read(self, rel: str) -> bytes | None:
        """A file's bytes, None when absent (the runner appends to an existing summary)."""
        try:
            with open(os.path.join(self.root, rel), "rb") as f:
                return f.read()
        except OSError:
            return None

    def close(self) -> None:
        pass


def _zinfo(name: str, method: int) -> zipfile.ZipInfo:
    zi = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
    zi.create_system = 3  # unix, whatever machine writes it
    zi.external_attr = (0o40755 << 16 | 0x10) if name.endswith("/") else 0o100644 << 16
    zi.compress_type = method
    return zi


class ZipSink:
    """Writes members straight into a zip, as published archives are laid out: everything
    under `prefix/`, directory entries, and macOS `__MACOSX/._*` AppleDouble companions for the
    run-level files and the first task folder. Written aside, renamed on close."""

    _RUN_FILES = ("args.json", "all_result.json", "results.json")

    def __init__(self, zip_path: Path, prefix: str) -> None:
        self.path = Path(zip_path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(self.path.name + ".part")
        self._zf = zipfile.ZipFile(self._tmp, "w")
        self._lead = f"{prefix.strip('/')}/" if prefix.strip("/") else ""
        self._dirs: set[str] = set()
        self._companions: list[str] = []
        self._first_task: str | None = None
        self._dir(self._lead)

    def _dir(self, name: str) -> None:
        if name and name not in self._dirs:
            self._dirs.add(name)
            self._zf.writestr(_zinfo(name, zipfile.ZIP_STORED), b"")

    def write(self, rel: str, data: bytes) -> None:
        """Add a member under the prefix, after the directory entries of its parents."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            self._dir(self._lead + "/".join(parts[:i]) + "/")
        head = "/".join(parts[:-1])
        if self._first_task is None and parts[-1] == "traj.jsonl":
            self._first_task = head
        if parts[-1] in self._RUN_FILES or (head and head == self._first_task):
            self._companions.append(rel)
        method = zipfile.ZIP_STORED if rel.endswith(".png") else zipfile.ZIP_DEFLATED
        self._zf.writestr(_zinfo(self._lead + rel, method), data)

    def read(self, rel: str) -> bytes | None:
        return None  # a new archive holds nothing yet

    def __enter__(self) -> ZipSink:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        """Close the archive into place, or drop it half-written if the body raised."""
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def abort(self) -> None:
        """Drop the half-written archive (the target path is left untouched)."""
        self._zf.close()
        self._tmp.unlink(missing_ok=True)

    def close(self) -> None:
        """Add the __MACOSX/ companions, close, and move the archive into place."""
        if self._zf.fp is None:
            return
        mac = "__MACOSX/"
        self._dir(mac)
        for rel in sorted(self._companions):
            head, _, tail = rel.rpartition("/")
            folder = f"{mac}{self._lead}{head}/" if head else f"{mac}{self._lead}"
            parts = folder[len(mac) :].rstrip("/").split("/")
            for i in range(1, len(parts) + 1):
                self._dir(mac + "/".join(parts[:i]) + "/")
            self._zf.writestr(_zinfo(f"{folder}._{tail}", zipfile.ZIP_DEFLATED), _APPLEDOUBLE)
        self._zf.close()
        self._tmp.replace(self.path)


Sink = DirSink | ZipSink
"""Anything a run is written through."""

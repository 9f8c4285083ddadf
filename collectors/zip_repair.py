"""Opening a zip that `zipfile` refuses as a whole for the fault of one part.

`zipfile` gives up on the whole archive when:

- the archive comment holds an end-of-central-directory signature (it takes the last one in
  the file's tail, which then lies inside the comment);
- one member's name is flagged UTF-8 but is not (UnicodeDecodeError);
- one member says it needs a newer zip version than it knows ("zip file version 8.4",
  NotImplementedError).

Only when the plain open fails, this finds the real end record (the one whose comment ends the
file), and shows `zipfile` a view of the file in which the comment is blanked and the faulty
members' central-directory fields are made harmless (UTF-8 flag cleared, version lowered).
Those members are then left out and reported (`BadMember`); the others read as usual. The
file itself is never changed.
"""

from __future__ import annotations

import io
import struct
import zipfile
from typing import Any, BinaryIO, NamedTuple

from deskscore.collectors.files import escaped_bytes

_EOCD = b"PK\x05\x06"
_EOCD_SIZE = 22
_LOCATOR64 = b"PK\x06\x07"
_EOCD64 = b"PK\x06\x06"
_CENTRAL = b"PK\x01\x02"
_CENTRAL_SIZE = 46
_UTF8_FLAG = 0x800
_MAX_VERSION = 63  # zipfile's MAX_EXTRACT_VERSION
_TAIL = (1 << 16) + _EOCD_SIZE


class BadMember(NamedTuple):
    """A member left out: its position in the central directory, its name (escaped where
    it is not UTF-8) and why."""

    index: int
    name: str
    reason: str
    what: str


class FileView(io.RawIOBase):
    """A read-only, seekable view of a file (`inner`) that a subclass reads its own way."""

    def __init__(self, inner: BinaryIO) -> None:
        super().__init__()
        self._inner = inner
        self.name = getattr(inner, "name", None)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class PatchedFile(FileView):
    """A read-only view of a seekable file with some byte ranges replaced."""

    def __init__(self, inner: BinaryIO, patches: dict[int, bytes]) -> None:
        super().__init__(inner)
        self._patches = sorted(patches.items())

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._inner.seek(offset, whence)

    def tell(self) -> int:
        return self._inner.tell()

    def read(self, size: int | None = -1) -> bytes:
        start = self._inner.tell()
        data = self._inner.read() if size is None or size < 0 else self._inner.read(size)
        end = start + len(data)
        if not data:
            return data
        out = None
        for at, new in self._patches:
            if at >= end or at + len(new) <= start:
                continue
            if out is None:
                out = bytearray(data)
            lo, hi = max(at, start), min(at + len(new), end)
            out[lo - start : hi - start] = new[lo - at : hi - at]
        return bytes(out) if out is not None else data


def _end_record(fp: BinaryIO) -> tuple[int, int, bytes] | None:
    """(position of the real end record, its comment's length, the record): a record whose
    comment reaches exactly to the end of the file and whose central directory is where it
    says. Of several (a comment may hold a whole fake record), the first: a comment can hold
    a fake record, a fake record's comment cannot hold the real one."""
    size = fp.seek(0, 2)
    start = max(0, size - _TAIL)
    fp.seek(start)
    tail = fp.read()
    at = tail.find(_EOCD)
    while at >= 0:
        record = tail[at : at + _EOCD_SIZE]
        if len(record) == _EOCD_SIZE:
            comment = struct.unpack("<H", record[20:22])[0]
            if start + at + _EOCD_SIZE + comment == size and _points_at_directory(
                fp, start + at, record
            ):
                return start + at, comment, record
        at = tail.find(_EOCD, at + 1)
    return None


def _points_at_directory(fp: BinaryIO, eocd: int, record: bytes) -> bool:
    size_cd, offset_cd = struct.unpack("<LL", record[12:20])
    if size_cd == 0xFFFFFFFF or offset_cd == 0xFFFFFFFF:
        return True  # zip64: checked when the directory is read
    if size_cd == 0:
        return True
    if size_cd > eocd:
        return False
    fp.seek(eocd - size_cd)
    return fp.read(4) == _CENTRAL


def _directory(fp: BinaryIO, eocd: int, record: bytes) -> tuple[int, int] | None:
    """(where the central directory starts in the file, its size in bytes)."""
    size_cd, offset_cd = struct.unpack("<LL", record[12:20])
    if offset_cd != 0xFFFFFFFF and size_cd != 0xFFFFFFFF:
        return eocd - size_cd, size_cd  # prepended bytes shift offsets; the end record is fixed
    if eocd < 20:
        return None
    fp.seek(eocd - 20)
    locator = fp.read(20)
    if locator[:4] != _LOCATOR64:
        return None
    (at64,) = struct.unpack("<Q", locator[8:16])
    fp.seek(at64)
    record64 = fp.read(56)
    if len(record64) < 56 or record64[:4] != _EOCD64:
        return None
    size64, offset64 = struct.unpack("<QQ", record64[40:56])
    return offset64, size64


def _faults(directory: bytes, base: int) -> tuple[dict[int, bytes], list[BadMember]]:
    """Patches (file offset -> bytes) that make each faulty central-directory entry harmless,
    and the members they leave out."""
    patches: dict[int, bytes] = {}
    bad: list[BadMember] = []
    pos, index = 0, 0
    while pos + _CENTRAL_SIZE <= len(directory) and directory[pos : pos + 4] == _CENTRAL:
        (version,) = struct.unpack("<B", directory[pos + 6 : pos + 7])
        (flags,) = struct.unpack("<H", directory[pos + 8 : pos + 10])
        n_name, n_extra, n_comment = struct.unpack("<HHH", directory[pos + 28 : pos + 34])
        raw = directory[pos + _CENTRAL_SIZE : pos + _CENTRAL_SIZE + n_name]
        name = escaped_bytes(raw)
        if flags & _UTF8_FLAG:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                patches[base + pos + 8] = struct.pack("<H", flags & ~_UTF8_FLAG)
                bad.append(BadMember(index, name, "undecodable_name",
                                     "its name is flagged UTF-8 but is not (shown escaped)"))  # fmt: skip
        if version > _MAX_VERSION:
            patches[base + pos + 6] = b"\x14"  # 2.0
            bad.append(BadMember(index, name, "unsupported_zip_member",
                                 f"it needs zip version {version / 10:.1f}, which is not "
                                 "supported"))  # fmt: skip
        pos += _CENTRAL_SIZE + n_name + n_extra + n_comment
        index += 1
    return patches, bad


def open_tolerant(fileobj: BinaryIO) -> tuple[zipfile.ZipFile, list[BadMember]]:
    """`zipfile.ZipFile(fileobj)`, or when that fails for one of the faults above (or read
    a fake end record in the comment as the real one: an archive of nothing), the archive read
    through a patched view, with the members left out. Any other failure raises what the
    plain open raised."""
    try:
        zf = zipfile.ZipFile(fileobj)
    except (zipfile.BadZipFile, UnicodeDecodeError, NotImplementedError) as first:
        repaired = _try_repair(fileobj)
        if repaired is None:
            raise first from None
        return repaired
    if _comment_misread(fileobj, zf.comment):
        repaired = _try_repair(fileobj)
        if repaired is not None:
            zf.close()
            return repaired
    return zf, []


def _comment_misread(fp: BinaryIO, comment: bytes) -> bool:
    """Whether zipfile took another end record than the one whose comment ends the file."""
    try:
        found = _end_record(fp)
    except OSError:
        return False
    if found is None:
        return False
    eocd, n_comment, _ = found
    if n_comment != len(comment):
        return True
    fp.seek(eocd + _EOCD_SIZE)
    return fp.read(n_comment) != comment


def _try_repair(fileobj: BinaryIO) -> tuple[zipfile.ZipFile, list[BadMember]] | None:
    try:
        return _repair(fileobj)
    except Exception:  # not one of the faults this repairs: the plain error stands
        return None


def _repair(fileobj: BinaryIO) -> tuple[zipfile.ZipFile, list[BadMember]] | None:
    found = _end_record(fileobj)
    if found is None:
        return None
    eocd, comment, record = found
    patches: dict[int, bytes] = {}
    if comment:
        patches[eocd + _EOCD_SIZE] = bytes(comment)  # blank the comment: no signature in it
    where = _directory(fileobj, eocd, record)
    if where is None:
        return None
    start, length = where
    fileobj.seek(start)
    found_patches, bad = _faults(fileobj.read(length), start)
    patches.update(found_patches)
    if not patches:
        return None
    fileobj.seek(0)
    view = PatchedFile(fileobj, patches)
    return zipfile.ZipFile(view), bad


__all__ = ["BadMember", "PatchedFile", "open_tolerant"]

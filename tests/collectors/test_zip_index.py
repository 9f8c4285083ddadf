"""A zip listed without a ZipInfo per image member reads exactly as `zipfile` reads it whole:
the same files, problems, sizes and bytes (or errors), for plain archives and for every kind
of archive that must be read the old way."""

from __future__ import annotations

import io
import stat
import struct
import threading
import warnings
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deskscore.collectors import zip_index
from deskscore.collectors.source import SourceError, ZipSource
from deskscore.collectors.zip_index import (
    IMAGE_SUFFIXES,
    SplicedFile,
    open_indexed,
    read_whole,
)

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


def _zip(members: list[tuple[str | zipfile.ZipInfo, bytes]], **kw: object) -> bytearray:
    buf = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        warnings.simplefilter("ignore")  # duplicate names, on purpose
        for name, data in members:
            zf.writestr(name, data, **kw)  # type: ignore[arg-type]
    return bytearray(buf.getvalue())


def _symlink(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


RUN = [
    ("run/", b""),
    ("run/chrome/t1/traj.jsonl", b'{"step_num": 1}\n' * 50),
    ("run/chrome/t1/result.txt", b"1.0\n"),
    ("run/chrome/t1/step_1_20250101@000000.png", PNG),
    ("run/chrome/t1/step_2_20250101@000001.png", PNG[::-1]),
    ("run/chrome/t1/shot.JPG", PNG),
    ("run/chrome/t1/ünïcode.txt", "é".encode()),
    ("run/chrome/t1/result.txt", b"0.0\n"),  # a duplicate: the last copy is read
    ("run/chrome/t1/nested.zip", b"PK\x05\x06" + bytes(18)),
    ("__MACOSX/run/._traj.jsonl", b"x"),
    ("run/../evil.png", PNG),
    ("run/back\\slash.txt", b"x"),
    ("/abs/path.txt", b"x"),
    (_symlink("run/link.png"), b"/etc/passwd"),
    (_symlink("run/link.txt"), b"/etc/passwd"),
    ("run/empty.png", b""),
]


def _cp437_name(data: bytearray) -> bytearray:
    """The member `run/cafX.txt` renamed to a name that is not ASCII, its UTF-8 flag unset
    (an old zip tool's, read as cp437)."""
    return bytearray(bytes(data).replace(b"run/cafX.txt", b"run/caf\x82.txt"))


def _renamed(data: bytearray) -> bytearray:
    """The member `run/nulX.txt` renamed `run/nul<NUL>.txt` (zipfile cuts the name there)."""
    return bytearray(bytes(data).replace(b"run/nulX.txt", b"run/nul\x00.txt"))


def _prepended(data: bytearray) -> bytearray:
    return bytearray(b"#!/bin/sh\nexit 0\n") + data


def _commented(data: bytearray) -> bytearray:
    buf = io.BytesIO(bytes(data))
    with zipfile.ZipFile(buf, "a") as zf:
        zf.comment = b"a comment"
    return bytearray(buf.getvalue())


def _newer_version(data: bytearray) -> bytearray:
    at = data.rfind(b"PK\x01\x02")  # the last member's directory entry
    data[at + 6] = 90  # needs zip 9.0
    return data


def _bad_utf8(data: bytearray) -> bytearray:
    data = bytearray(bytes(data).replace(b"run/bad.txt", b"run/b\xffd.txt"))
    at = data.rfind(b"PK\x01\x02")
    (flags,) = struct.unpack_from("<H", data, at + 8)
    struct.pack_into("<H", data, at + 8, flags | 0x800)
    return data


def _corrupt_extra(data: bytearray) -> bytearray:
    """The last member's extra field says it holds more than it does."""
    at = data.rfind(b"PK\x01\x02")
    struct.pack_into("<H", data, at + 46 + len(b"run/x.txt") + 2, 200)
    return data


def _truncated_directory(data: bytearray) -> bytearray:
    end = data.rfind(b"PK\x05\x06")
    (size_cd,) = struct.unpack_from("<L", data, end + 12)
    struct.pack_into("<L", data, end + 12, size_cd - 3)
    return data


def _zip64() -> bytearray:
    """Members streamed with zip64 local headers; the directory, written after, needs none."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in RUN[1:5]:
            with zf.open(name, "w", force_zip64=True) as member:
                member.write(data)
    return bytearray(buf.getvalue())


def _extra(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.extra = struct.pack("<HH", 0x5455, 5) + b"\x01\x00\x00\x00\x00"  # a timestamp field
    return info


PLAIN = {
    "a run with images, folders, duplicates and unsafe names": lambda: _zip(RUN),
    "a name decoded as cp437": lambda: _cp437_name(_zip([*RUN[:3], ("run/cafX.txt", b"x")])),
    "extra fields zipfile reads": lambda: _zip(
        [(_extra("run/x.txt"), b"x"), (_extra("run/y.png"), PNG)]
    ),
    "stored members": lambda: _zip(RUN[:5], compress_type=zipfile.ZIP_STORED),
    "no member at all": lambda: _zip([]),
    "zip64 sizes in the local headers only": _zip64,
    "a name with a NUL in it": lambda: _renamed(_zip([*RUN[:3], ("run/nulX.txt", b"x")])),
}
NOT_PLAIN = {
    "bytes before the archive": lambda: _prepended(_zip(RUN)),
    "an archive comment": lambda: _commented(_zip(RUN)),
    "zip64 end records (65,536 members)": lambda: _zip(
        [(f"run/{i}.txt", b"") for i in range(1 << 16)]
    ),
    "a member of a newer zip version": lambda: _newer_version(
        _zip([*RUN[:5], ("run/z.txt", b"z")])
    ),
    "a name flagged UTF-8 that is not": lambda: _bad_utf8(_zip([*RUN[:5], ("run/bad.txt", b"b")])),
    "a corrupt extra field": lambda: _corrupt_extra(_zip([*RUN[:3], (_extra("run/x.txt"), b"x")])),
    "a directory cut short": lambda: _truncated_directory(_zip(RUN)),
}


TRAJ = b"".join(
    b'{"step_num": %d, "response": "click the %d-th button"}\n' % (i, i) for i in range(80)
)
MEMBERS = [
    ("run/t1/traj.jsonl", TRAJ),
    ("run/t1/result.txt", b"1.0\n"),
    ("run/t2/traj.jsonl", TRAJ[::-1]),
]


def _entry(data: bytearray, name: str) -> int:
    """Where the directory entry of member `name` starts."""
    return data.rfind(b"PK\x01\x02", 0, data.rfind(name.encode()))


def _member_damage(how: str) -> bytearray:
    data = _zip(MEMBERS)
    name = "run/t1/traj.jsonl"
    head, entry = data.find(b"PK\x03\x04"), _entry(data, name)
    (n_name, n_extra) = struct.unpack_from("<HH", data, head + 26)
    body = head + 30 + n_name + n_extra
    if how == "a byte of the data flipped":
        data[body + 40] ^= 0x55
    elif how == "a wrong CRC-32 in the directory":
        struct.pack_into("<L", data, entry + 16, 0x12345678)
    elif how == "a listed size larger than the data inflates to":
        (size,) = struct.unpack_from("<L", data, entry + 24)
        struct.pack_into("<L", data, entry + 24, size + 7)
    elif how == "a listed compressed size running into the next member":
        (size,) = struct.unpack_from("<L", data, entry + 20)
        struct.pack_into("<L", data, entry + 20, size + 30)
    elif how == "a local header with a broken signature":
        data[head + 3] = 0x05
    elif how == "a local header naming another file":
        data[head + 30] = ord("R")
    elif how == "the encrypted flag set":
        for at in (head + 6, entry + 8):
            data[at] |= 0x1
    elif how == "two members at one local header":
        (offset,) = struct.unpack_from("<L", data, entry + 42)
        struct.pack_into("<L", data, _entry(data, "run/t1/result.txt") + 42, offset)
    return data


def _other_compression(kind: int) -> bytearray:
    return _zip(MEMBERS, compress_type=kind)


MEMBER_DAMAGE = {
    how: (lambda how=how: _member_damage(how))
    for how in (
        "a byte of the data flipped",
        "a wrong CRC-32 in the directory",
        "a listed size larger than the data inflates to",
        "a listed compressed size running into the next member",
        "a local header with a broken signature",
        "a local header naming another file",
        "the encrypted flag set",
        "two members at one local header",
    )
} | {
    "bzip2 members": lambda: _other_compression(zipfile.ZIP_BZIP2),
    "lzma members": lambda: _other_compression(zipfile.ZIP_LZMA),
}


def _read_all(source: ZipSource) -> dict[str, object]:
    out: dict[str, object] = {}
    for name in source.files():
        try:
            out[name] = (source.size(name), source.read_bytes(name))
        except SourceError as e:
            out[name] = str(e)
    return out


def _both(tmp_path: Path, data: bytearray) -> tuple[ZipSource | str, ZipSource | str]:
    """The archive opened by path (listed by zip_index when plain) and as a file object
    (always by zipfile whole); an archive that cannot be opened gives its error."""
    path = tmp_path / "run.zip"
    path.write_bytes(bytes(data))
    sides: list[ZipSource | str] = []
    for fileobj in (None, open(path, "rb")):  # noqa: SIM115 (the source closes it)
        try:
            sides.append(ZipSource(str(path), fileobj=fileobj))
        except SourceError as e:
            sides.append(str(e).replace(str(path), "ZIP"))
    return sides[0], sides[1]


@pytest.mark.parametrize("shape", [*PLAIN, *NOT_PLAIN, *MEMBER_DAMAGE])
def test_an_archive_lists_and_reads_the_same_by_either_way(tmp_path: Path, shape: str) -> None:
    data = {**PLAIN, **NOT_PLAIN, **MEMBER_DAMAGE}[shape]()
    indexed, whole = _both(tmp_path, data)
    if isinstance(indexed, str) or isinstance(whole, str):
        assert indexed == whole
        return
    assert indexed.files() == whole.files()
    assert indexed.problems == whole.problems
    assert _read_all(indexed) == _read_all(whole)
    indexed.close()
    whole.close()


@pytest.mark.parametrize("shape", PLAIN)
def test_a_plain_archive_is_indexed_with_only_its_other_members_in_zipfiles_view(
    shape: str,
) -> None:
    data = PLAIN[shape]()
    indexed = open_indexed(io.BytesIO(bytes(data)))
    assert indexed is not None
    whole = zipfile.ZipFile(io.BytesIO(bytes(data)))
    assert indexed.names == [i.filename for i in whole.infolist()]
    assert indexed.external_attrs == [i.external_attr for i in whole.infolist()]
    assert indexed.file_sizes == [i.file_size for i in whole.infolist()]
    assert indexed.compress_sizes == [i.compress_size for i in whole.infolist()]
    in_view = [indexed.names[i] for i in sorted(indexed.infos)]
    assert in_view == [n for n in indexed.names if not n.endswith(IMAGE_SUFFIXES)]


@pytest.mark.parametrize("shape", [s for s in NOT_PLAIN if s != "a directory cut short"])
def test_an_archive_that_is_not_plain_is_left_to_zipfile(shape: str) -> None:
    assert open_indexed(io.BytesIO(bytes(NOT_PLAIN[shape]()))) is None


@pytest.mark.parametrize("shape", PLAIN)
def test_every_plain_member_is_read_in_one_piece_as_zipfile_reads_it(
    tmp_path: Path, shape: str
) -> None:
    """The one-piece read is taken (not left to zipfile) for each member of the view of a
    plain archive, and gives zipfile's bytes."""
    path = tmp_path / "run.zip"
    path.write_bytes(bytes(PLAIN[shape]()))
    with open(path, "rb") as fh:
        indexed = open_indexed(fh)
        assert indexed is not None
        for info in indexed.infos.values():
            assert read_whole(fh, info) == indexed.zip.read(info), info.filename


@pytest.mark.parametrize("shape", MEMBER_DAMAGE)
def test_a_damaged_or_unusual_member_is_left_to_zipfile(tmp_path: Path, shape: str) -> None:
    path = tmp_path / "run.zip"
    path.write_bytes(bytes(MEMBER_DAMAGE[shape]()))
    with open(path, "rb") as fh:
        indexed = open_indexed(fh)
        assert indexed is not None
        name = "run/t1/result.txt" if shape == "two members at one local header" else None
        damaged = [i for i in indexed.infos.values() if i.filename == (name or MEMBERS[0][0])]
        assert [read_whole(fh, info) for info in damaged] == [None]


def test_a_member_over_the_one_piece_size_streams(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(zip_index, "ONE_PIECE_BYTES", len(TRAJ) - 1)
    path = tmp_path / "run.zip"
    path.write_bytes(bytes(_zip(MEMBERS)))
    with open(path, "rb") as fh:
        indexed = open_indexed(fh)
        assert indexed is not None
        sizes = {i.filename: read_whole(fh, i) is None for i in indexed.infos.values()}
    assert sizes == {
        "run/t1/traj.jsonl": True,
        "run/t1/result.txt": False,
        "run/t2/traj.jsonl": True,
    }
    source = ZipSource(str(path))
    assert source.read_bytes("run/t1/traj.jsonl") == TRAJ
    source.close()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_any_damage_to_members_reads_the_same_as_zipfile_alone(tmp_path: Path, data) -> None:
    """Bytes anywhere before the directory (local headers and data) overwritten at random:
    each member reads as the same bytes, or fails with the same message, with the one-piece
    read as with zipfile alone."""
    archive = _zip(MEMBERS)
    (directory,) = struct.unpack_from("<L", archive, archive.rfind(b"PK\x05\x06") + 16)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, directory - 1))
        archive[at] = data.draw(st.integers(0, 255))
    indexed, whole = _both(tmp_path, archive)
    assert not isinstance(indexed, str) and not isinstance(whole, str)
    assert _read_all(indexed) == _read_all(whole)
    indexed.close()
    whole.close()


def test_images_and_other_members_read_from_many_threads_at_once(tmp_path: Path) -> None:
    """Images come from a ZipFile of the whole archive over a file of its own, the other
    members from the view: reads of both at once do not mix."""
    members = [(f"run/t/step_{i}.png", PNG[i:] + bytes([i])) for i in range(40)]
    members += [(f"run/t/traj{i}.jsonl", b'{"i": %d}\n' % i * 200) for i in range(40)]
    path = tmp_path / "run.zip"
    path.write_bytes(bytes(_zip(members)))
    source = ZipSource(str(path))
    want = dict(members)
    got: dict[str, bytes] = {}

    def read(names: list[str]) -> None:
        for _ in range(5):
            for name in names:
                got[name] = source.read_bytes(name)

    names = sorted(want)
    threads = [threading.Thread(target=read, args=(names[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == want
    source.close()


def test_a_spliced_file_reads_the_file_up_to_the_cut_then_the_tail() -> None:
    inner = io.BytesIO(b"0123456789")
    view = SplicedFile(inner, 4, b"abc")
    assert view.read() == b"0123abc"
    assert view.seek(-5, 2) == 2 and view.read(4) == b"23ab"
    assert view.tell() == 6 and view.read(10) == b"c" and view.read(1) == b""
    view.seek(1)
    buffer = bytearray(4)
    assert view.readinto(buffer) == 4 and bytes(buffer) == b"123a"

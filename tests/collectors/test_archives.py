"""Naming many archives, stamping them without reading, and digesting what was read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deskscore.collectors.archives import (
    DigestingSource,
    SourceListError,
    expand_sources,
    source_stamp,
)
from deskscore.collectors.source import open_source


def test_globs_and_list_files_expand_to_canonical_sources_once_each(tmp_path: Path) -> None:
    for name in ("a.zip", "b.zip", "c.txt"):
        (tmp_path / name).write_bytes(b"x")
    listing = tmp_path / "list.txt"
    listing.write_text("# comment\nb.zip\n\n" + str(tmp_path / "*.zip") + "\n")
    got = expand_sources([str(tmp_path / "*.zip"), f"@{listing}", "memory://bucket/run"])
    assert got == [str(tmp_path / "a.zip"), str(tmp_path / "b.zip"), "memory://bucket/run"]
    with pytest.raises(SourceListError, match="matches no file"):
        expand_sources([str(tmp_path / "*.tar")])
    with pytest.raises(SourceListError, match="cannot read the list file"):
        expand_sources([f"@{tmp_path / 'missing.txt'}"])


def test_a_stamp_moves_with_size_mtime_or_any_file_of_a_folder(tmp_path: Path) -> None:
    archive = tmp_path / "run.zip"
    archive.write_bytes(b"first")
    stamp = source_stamp(str(archive))
    assert source_stamp(str(archive)) == stamp
    st = archive.stat()
    os.utime(archive, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert source_stamp(str(archive)) != stamp
    folder = tmp_path / "tree"
    (folder / "os" / "t1").mkdir(parents=True)
    (folder / "os" / "t1" / "traj.jsonl").write_text("{}\n")
    before = source_stamp(str(folder))
    (folder / "os" / "t1" / "result.txt").write_text("1")
    assert source_stamp(str(folder)) != before
    assert source_stamp(str(tmp_path / "gone.zip")) is None


def _stamp_as_recorded(path: str) -> str:
    """A folder's stamp as warehouses have recorded it (relpath of each file, one update per
    file): a stamp that changed would make every recorded folder read as changed."""
    import hashlib

    h = hashlib.sha1()
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            try:
                st = os.stat(full)
            except OSError:
                continue
            rel = os.path.relpath(full, path)
            h.update(f"{rel}\x00{st.st_size}\x00{st.st_mtime_ns}\n".encode("utf-8", "replace"))
    return "dir:" + h.hexdigest()


def test_a_folder_s_stamp_is_the_one_warehouses_recorded_however_the_folder_is_named(
    tmp_path: Path,
) -> None:
    root = tmp_path / "run"
    (root / "os" / "t1").mkdir(parents=True)
    (root / "os" / "t1" / "traj.jsonl").write_text("{}\n")
    (root / "os" / "t1" / "result.txt").write_text("1")
    (root / "chrome" / "t 2").mkdir(parents=True)
    (root / "chrome" / "t 2" / "traj.jsonl").write_text("{}\n{}\n")
    (root / "args.json").write_text("{}")
    os.symlink(root / "args.json", root / "linked.json")  # a link to a file: stamped
    os.symlink(root / "os", root / "linked-dir")  # a link to a folder: not walked into
    os.symlink(tmp_path / "nowhere", root / "dangling")  # cannot be stat'ed: left out
    odd = os.fsencode(str(root / "os")) + b"/t\xff\xfe"  # a name that is not UTF-8
    os.mkdir(odd)
    with open(odd + b"/traj.jsonl", "wb") as f:
        f.write(b"{}\n")
    inner = str(root / "os")
    for named in (str(root), str(root) + "/", str(root) + "//", f"{tmp_path}/./run",
                  f"{inner}/../../run", os.path.relpath(root)):  # fmt: skip
        assert source_stamp(named) == _stamp_as_recorded(named), named
    assert source_stamp(str(root)) == source_stamp(str(root) + "/")


def test_the_digest_covers_exactly_the_bytes_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one")
    (tmp_path / "b.png").write_bytes(b"picture")
    source = DigestingSource(open_source(str(tmp_path)))
    source.read_bytes("a.txt")
    digest = source.digest("v1")
    (tmp_path / "b.png").write_bytes(b"another picture")  # never read: no effect
    again = DigestingSource(open_source(str(tmp_path)))
    again.read_bytes("a.txt")
    assert again.digest("v1") == digest
    assert again.digest("v2") != digest
    (tmp_path / "a.txt").write_text("two")
    changed = DigestingSource(open_source(str(tmp_path)))
    changed.read_bytes("a.txt")
    assert changed.digest("v1") != digest

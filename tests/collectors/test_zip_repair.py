"""A zip that `zipfile` refuses for the fault of one part: the other members are read, and the
faulty one is reported, not the whole archive."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from deskscore.collectors.source import SourceError, open_source

GOOD = {"run/a.txt": b"alpha", "run/b.txt": b"beta"}


def _zip(members: dict[str, bytes], comment: bytes = b"") -> bytearray:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.comment = comment
    return bytearray(buf.getvalue())


def _write(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "run.zip"
    path.write_bytes(bytes(data))
    return str(path)


@pytest.mark.parametrize(
    "comment",
    [
        b"PK\x05\x06" + bytes(18),  # a whole empty end record: read as an archive of nothing
        b"see PK\x05\x06 in the middle of the comment",
        b"PK\x05\x06" + bytes(16) + b"\xff\xff tail",
    ],
)
def test_an_end_record_signature_in_the_comment_does_not_hide_the_members(
    tmp_path: Path, comment: bytes
) -> None:
    with open_source(_write(tmp_path, _zip(GOOD, comment))) as src:
        assert src.files() == sorted(GOOD)
        assert [src.read_bytes(n) for n in sorted(GOOD)] == [GOOD[n] for n in sorted(GOOD)]


def test_a_member_name_flagged_utf8_that_is_not_is_left_out_and_reported(
    tmp_path: Path,
) -> None:
    data = _zip({**GOOD, "run/cafe.txt": b"x"})
    central = data.index(b"run/cafe.txt", data.index(b"PK\x01\x02"))
    local = data.index(b"run/cafe.txt")
    for name_at, flags_at in ((local, local - 30 + 6), (central, central - 46 + 8)):
        data[name_at + 7] = 0xE9  # run/caf\xe9.txt: not UTF-8
        data[flags_at + 1] |= 0x08  # the UTF-8 flag (bit 11)
    with open_source(_write(tmp_path, data)) as src:
        assert src.files() == sorted(GOOD)
        assert src.read_bytes("run/b.txt") == b"beta"
        [problem] = src.problems
    assert (problem["location"], problem["reason"]) == ("run/caf\\xe9.txt", "undecodable_name")
    assert "was not read (the others were)" in problem["message"]


def test_a_member_needing_an_unknown_zip_version_is_left_out_and_reported(
    tmp_path: Path,
) -> None:
    data = _zip({**GOOD, "run/new.txt": b"x"})
    central = data.index(b"run/new.txt", data.index(b"PK\x01\x02"))
    data[central - 46 + 6] = 84  # "version 8.4 needed to extract"
    with open_source(_write(tmp_path, data)) as src:
        assert src.files() == sorted(GOOD)
        assert src.read_bytes("run/a.txt") == b"alpha"
        [problem] = src.problems
    assert (problem["location"], problem["reason"]) == ("run/new.txt", "unsupported_zip_member")
    assert "8.4" in problem["message"]


def test_a_member_with_an_unknown_compression_is_a_source_error_naming_it(
    tmp_path: Path,
) -> None:
    data = _zip({**GOOD, "run/odd.txt": b"x"})
    local = data.index(b"run/odd.txt")
    central = data.index(b"run/odd.txt", data.index(b"PK\x01\x02"))
    for method_at in (local - 30 + 8, central - 46 + 10):
        data[method_at] = 97  # a compression method no zip library here knows
    with open_source(_write(tmp_path, data)) as src:
        assert src.read_bytes("run/a.txt") == b"alpha"
        with pytest.raises(SourceError, match=r"run/odd\.txt"):
            src.read_bytes("run/odd.txt")


def test_a_zip_broken_in_another_way_still_says_what_to_do(tmp_path: Path) -> None:
    data = _zip(GOOD)
    del data[data.index(b"PK\x01\x02") :]  # no central directory at all
    with pytest.raises(SourceError, match="unzip -t"):
        open_source(_write(tmp_path, data))


def test_a_member_without_a_name_is_reported_and_the_others_read(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("run/a.txt", b"alpha")
        zf.writestr(zipfile.ZipInfo(""), b"nameless")
    with open_source(_write(tmp_path, buf.getvalue())) as src:
        assert src.files() == ["run/a.txt"] and src.read_bytes("run/a.txt") == b"alpha"
        assert [p["reason"] for p in src.problems] == ["unsafe_member_path"]

"""The one read-only view over folders, zips (read in place) and fsspec URLs."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest

from deskscore.collectors.source import SourceError, open_source

TREE = {
    "run/chrome/task-a/traj.jsonl": b'{"step_num": 1}\n',
    "run/chrome/task-a/result.txt": b"1\n",
    "run/args.json": b"{}",
    "top.txt": b"top",
}


def zip_bytes(members: list[tuple[str, bytes]], dirs: tuple[str, ...] = ()) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for d in dirs:
            zf.writestr(zipfile.ZipInfo(d), b"")
        for name, data in members:
            zf.writestr(zipfile.ZipInfo(name), data)
    return buf.getvalue()


def test_folder_lists_relative_posix_paths_sorted(tmp_path: Path, write_tree) -> None:
    src = open_source(str(write_tree(tmp_path / "src", TREE)))
    assert src.kind == "dir"
    assert src.uri == str((tmp_path / "src").resolve())
    assert src.files() == sorted(TREE)
    assert src.read_bytes("run/chrome/task-a/result.txt") == b"1\n"
    assert src.size("top.txt") == 3
    assert src.problems == []


def test_folder_source_refuses_paths_outside_it(tmp_path: Path, write_tree) -> None:
    write_tree(tmp_path, {"outside.txt": b"secret", "src/in.txt": b"x"})
    src = open_source(str(tmp_path / "src"))
    with pytest.raises(SourceError):
        src.read_bytes("../outside.txt")


def test_symlink_out_of_the_folder_is_reported_not_followed(tmp_path: Path, write_tree) -> None:
    write_tree(tmp_path, {"outside.txt": b"secret", "src/in.txt": b"x"})
    os.symlink(tmp_path / "outside.txt", tmp_path / "src" / "link.txt")
    src = open_source(str(tmp_path / "src"))
    assert src.files() == ["in.txt"]
    assert [p["reason"] for p in src.problems] == ["unsafe_symlink"]
    with pytest.raises(SourceError, match="refusing"):
        src.read_bytes("link.txt")
    fresh = open_source(str(tmp_path / "src"))  # reading before listing is refused too
    with pytest.raises(SourceError, match="refusing"):
        fresh.read_bytes("link.txt")


def test_folders_resolved_once_still_refuse_a_folder_link_out_and_allow_one_in(
    tmp_path: Path, write_tree
) -> None:
    """Reading resolves each folder once (a run's files share a few): a folder that links
    out of the source is refused whenever it is read, one linking inside it is read."""
    write_tree(tmp_path, {"outside/secret.txt": b"secret", "src/run/in.txt": b"x"})
    os.symlink(tmp_path / "outside", tmp_path / "src" / "out")
    os.symlink(tmp_path / "src" / "run", tmp_path / "src" / "alias")
    src = open_source(str(tmp_path / "src"))  # not listed: every read is checked
    for _ in range(2):
        assert src.read_bytes("run/in.txt") == b"x"
        assert src.read_bytes("alias/in.txt") == b"x"
        with pytest.raises(SourceError, match="refusing"):
            src.read_bytes("out/secret.txt")


def test_a_folder_opened_following_links_lists_and_reads_through_links_that_lead_out(
    tmp_path: Path, write_tree
) -> None:
    write_tree(tmp_path, {"outside/secret.txt": b"s", "one.txt": b"1", "src/in.txt": b"x"})
    os.symlink(tmp_path / "outside", tmp_path / "src" / "out")
    os.symlink(tmp_path / "one.txt", tmp_path / "src" / "one.txt")
    os.symlink(tmp_path / "src", tmp_path / "src" / "up")  # back up the tree
    src = open_source(str(tmp_path / "src"), follow_links=True)
    # each folder a link leads to is walked once: `up` once, and `out` not again within it
    assert src.files() == ["in.txt", "one.txt", "out/secret.txt", "up/in.txt", "up/one.txt"]
    assert src.problems == []
    assert src.read_bytes("out/secret.txt") == b"s"
    fresh = open_source(str(tmp_path / "src"), follow_links=True)  # read before listing
    assert fresh.read_bytes("one.txt") == b"1"
    with pytest.raises(SourceError, match="refusing"):
        fresh.read_bytes("../one.txt")  # a path that climbs is still refused


@pytest.mark.parametrize(
    "make,says",
    [
        (lambda p: (os.symlink(p / "b", p / "a"), os.symlink(p / "a", p / "b")), "Too many"),
        (lambda p: os.symlink(p / "gone", p / "a"), "No such file"),
    ],
    ids=["loop", "dangling"],
)
def test_a_link_that_leads_nowhere_is_refused_saying_why(tmp_path: Path, make, says) -> None:
    make(tmp_path)
    with pytest.raises(SourceError, match=f"symbolic link that cannot be followed .*{says}"):
        open_source(str(tmp_path / "a"))


def test_an_empty_path_is_refused_as_empty_not_as_the_current_folder() -> None:
    with pytest.raises(SourceError, match="an empty path"):
        open_source("")


def test_zip_is_read_in_place_skipping_macos_entries_and_folders(tmp_path: Path) -> None:
    members = [(f"prefix/{k}", v) for k, v in TREE.items()]
    members += [("__MACOSX/prefix/run/._args.json", b"junk"), ("__MACOSX/._top.txt", b"junk")]
    path = tmp_path / "run.zip"
    path.write_bytes(zip_bytes(members, dirs=("prefix/", "prefix/run/")))
    src = open_source(str(path))
    assert src.kind == "zip"
    assert src.files() == sorted(f"prefix/{k}" for k in TREE)
    assert (
        src.read_bytes("prefix/run/chrome/task-a/traj.jsonl")
        == TREE["run/chrome/task-a/traj.jsonl"]
    )
    assert src.size("prefix/top.txt") == 3
    assert not (tmp_path / "prefix").exists()  # nothing was extracted


@pytest.mark.parametrize(
    "name", ["../evil.txt", "ok/../../evil.txt", "/abs/evil.txt", "a\\..\\evil.txt"]
)
def test_unsafe_zip_member_names_are_reported_and_never_opened(tmp_path: Path, name: str) -> None:
    path = tmp_path / "bad.zip"
    path.write_bytes(zip_bytes([(name, b"evil"), ("fine.txt", b"ok")]))
    src = open_source(str(path))
    assert src.files() == ["fine.txt"]
    assert [(p["location"], p["reason"]) for p in src.problems] == [(name, "unsafe_member_path")]
    assert "not listed" in src.problems[0]["message"]
    with pytest.raises(SourceError):
        src.read_bytes(name)
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path.parent / "evil.txt").exists()


def test_duplicate_zip_members_keep_the_last_and_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "dup.zip"
    with pytest.warns(UserWarning, match="Duplicate name"):
        path.write_bytes(zip_bytes([("a.txt", b"first"), ("a.txt", b"second")]))
    src = open_source(str(path))
    assert src.files() == ["a.txt"]
    assert src.read_bytes("a.txt") == b"second"
    assert [p["reason"] for p in src.problems] == ["duplicate_member"]


def test_corrupt_zip_raises_source_error_that_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "broken.zip"
    path.write_bytes(b"PK\x03\x04 this is not really a zip")
    with pytest.raises(SourceError) as err:
        open_source(str(path))
    assert err.value.uri == str(path)
    assert "unzip -t" in err.value.message


def test_member_with_bad_crc_raises_source_error_naming_it(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("good.txt", b"fine")
        zf.writestr("bad.txt", b"PAYLOAD-PAYLOAD")
    data = buf.getvalue().replace(b"PAYLOAD-PAYLOAD", b"PAYLOAD-XAYLOAD")
    path = tmp_path / "crc.zip"
    path.write_bytes(data)
    src = open_source(str(path))
    assert src.read_bytes("good.txt") == b"fine"
    with pytest.raises(SourceError) as err:
        src.read_bytes("bad.txt")
    assert err.value.location == "bad.txt" and "bad.txt" in str(err.value)


def test_encrypted_member_raises_source_error(tmp_path: Path) -> None:
    raw = bytearray(zip_bytes([("secret.txt", b"hidden")]))
    for sig, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = raw.index(sig) + flag_at
        raw[at] |= 0x01
    path = tmp_path / "enc.zip"
    path.write_bytes(bytes(raw))
    src = open_source(str(path))
    with pytest.raises(SourceError, match=r"secret\.txt") as caught:
        src.read_bytes("secret.txt")
    assert "is encrypted (password-protected)" in caught.value.message
    assert "unzip the archive with its password" in caught.value.message
    assert "unzip -t" not in caught.value.message  # no test finds what a password hides


def test_memory_url_lists_and_reads_through_fsspec() -> None:
    import fsspec

    fs = fsspec.filesystem("memory")
    for rel, data in TREE.items():
        fs.pipe_file(f"/srctest/{rel}", data)
    try:
        src = open_source("memory://srctest")
        assert src.kind == "fsspec" and src.uri == "memory://srctest"
        assert src.files() == sorted(TREE)
        assert src.read_bytes("run/args.json") == b"{}"
        assert src.size("top.txt") == 3
    finally:
        fs.rm("/srctest", recursive=True)


def test_zip_url_is_read_in_place_through_fsspec(tmp_path: Path) -> None:
    path = tmp_path / "run.zip"
    path.write_bytes(zip_bytes([(f"p/{k}", v) for k, v in TREE.items()]))
    src = open_source(path.as_uri())
    assert src.kind == "zip" and src.uri == path.as_uri()
    assert src.files() == sorted(f"p/{k}" for k in TREE)
    assert src.read_bytes("p/top.txt") == b"top"
    src.close()


def test_missing_path_raises_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such folder or file"):
        open_source(str(tmp_path / "nope"))


# ---- caps, special files, names that are not UTF-8, zips zipfile refuses ------------------


def test_a_file_over_the_file_cap_is_refused_naming_the_cap_and_its_variable(
    tmp_path: Path, write_tree, monkeypatch
) -> None:
    root = write_tree(tmp_path / "src", {"run/small.txt": b"ok"})
    with open(root / "run" / "sparse.jsonl", "wb") as f:
        f.truncate(3 << 20)  # 3 MiB on paper, nothing on disk
    monkeypatch.setenv("DESKSCORE_MAX_FILE_BYTES", str(1 << 20))
    src = open_source(str(root))
    with pytest.raises(SourceError) as err:
        src.read_bytes("run/sparse.jsonl")
    assert err.value.reason == "too_large"
    assert "1048576" in err.value.message and "DESKSCORE_MAX_FILE_BYTES" in err.value.message
    assert src.read_bytes("run/small.txt") == b"ok"


def _outcome_unless_blocked(read, fifo: Path) -> BaseException | None:
    """What `read()` raised (None if nothing) in a thread; if it blocks on `fifo`, open the
    FIFO's other end to release it, and fail."""
    import threading

    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            read()
            outcome.append(None)
        except BaseException as e:  # handed back to the test
            outcome.append(e)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # the reader waits: release it
        t.join(10)
        pytest.fail("the read blocked on a FIFO")
    return outcome[0]


def test_a_fifo_in_a_folder_is_reported_and_never_listed(tmp_path: Path, write_tree) -> None:
    root = write_tree(tmp_path / "src", {"run/a.txt": b"a"})
    os.mkfifo(root / "run" / "traj.jsonl")
    os.symlink(root / "run" / "traj.jsonl", root / "run" / "link.jsonl")
    src = open_source(str(root))
    assert src.files() == ["run/a.txt"]
    reasons = sorted((p["location"], p["reason"]) for p in src.problems)
    assert reasons == [("run/link.jsonl", "special_file"), ("run/traj.jsonl", "special_file")]
    assert all("FIFO" in p["message"] for p in src.problems)


def test_links_that_lead_nowhere_and_folders_named_as_task_files_are_reported(
    tmp_path: Path, write_tree
) -> None:
    """A dangling link, a link to itself, and a folder named traj.jsonl or result.txt: each was
    listed as nothing at all, so a task with a result and such a trajectory read as a task of
    no steps, unremarked."""
    root = write_tree(tmp_path / "src", {"run/a.txt": b"a", "run/results/notes.txt": b"n"})
    os.symlink(root / "run" / "gone.jsonl", root / "run" / "traj.jsonl")
    os.symlink(root / "run" / "result.txt", root / "run" / "result.txt")
    (root / "other" / "old.jsonl").mkdir(parents=True)
    (root / "other" / "result.txt").mkdir()
    src = open_source(str(root))
    assert src.files() == ["run/a.txt", "run/results/notes.txt"]
    found = sorted((p["location"], p["reason"], p["message"]) for p in src.problems)
    assert [(loc, reason) for loc, reason, _ in found] == [
        ("other/old.jsonl", "special_file"),
        ("other/result.txt", "special_file"),
        ("run/result.txt", "unreadable_file"),
        ("run/traj.jsonl", "unreadable_file"),
    ]
    assert "a folder, not a regular file" in found[0][2]
    assert "symbolic links" in found[2][2] and "No such file" in found[3][2]


def test_a_fifo_that_replaced_a_listed_file_is_refused_not_waited_on(
    tmp_path: Path, write_tree
) -> None:
    root = write_tree(tmp_path / "src", {"run/shot.png": b"png"})
    src = open_source(str(root))
    assert src.files() == ["run/shot.png"]
    os.unlink(root / "run" / "shot.png")
    os.mkfifo(root / "run" / "shot.png")
    err = _outcome_unless_blocked(lambda: src.read_bytes("run/shot.png"), root / "run/shot.png")
    assert isinstance(err, SourceError) and err.reason == "special_file"
    assert "FIFO" in err.message


def test_a_name_that_is_not_utf8_is_reported_escaped_and_the_rest_listed(
    tmp_path: Path, write_tree
) -> None:
    root = write_tree(tmp_path / "src", {"run/good.txt": b"g"})
    base = os.fsencode(root / "run")
    with open(os.path.join(base, b"caf\xe9.json"), "wb") as f:
        f.write(b"{}")
    os.mkdir(os.path.join(base, b"dir\xff"))
    with open(os.path.join(base, b"dir\xff", b"inner.txt"), "wb") as f:
        f.write(b"x")
    src = open_source(str(root))
    assert src.files() == ["run/good.txt"]
    shown = sorted(p["location"] for p in src.problems)
    assert shown == ["run/caf\\xe9.json", "run/dir\\xff"]
    assert {p["reason"] for p in src.problems} == {"undecodable_name"}
    for p in src.problems:
        p["message"].encode("utf-8")  # storable and printable


def test_a_source_whose_name_is_not_utf8_is_refused_with_its_escaped_name(
    tmp_path: Path, write_tree
) -> None:
    from deskscore.collectors.archives import canonical_uri

    bad = os.path.join(os.fsencode(tmp_path), b"run\xe9")
    os.mkdir(bad)
    listed = canonical_uri(os.fsdecode(bad))
    assert listed == f"{tmp_path}/run\\xe9"
    for uri in (os.fsdecode(bad), listed):
        with pytest.raises(SourceError) as err:
            open_source(uri)
        assert err.value.reason == "undecodable_name" and err.value.uri == listed
        assert "not valid UTF-8" in err.value.message


def test_a_zip_inside_the_source_is_reported_as_not_opened(tmp_path: Path) -> None:
    inner = zip_bytes([("x/traj.jsonl", b"{}\n")])
    path = tmp_path / "outer.zip"
    path.write_bytes(zip_bytes([("run/inner.zip", inner), ("run/a.txt", b"a")]))
    with open_source(str(path)) as src:
        assert [(p["location"], p["reason"]) for p in src.problems] == [
            ("run/inner.zip", "nested_archive")
        ]
        assert "ingest it as a source of its own" in src.problems[0]["message"]


@pytest.mark.parametrize("name", ["result.txt", "args.json"])
def test_a_git_lfs_pointer_read_as_a_document_is_refused_saying_what_it_is(
    tmp_path: Path, name: str
) -> None:
    from deskscore.collectors.lfs import LFS_POINTER
    from deskscore.collectors.source import read_document

    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:ab12\nsize 1234567\n"
    (tmp_path / name).write_bytes(pointer)
    (tmp_path / "plain.txt").write_bytes(b"version 2\n")
    source = open_source(str(tmp_path))
    with pytest.raises(SourceError) as caught:
        read_document(source, name)
    assert caught.value.reason == LFS_POINTER
    assert f"{name} is a Git LFS pointer to a 1,234,567-byte file" in caught.value.message
    assert "git lfs pull" in caught.value.message
    assert read_document(source, "plain.txt") == b"version 2\n"

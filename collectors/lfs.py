"""Git LFS pointers: what a repository of runs cloned without `git lfs` holds in place of each
large file (traj.jsonl, result.txt, screenshots), told apart from damaged files so the
message says to fetch the content, not to repair the file."""

from __future__ import annotations

import re

LFS_POINTER = "lfs_pointer"
LFS_HEAD = b"version https://git-lfs.github.com/spec/"
"""How a pointer starts (three lines: version, oid, size)."""
LFS_TODO = (
    "the archive was cloned or downloaded without its Git LFS content: run `git lfs pull` in "
    "the clone (or download the files themselves) and ingest again"
)


def is_lfs_pointer(data: bytes) -> bool:
    """Whether `data` (a file, or its first line) is a Git LFS pointer rather than the file."""
    return data.startswith(LFS_HEAD)


def lfs_pointer(path: str, data: bytes) -> str:
    """What to say of the pointer `data` found at `path` (its size line, when `data` holds it,
    says how large the missing file is)."""
    size = re.search(rb"^size (\d+)", data, re.MULTILINE)
    of = f"a {int(size.group(1)):,}-byte file" if size else "a file"
    return f"{path} is a Git LFS pointer to {of}, not the file itself"


__all__ = ["LFS_HEAD", "LFS_POINTER", "LFS_TODO", "is_lfs_pointer", "lfs_pointer"]

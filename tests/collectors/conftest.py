"""Fixtures the collector tests share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

WriteTree = Callable[[Path, Mapping[str, bytes | str]], Path]


@pytest.fixture(scope="session")
def write_tree() -> WriteTree:
    """Writes files (path under the folder -> bytes, or text as UTF-8) below a folder, making
    the folders between; returns the folder."""

    def write(root: Path, files: Mapping[str, bytes | str]) -> Path:
        for rel, data in files.items():
            assert not rel.startswith("/") and ".." not in rel.split("/"), rel  # stay under root
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data.encode() if isinstance(data, str) else data)
        return root

    return write

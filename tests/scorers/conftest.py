"""Fixtures the scorer tests share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest


class _Watched(dict):
    """A row that notes in `seen` every key looked at (get, [], in)."""

    def __init__(self, row: Mapping[str, Any], seen: set[str]) -> None:
        super().__init__(row)
        self.seen = seen

    def get(self, key: Any, default: Any = None) -> Any:
        self.seen.add(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.seen.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.seen.add(key)  # type: ignore[arg-type]
        return super().__contains__(key)


@pytest.fixture
def watched() -> tuple[Callable[[Mapping[str, Any]], dict], set[str]]:
    """(wrap, seen): `wrap(row)` is a copy of the row that adds each key a scorer looks at to
    `seen`, to hold a stage's column list to what its scorer reads."""
    seen: set[str] = set()
    return (lambda row: _Watched(row, seen)), seen

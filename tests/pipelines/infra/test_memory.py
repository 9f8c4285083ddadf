"""Giving an element's memory back once a stage is done with it."""

from __future__ import annotations

import weakref
from collections.abc import Iterator

from deskscore.pipelines.infra.memory import released


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_the_cycles_an_element_made_are_freed_before_its_outputs_go_on() -> None:
    seen: dict[str, weakref.ref] = {}

    def process(n: int) -> Iterator[int]:
        node = _Node()
        seen["node"] = weakref.ref(node)
        yield n + 1
        yield n + 2

    assert released(process, 1) == [2, 3]
    assert seen["node"]() is None

"""Giving an element's memory back once a stage is done with it."""

from __future__ import annotations

import weakref
from collections.abc import Iterator

import pytest

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


def test_an_element_runs_with_rare_collections_and_the_thresholds_come_back() -> None:
    import gc

    from deskscore.pipelines.infra.memory import GEN0_WHILE_RUNNING

    before = gc.get_threshold()
    during: list[tuple[int, ...]] = []

    def process(n: int) -> Iterator[int]:
        during.append(gc.get_threshold())
        yield n

    assert released(process, 1) == [1]
    assert during == [(max(before[0], GEN0_WHILE_RUNNING), *before[1:])]
    assert gc.get_threshold() == before

    def fails(n: int) -> Iterator[int]:
        raise ValueError(n)
        yield n

    with pytest.raises(ValueError):
        released(fails, 2)
    assert gc.get_threshold() == before

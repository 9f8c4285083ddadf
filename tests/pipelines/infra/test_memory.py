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


FIRST_ELEMENTS = """
import gc, weakref
from deskscore.pipelines.infra.memory import released

class Node:
    def __init__(self):
        self.me = self

held = [[i] for i in range(5000)]  # what a process holds before its first element
seen = []

def process(n):
    seen.append(gc.get_freeze_count())
    yield n

released(process, 1)
after_first = gc.get_freeze_count()
dropped = Node()  # a cycle dropped between two elements (by whatever runs them)
gone = weakref.ref(dropped)
del dropped
released(process, 2)
print(seen[0] >= 5000, seen[1] == after_first, gone() is None)
"""


def test_what_a_process_holds_is_frozen_once_before_its_first_element() -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", FIRST_ELEMENTS], capture_output=True, text=True, check=True
    )
    # frozen before the first element; not again before the second, so the cycle dropped
    # between the two was collected by the second's release, not frozen for good
    assert out.stdout.split() == ["True", "True", "True"]

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


@pytest.mark.parametrize(
    ("now", "last", "due"),
    [
        (None, 100, True),  # its size cannot be read: as before, every time
        (100, None, True),  # never given back yet
        (100 + (24 << 20), 100, False),  # grown by the margin at most
        (101 + (24 << 20), 100, True),  # grown by more
        (50, 100, False),  # smaller than then
    ],
)
def test_free_pages_go_back_once_the_process_grew_by_more_than_the_margin(
    now: int | None, last: int | None, due: bool
) -> None:
    from deskscore.pipelines.infra import memory

    assert memory.due(now, last, 24 << 20) is due


RETURNS = """
from deskscore.pipelines.infra import memory as m

if m._malloc_trim() is None or m._resident_bytes() is None:
    print("no-trim")
    raise SystemExit

def churn(mb):
    # heap blocks (2 KB: malloc's, not Python's arenas), nine in ten freed in the middle of
    # the heap, where only malloc_trim gives their pages back
    blocks = [bytes(2048) for _ in range(mb * 512)]
    kept = blocks[::10]
    del blocks
    return kept

m.release()
first = m._trimmed_at
small = churn(4)  # grows the process by less than the margin
m.release()
after_small = m._trimmed_at
big = churn(96)
before = m._resident_bytes()
m.release()
after = m._resident_bytes()
print(int(first is not None), after_small == first, m._trimmed_at != first,
      before - after > (48 << 20))
"""


def test_a_run_that_grew_the_process_past_the_margin_gives_its_pages_back() -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", RETURNS], capture_output=True, text=True, check=True
    ).stdout.split()
    if out == ["no-trim"]:
        pytest.skip("no glibc malloc_trim or /proc here")
    # given back at the first release; kept after a small run (within the margin); given
    # back after a large one, and the process shrank by most of what the run freed
    assert out == ["1", "True", "True", "True"]

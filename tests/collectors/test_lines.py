"""Streamed lines: the same lines as reading the file whole, however it is cut into blocks,
and an over-long line is measured, not kept."""

from __future__ import annotations

import io
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from deskscore.collectors.lines import HEAD, LongLine, count_stream_lines, iter_lines
from deskscore.collectors.osworld import count_lines, split_lines

_bytes = st.lists(st.sampled_from([b"a", b"{}", b"\n", b"\r", b"\r\n", b" ", b"\xff"]), max_size=40)


def _cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in pairwise(points)]


@settings(max_examples=300, deadline=None)
@given(parts=_bytes, cuts=st.lists(st.integers(0, 200), max_size=8), block=st.integers(1, 9))
def test_lines_read_in_blocks_are_the_lines_of_the_whole_file(
    parts: list[bytes], cuts: list[int], block: int
) -> None:
    data = b"".join(parts)
    assert list(iter_lines(_cut(data, cuts), max_line=1 << 20)) == split_lines(data)
    assert count_stream_lines(io.BytesIO(data), block) == count_lines(data)


def test_a_line_over_the_cap_comes_measured_and_the_next_lines_intact() -> None:
    big = b"x" * 5000
    chunks = _cut(b"first\r\n" + big + b"\r\nlast", [3, 700, 2000, 5004, 5005])
    got = list(iter_lines(chunks, max_line=1000))
    assert got == [b"first", LongLine(b"x" * HEAD, 5000), b"last"]


def test_a_last_line_over_the_cap_without_an_ending_still_counts() -> None:
    assert list(iter_lines([b"\n", b"y" * 300, b"y" * 300], max_line=100)) == [
        b"",
        LongLine(b"y" * HEAD, 600),
    ]

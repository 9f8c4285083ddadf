"""Lines of a stream, read a block at a time: a trajectory is never held whole, and a line
longer than the cap is measured, not kept.

Lines are what Python's text mode iterates (OSWorld-Human's t_agent counts them that way):
\\n, \\r and \\r\\n end a line, and a last line without an ending still counts. A \\r\\n split
across two blocks is one ending.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import BinaryIO, NamedTuple

BLOCK = 1 << 20
"""Bytes read at a time: large enough that a normal trajectory is one block."""
HEAD = 200
"""Bytes of an over-long line kept for its quarantine excerpt."""


class LongLine(NamedTuple):
    """A line over the cap: its first bytes and its length (the rest was skipped)."""

    head: bytes
    length: int


def blocks(stream: BinaryIO, size: int = BLOCK) -> Iterator[bytes]:
    """The stream's bytes, `size` at a time, to its end."""
    while True:
        block = stream.read(size)
        if not block:
            return
        yield block


def iter_lines(chunks: Iterable[bytes], max_line: int) -> Iterator[bytes | LongLine]:
    """Each line of the concatenated `chunks` without its ending; a line longer than
    `max_line` bytes comes as a LongLine, and no more than `max_line` bytes of it are held."""
    carry = b""
    skipping: LongLine | None = None
    after_cr = False
    for chunk in chunks:
        if after_cr and chunk[:1] == b"\n":
            chunk, after_cr = chunk[1:], False  # the \n of a \r\n split across two blocks
        if not chunk:
            continue
        after_cr = chunk[-1:] == b"\r"
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if skipping is not None:
            end = chunk.find(b"\n")
            if end < 0:
                skipping = skipping._replace(length=skipping.length + len(chunk))
                continue
            yield skipping._replace(length=skipping.length + end)
            skipping = None
            chunk = chunk[end + 1 :]
        parts = chunk.split(b"\n")
        if carry:
            parts[0] = carry + parts[0]
        carry = parts.pop()
        for line in parts:
            yield line if len(line) <= max_line else LongLine(line[:HEAD], len(line))
        if len(carry) > max_line:
            skipping, carry = LongLine(carry[:HEAD], len(carry)), b""
    if skipping is not None:
        yield skipping
    elif carry:
        yield carry


class Counted:
    """An iterator that counts what it yields (`n`), so a caller that consumed the lines
    knows how many there were without a second pass."""

    __slots__ = ("_items", "n")

    def __init__(self, items: Iterable[bytes | LongLine]) -> None:
        self._items = iter(items)
        self.n = 0

    def __iter__(self) -> Iterator[bytes | LongLine]:
        for item in self._items:
            self.n += 1
            yield item


def count_stream_lines(stream: BinaryIO, size: int = BLOCK) -> int:
    """The lines `iter_lines` yields from `stream`, counted without building them (read
    `size` bytes at a time)."""
    n, last, after_cr, any_data = 0, b"", False, False
    for chunk in blocks(stream, size):
        any_data = True
        n += chunk.count(b"\n") + chunk.count(b"\r") - chunk.count(b"\r\n")
        if after_cr and chunk[:1] == b"\n":
            n -= 1  # a \r\n split across two blocks was counted twice
        after_cr = chunk[-1:] == b"\r"
        last = chunk[-1:]
    if any_data and last not in (b"\n", b"\r"):
        n += 1
    return n


__all__ = ["BLOCK", "HEAD", "Counted", "LongLine", "blocks", "count_stream_lines", "iter_lines"]

"""How much one input may make a reader hold: the caps that keep a tiny hostile archive (a 4 KB
zip of four million blank lines, a sparse 3 GB trajectory) from exhausting memory.

Each cap is raised by an environment variable (read when a reader runs, so worker processes
see the value the command was started with):

- `FILE_BYTES`: one file of a folder or one zip member; a larger one is not opened.
- `DOCUMENT_BYTES`: what is parsed whole: a JSON or CSV file, result.txt, one trajectory line.
  Parsing multiplies bytes (a JSON list of empty objects takes ~25 times its size), so this
  is the cap that bounds a parse.
- `LITERAL_TOKENS`: tokens of a Python-literal file (`all_result.json`) read with
  `ast.literal_eval`, which builds the whole syntax tree first, at about 500 bytes a token
  (an 8 MB list of zeros took 3.9 GB): counted before it is parsed.
- `TRAJECTORY_LINES`: lines of one trajectory file parsed into rows, so one hostile task (a
  file of 200,000 lines) cannot spend its run's budget below and leave every other task of
  the run unread: its own lines over the cap are quarantined, the other tasks are read.
- `RUN_LINES` and `RUN_BYTES`: trajectory lines (and their bytes) parsed into rows per run; the
  lines after either is reached are counted (so every line is still accounted for) and
  quarantined together, not parsed. A run is held whole until it is written, at ~1 KB per
  short line and ~5 KB per typical 800-byte line (its step, sub-action and Arrow copies), so
  these bound a worker's memory (measured: ~550 MB at the caps); real runs have a few
  thousand to forty thousand lines, and 1 to 50 MB of them.

What is refused is quarantined with a message naming the cap and the variable that raises it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

_SUFFIXES = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


@dataclass(frozen=True)
class Limit:
    """One cap: its environment variable, its default, what it counts (`unit`, singular)
    and of what (`scope`)."""

    env: str
    default: int
    unit: str
    scope: str

    def value(self) -> int:
        """The cap in force: the variable's value (a whole number, with an optional K, M or G
        suffix for bytes), or the default when it is unset or not a positive number."""
        raw = os.environ.get(self.env, "").strip().lower()
        if not raw:
            return self.default
        scale = _SUFFIXES.get(raw[-1], 1)
        digits = raw[:-1] if raw[-1] in _SUFFIXES else raw
        try:
            n = int(digits) * scale
        except ValueError:
            return self.default
        return n if n > 0 else self.default

    def exceeded(self, what: str, cap: int | None = None) -> str:
        """A message part: `what` is over the cap (the one in force, or `cap`), and how to
        raise it."""
        cap = self.value() if cap is None else cap
        return (
            f"{what}, over the {cap}-{self.unit} limit {self.scope}; it was not read (set "
            f"{self.env} to a larger number and ingest again to read it)"
        )


FILE_BYTES = Limit("DESKSCORE_MAX_FILE_BYTES", 1 << 30, "byte", "of a file or zip member")
DOCUMENT_BYTES = Limit(
    "DESKSCORE_MAX_DOCUMENT_BYTES", 32 << 20, "byte", "of a file parsed whole or of one line"
)
LITERAL_TOKENS = Limit(
    "DESKSCORE_MAX_LITERAL_TOKENS", 200_000, "token", "of a Python-literal file (all_result.json)"
)
TRAJECTORY_LINES = Limit(
    "DESKSCORE_MAX_TRAJECTORY_LINES", 25_000, "line", "of lines per trajectory file"
)
RUN_LINES = Limit("DESKSCORE_MAX_RUN_LINES", 100_000, "line", "of trajectory lines per run")
RUN_BYTES = Limit("DESKSCORE_MAX_RUN_BYTES", 128 << 20, "byte", "of trajectory lines per run")


class LineBudget:
    """Trajectory lines, and their bytes, a run may still have parsed into rows (see
    `RUN_LINES`, `RUN_BYTES`)."""

    __slots__ = ("bytes_left", "lines_left", "spent")

    def __init__(self, lines: int, n_bytes: int) -> None:
        self.lines_left = lines
        self.bytes_left = n_bytes
        self.spent: Limit | None = None
        """The cap that ran out, once one has."""

    def take(self, n_bytes: int) -> bool:
        """Whether one more line of `n_bytes` may be parsed (and count it)."""
        if self.spent is not None:
            return False
        if self.lines_left <= 0 or n_bytes > self.bytes_left:
            self.spent = RUN_LINES if self.lines_left <= 0 else RUN_BYTES
            return False
        self.lines_left -= 1
        self.bytes_left -= n_bytes
        return True


_budget: ContextVar[LineBudget | None] = ContextVar("deskscore_line_budget", default=None)


@contextmanager
def run_budget() -> Iterator[LineBudget]:
    """One run's reading: every trajectory read inside shares one `RUN_LINES` budget."""
    budget = _fresh()
    token = _budget.set(budget)
    try:
        yield budget
    finally:
        _budget.reset(token)


def line_budget() -> LineBudget:
    """The budget of the run being read, or a fresh one for a trajectory read on its own."""
    return _budget.get() or _fresh()


def _fresh() -> LineBudget:
    return LineBudget(RUN_LINES.value(), RUN_BYTES.value())


__all__ = [
    "DOCUMENT_BYTES",
    "FILE_BYTES",
    "RUN_BYTES",
    "RUN_LINES",
    "TRAJECTORY_LINES",
    "Limit",
    "LineBudget",
    "line_budget",
    "run_budget",
]

"""Tiny hostile archives do not exhaust memory: `deskscore ingest` stays under 1 GB on each and
`deskscore check` still reconciles every line (benchmarks/memory_bombs.py prints the figures)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from deskscore.collectors.synthetic.bombs import ISSUE_BOMBS, write_bombs

LIMIT = 1 << 30
GUARD = 3 << 30
"""Address space the ingest may map: a reader that held the bombs' rows would fail here (the
first of them once took 5.3 GB), instead of taking the machine's memory."""

DESKSCORE = [sys.executable, "-m", "deskscore.pipelines.cli.main"]


def _deskscore(measured, args: list[str]) -> tuple[int, str, int]:
    """A deskscore command under the tests' launcher (`measured`) and the GUARD limit."""
    return measured([*DESKSCORE, *args], address_limit=GUARD)


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_bombs(tmp_path_factory.mktemp("bombs"), ISSUE_BOMBS)


@pytest.mark.slow  # a fresh ingest process over millions of lines each
@pytest.mark.parametrize("name", ISSUE_BOMBS)
def test_ingest_of_a_tiny_bomb_stays_under_1_gb_and_reconciles_every_line(
    bombs: dict[str, Path], tmp_path: Path, measured, name: str
) -> None:
    wh = str(tmp_path / "wh")
    code, out, peak = _deskscore(
        measured, ["ingest", str(bombs[name]), "--warehouse", wh, "--workers", "1"]
    )
    assert code == 0, out[-2000:]
    assert peak < LIMIT, f"{name}: peak RSS {peak / 2**20:.0f} MB"
    [row] = [line for line in out.splitlines() if line.startswith(str(bombs[name]))]
    assert row.endswith(" yes")  # trajectory lines = step rows + quarantined lines
    code, out, _ = _deskscore(measured, ["check", "--warehouse", wh])
    assert code == 0 and "check passed" in out, out


@pytest.mark.slow  # a fresh ingest process
def test_a_python_literal_of_millions_of_tokens_is_refused_before_it_is_parsed(
    tmp_path: Path, measured
) -> None:
    """all_result.json is read with `ast.literal_eval`, whose syntax tree of an 8 MB list of
    zeros took 3.9 GB: it is counted first, and quarantined past `LITERAL_TOKENS`."""
    from deskscore.sql import connect

    source = write_bombs(tmp_path / "bombs", ("python_literal",))["python_literal"]
    wh = str(tmp_path / "wh")
    code, out, peak = _deskscore(
        measured, ["ingest", str(source), "--warehouse", wh, "--workers", "1"]
    )
    assert code == 0, out[-2000:]
    assert peak < LIMIT // 4, f"peak RSS {peak / 2**20:.0f} MB"
    rows = connect(wh).sql("SELECT location, reason, message FROM quarantine").fetchall()
    [(location, reason, message)] = rows
    assert (location, reason) == ("run/all_result.json", "too_large")
    assert "DESKSCORE_MAX_LITERAL_TOKENS" in message
    assert connect(wh).sql("SELECT count(*) FROM episodes").fetchall() == [(1,)]

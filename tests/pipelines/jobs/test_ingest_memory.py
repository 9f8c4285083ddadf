"""Tiny hostile archives do not exhaust memory: `deskscore ingest` stays under 1 GB on each and
`deskscore check` still reconciles every line (benchmarks/memory_bombs.py prints the figures)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from deskscore.collectors.synthetic.bombs import ISSUE_BOMBS, write_bombs

LIMIT = 1 << 30
GUARD = 3 << 30
"""Address space the ingest may map: a reader that held the bombs' rows would fail here (the
first of them once took 5.3 GB), instead of taking the machine's memory."""

GUARDED = (
    "import os, resource, subprocess, sys; "
    f"resource.setrlimit(resource.RLIMIT_AS, ({GUARD}, {GUARD})); "
    "p = subprocess.Popen([sys.executable, *sys.argv[2:]]); "
    "_, status, usage = os.wait4(p.pid, 0); "
    "open(sys.argv[1], 'w').write(str(usage.ru_maxrss)); "
    "sys.exit(os.waitstatus_to_exitcode(status))"
)
"""A small launcher sets the limit and runs the command as its child, writing the command's
peak RSS to the file its first argument names. The limit is set in the launcher, not by a
`preexec_fn`, which would run Python between fork and exec in a copy of this process, where
the gRPC that earlier Beam tests loaded now and then aborts the copy ("epoll_wait error: Bad
file descriptor", SIGABRT) before the command starts: 3 of 200 such children died so here,
and one failed CI. And the peak is the launcher's child's: the kernel counts into a spawned
process's peak the pages of the process that spawned it (with vfork they are its own until
exec), so a command spawned by this process was charged a pytest worker's size (483 MB late
in a full run, for an ingest of 117 MB)."""


def _run(args: list[str], folder: Path) -> tuple[int, str, int]:
    """Run a deskscore command (under the launcher): its exit code, its output and its peak
    RSS in bytes (from the kernel's accounting of the reaped process)."""
    import threading

    peak = folder / "peak.txt"
    cmd = [sys.executable, "-c", GUARDED, str(peak), "-m", "deskscore.pipelines.cli.main", *args]
    with open(folder / "out.txt", "w+") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        timer = threading.Timer(600, os.killpg, (proc.pid, 9))  # the launcher and the command
        timer.start()
        try:
            proc.wait()
        finally:
            timer.cancel()
        out.seek(0)
        measured = int(peak.read_text()) if peak.exists() else 0  # none when it was killed
        return proc.returncode, out.read(), measured * 1024


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_bombs(tmp_path_factory.mktemp("bombs"), ISSUE_BOMBS)


@pytest.mark.slow  # a fresh ingest process over millions of lines each
@pytest.mark.parametrize("name", ISSUE_BOMBS)
def test_ingest_of_a_tiny_bomb_stays_under_1_gb_and_reconciles_every_line(
    bombs: dict[str, Path], tmp_path: Path, name: str
) -> None:
    wh = str(tmp_path / "wh")
    code, out, peak = _run(
        ["ingest", str(bombs[name]), "--warehouse", wh, "--workers", "1"], tmp_path
    )
    assert code == 0, out[-2000:]
    assert peak < LIMIT, f"{name}: peak RSS {peak / 2**20:.0f} MB"
    [row] = [line for line in out.splitlines() if line.startswith(str(bombs[name]))]
    assert row.endswith(" yes")  # trajectory lines = step rows + quarantined lines
    code, out, _ = _run(["check", "--warehouse", wh], tmp_path)
    assert code == 0 and "check passed" in out, out


@pytest.mark.slow  # a fresh ingest process
def test_a_python_literal_of_millions_of_tokens_is_refused_before_it_is_parsed(
    tmp_path: Path,
) -> None:
    """all_result.json is read with `ast.literal_eval`, whose syntax tree of an 8 MB list of
    zeros took 3.9 GB: it is counted first, and quarantined past `LITERAL_TOKENS`."""
    from deskscore.sql import connect

    source = write_bombs(tmp_path / "bombs", ("python_literal",))["python_literal"]
    wh = str(tmp_path / "wh")
    code, out, peak = _run(["ingest", str(source), "--warehouse", wh, "--workers", "1"], tmp_path)
    assert code == 0, out[-2000:]
    assert peak < LIMIT // 4, f"peak RSS {peak / 2**20:.0f} MB"
    rows = connect(wh).sql("SELECT location, reason, message FROM quarantine").fetchall()
    [(location, reason, message)] = rows
    assert (location, reason) == ("run/all_result.json", "too_large")
    assert "DESKSCORE_MAX_LITERAL_TOKENS" in message
    assert connect(wh).sql("SELECT count(*) FROM episodes").fetchall() == [(1,)]

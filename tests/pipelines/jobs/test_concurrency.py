"""Two jobs on one warehouse: the second refuses (or waits), and readers never see half a file."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from deskscore.collectors.warehouse import Warehouse
from deskscore.collectors.warehouse.lock import LOCK_NAME, WarehouseBusy, writer_lock
from deskscore.pipelines.cli.main import main
from deskscore.schemas import TABLES


def _deskscore(*args: str) -> list[str]:
    code = "import sys; from deskscore.pipelines.cli.main import main; sys.exit(main())"
    return [sys.executable, "-c", code, *args]


def _rows(root: Path) -> dict[str, list]:
    wh = Warehouse(root)
    return {n: sorted(repr(r) for r in wh.read(n).to_pylist()) for n in TABLES}


def _holder(warehouse: Path, seconds: float) -> subprocess.Popen:
    """Another process holding the writer lock (as command 'hold') for `seconds`; returned
    once it holds it."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import time; from deskscore.collectors.warehouse.lock import writer_lock\n"
         f"with writer_lock({str(warehouse)!r}, 'hold'):\n"
         f"    print('held', flush=True); time.sleep({seconds})"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_writer_is_refused_with_the_holders_pid_and_command(tmp_path: Path) -> None:
    with writer_lock(tmp_path, "ingest"):
        with pytest.raises(WarehouseBusy) as busy, writer_lock(tmp_path, "score"):
            pass
        message = str(busy.value)
        assert "pid" in message and "ingest" in message and "--wait" in message
    with writer_lock(tmp_path, "score"):  # released: the next job gets it
        assert (tmp_path / LOCK_NAME).exists()


def test_a_waiting_writer_gets_the_lock_when_the_holder_lets_go(tmp_path: Path) -> None:
    holder = _holder(tmp_path, seconds=1.0)
    with pytest.raises(WarehouseBusy, match="hold"), writer_lock(tmp_path, "ingest", wait=0.1):
        pass
    started = time.monotonic()
    with writer_lock(tmp_path, "ingest", wait=30):
        assert time.monotonic() - started < 30
    holder.wait(timeout=30)


def test_a_killed_holder_never_leaves_the_warehouse_locked(tmp_path: Path) -> None:
    holder = _holder(tmp_path, seconds=60)
    holder.kill()
    holder.wait()
    with writer_lock(tmp_path, "ingest"):
        pass


@pytest.mark.slow
def test_two_ingests_at_once_one_refuses_clearly_and_waiting_gives_the_same_tables(
    small_archive: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sources = [str(small_archive["results"]), str(small_archive["zip"])]
    alone = tmp_path / "alone"
    assert main(["ingest", *sources, "--warehouse", str(alone)]) == 0

    shared = tmp_path / "shared"
    with writer_lock(shared, "ingest (another team member)"):
        assert main(["ingest", *sources, "--warehouse", str(shared), "--wait", "0"]) == 2
        err = capsys.readouterr().err
        assert "another deskscore job" in err and "another team member" in err and "--wait" in err
        assert "waiting" not in err
        assert main(["ingest", *sources, "--warehouse", str(shared), "--wait", "0.3"]) == 2
        err = capsys.readouterr().err  # a wait says whom it waits for, then gives up
        assert "another team member" in err and "waiting up to 0.3 s" in err

    first = subprocess.Popen(
        _deskscore("ingest", *sources, "--warehouse", str(shared), "--wait", "120")
    )
    second = subprocess.Popen(
        _deskscore("ingest", *sources, "--warehouse", str(shared), "--wait", "120")
    )
    # Meanwhile a reader polls every table: each read sees whole files only.
    while first.poll() is None or second.poll() is None:
        for name in ("runs", "episodes", "steps", "quarantine"):
            Warehouse(shared).read(name)
        time.sleep(0.05)
    assert (first.returncode, second.returncode) == (0, 0)
    assert _rows(shared) == _rows(alone)

"""What a score job compares to skip unchanged runs: the screenshot hashes' digest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.jobs.score_inputs import _screenshot_state


def shot(content: str, run: str, phash: int | None, status: str = "ok") -> dict:
    return {"content_hash": content, "run_id": run, "benchmark": "osworld", "phash": phash} | {
        "n_bytes": 10,
        "status": status,
    }


def part(run: str) -> dict[str, str]:
    return {"benchmark": "osworld", "run_id": run}


def write_hashes(root: Path, by_run: dict[str, list[dict]]) -> Warehouse:
    wh = Warehouse(root)
    for run, rows in by_run.items():
        wh.write("screenshots", rows, part(run))
    return wh


def test_the_digest_ignores_row_order_and_follows_every_hash(tmp_path: Path) -> None:
    rows = {"r1": [shot("a", "r1", 1), shot("b", "r1", -5)], "r2": [shot("c", "r2", 2**62)]}
    first = _screenshot_state(write_hashes(tmp_path / "one", rows))
    shuffled = {"r2": rows["r2"], "r1": rows["r1"][::-1]}
    assert _screenshot_state(write_hashes(tmp_path / "two", shuffled)) == first
    changed = {**rows, "r2": [shot("c", "r2", 2**62 + 1)]}  # one bit of one phash
    assert _screenshot_state(write_hashes(tmp_path / "three", changed)) != first
    added = {**rows, "r3": [shot("d", "r3", None, "corrupt")]}
    assert _screenshot_state(write_hashes(tmp_path / "four", added)) != first
    empty = _screenshot_state(Warehouse(tmp_path / "empty"))
    assert empty not in {first} and empty == _screenshot_state(Warehouse(tmp_path / "empty2"))


def test_the_digest_survives_packing(tmp_path: Path) -> None:
    rows = {f"r{i}": [shot(f"c{i}", f"r{i}", i)] for i in range(10)}
    wh = write_hashes(tmp_path / "wh", rows)
    before = _screenshot_state(wh)
    assert [c.table for c in wh.compact(["screenshots"])] == ["screenshots"]
    assert _screenshot_state(Warehouse(tmp_path / "wh")) == before


def test_the_digest_reads_partitions_without_polars(tmp_path: Path) -> None:
    write_hashes(tmp_path, {"r1": [shot("a", "r1", 1)]})
    code = (
        "import sys\n"
        "from deskscore.collectors.warehouse import Warehouse\n"
        "from deskscore.pipelines.jobs.score_inputs import _screenshot_state\n"
        f"_screenshot_state(Warehouse({str(tmp_path)!r}))\n"
        "print('polars' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

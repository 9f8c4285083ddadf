"""What a score job compares to skip unchanged runs: the screenshot hashes' digest, kept per
file between jobs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from deskscore.collectors.synthetic import load_profiles, task_slice, write_run
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.jobs.hash import run_hash
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.jobs.score import run_score
from deskscore.pipelines.jobs.score_inputs import _screenshot_state
from deskscore.pipelines.options import HashOptions, IngestOptions, ScoreOptions
from deskscore.schemas import SCHEMA_VERSION


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


def break_files(wh: Warehouse, table: str) -> int:
    """Overwrite every file of `table` in place with bytes no reader can parse."""
    files = wh.files(table)
    for path in files:
        path.write_bytes(b"not parquet")
    return len(files)


def test_a_slot_whose_file_is_unchanged_is_not_read_again(tmp_path: Path) -> None:
    rows = {f"r{i}": [shot(f"c{i}", f"r{i}", i), shot("first", f"r{i}", 7)] for i in range(3)}
    wh = write_hashes(tmp_path / "wh", rows)
    first = _screenshot_state(wh)
    assert break_files(wh, "screenshots") == 3
    assert _screenshot_state(Warehouse(tmp_path / "wh")) == first  # from the kept digests

    wh = write_hashes(tmp_path / "wh", {"r1": [shot("c1", "r1", 2**40)]})  # a new hash
    changed = _screenshot_state(wh)
    fresh = write_hashes(tmp_path / "fresh", {**rows, "r1": [shot("c1", "r1", 2**40)]})
    assert changed != first and changed == _screenshot_state(fresh)


def test_a_broken_or_foreign_digest_file_is_ignored(tmp_path: Path) -> None:
    rows = {"r1": [shot("a", "r1", 1)], "r2": [shot("b", "r2", None, "corrupt")]}
    want = _screenshot_state(write_hashes(tmp_path / "fresh", rows))
    kept = tmp_path / "fresh" / "_cache" / "row_digests.json"
    written = json.loads(kept.read_text())
    assert written["version"] == [SCHEMA_VERSION, 1] and len(written["digests"]) == 2
    wrong = {k: "0" * 40 for k in written["digests"]}
    wh = write_hashes(tmp_path / "wh", rows)
    target = tmp_path / "wh" / "_cache" / "row_digests.json"
    target.parent.mkdir()
    for body in (
        "{trunc",
        "[]",
        json.dumps({"version": written["version"], "digests": []}),
        json.dumps({"version": [SCHEMA_VERSION - 1, 1], "digests": wrong}),  # an older schema
        json.dumps({"version": [SCHEMA_VERSION, 0], "digests": wrong}),  # another format
    ):
        target.write_text(body)
        assert _screenshot_state(wh) == want, body
        assert json.loads(target.read_text()) == written  # and kept right again
    shutil.rmtree(target.parent)
    target.parent.write_text("a file where the folder would be")
    assert _screenshot_state(wh) == want  # the digests cannot be kept: scored all the same


def test_scores_are_kept_through_packing_and_redone_after_a_new_hash(tmp_path: Path) -> None:
    """End to end: a run's screenshot hashes packed into another file leave its scores kept
    (the packed slots are read once, under their new place); a new hash scores it again."""
    tasks = task_slice(per_domain=1)[:4]
    sources = [
        write_run(tmp_path / f"run{i}", load_profiles()[i], tasks, seed=i, screenshots="tiny")
        for i in range(3)
    ]
    wh = tmp_path / "wh"
    run_ingest(IngestOptions(str(wh), sources=tuple(map(str, sources[:2])), engine="direct"))
    run_hash(HashOptions(str(wh)))
    assert run_score(ScoreOptions(str(wh), engine="direct")).runs_scored == 2
    kept = json.loads((wh / "_cache" / "row_digests.json").read_text())["digests"]
    moved = Warehouse(wh).compact(["screenshots", "screenshot_refs"], min_files=2)
    assert [c.table for c in moved] == ["screenshots", "screenshot_refs"]
    again = run_score(ScoreOptions(str(wh), engine="direct", compact=False))
    assert (again.runs_scored, again.runs_unchanged) == (0, 2)
    now = json.loads((wh / "_cache" / "row_digests.json").read_text())["digests"]
    assert len(now) == len(kept) == 4 and not set(now) & set(kept)  # all four slots moved
    assert sorted(now.values()) == sorted(kept.values())  # with the same rows

    run_ingest(IngestOptions(str(wh), sources=(str(sources[2]),), engine="direct"))
    run_hash(HashOptions(str(wh)))
    assert run_score(ScoreOptions(str(wh), engine="direct")).runs_scored == 3

"""Packing a job's small files on several processes, or several threads, gives the packs one
process writes."""

from __future__ import annotations

import shutil
from pathlib import Path

from deskscore.collectors.synthetic import load_profiles, task_slice, write_run_zip
from deskscore.collectors.warehouse import PACK_DIR, Warehouse
from deskscore.collectors.warehouse.store import JOBS_DIR, MIN_SMALL_FILES
from deskscore.pipelines.infra.local import local_pool
from deskscore.pipelines.jobs.compaction import compact_tables
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.options import IngestOptions
from deskscore.schemas.manifest import manifest_dir


def test_tables_packed_by_two_processes_or_threads_are_the_files_one_packs(tmp_path: Path) -> None:
    profiles = load_profiles()
    for i in range(MIN_SMALL_FILES):  # enough small files of each table to pack
        write_run_zip(tmp_path / f"run{i}.zip", profiles[i % len(profiles)], task_slice(per_domain=1), seed=i,
                      prefix=f"run{i}")  # fmt: skip
    loose = tmp_path / "loose"
    run_ingest(IngestOptions(str(loose), sources=(str(tmp_path / "*.zip"),), workers=1,
                             compact=False))  # fmt: skip
    serial, parallel, threaded = tmp_path / "serial", tmp_path / "parallel", tmp_path / "threads"
    for copy in (serial, parallel, threaded):
        shutil.copytree(loose, copy)

    with Warehouse(serial).transaction() as wh:
        one = compact_tables(wh)
    with local_pool(2) as pool, Warehouse(parallel).transaction() as wh:
        two = compact_tables(wh, pool)
    with Warehouse(threaded).transaction() as wh:
        by_threads = compact_tables(wh, threads=2)
        journals = list((manifest_dir(wh.root) / JOBS_DIR / str(wh.job)).glob("*.jsonl"))
        assert len(journals) > 1  # each thread wrote through its own journal

    assert sorted(one, key=lambda c: c.table) == sorted(two, key=lambda c: c.table)
    assert sorted(one, key=lambda c: c.table) == sorted(by_threads, key=lambda c: c.table)
    assert sum(c.files_in for c in two) > 0
    packed = Warehouse(parallel).snapshot()
    assert any(f"/{PACK_DIR}/" in f"/{file}" for file in packed.values())
    assert packed == Warehouse(serial).snapshot()  # file names derive from their bytes
    assert Warehouse(threaded).snapshot() == packed

from __future__ import annotations

import re

import pyarrow.parquet as pq
import pytest

from deskscore.collectors.warehouse import Warehouse, schema_version_of
from deskscore.collectors.warehouse.lock import writer_lock
from deskscore.collectors.warehouse.store import KEEP_GENERATIONS, read_journal
from deskscore.schemas import SCHEMA_VERSION
from deskscore.schemas.manifest import current_generation, manifest_dir
from deskscore.sql import connect

PART = {"benchmark": "osworld", "run_id": "r1"}


def _q(i: int) -> dict:
    return {
        "run_id": "r1",
        "benchmark": "osworld",
        "source": "s",
        "location": f"f{i}",
        "reason": "x",
        "message": "m",
    }


def test_partitions_are_laid_out_by_benchmark_and_run(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    path = wh.write("quarantine", [_q(1)], {"benchmark": "osworld", "run_id": "r1"})
    assert re.fullmatch(
        r"quarantine/benchmark=osworld/run_id=r1/data--[0-9a-f]{16}\.parquet",
        path.relative_to(tmp_path).as_posix(),
    )
    assert schema_version_of(path) == SCHEMA_VERSION


def test_reading_whole_files_and_packed_runs_needs_no_dataset_module(
    tmp_path, fresh_python
) -> None:
    """Reads open each file once with ParquetFile: pyarrow.dataset (50 ms to import) is not
    loaded by a command that only reads and writes the warehouse."""
    code = (
        "import sys\n"
        "from deskscore.collectors.warehouse import Warehouse\n"
        f"wh = Warehouse({str(tmp_path)!r})\n"
        "row = dict(run_id='r1', benchmark='osworld', source='s', location='f', reason='x',"
        " message='m')\n"
        "for r in ('r1', 'r2'):\n"
        "    wh.write('quarantine', [dict(row, run_id=r)], {'benchmark': 'osworld', 'run_id': r})\n"
        "wh.compact()\n"
        "wh.write('quarantine', [dict(row, run_id='r3')], {'benchmark': 'osworld', 'run_id': 'r3'})\n"
        "assert sorted(wh.read('quarantine').column('run_id').to_pylist()) == ['r1', 'r2', 'r3']\n"
        "assert wh.read('quarantine', {'benchmark': 'osworld', 'run_id': 'r2'}).num_rows == 1\n"
        "print('pyarrow.dataset' in sys.modules)\n"
    )
    assert fresh_python(code).strip() == "False"


def test_writing_the_same_rows_twice_gives_identical_bytes(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    part = {"benchmark": "osworld", "run_id": "r1"}
    first = wh.write("quarantine", [_q(1), _q(2)], part)
    second = wh.write("quarantine", [_q(1), _q(2)], part)
    assert first == second  # named by its bytes: the same rows, the same file
    assert wh.files("quarantine") == [first]


def test_a_rewrite_replaces_the_partition_and_leaves_no_temporaries(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    part = {"benchmark": "osworld", "run_id": "r1"}
    wh.write("quarantine", [_q(1), _q(2)], part)
    wh.write("quarantine", [_q(3)], part)
    assert wh.read("quarantine").column("location").to_pylist() == ["f3"]
    assert len(wh.files("quarantine")) == 1
    assert not list((manifest_dir(tmp_path) / "tmp").glob("*"))


def test_hostile_partition_values_stay_inside_the_table(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    path = wh.write("quarantine", [_q(1)], {"benchmark": "../../etc", "run_id": "a/b"})
    assert tmp_path / "quarantine" in path.parents
    assert ".." not in path.relative_to(tmp_path).parts


def test_reading_an_empty_table_gives_its_schema(tmp_path) -> None:
    table = Warehouse(tmp_path).read("steps")
    assert table.num_rows == 0
    assert "step_num" in table.schema.names
    assert pq is not None


def test_a_file_written_before_a_column_existed_reads_it_as_null(
    tmp_path, old_quarantine_file
) -> None:
    wh = Warehouse(tmp_path)
    table = wh.read("quarantine")
    assert table.column("excerpt").to_pylist() == [None]
    assert wh.read("quarantine", columns=["location", "line_no"]).to_pylist() == [
        {"location": "f", "line_no": None}
    ]


# --------------------------------------------------------------------------- transactions


def test_a_transactions_writes_appear_together_when_it_commits(tmp_path) -> None:
    Warehouse(tmp_path).write("quarantine", [_q(0)], PART)
    reader = Warehouse(tmp_path)
    with Warehouse(tmp_path).transaction() as tx:
        tx.write("quarantine", [_q(1)], PART)
        tx.write("quarantine", [_q(2)], {"benchmark": "osworld", "run_id": "r2"})
        assert reader.read("quarantine").column("location").to_pylist() == ["f0"]
        assert connect(tmp_path).sql("SELECT location FROM quarantine").fetchall() == [("f0",)]
        assert sorted(tx.read("quarantine").column("location").to_pylist()) == ["f1", "f2"]
    assert sorted(reader.read("quarantine").column("location").to_pylist()) == ["f1", "f2"]
    assert sorted(connect(tmp_path).sql("SELECT location FROM quarantine").fetchall()) == [
        ("f1",),
        ("f2",),
    ]


def test_a_failed_transaction_leaves_the_warehouse_and_no_files_behind(tmp_path) -> None:
    Warehouse(tmp_path).write("quarantine", [_q(0)], PART)
    before = Warehouse(tmp_path).snapshot()
    on_disk = set(tmp_path.rglob("*.parquet"))
    with pytest.raises(RuntimeError), Warehouse(tmp_path).transaction() as tx:
        tx.write("quarantine", [_q(1)], PART)
        raise RuntimeError("the job failed")
    assert Warehouse(tmp_path).snapshot() == before
    assert set(tmp_path.rglob("*.parquet")) == on_disk
    assert not list((manifest_dir(tmp_path) / "jobs").glob("*"))


def test_a_killed_jobs_journal_and_files_are_collected_by_the_next_writer(tmp_path) -> None:
    Warehouse(tmp_path).write("quarantine", [_q(0)], PART)
    before = Warehouse(tmp_path).snapshot()
    killed = Warehouse(tmp_path, "killed-job")  # what a killed job leaves: a journal, files
    orphan = killed.write("quarantine", [_q(1)], PART)
    assert read_journal(tmp_path, "killed-job") and orphan.exists()
    assert Warehouse(tmp_path).snapshot() == before  # never committed: never seen
    with writer_lock(tmp_path, "next job"):
        pass
    assert not orphan.exists() and not read_journal(tmp_path, "killed-job")
    assert Warehouse(tmp_path).snapshot() == before


def test_replacing_a_packed_run_rewrites_its_pack_so_no_row_is_seen_twice(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    runs = [f"r{i}" for i in range(10)]
    for run in runs:
        row = {**_q(1), "run_id": run}
        wh.write("quarantine", [row], {"benchmark": "osworld", "run_id": run})
    [done] = wh.compact(["quarantine"])
    assert done.files_in == 10 and len(wh.files("quarantine")) == 1
    wh.write("quarantine", [{**_q(9), "run_id": "r3"}], {"benchmark": "osworld", "run_id": "r3"})
    rows = connect(tmp_path).sql("SELECT run_id, location FROM quarantine ORDER BY ALL").fetchall()
    assert rows == sorted([(r, "f9" if r == "r3" else "f1") for r in runs])
    assert len(wh.files("quarantine")) == 2  # the pack without r3, and r3's own file
    wh.drop_run("osworld", "r5")
    ids = connect(tmp_path).sql("SELECT run_id FROM quarantine ORDER BY ALL").fetchall()
    assert ids == [(r,) for r in runs if r != "r5"]


def test_packing_holds_one_runs_table_at_a_time_not_a_packs(tmp_path) -> None:
    """Packing streams runs into the open pack: Arrow's peak while packing 24 runs into one
    pack stays near one run's table, not the pack's (which grows with the release)."""
    import pyarrow as pa

    wh = Warehouse(tmp_path)
    runs = [f"r{i:02d}" for i in range(24)]
    for run in runs:
        rows = [{**_q(i), "run_id": run, "message": f"{run} {i} " + "m" * 200} for i in range(2000)]
        wh.write("quarantine", rows, {"benchmark": "osworld", "run_id": run})
    one_run = wh.read("quarantine", {"benchmark": "osworld", "run_id": "r00"}).nbytes
    previous = pa.default_memory_pool()
    pool = pa.proxy_memory_pool(previous)  # a pool of its own: its peak is this packing's
    pa.set_memory_pool(pool)
    try:
        [done] = wh.compact(["quarantine"])
        peak = pool.max_memory()
    finally:
        pa.set_memory_pool(previous)
    assert done.files_in == len(runs) and done.packs_out == 1
    assert wh.read("quarantine").num_rows == 2000 * len(runs)  # every row, in the one pack
    assert peak < 4 * one_run < len(runs) * one_run / 4


def test_files_no_kept_generation_lists_are_deleted(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    first = wh.write("quarantine", [_q(1)], PART)
    for i in range(2, KEEP_GENERATIONS + 2):
        wh.write("quarantine", [_q(i)], PART)
        assert first.exists() == (i <= KEEP_GENERATIONS)  # a reader may still be on it
    # generation 1 is the empty warehouse (committed before its first write), then one per write
    assert current_generation(tmp_path) == KEEP_GENERATIONS + 2
    assert len(list(manifest_dir(tmp_path).glob("*.json"))) == KEEP_GENERATIONS


def _codecs(path) -> set[str]:
    meta = pq.ParquetFile(path).metadata
    return {
        meta.row_group(g).column(c).compression
        for g in range(meta.num_row_groups)
        for c in range(meta.num_columns)
    }


def test_small_row_groups_are_written_with_lz4_and_a_runs_thousands_of_rows_with_zstd(
    tmp_path,
) -> None:
    """zstd's cost per column chunk is what reading a pack of many runs' few rows pays for
    (see LZ4_BELOW_ROWS); packing, repacking and a run's own file follow the rows per run."""
    wh = Warehouse(tmp_path)
    few = {f"f{i}": [{**_q(j), "run_id": f"f{i}"} for j in range(3)] for i in range(9)}
    many = {f"m{i}": [{**_q(j), "run_id": f"m{i}"} for j in range(3000)] for i in range(9)}
    for run, rows in {**few, **many}.items():
        path = wh.write("quarantine", rows, {"benchmark": "b-" + run[0], "run_id": run})
        assert _codecs(path) == ({"LZ4"} if run in few else {"ZSTD"}), run
    assert [c.files_in for c in wh.compact(["quarantine"])] == [18]
    packs = {p.parent.parent.name: p for p in wh.files("quarantine")}
    assert {k: _codecs(p) for k, p in packs.items()} == {
        "benchmark=b-f": {"LZ4"},
        "benchmark=b-m": {"ZSTD"},
    }
    wh.drop_run("b-f", "f4")  # the pack is written again without the run
    [repacked] = [p for p in wh.files("quarantine") if p.parent.parent.name == "benchmark=b-f"]
    assert repacked != packs["benchmark=b-f"] and _codecs(repacked) == {"LZ4"}
    assert sorted(set(wh.read("quarantine").column("run_id").to_pylist())) == sorted(
        [*few.keys() - {"f4"}, *many]
    )


def _runs_per_pack(wh: Warehouse) -> list[int]:
    return sorted(pq.ParquetFile(p).metadata.num_row_groups for p in wh.files("quarantine"))


def _add_runs(wh: Warehouse, runs: range) -> None:
    for i in runs:
        wh.write(
            "quarantine",
            [{**_q(i), "run_id": f"r{i:02d}"}],
            {"benchmark": "b", "run_id": f"r{i:02d}"},
        )


def test_a_pack_holds_at_most_its_runs_cap_and_full_packs_are_not_rewritten(
    tmp_path, monkeypatch
) -> None:
    """A run's read parses its pack's whole footer, which grows with the pack's runs
    (store.PACK_MAX_RUNS); packing fills the packs with room and leaves the full ones."""
    from deskscore.collectors.warehouse import store

    monkeypatch.setattr(store, "PACK_MAX_RUNS", 3)
    wh = Warehouse(tmp_path)
    _add_runs(wh, range(8))
    wh.compact(["quarantine"], min_files=1)
    assert _runs_per_pack(wh) == [2, 3, 3]
    full = {p for p in wh.files("quarantine") if pq.ParquetFile(p).metadata.num_row_groups == 3}
    _add_runs(wh, range(8, 10))
    wh.compact(["quarantine"], min_files=1)
    assert _runs_per_pack(wh) == [1, 3, 3, 3]
    assert full <= set(wh.files("quarantine"))  # the full packs were not written again
    ids = wh.read("quarantine").column("run_id").to_pylist()
    assert sorted(ids) == [f"r{i:02d}" for i in range(10)]


def test_a_pack_of_more_runs_than_the_cap_is_split_when_its_table_is_packed_again(
    tmp_path, monkeypatch
) -> None:
    from deskscore.collectors.warehouse import store

    wh = Warehouse(tmp_path)
    _add_runs(wh, range(10))
    wh.compact(["quarantine"], min_files=1)
    assert _runs_per_pack(wh) == [10]  # packed before there was a cap of 4
    monkeypatch.setattr(store, "PACK_MAX_RUNS", 4)
    _add_runs(wh, range(10, 11))
    wh.compact(["quarantine"], min_files=1)
    assert _runs_per_pack(wh) == [3, 4, 4]
    ids = wh.read("quarantine").column("run_id").to_pylist()
    assert sorted(ids) == [f"r{i:02d}" for i in range(11)]
    rows = connect(tmp_path).sql("SELECT count(*), count(DISTINCT run_id) FROM quarantine")
    assert rows.fetchall() == [(11, 11)]


def test_collecting_old_files_reads_each_generation_once_and_what_the_manifest_lists(
    tmp_path, monkeypatch
) -> None:
    """A commit looks at the kept generations' files (at 1,000 runs each generation is 2 MB of
    JSON): each is read once, and read as its full manifest would list it."""
    import json

    from deskscore.collectors.warehouse import store
    from deskscore.schemas.manifest import Manifest, generation_file, generation_files

    wh = Warehouse(tmp_path)
    for i in range(KEEP_GENERATIONS + 2):
        wh.write("quarantine", [_q(i)], PART)
    kept = sorted(int(p.stem) for p in manifest_dir(tmp_path).glob("*.json"))
    assert len(kept) == KEEP_GENERATIONS
    for g in kept:
        full = Manifest.from_json(json.loads(generation_file(tmp_path, g).read_bytes()))
        assert generation_files(tmp_path, g) == (full.paths(), full.retired)
        assert full.paths() and (full.retired or g == kept[0] == 1)
    calls: list[int] = []

    def counted(root, generation):
        calls.append(generation)
        return generation_files(root, generation)

    monkeypatch.setattr(store, "generation_files", counted)
    first = wh.write("quarantine", [_q(99)], PART)
    assert calls and len(calls) == len(set(calls)), calls
    for _ in range(KEEP_GENERATIONS):
        wh.write("quarantine", [_q(100)], PART)
    assert not first.exists()  # still collected once no kept generation lists it


@pytest.mark.parametrize("read_before", [False, True])
@pytest.mark.parametrize("damage", ["cut short", "deleted"])
def test_a_data_file_cut_short_or_deleted_is_one_error_naming_it(
    tmp_path, damage: str, read_before: bool
) -> None:
    """Also when the file was read before it was damaged (its footer remembered)."""
    from deskscore.schemas.manifest import WarehouseDamaged

    wh = Warehouse(tmp_path)
    wh.write("quarantine", [_q(0)], PART)
    [path] = wh.files("quarantine")
    if read_before:
        assert Warehouse(tmp_path).read("quarantine").num_rows == 1
    if damage == "deleted":
        path.unlink()
    else:
        path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(WarehouseDamaged, match="--force") as caught:
        Warehouse(tmp_path).read("quarantine")
    assert str(path) in str(caught.value)


def test_a_files_footer_is_parsed_once_and_again_for_a_file_put_in_its_place(
    tmp_path, monkeypatch
) -> None:
    """Scoring reads a run's episodes five times from a pack: its footer is parsed once. A
    file written over it under the same name (a restored backup, say) is read as itself."""
    from deskscore.collectors.warehouse import store

    parsed = []
    read_metadata = pq.read_metadata
    monkeypatch.setattr(
        pq, "read_metadata", lambda path: parsed.append(path) or read_metadata(path)
    )
    wh = Warehouse(tmp_path)
    wh.write("quarantine", [_q(0), _q(1)], PART)
    [path] = wh.files("quarantine")
    for _ in range(3):
        assert Warehouse(tmp_path).read("quarantine", PART).num_rows == 2
    assert parsed == [str(path)]
    other = tmp_path / "other.parquet"
    pq.write_table(store.conform_rows("quarantine", [_q(5)]), other)
    other.replace(path)
    assert [r["location"] for r in Warehouse(tmp_path).read("quarantine").to_pylist()] == ["f5"]
    assert parsed == [str(path)] * 2


def _packing_job(tmp_path, runs: range) -> tuple[Warehouse, str]:
    """A job's warehouse packing writes, with quarantine rows of `runs` written into it."""
    wh = Warehouse(tmp_path, "job-1", pack_writes=True)
    _add_runs(wh, runs)
    return wh, "job-1"


def test_runs_written_with_pack_writes_land_in_one_pack_journaled_when_it_closes(
    tmp_path,
) -> None:
    from deskscore.collectors.warehouse.store import commit

    wh, job = _packing_job(tmp_path, range(10))
    assert read_journal(tmp_path, job) == []  # nothing is a slot until the pack is named
    assert not list(tmp_path.glob("quarantine/**/*.parquet"))
    wh.close()
    ops = read_journal(tmp_path, job)
    assert [op["groups"] for op in ops] == [[i] for i in range(10)]
    assert len({op["file"] for op in ops}) == 1 and "/_packs/" in ops[0]["file"]
    commit(tmp_path, ops, job=job)
    loose = tmp_path / "loose"
    _add_runs(Warehouse(loose), range(10))
    packed = Warehouse(tmp_path)
    assert _runs_per_pack(packed) == [10]
    for i in range(10):
        part = {"benchmark": "b", "run_id": f"r{i:02d}"}
        assert packed.read("quarantine", part).equals(Warehouse(loose).read("quarantine", part))


def test_a_pack_written_directly_is_closed_when_it_reaches_its_runs_cap(
    tmp_path, monkeypatch
) -> None:
    from deskscore.collectors.warehouse import store

    monkeypatch.setattr(store, "PACK_MAX_RUNS", 3)
    wh, job = _packing_job(tmp_path, range(7))
    assert len({op["file"] for op in read_journal(tmp_path, job)}) == 2  # two full packs
    wh.close()
    store.commit(tmp_path, read_journal(tmp_path, job), job=job)
    assert _runs_per_pack(Warehouse(tmp_path)) == [1, 3, 3]


def test_an_empty_or_large_table_keeps_its_own_file_when_writes_are_packed(
    tmp_path, monkeypatch
) -> None:
    from deskscore.collectors.warehouse import store

    wh = Warehouse(tmp_path, "job-1", pack_writes=True)
    empty = wh.write("quarantine", [], {"benchmark": "b", "run_id": "empty"})
    monkeypatch.setattr(store, "DIRECT_PACK_BYTES", 1)
    monkeypatch.setattr(store, "SMALL_FILE_BYTES", 1)  # large in Arrow and as a file
    large = wh.write("quarantine", [_q(1)], {"benchmark": "b", "run_id": "large"})
    assert empty is not None and "_packs" not in empty.parts
    assert large is not None and "_packs" not in large.parts
    wh.close()
    assert [op["slot"].split("/")[1] for op in read_journal(tmp_path, "job-1")] == [
        "run_id=empty",
        "run_id=large",
    ]


def test_a_table_large_in_arrow_whose_file_is_small_goes_into_the_pack(
    tmp_path, monkeypatch
) -> None:
    """Over DIRECT_PACK_BYTES of Arrow (a run's model calls: their usage texts compress
    tenfold), a run's table is written as a file first; under SMALL_FILE_BYTES, the size
    `compact` would fold at the end of the job, its rows go into the open pack instead, and
    nothing of the file is left."""
    from deskscore.collectors.warehouse import store

    monkeypatch.setattr(store, "DIRECT_PACK_BYTES", 1)
    wh, job = _packing_job(tmp_path, range(4))
    assert not list(tmp_path.glob("quarantine/**/*.parquet"))
    assert len(list((manifest_dir(tmp_path) / "tmp").glob("*.tmp"))) == 1  # the open pack
    wh.close()
    assert not list((manifest_dir(tmp_path) / "tmp").glob("*.tmp"))
    store.commit(tmp_path, read_journal(tmp_path, job), job=job)
    packed = Warehouse(tmp_path)
    assert _runs_per_pack(packed) == [4]
    loose = Warehouse(tmp_path / "loose")
    _add_runs(loose, range(4))
    assert packed.read("quarantine").equals(loose.read("quarantine"))
    assert packed.compact() == []  # nothing left for compaction to fold


def test_several_partitions_read_as_one_hold_the_rows_of_each(tmp_path, monkeypatch) -> None:
    """Packed runs and runs in files of their own, a slot name chosen, and a partition that
    holds nothing: read together, they are exactly the rows read one partition at a time."""
    from deskscore.collectors.warehouse import store

    wh, job = _packing_job(tmp_path, range(5))
    monkeypatch.setattr(store, "DIRECT_PACK_BYTES", 1)
    monkeypatch.setattr(store, "SMALL_FILE_BYTES", 1)
    for i in (5, 6):  # files of their own, and a second slot name
        part = {"benchmark": "b", "run_id": f"r{i:02d}"}
        wh.write("quarantine", [{**_q(i), "run_id": f"r{i:02d}"}], part)
        wh.write("quarantine", [{**_q(10 + i), "run_id": f"r{i:02d}"}], part, file="other")
    wh.close()
    store.commit(tmp_path, read_journal(tmp_path, job), job=job)
    packed = Warehouse(tmp_path)
    parts = [{"benchmark": "b", "run_id": f"r{i:02d}"} for i in (6, 0, 3, 5, 9)]
    for file in (None, "data", "other"):
        one_by_one = [r for p in parts for r in packed.read("quarantine", p, file=file).to_pylist()]
        together = packed.read_partitions("quarantine", parts, file=file).to_pylist()
        assert sorted(map(repr, together)) == sorted(map(repr, one_by_one))
        assert len(together) == {None: 6, "data": 4, "other": 2}[file]  # r09 holds none
    assert packed.read_partitions("quarantine", []).num_rows == 0


def test_a_slot_removed_or_rewritten_after_it_was_packed_keeps_the_later_operation(
    tmp_path, monkeypatch
) -> None:
    from deskscore.collectors.warehouse import store

    wh, job = _packing_job(tmp_path, range(3))
    wh.remove("quarantine", {"benchmark": "b", "run_id": "r01"})  # packs close first
    monkeypatch.setattr(store, "DIRECT_PACK_BYTES", 1)  # r02 again, into its own file
    monkeypatch.setattr(store, "SMALL_FILE_BYTES", 1)
    wh.write("quarantine", [{**_q(7), "run_id": "r02"}], {"benchmark": "b", "run_id": "r02"})
    wh.close()
    store.commit(tmp_path, read_journal(tmp_path, job), job=job)
    rows = Warehouse(tmp_path).read("quarantine").to_pylist()
    assert sorted((r["run_id"], r["location"]) for r in rows) == [("r00", "f0"), ("r02", "f7")]


def test_a_packing_writer_killed_before_closing_its_pack_leaves_nothing_behind(
    tmp_path,
) -> None:
    Warehouse(tmp_path).write("quarantine", [_q(0)], PART)
    before = Warehouse(tmp_path).snapshot()
    _packing_job(tmp_path, range(5))  # never closed: what a killed worker leaves
    tmp_files = list((manifest_dir(tmp_path) / "tmp").glob("*.tmp"))
    assert len(tmp_files) == 1
    assert Warehouse(tmp_path).snapshot() == before
    with writer_lock(tmp_path, "next job"):
        pass
    assert not any(p.exists() for p in tmp_files)
    assert Warehouse(tmp_path).snapshot() == before


def test_packing_writes_needs_a_job(tmp_path) -> None:
    with pytest.raises(ValueError, match="needs a job"):
        Warehouse(tmp_path, pack_writes=True)


def test_part_filled_packs_of_jobs_that_pack_as_they_write_are_merged_once_there_are_enough(
    tmp_path,
) -> None:
    """Each job leaves a pack of a few runs; the fourth such pack (min_files = 4) makes the
    compaction merge them, and a pack of min_files runs or more is left as it is."""
    from deskscore.collectors.warehouse.store import commit

    def job(runs: range) -> list[int]:
        name = f"job-{runs.start}"
        wh = Warehouse(tmp_path, name, pack_writes=True)
        _add_runs(wh, runs)
        wh.close()
        commit(tmp_path, read_journal(tmp_path, name), job=name)
        Warehouse(tmp_path).compact(["quarantine"], min_files=4)
        return _runs_per_pack(Warehouse(tmp_path))

    assert [job(range(i, i + 2)) for i in range(0, 8, 2)] == [[2], [2, 2], [2, 2, 2], [8]]
    merged = set(Warehouse(tmp_path).files("quarantine"))
    assert job(range(8, 12)) == [4, 8]  # four runs: not a part-filled pack, kept
    assert merged <= set(Warehouse(tmp_path).files("quarantine"))
    ids = Warehouse(tmp_path).read("quarantine").column("run_id").to_pylist()
    assert sorted(ids) == [f"r{i:02d}" for i in range(12)]

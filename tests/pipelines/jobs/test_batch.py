"""Batch ingest: many archives, several worker processes, incremental re-runs, packed files."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from deskscore.collectors.synthetic import load_profiles, task_slice, write_run_zip
from deskscore.collectors.warehouse import PACK_DIR, Warehouse
from deskscore.pipelines.cli.main import main
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.jobs.score import run_score
from deskscore.pipelines.options import IngestOptions, ScoreOptions

INGEST_TABLES = ("runs", "episodes", "steps", "llm_calls", "quarantine")
_VOLATILE = {"runs": ("source_stamp",)}  # mtimes differ between two copies of one archive


def _zips(folder: Path, n: int, *, per_domain: int = 1) -> list[Path]:
    profiles = load_profiles()
    tasks = task_slice(per_domain=per_domain)
    return [
        write_run_zip(
            folder / f"run{i}.zip",
            profiles[i % len(profiles)],
            tasks,
            seed=i,
            screenshots="tiny",
            prefix=f"run{i}",
        )
        for i in range(n)
    ]


def _tables(warehouse: Path) -> dict[str, pa.Table]:
    """Every ingest table, sorted by all its columns, without columns that name the copy."""
    wh = Warehouse(warehouse)
    out = {}
    for name in INGEST_TABLES:
        data = wh.read(name)
        drop = [c for c in _VOLATILE.get(name, ()) if c in data.column_names]
        data = data.drop_columns(drop)
        keys = [c for c in data.column_names if pa.types.is_primitive(data.schema.field(c).type)]
        keys += [c for c in data.column_names if pa.types.is_string(data.schema.field(c).type)]
        out[name] = data.sort_by([(c, "ascending") for c in dict.fromkeys(keys)])
    return out


def _same_tables(one: Path, other: Path) -> None:
    """The ingest tables of two warehouses are equal, row for row."""
    a, b = _tables(one), _tables(other)
    for name in INGEST_TABLES:
        assert a[name].equals(b[name]), name


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("batch")
    _zips(folder, 4)
    return folder


def test_two_worker_processes_write_the_same_tables_as_one(batch: Path, tmp_path: Path) -> None:
    one = run_ingest(
        IngestOptions(str(tmp_path / "one"), sources=(str(batch / "*.zip"),), workers=1)
    )
    two = run_ingest(
        IngestOptions(str(tmp_path / "two"), sources=(str(batch / "*.zip"),), workers=2)
    )
    assert one.runs_written == two.runs_written == 4
    assert one.episodes == two.episodes > 0
    _same_tables(tmp_path / "one", tmp_path / "two")


@pytest.mark.parametrize("pack_runs", [2, 3, 4])
def test_an_ingest_of_enough_sources_writes_its_runs_straight_into_packs(
    batch: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pack_runs: int
) -> None:
    """Each process packs the runs it reads as it writes them: no file per run to fold
    afterwards, and the same tables as files left as they are. So it does when the sources
    fill a pack but not one per process (3 or 4 runs a pack, 4 sources on 2 processes):
    two packs of fewer runs, left for a later `compact` to merge, rather than a file per
    run folded into a pack at the job's end."""
    from deskscore.collectors.warehouse import store

    monkeypatch.setattr(store, "MIN_SMALL_FILES", pack_runs)
    sources = (str(batch / "*.zip"),)
    run_ingest(IngestOptions(str(tmp_path / "loose"), sources=sources, workers=1, compact=False))
    packed = run_ingest(IngestOptions(str(tmp_path / "packed"), sources=sources, workers=2))
    assert packed.engine == "local" and packed.runs_written == 4
    assert packed.compacted == 0  # nothing left to fold
    wh = Warehouse(tmp_path / "packed")
    for name in ("runs", "episodes", "steps", "step_actions"):
        slots = wh.slots(name)
        assert len(slots) == 4 and all(e.groups is not None for _, e in slots), name
        assert {Path(e.file).parent.name for _, e in slots} == {PACK_DIR}, name
        assert len(wh.files(name)) <= 2, name  # a pack per process at most
    _same_tables(tmp_path / "loose", tmp_path / "packed")


def test_the_runs_of_one_folder_that_holds_many_are_packed_as_written_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deskscore.collectors.synthetic import write_run
    from deskscore.collectors.warehouse import store

    monkeypatch.setattr(store, "MIN_SMALL_FILES", 2)
    results = tmp_path / "results"
    for i in range(4):
        write_run(results, load_profiles()[i], task_slice(per_domain=1), seed=i,
                  screenshots="none")  # fmt: skip
    run_ingest(IngestOptions(str(tmp_path / "loose"), sources=(str(results),), compact=False))
    done = run_ingest(IngestOptions(str(tmp_path / "packed"), sources=(str(results),), workers=2))
    assert done.runs_written == 4 and done.compacted == 0
    slots = Warehouse(tmp_path / "packed").slots("steps")
    assert len(slots) == 4 and all(e.groups is not None for _, e in slots)
    _same_tables(tmp_path / "loose", tmp_path / "packed")


def test_a_score_of_enough_runs_packs_its_tables_as_written_costs_included(
    batch: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every score table goes straight into packs, the costs too: the intervals resample each
    run's costs as the cost stage hands them on, not read back from its files. The tables
    are those of a score that leaves its files as they are."""
    import shutil

    import pyarrow.parquet as pq

    from deskscore.collectors.warehouse import store
    from deskscore.schemas import TABLES

    monkeypatch.setattr(store, "MIN_SMALL_FILES", 2)
    loose, packed = tmp_path / "loose", tmp_path / "packed"
    run_ingest(IngestOptions(str(loose), sources=(str(batch / "*.zip"),), workers=1))
    shutil.copytree(loose, packed)
    run_score(ScoreOptions(str(loose), max_steps_scoring=50, workers=1, compact=False))
    done = run_score(ScoreOptions(str(packed), max_steps_scoring=50, workers=2))
    assert done.engine == "local" and done.runs_scored == 4
    wh = Warehouse(packed)
    for name in ("episode_scores", "run_scores", "verdicts", "run_score_intervals",
                 "llm_call_costs", "episode_costs", "run_costs"):  # fmt: skip
        slots = wh.slots(name)  # a slot per run and configuration (verdicts: two per run)
        assert len(slots) >= 4 and any(e.groups is not None for _, e in slots), name
        for _, e in slots:  # a file of its own: a run's empty table, or one too large
            if e.groups is None and e.rows:
                whole = pq.read_table(wh.table_dir(name) / e.file).nbytes
                assert whole >= store.DIRECT_PACK_BYTES, (name, e)
    for name in TABLES:
        a, b = Warehouse(loose).read(name).to_pylist(), wh.read(name).to_pylist()
        assert sorted(map(repr, a)) == sorted(map(repr, b)), name


@pytest.mark.parametrize(
    ("engine", "compact", "units", "packs"),
    [
        ("local", True, 16, True),
        ("direct", True, 8, True),
        ("local", True, 8, True),  # a pack per process, merged later as files are folded
        ("local", True, 7, False),  # too few runs for a pack: files, folded once 8 gather
        ("beam", True, 100, False),  # a runner need not tear its stages down
        ("local", False, 100, False),  # --no-compact: files as they are
    ],
)
def test_runs_are_packed_as_written_only_on_local_engines_with_enough_runs(
    engine: str, compact: bool, units: int, packs: bool
) -> None:
    from deskscore.pipelines.jobs.compaction import pack_as_written

    assert pack_as_written(engine, compact, units) is packs


def test_a_glob_names_every_archive_and_a_list_file_names_the_chosen_ones(
    batch: Path, tmp_path: Path
) -> None:
    listing = tmp_path / "archives.txt"
    listing.write_text(f"# two of the release\n{batch / 'run0.zip'}\n\n{batch / 'run2.zip'}\n")
    assert (
        main(["ingest", f"@{listing}", "--warehouse", str(tmp_path / "w"), "--workers", "1"]) == 0
    )
    sources = set(Warehouse(tmp_path / "w").read("runs").column("source").to_pylist())
    assert sources == {str(batch / "run0.zip"), str(batch / "run2.zip")}
    assert main(["ingest", str(batch / "nothing-*.zip"), "--warehouse", str(tmp_path / "w")]) == 2


def test_an_unchanged_archive_is_skipped_and_force_reads_it_again(
    batch: Path, tmp_path: Path
) -> None:
    wh = str(tmp_path / "w")
    first = run_ingest(IngestOptions(wh, sources=(str(batch / "*.zip"),), workers=1))
    assert len(first.plan.todo) == 4
    again = run_ingest(IngestOptions(wh, sources=(str(batch / "*.zip"),), workers=1))
    assert again.plan.todo == [] and len(again.plan.unchanged) == 4
    forced = run_ingest(IngestOptions(wh, sources=(str(batch / "*.zip"),), workers=1, force=True))
    assert forced.runs_written == 4


def test_a_touched_archive_is_read_again_but_its_tables_are_kept(
    batch: Path, tmp_path: Path
) -> None:
    wh = tmp_path / "w"
    run_ingest(IngestOptions(str(wh), sources=(str(batch / "*.zip"),), workers=1, compact=False))
    steps = next(p for p in Warehouse(wh).files("steps") if "run_id=" in str(p.parent))
    before = steps.stat().st_mtime_ns
    target = batch / "run1.zip"
    st = target.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    result = run_ingest(
        IngestOptions(str(wh), sources=(str(batch / "*.zip"),), workers=1, compact=False)
    )
    assert len(result.plan.todo) == 1
    assert result.runs_unchanged == 1
    assert result.runs_written == 0
    assert steps.stat().st_mtime_ns == before


def test_score_recomputes_only_the_run_whose_archive_changed(tmp_path: Path) -> None:
    folder = tmp_path / "zips"
    paths = _zips(folder, 3)
    wh = str(tmp_path / "w")
    run_ingest(IngestOptions(wh, sources=(str(folder / "*.zip"),), workers=1))
    assert run_score(ScoreOptions(wh, max_steps_scoring=50, workers=1)).runs_scored == 3
    assert run_score(ScoreOptions(wh, max_steps_scoring=50, workers=1)).runs_scored == 0
    assert (
        run_score(ScoreOptions(wh, max_steps_scoring=15, workers=1)).runs_scored == 3
    )  # new config

    profiles = load_profiles()  # the same agent re-run: same run path, other outcomes
    write_run_zip(paths[1], profiles[1], task_slice(per_domain=1), seed=99, prefix="run1")
    result = run_ingest(IngestOptions(wh, sources=(str(folder / "*.zip"),), workers=1))
    assert result.runs_written == 1
    counters = run_score(ScoreOptions(wh, max_steps_scoring=50, workers=1))
    assert counters.runs_scored == 1 and counters.runs_unchanged == 2
    assert run_score(ScoreOptions(wh, max_steps_scoring=50, workers=1, force=True)).runs_scored == 3


def test_a_run_gone_from_its_archive_is_dropped_with_its_scores(tmp_path: Path) -> None:
    folder = tmp_path / "zips"
    paths = _zips(folder, 2)
    wh = tmp_path / "w"
    run_ingest(IngestOptions(str(wh), sources=(str(folder / "*.zip"),), workers=1))
    run_score(ScoreOptions(str(wh), max_steps_scoring=50, workers=1))
    profiles = load_profiles()  # another agent's run replaces the archive's content
    write_run_zip(paths[0], profiles[3], task_slice(per_domain=1), seed=5, prefix="other")
    result = run_ingest(IngestOptions(str(wh), sources=(str(folder / "*.zip"),), workers=1))
    assert result.runs_dropped == 1
    runs = Warehouse(wh).read("runs").to_pylist()
    assert sorted(r["run_path"].split("/")[0] for r in runs) == ["other", "run1"]
    scored = set(Warehouse(wh).read("run_scores").column("run_id").to_pylist())
    assert scored <= {r["run_id"] for r in runs}


def test_many_small_runs_end_up_in_a_few_packs_that_read_back_the_same(
    batch: Path, tmp_path: Path
) -> None:
    wh = tmp_path / "w"
    run_ingest(IngestOptions(str(wh), sources=(str(batch / "*.zip"),), workers=1, compact=False))
    before = _tables(wh)
    packs = Warehouse(wh).compact(min_files=2)
    assert {c.table for c in packs} >= {"runs", "episodes", "steps"}
    for name in ("runs", "episodes", "steps"):
        files = Warehouse(wh).files(name)
        assert len(files) == 1 and files[0].parent.name == PACK_DIR
    after = _tables(wh)
    for name in INGEST_TABLES:
        assert before[name].equals(after[name]), name


def test_a_packed_run_is_read_replaced_and_removed_like_any_other(
    batch: Path, tmp_path: Path
) -> None:
    wh = Warehouse(tmp_path / "w")
    run_ingest(
        IngestOptions(str(wh.root), sources=(str(batch / "*.zip"),), workers=1, compact=False)
    )
    wh.compact(min_files=2)
    runs = wh.read("runs").to_pylist()
    part = {"benchmark": "osworld", "run_id": runs[0]["run_id"]}
    episodes = wh.read("episodes", part)
    assert episodes.num_rows > 0
    assert set(episodes.column("run_id").to_pylist()) == {part["run_id"]}
    total = wh.read("episodes").num_rows
    wh.write("episodes", episodes.slice(0, 1), part)  # replaced: out of the pack, in its folder
    assert wh.read("episodes", part).num_rows == 1
    assert wh.read("episodes").num_rows == total - episodes.num_rows + 1
    wh.remove("episodes", part)
    assert wh.read("episodes", part).num_rows == 0
    assert wh.read("episodes").num_rows == total - episodes.num_rows


def test_a_later_compaction_refills_the_pack_with_new_runs(tmp_path: Path) -> None:
    folder = tmp_path / "zips"
    _zips(folder, 4)
    wh = Warehouse(tmp_path / "w")
    first = sorted(folder.glob("*.zip"))
    run_ingest(
        IngestOptions(
            str(wh.root), sources=tuple(str(p) for p in first[:2]), workers=1, compact=False
        )
    )
    wh.compact(min_files=2)
    run_ingest(
        IngestOptions(
            str(wh.root), sources=tuple(str(p) for p in first[2:]), workers=1, compact=False
        )
    )
    before = _tables(wh.root)
    wh.compact(min_files=2)
    files = wh.files("episodes")
    assert len(files) == 1 and files[0].parent.name == PACK_DIR
    assert len(set(wh.read("episodes").column("run_id").to_pylist())) == 4
    after = _tables(wh.root)
    for name in INGEST_TABLES:
        assert before[name].equals(after[name]), name

"""A job's view of its pending writes, kept up to date from what its journals gained, equals
the journal read whole; and a read finds a partition's slots without scanning the table."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deskscore.collectors.warehouse import Warehouse
from deskscore.collectors.warehouse.store import JOBS_DIR, apply_ops, commit, read_journal
from deskscore.schemas.manifest import manifest_dir, read_manifest

JOB = "job-1"
TABLES = ("episode_costs", "quarantine")
RUNS = ("r1", "r2", "r3")
NAMES = ("data", "other")


def _slot(run: str, name: str) -> str:
    return f"benchmark=osworld/run_id={run}/{name}"


def _line(table: str, run: str, name: str, put: bool, t: int, file: str) -> str:
    op = {"op": "put" if put else "delete", "table": table, "slot": _slot(run, name), "t": t}
    if put:
        op["file"], op["rows"] = file, 1
    return json.dumps(op, sort_keys=True) + "\n"


def _journal(root: Path) -> Path:
    folder = manifest_dir(root) / JOBS_DIR / JOB
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _expected(root: Path) -> dict:
    base = read_manifest(root)
    assert base is not None
    return apply_ops(base, read_journal(root, JOB)).tables


def _same_view(wh: Warehouse, root: Path) -> None:
    expected = _expected(root)
    got = wh.manifest().tables
    assert {t: s for t, s in got.items() if s} == {t: s for t, s in expected.items() if s}
    for table in TABLES:
        for run in RUNS:
            part = {"benchmark": "osworld", "run_id": run}
            want = sorted(
                (k, e) for k, e in expected.get(table, {}).items() if k.startswith(_slot(run, ""))
            )
            assert wh._slots(table, part) == want


write = st.tuples(
    st.integers(0, 2),  # journal file (a writing process)
    st.sampled_from(TABLES),
    st.sampled_from(RUNS),
    st.sampled_from(NAMES),
    st.booleans(),  # put or delete
    st.integers(0, 12),  # time: ties and lines written out of time order
    st.sampled_from(("f-a.parquet", "f-b.parquet")),
    st.sampled_from(("whole", "whole", "whole", "cut", "corrupt")),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(writes=st.lists(write, min_size=1, max_size=40))
def test_an_updated_view_equals_the_journal_read_whole_after_every_write(
    tmp_path_factory, writes
) -> None:
    # Lines arrive in several files, out of time order, some cut mid-line and finished at the
    # next write to their file, some corrupt; after each, the view one Warehouse keeps (and
    # its slots by partition) equals applying the whole journal to the committed manifest.
    root = tmp_path_factory.mktemp("wh")
    commit(root, [json.loads(_line("quarantine", "r1", "data", True, 0, "base.parquet"))])
    folder = _journal(root)
    wh = Warehouse(root, JOB, pending=True)
    rest: dict[int, str] = {}
    for proc, table, run, name, put, t, file, how in writes:
        path = folder / f"{proc}.jsonl"
        text = rest.pop(proc, "") + _line(table, run, name, put, t, file)
        if how == "cut":  # the rest follows with this file's next line
            cut = len(text) // 2
            text, rest[proc] = text[:cut], text[cut:]
        elif how == "corrupt":
            text += "{not json\n"
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
        _same_view(wh, root)


def test_a_line_written_late_with_an_earlier_time_ends_its_slot_as_a_commit_would(
    tmp_path,
) -> None:
    commit(tmp_path, [])
    folder = _journal(tmp_path)
    wh = Warehouse(tmp_path, JOB, pending=True)
    (folder / "a.jsonl").write_text(_line("quarantine", "r1", "data", True, 5, "late.parquet"))
    assert wh.manifest().tables["quarantine"][_slot("r1", "data")].file == "late.parquet"
    (folder / "b.jsonl").write_text(_line("quarantine", "r1", "data", True, 3, "early.parquet"))
    assert wh.manifest().tables["quarantine"][_slot("r1", "data")].file == "late.parquet"
    _same_view(wh, tmp_path)


def test_a_read_after_a_write_parses_only_the_lines_written_since(tmp_path) -> None:
    # Lines already taken are not read again: blanking them on disk (journals only grow, so
    # nothing else rewrites them) changes nothing, while the new line is seen.
    commit(tmp_path, [])
    path = _journal(tmp_path) / "a.jsonl"
    lines = [_line("quarantine", f"r{i}", "data", True, i, f"f{i}.parquet") for i in range(200)]
    path.write_text("".join(lines))
    wh = Warehouse(tmp_path, JOB, pending=True)
    assert len(wh.manifest().tables["quarantine"]) == 200
    path.write_text("".join(" " * (len(line) - 1) + "\n" for line in lines))
    with open(path, "a", encoding="utf-8") as f:
        f.write(_line("quarantine", "r200", "data", True, 200, "f200.parquet"))
    slots = wh.manifest().tables["quarantine"]
    assert len(slots) == 201
    assert slots[_slot("r0", "data")].file == "f0.parquet"
    assert wh._slots("quarantine", {"benchmark": "osworld", "run_id": "r200"}) == [
        (_slot("r200", "data"), slots[_slot("r200", "data")])
    ]


def test_a_new_generation_is_read_again_with_the_journal_on_top(tmp_path) -> None:
    commit(tmp_path, [])
    folder = _journal(tmp_path)
    wh = Warehouse(tmp_path, JOB, pending=True)
    (folder / "a.jsonl").write_text(_line("quarantine", "r1", "data", True, 1, "job.parquet"))
    assert set(wh.manifest().tables["quarantine"]) == {_slot("r1", "data")}
    commit(tmp_path, [json.loads(_line("quarantine", "r2", "data", True, 0, "other.parquet"))])
    assert set(wh.manifest().tables["quarantine"]) == {_slot("r1", "data"), _slot("r2", "data")}
    _same_view(wh, tmp_path)


def _unended_put(root: Path) -> tuple[Warehouse, Path]:
    """A view over a journal whose only line, a put replacing the committed slot, is whole
    but its newline not yet written; it is taken, as a commit would take it."""
    commit(root, [json.loads(_line("quarantine", "r1", "data", True, 0, "base.parquet"))])
    path = _journal(root) / "a.jsonl"
    wh = Warehouse(root, JOB, pending=True)
    path.write_text(_line("quarantine", "r1", "data", True, 1, "new.parquet")[:-1])
    assert wh.manifest().tables["quarantine"][_slot("r1", "data")].file == "new.parquet"
    _same_view(wh, root)
    return wh, path


def test_a_last_line_whose_newline_is_not_written_yet_is_taken_as_a_commit_takes_it(
    tmp_path,
) -> None:
    wh, path = _unended_put(tmp_path)
    with open(path, "a") as f:  # the newline, then a line deleting the slot
        f.write("\n" + _line("quarantine", "r1", "data", False, 2, ""))
    assert _slot("r1", "data") not in wh.manifest().tables["quarantine"]
    _same_view(wh, tmp_path)


def test_a_last_line_that_bytes_follow_on_its_line_is_dropped_as_a_commit_drops_it(
    tmp_path,
) -> None:
    wh, path = _unended_put(tmp_path)
    with open(path, "a") as f:  # corrupt: the line goes on after its object
        f.write("garbage\n")
    assert wh.manifest().tables["quarantine"][_slot("r1", "data")].file == "base.parquet"
    _same_view(wh, tmp_path)

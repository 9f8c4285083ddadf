"""The step_NN_trace.json + results.csv form: detection, the defensive reader, results.csv,
every file and CSV line accounted for, and `deskscore check` on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deskscore.collectors import formats
from deskscore.collectors.human import load_bundled
from deskscore.collectors.layout import discover
from deskscore.collectors.source import open_source
from deskscore.collectors.step_traces import (
    HEADERLESS,
    RESULTS_CSV,
    UNKNOWN_DOMAIN,
    csv_columns,
    index_domain,
    parse_score,
    trace_files,
    trace_record,
)
from deskscore.collectors.synthetic.step_traces import (
    RUN_FOLDER,
    TraceTask,
    write_trace_archive,
    write_trace_run,
)
from deskscore.pipelines.cli.check import check_warehouse
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.options import IngestOptions
from deskscore.schemas import conform_rows
from deskscore.sql import connect


def _read(root: Path) -> tuple[Any, dict[str, Any], list[dict]]:
    """(run, episode reads by task id, run-level quarantine) of the archive under `root`."""
    src = open_source(str(root))
    [run] = discover(src.files())
    fmt = formats.get(run.format)
    meta = fmt.read_run_meta(src, run, run_id="r", benchmark="osworld")
    reads = fmt.episodes(src, run, run_id="r", benchmark="osworld", reported=meta.reported)
    return run, {r.read.episode["source_task_id"]: r for r in reads}, meta.quarantine


@pytest.fixture
def archive(tmp_path: Path) -> tuple[Path, list[TraceTask]]:
    root = tmp_path / "archive"
    return root, write_trace_archive(root, n_tasks=6, seed=3)


def test_trace_files_are_ordered_by_number_not_by_name() -> None:
    names = ("step_10_trace.json", "step_2_trace.json", "step_01_trace.json", "step_2.png")
    assert trace_files(names) == [
        (1, "step_01_trace.json"),
        (2, "step_2_trace.json"),
        (10, "step_10_trace.json"),
    ]


def test_a_generated_run_is_found_as_one_run_of_its_task_folders(archive) -> None:
    root, written = archive
    [run] = discover(open_source(str(root)).files())
    assert run.format == "step-traces" and run.run_path == RUN_FOLDER
    assert sorted(t.task_id for t in run.tasks) == sorted(w.task_id for w in written)
    assert {t.domain for t in run.tasks} == {w.domain for w in written}  # by the task index


def test_every_step_file_is_a_step_row_in_step_order_with_what_it_holds(archive) -> None:
    root, written = archive
    _, reads, quarantine = _read(root)
    assert quarantine == []
    for w in written:
        read = reads[w.task_id]
        ep, steps = read.read.episode, read.read.steps
        assert (ep["domain"], ep["n_lines"], ep["n_quarantined"]) == (w.domain, w.n_steps, 0)
        assert [s["step_num"] for s in steps] == list(range(1, w.n_steps + 1))
        assert [s["line_no"] for s in steps] == list(range(1, w.n_steps + 1))
        folder = root / w.folder
        for s in steps:
            name = f"step_{s['step_num']:02d}" if w.padded else f"step_{s['step_num']}"
            obj = json.loads((folder / f"{name}_trace.json").read_text())
            reply = obj.get("response") or obj["model_output"]["thought"]
            assert s["response"] == reply
            assert s["screenshot_path"] == f"{w.folder}/{name}.png"
            assert s["ts"] is not None
        assert steps[-1]["action_kind"] in ("done", "fail")
        assert len(read.llm_calls) == w.n_steps  # one usage object per step file
    conform_rows("episodes", [r.read.episode for r in reads.values()])
    conform_rows("steps", [s for r in reads.values() for s in r.read.steps])
    conform_rows("llm_calls", [c for r in reads.values() for c in r.llm_calls])


def test_a_list_of_code_strings_is_one_step_whose_calls_are_all_parsed() -> None:
    obj = {"actions": ["pyautogui.moveTo(5, 6)", "pyautogui.write('hello')"], "thought": "t"}
    rec = trace_record(obj, 4, set())
    assert rec["step_num"] == 4 and rec["response"] == "t"
    assert rec["action"] == "pyautogui.moveTo(5, 6)\npyautogui.write('hello')"
    assert rec["action_list"] == obj["actions"]


def test_results_give_scores_and_a_task_without_a_row_has_none(archive) -> None:
    root, written = archive
    _, reads, _ = _read(root)
    for w in written:
        ep = reads[w.task_id].read.episode
        if w.score is None:
            assert (ep["result_status"], ep["score"]) == ("missing", None)
        else:
            assert (ep["result_status"], ep["score"]) == ("ok", w.score)


@pytest.mark.parametrize("header", [0, 1, 2, None])
def test_columns_are_found_by_header_name_or_position_and_the_domain_falls_back_to_the_index(
    tmp_path: Path, header: int | None
) -> None:
    tasks = load_bundled("verified")[:3]
    written = write_trace_run(tmp_path, tasks, header=header, with_domain=False)
    _, reads, _ = _read(tmp_path)
    for w in written:
        ep = reads[w.task_id].read.episode
        assert ep["domain"] == index_domain(w.task_id) == w.domain
        assert ep["score"] == w.score


@pytest.mark.parametrize(
    ("first", "header"),
    [
        (["task_id", "score"], True),
        (["Task ID", "App", "Success"], True),
        (["t-a", "1", "9"], False),  # a task of the run
        (["T-A", "0.0"], False),
        (["0810415c-bde4-4443-9047-d5f70165a697", "0", "9"], False),  # a uuid, no folder
        (["x", "y"], True),  # no usable column: read as a header, its data quarantined
        (["t-a", "score"], True),  # a task-looking header that names a column is a header
    ],
)
def test_a_first_record_without_column_names_that_starts_with_a_task_id_is_data(
    first: list[str], header: bool
) -> None:
    columns = csv_columns(first, {"t-a", "t-b"})
    assert columns.header is header
    if not header:
        assert columns == HEADERLESS


def test_a_headerless_results_csv_as_a_real_runner_appends_it_loses_no_line(
    tmp_path: Path,
) -> None:
    """mvaishak/OSWorld-Benchmark-GPT-4o-Mini appends `task_id,score,step_idx` per task, no
    header: the first task's result was taken for a header and lost, and check agreed."""
    tasks = load_bundled("verified")[:3]
    written = write_trace_run(tmp_path, tasks, header=None)
    csv_path = tmp_path / RUN_FOLDER / RESULTS_CSV
    missing = "ffffffff-0000-4000-8000-000000000000"
    csv_path.write_text(f"{missing},1,4\n" + csv_path.read_text())
    wh = tmp_path / "wh"
    con = _ingest(tmp_path, wh)
    scores = dict(con.sql("SELECT task_id, score FROM episodes").fetchall())
    assert scores == {w.task_id: w.score for w in written}
    assert written[0].score is not None  # the first task's line is now line 2
    assert con.sql("SELECT line_no, reason FROM quarantine").fetchall() == [(1, "no_task_folder")]
    assert check_warehouse(wh).ok
    with open(csv_path, "a") as f:  # a line the warehouse never saw
        f.write(f"{written[-1].task_id},1,3\n")
    problems = check_warehouse(wh).problems
    assert any(f"{len(written) + 1} data line(s) in the source" in p for p in problems), problems


def test_the_csv_domain_column_wins_and_an_unknown_task_has_an_unknown_domain(
    tmp_path: Path,
) -> None:
    tasks = [{"domain": "my_app", "task_id": "task-one"}, {"domain": "x", "task_id": "task-two"}]
    write_trace_run(tmp_path, tasks)
    _, reads, _ = _read(tmp_path)
    assert reads["task-one"].read.episode["domain"] == "my_app"
    assert reads["task-two"].read.episode["domain"] == UNKNOWN_DOMAIN  # no CSV row, not indexed


@pytest.mark.parametrize(
    ("cell", "expected"),
    [("1", 1.0), ("0.5", 0.5), ("True", 1.0), ("false", 0.0), ("PASS", 1.0), ("no", 0.0)],
)
def test_result_cells_read_as_numbers_or_yes_no_words(cell: str, expected: float) -> None:
    assert parse_score(cell)[1:] == (expected, "ok")


def _break(root: Path, written: list[TraceTask]) -> tuple[Path, Path]:
    """A malformed step file in the first task, and a results.csv with a bad score, a row for
    no task folder, a duplicate and a blank line."""
    w = written[0]
    name = "step_02_trace.json" if w.padded else "step_2_trace.json"
    bad_file = root / w.folder / name
    bad_file.write_text('{"action": "pyautogui.click(1, 2)",\n "response": ')
    csv_path = root / RUN_FOLDER / RESULTS_CSV
    lines = csv_path.read_text().splitlines()
    header, rows = lines[0], lines[1:]
    cells = rows[1].split(",")
    cells[-1] = "n/a"
    rows[1] = ",".join(cells)
    rows += ["", "ffffffff-0000-4000-8000-000000000000,chrome,1", rows[0]]
    csv_path.write_text("\n".join([header, *rows]) + "\n")
    return bad_file, csv_path


def test_a_malformed_step_file_and_bad_csv_rows_are_quarantined_with_file_and_line(
    archive,
) -> None:
    root, written = archive
    bad_file, csv_path = _break(root, written)
    _, reads, run_q = _read(root)
    first = reads[written[0].task_id].read
    [row] = first.quarantine
    assert row["location"] == bad_file.relative_to(root).as_posix()
    assert (row["reason"], row["line_no"]) == ("invalid_json", 2)
    ep = first.episode
    assert ep["n_lines"] == len(first.steps) + ep["n_quarantined"] == written[0].n_steps
    by_line = {(q["line_no"], q["reason"]) for q in run_q}
    csv_loc = csv_path.relative_to(root).as_posix()
    assert {q["location"] for q in run_q} == {csv_loc}
    assert by_line == {
        (3, "unparseable_result"),
        (len(written) + 1, "blank_line"),
        (len(written) + 2, "no_task_folder"),
        (len(written) + 3, "duplicate_row"),
    }
    second = reads[written[1].task_id].read.episode
    assert (second["result_status"], second["result_raw"], second["score"]) == (
        "unparseable",
        "n/a",
        None,
    )


def _ingest(root: Path, wh: Path) -> Any:
    run_ingest(IngestOptions(str(wh), sources=(str(root),), engine="direct"))
    return connect(wh)


def test_ingest_reconciles_and_check_passes_on_a_broken_run(archive, tmp_path: Path) -> None:
    root, written = archive
    _break(root, written)
    wh = tmp_path / "wh"
    con = _ingest(root, wh)
    lines, steps, quarantined = con.sql(
        "SELECT sum(n_lines), (SELECT count(*) FROM steps), sum(n_quarantined) FROM episodes"
    ).fetchall()[0]
    assert lines == sum(w.n_steps for w in written) == steps + quarantined and quarantined == 1
    assert con.sql("SELECT format FROM runs").fetchall() == [("step-traces",)]
    result = check_warehouse(wh)
    assert result.ok, result.problems
    assert "1 re-counted from their source" in result.facts[-1]


def test_check_finds_step_files_and_csv_lines_the_warehouse_lacks(archive, tmp_path: Path) -> None:
    root, written = archive
    wh = tmp_path / "wh"
    _ingest(root, wh)
    w = written[0]
    extra = "step_99_trace.json"
    (root / w.folder / extra).write_text(json.dumps({"action": "WAIT"}))
    with open(root / RUN_FOLDER / RESULTS_CSV, "a") as f:
        f.write(f"{written[-1].task_id},{written[-1].domain},1\n")
    problems = check_warehouse(wh).problems
    assert any(f"{w.folder}/step_*_trace.json: {w.n_steps + 1} step file(s)" in p for p in problems)
    assert any(RESULTS_CSV in p and "data line(s)" in p for p in problems)


def test_a_gap_in_step_numbers_is_a_note_not_a_lost_line(archive, tmp_path: Path) -> None:
    root, written = archive
    w = next(t for t in written if t.n_steps >= 3)
    name = "step_02_trace.json" if w.padded else "step_2_trace.json"
    (root / w.folder / name).unlink()
    _, reads, _ = _read(root)
    read = reads[w.task_id].read
    [note] = read.quarantine
    assert (note["reason"], note["line_no"], note["location"]) == (
        "missing_step_files",
        None,
        w.folder,
    )
    assert read.episode["n_quarantined"] == 0 and read.episode["n_lines"] == w.n_steps - 1
    assert [s["step_num"] for s in read.steps][:2] == [1, 3]
    wh = tmp_path / "wh"
    _ingest(root, wh)
    assert check_warehouse(wh).ok


_CELL = st.sampled_from(["", " ", "1", "0", "0.5", "yes", "n/a", "nan", "t-a", "t-b", "T-A", '"'])


@given(
    header=st.lists(
        st.sampled_from(["task_id", "Score", "domain", "x", "ID", "t-a", "T-B"]), max_size=4
    ),
    rows=st.lists(st.lists(_CELL, max_size=4), max_size=8),
    blank_first=st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_every_csv_data_line_is_a_result_or_a_quarantined_line(
    header: list[str], rows: list[list[str]], blank_first: bool
) -> None:
    import csv
    import io

    from deskscore.collectors.layout import TaskFolder
    from deskscore.collectors.osworld import QuarantineRows
    from deskscore.collectors.step_traces import (
        UNUSED_ROW_REASONS,
        csv_columns,
        csv_records,
        read_results_csv,
    )

    buf = io.StringIO()
    if blank_first:
        buf.write("\n")
    csv.writer(buf, lineterminator="\n").writerows([header, *rows])
    data = buf.getvalue().encode()
    tasks = {t: TaskFolder(f"run/{t}", "d", t, ()) for t in ("t-a", "t-b")}
    q = QuarantineRows("src", "r", "b")
    out = read_results_csv(data, "run/results.csv", tasks, q)
    records = csv_records(data) or []
    while records and not any(c.strip() for c in records[0][1]):
        records.pop(0)
    headed = bool(records) and csv_columns(records[0][1], {"t-a", "t-b"}).header
    data_lines = {no for no, _ in records[1 if headed else 0 :]}
    used = {r.line_no for r in out.values()}
    unused_rows = [r for r in q.rows if r["reason"] in UNUSED_ROW_REASONS]
    unused = {n for r in unused_rows for n in range(r["line_no"], r["line_end"] + 1)}
    assert used | unused >= data_lines and not used & unused
    assert len(used) + sum(r["n_lines"] for r in unused_rows
                           if r["line_no"] in data_lines) == len(data_lines)  # fmt: skip


_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["action", "text", "usage", "input", "x"]), inner, max_size=3
        )
    ),
    max_leaves=12,
)
_KEYS = st.sampled_from(
    ["action", "actions", "code", "response", "thought", "screenshot", "timestamp", "usage",
     "step_num", "step", "model_output", "done", "info", "Error", "phase", "reward"]
)  # fmt: skip


@given(obj=st.dictionaries(_KEYS, _VALUE, max_size=6), step=st.integers(0, 2**31 - 1))
@settings(max_examples=300, deadline=None)
def test_any_step_object_becomes_exactly_one_step_row(obj: dict, step: int) -> None:
    from deskscore.collectors.layout import TaskFolder
    from deskscore.collectors.osworld import QuarantineRows, dumps_json, read_steps

    rec = dumps_json(trace_record(obj, step, {"a.png"})).encode()
    q = QuarantineRows("src", "r", "b")
    task = TaskFolder("run/t", "d", "t", ("a.png",))
    rows, _ = read_steps([rec], path="p", task=task, run_id="r", benchmark="b", task_id="t", q=q)
    assert q.rows == [] and len(rows) == 1 and rows[0]["step_num"] == step

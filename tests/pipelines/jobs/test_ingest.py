from __future__ import annotations

import re
from pathlib import Path

from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.jobs.score import run_score
from deskscore.pipelines.options import IngestOptions, ScoreOptions
from deskscore.sql import connect


def _digest(root: Path) -> dict[str, str]:
    """Every slot of the warehouse and the file holding it (named by its bytes)."""
    return Warehouse(root).snapshot()


def _python_lines(path: Path) -> int:
    """Lines as Python's text mode counts them (universal newlines), like OSWorld-Human."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return sum(1 for _ in f)


def _traj_lines(root: Path) -> int:
    return sum(_python_lines(p) for p in root.rglob("traj.jsonl"))


def test_every_trajectory_line_becomes_a_step_or_a_quarantine_row(small_archive, tmp_path) -> None:
    result = run_ingest(
        IngestOptions(
            str(tmp_path),
            sources=(str(small_archive["results"]), str(small_archive["zip"])),
            engine="direct",
        )
    )
    con = connect(tmp_path)
    ((lines, steps, quarantined),) = con.sql(
        "SELECT sum(n_lines), (SELECT count(*) FROM steps), sum(n_quarantined) FROM episodes"
    ).fetchall()
    assert lines == steps + quarantined
    on_disk = _traj_lines(small_archive["results"]) + _traj_lines(small_archive["zipped_run"])
    assert lines == on_disk
    assert result.traj_lines == on_disk
    assert con.sql("SELECT count(*) FROM runs").fetchall() == [(3,)]


def test_ingesting_the_same_sources_twice_changes_nothing(small_archive, tmp_path) -> None:
    sources = [str(small_archive["results"]), str(small_archive["zip"])]
    run_ingest(IngestOptions(str(tmp_path), sources=tuple(sources), engine="direct"))
    first = _digest(tmp_path)
    run_ingest(
        IngestOptions(str(tmp_path), sources=tuple(list(reversed(sources))), engine="direct")
    )
    assert _digest(tmp_path) == first
    assert len(first) >= 9  # runs, episodes, steps for each of three runs


def test_a_zip_is_read_in_place_and_gives_the_same_episodes_as_its_folder(
    small_archive, tmp_path
) -> None:
    run_ingest(
        IngestOptions(
            str(tmp_path),
            sources=(str(small_archive["zip"]), str(small_archive["zipped_run"])),
            engine="direct",
        )
    )
    episodes = Warehouse(tmp_path).read("episodes").to_pylist()
    by_run: dict[str, list[tuple]] = {}
    for e in episodes:
        by_run.setdefault(e["run_id"], []).append(
            (
                e["domain"],
                e["task_id"],
                e["n_lines"],
                e["n_steps"],
                e["score"],
                e["result_status"],
                e["ended_by"],
            )
        )
    assert len(by_run) == 2
    a, b = (sorted(v) for v in by_run.values())
    assert a == b
    assert not any(p.name == "traj.jsonl" for p in tmp_path.rglob("*"))


def test_real_runs_with_another_layout_are_all_accounted_for(sec_eval_dir, tmp_path) -> None:
    run_ingest(
        IngestOptions(
            str(tmp_path),
            sources=(str(sec_eval_dir),),
            layout="{domain}/{task_id}",
            engine="direct",
        )
    )
    con = connect(tmp_path)
    assert con.sql("SELECT count(*) FROM episodes").fetchall() == [(24,)]
    per_episode = con.sql(
        """
        SELECT e.domain, e.source_task_id, e.n_lines, e.n_quarantined, count(s.step_idx) AS steps
        FROM episodes e LEFT JOIN steps s USING (run_id, domain, task_id)
        GROUP BY ALL
        """
    ).fetchall()
    for domain, folder, n_lines, n_quarantined, steps in per_episode:
        traj = sec_eval_dir / domain / folder / "traj.jsonl"
        expected = _python_lines(traj) if traj.exists() else 0
        assert n_lines == expected == steps + n_quarantined, folder


def test_an_unreadable_source_is_quarantined_and_the_rest_is_ingested(
    small_archive, tmp_path
) -> None:
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 this is not a zip")
    wh = tmp_path / "wh"
    run_ingest(
        IngestOptions(str(wh), sources=(str(broken), str(small_archive["zip"])), engine="direct")
    )
    con = connect(wh)
    assert con.sql("SELECT count(*) FROM runs").fetchall() == [(1,)]
    reasons = con.sql(
        "SELECT reason, message FROM quarantine WHERE source LIKE '%broken.zip'"
    ).fetchall()
    assert reasons and reasons[0][0] == "unreadable_source"
    assert "broken.zip" in reasons[0][1]


def test_an_fsspec_url_is_ingested_like_the_folder_it_mirrors(small_archive, tmp_path) -> None:
    import fsspec

    fs = fsspec.filesystem("memory")
    results = small_archive["results"]
    for path in results.rglob("*"):
        if path.is_file():
            fs.pipe(f"/mirror/{path.relative_to(results).as_posix()}", path.read_bytes())
    run_ingest(
        IngestOptions(str(tmp_path), sources=("memory://mirror", str(results)), engine="direct")
    )
    rows = (
        connect(tmp_path)
        .sql(
            "SELECT source, count(*), sum(n_lines), sum(n_steps), round(sum(score), 9) FROM episodes JOIN runs USING (run_id) GROUP BY source ORDER BY source"
        )
        .fetchall()
    )
    assert len(rows) == 2
    assert rows[0][1:] == rows[1][1:]
    assert rows[1][0].startswith("memory://")


def test_a_source_without_any_task_folder_is_reported_and_the_ingest_finishes(tmp_path) -> None:
    (tmp_path / "empty" / "notes").mkdir(parents=True)
    (tmp_path / "empty" / "notes" / "README.md").write_text("no runs here\n")
    result = run_ingest(
        IngestOptions(str(tmp_path / "wh"), sources=(str(tmp_path / "empty"),), engine="direct")
    )
    assert (result.runs_found, result.episodes, result.quarantined) == (0, 0, 1)
    [(reason,)] = connect(tmp_path / "wh").sql("SELECT reason FROM quarantine").fetchall()
    assert reason == "no_task_folders"


def test_a_domain_or_task_folder_given_as_the_source_is_told_to_point_higher(tmp_path) -> None:
    """Users point at a domain folder (or one task folder) of a run: no task folder is found
    in it, and the message says which folder to give instead, not to try a --layout."""
    task = tmp_path / "run" / "chrome" / "030eeff7-b492-4218-b312-701ec99ee0cc"
    task.mkdir(parents=True)
    (task / "traj.jsonl").write_bytes(b'{"step_num": 1, "action": "DONE"}\n')
    (task / "result.txt").write_text("1\n")
    told = {}
    for name, source in (("domain", task.parent), ("task", task)):
        wh = tmp_path / f"wh-{name}"
        result = run_ingest(IngestOptions(str(wh), sources=(str(source),), engine="direct"))
        assert (result.runs_found, result.episodes) == (0, 0)
        [(reason, message)] = connect(wh).sql("SELECT reason, message FROM quarantine").fetchall()
        assert reason == "no_task_folders" and "--layout" not in message
        told[name] = message
    assert "it is a domain folder; ingest the run folder above it" in told["domain"]
    assert "it is a task folder; ingest the run folder" in told["task"]
    result = run_ingest(
        IngestOptions(str(tmp_path / "wh"), sources=(str(tmp_path / "run"),), engine="direct")
    )
    assert (result.runs_found, result.episodes) == (1, 1)  # where the message points


def test_a_layout_one_level_short_of_a_zips_top_folder_is_told_the_layout_that_reads_it(
    tmp_path,
) -> None:
    """`zip -r run.zip run` puts every file under run/: --layout '{app}/{id}'-style patterns
    are matched from the zip's root, so the message names the pattern with that level added,
    not the one that was just given."""
    import zipfile

    with zipfile.ZipFile(tmp_path / "run.zip", "w") as zf:
        zf.writestr("run/scenario-a/task-1/traj.jsonl", b'{"step_num": 1, "action": "DONE"}\n')
        zf.writestr("run/scenario-a/task-1/result.txt", "1\n")
    told = {}
    for layout in ("{domain}/{task_id}", "x/y/{domain}/{task_id}"):
        wh = tmp_path / f"wh-{len(told)}"
        options = IngestOptions(str(wh), sources=(str(tmp_path / "run.zip"),), layout=layout)
        assert run_ingest(options.replace(engine="direct")).runs_found == 0
        [(reason, told[layout])] = (
            connect(wh).sql("SELECT reason, message FROM quarantine").fetchall()
        )
        assert reason == "no_task_folders"
    assert "pass --layout '*/{domain}/{task_id}'" in told["{domain}/{task_id}"]
    assert "matches no folder from the source's top" in told["x/y/{domain}/{task_id}"]
    options = IngestOptions(
        str(tmp_path / "wh"), sources=(str(tmp_path / "run.zip"),), layout="*/{domain}/{task_id}"
    )
    assert run_ingest(options.replace(engine="direct")).episodes == 1  # where it points


# ---- hostile names, special files, runs of bad lines ---------------------------------------

_UUID = "030eeff7-b492-4218-b312-701ec99ee0cc"


def test_a_source_whose_name_is_not_utf8_is_quarantined_and_the_others_ingested(
    small_archive, tmp_path
) -> None:
    import os
    import shutil

    bad = os.path.join(os.fsencode(tmp_path), b"run\xe9.zip")
    shutil.copyfile(small_archive["zip"], bad)
    wh = tmp_path / "wh"
    result = run_ingest(
        IngestOptions(
            str(wh), sources=(os.fsdecode(bad), str(small_archive["zip"])), engine="direct"
        )
    )
    assert result.runs_written == 1
    con = connect(wh)
    assert con.sql("SELECT source FROM runs").fetchall() == [(str(small_archive["zip"]),)]
    [(source, reason, message)] = con.sql(
        "SELECT source, reason, message FROM quarantine WHERE source LIKE '%run\\xe9.zip'"
    ).fetchall()
    assert source == f"{tmp_path}/run\\xe9.zip" and reason == "unreadable_source"
    assert "not valid UTF-8" in message and "rename it" in message


def test_a_folder_with_odd_names_fifos_and_zips_is_ingested_with_a_row_for_each(
    small_archive, tmp_path
) -> None:
    import os
    import shutil

    src = tmp_path / "src"
    shutil.copytree(small_archive["run0"], src)
    task = next(p.parent for p in sorted(src.rglob("traj.jsonl")))
    os.mkfifo(task / "messages.json")
    with open(os.path.join(os.fsencode(task), b"note\xff.txt"), "wb") as f:
        f.write(b"x")
    shutil.copyfile(small_archive["zip"], src / "inner.zip")
    wh = tmp_path / "wh"
    result = run_ingest(IngestOptions(str(wh), sources=(str(src),), engine="direct"))
    assert result.runs_written == 1
    rows = connect(wh).sql("SELECT location, reason FROM quarantine ORDER BY reason").fetchall()
    rel = task.relative_to(src).as_posix()
    assert rows == [
        ("inner.zip", "nested_archive"),
        (f"{rel}/messages.json", "special_file"),
        (f"{rel}/note\\xff.txt", "undecodable_name"),
    ]


def test_a_run_of_bad_lines_is_one_row_and_ingest_and_check_count_every_line(tmp_path) -> None:
    from deskscore.pipelines.cli.check import check_warehouse
    from deskscore.pipelines.cli.ingest import reconciliation

    task = tmp_path / "src" / "run" / "chrome" / _UUID
    task.mkdir(parents=True)
    step = b'{"step_num": 1, "action": "DONE"}\n'
    (task / "traj.jsonl").write_bytes(b"\n" * 5000 + step + b"oops\n" * 3)
    (task / "result.txt").write_text("1\n")
    wh = tmp_path / "wh"
    result = run_ingest(IngestOptions(str(wh), sources=(str(tmp_path / "src"),), engine="direct"))
    assert (result.traj_lines, result.steps, result.quarantined) == (5004, 1, 5003)
    con = connect(wh)
    rows = con.sql("SELECT reason, line_no, line_end, n_lines FROM quarantine ORDER BY line_no")
    assert rows.fetchall() == [("blank_line", 1, 5000, 5000), ("invalid_json", 5002, 5004, 3)]
    check = check_warehouse(wh)
    assert check.ok, check.problems
    text = reconciliation(str(wh), [str(tmp_path / "src")], result).text
    assert "quarantined: 5003" in text
    assert re.search(r"blank_line\s+5000\n", text) and re.search(r"invalid_json\s+3\n", text)
    run_score(ScoreOptions(str(wh), max_steps_scoring=15, workers=1))
    board = connect(wh).sql("SELECT DISTINCT n_quarantined FROM leaderboard").fetchall()
    assert board == [(5003,)]


def test_an_overlong_trajectory_is_capped_alone_and_the_leaderboard_says_so(
    tmp_path, monkeypatch
) -> None:
    """One task of 40 lines in a run whose budget is 30: before each file had its own cap it
    spent the budget, the other tasks' lines were quarantined and scored as 0 steps, and the
    leaderboard said nothing."""
    from deskscore.pipelines.cli.check import check_warehouse

    step = b'{"step_num": 1, "action": "pyautogui.click(1, 2)"}\n'
    for i, n in enumerate((40, 3, 3)):
        task = tmp_path / "src" / "run" / "chrome" / f"{i}{_UUID[1:]}"
        task.mkdir(parents=True)
        (task / "traj.jsonl").write_bytes(step * n)
        (task / "result.txt").write_text("1\n")
    monkeypatch.setenv("DESKSCORE_MAX_RUN_LINES", "30")
    monkeypatch.setenv("DESKSCORE_MAX_TRAJECTORY_LINES", "10")
    wh = tmp_path / "wh"
    result = run_ingest(IngestOptions(str(wh), sources=(str(tmp_path / "src"),), engine="direct"))
    assert (result.traj_lines, result.steps, result.quarantined) == (46, 16, 30)
    con = connect(wh)
    steps = con.sql("SELECT n_steps FROM episodes ORDER BY task_id").fetchall()
    assert steps == [(10,), (3,), (3,)]
    assert check_warehouse(wh).ok
    run_score(ScoreOptions(str(wh), max_steps_scoring=15, workers=1))
    [(note,)] = connect(wh).sql("SELECT DISTINCT note FROM leaderboard").fetchall()
    assert note.startswith("30 trajectory line(s) of 1 file(s) were past a reading cap")


def test_an_ingest_reads_back_only_the_files_of_the_runs_it_names(small_archive, tmp_path) -> None:
    """The ingest's figures and its reconciliation are read back from the files of its own
    sources' runs, not from every table whole (a cost that grew with the warehouse): another
    run's unreadable files do not touch them."""
    from deskscore.pipelines.cli.ingest import reconciliation

    folder, archive = str(small_archive["results"]), str(small_archive["zip"])
    wh = tmp_path / "wh"
    run_ingest(IngestOptions(str(wh), sources=(folder, archive), engine="direct", compact=False))
    store = Warehouse(wh)
    [other] = [r["run_id"] for r in store.read("runs").to_pylist() if r["source"].endswith(".zip")]
    broken = [p for p in wh.rglob(f"run_id={other}/*.parquet") if p.parts[-4] != "runs"]
    assert {p.parts[-4] for p in broken} >= {"episodes", "steps", "step_actions"}
    for path in broken:
        path.write_bytes(b"not parquet")
    opts = IngestOptions(str(wh), sources=(folder,), engine="direct", force=True, compact=False)
    result = run_ingest(opts)
    report = reconciliation(str(wh), [folder], result)
    lines = _traj_lines(small_archive["results"])
    assert (result.runs_found, result.traj_lines) == (2, lines)
    [row] = report.per_source
    assert (row["runs"], row["traj_lines"], row["reconciled"]) == (2, lines, True)


def test_a_source_of_one_run_is_opened_once_and_one_of_several_spreads_its_runs(
    small_archive, tmp_path, monkeypatch
) -> None:
    """The worker that lists a source of one run reads that run with the source still open
    (a zip's central directory parsed once, not twice); a source of several runs is listed,
    then its runs are handed out, each worker opening it once."""
    import deskscore.collectors.source as source_module

    opened: list[str] = []
    real = source_module.open_source

    def counting(uri: str, *args: object, **kwargs: object) -> object:
        opened.append(Path(uri).name)
        return real(uri, *args, **kwargs)

    monkeypatch.setattr(source_module, "open_source", counting)
    zip_path, results = small_archive["zip"], small_archive["results"]
    result = run_ingest(
        IngestOptions(str(tmp_path), sources=(str(zip_path), str(results)), engine="direct")
    )
    assert result.runs_found == result.runs_written == 3
    assert opened.count(zip_path.name) == 1
    assert opened.count(results.name) == 2  # listed, then opened once by the one worker
    runs = Warehouse(tmp_path).read("runs", columns=["source"]).column(0).to_pylist()
    assert sorted(Path(s).name for s in runs) == sorted([zip_path.name] + [results.name] * 2)


def test_an_ingest_imports_no_compute_module_it_does_not_need(
    small_archive, tmp_path, fresh_python
) -> None:
    """pyarrow.compute and ctypes.util cost a one-run ingest 30 ms, a seventh of its imports:
    its sums and its reads back of what it wrote need neither."""
    code = (
        "import sys\n"
        "from deskscore.pipelines.cli.main import main\n"
        f"code = main(['ingest', {str(small_archive['results'])!r}, '--warehouse', "
        f"{str(tmp_path / 'wh')!r}])\n"
        "print(code, 'pyarrow.compute' in sys.modules, 'ctypes.util' in sys.modules)\n"
    )
    assert fresh_python(code).splitlines()[-1] == "0 False False"


def test_a_run_holding_a_value_its_tables_cannot_store_is_quarantined_and_the_rest_ingested(
    small_archive, tmp_path
) -> None:
    """A reader (here a plugin format) hands over a value no check of its foresaw, a word
    where a coordinate goes: that run gets one quarantine row naming it and the error, and
    the ingest goes on with the other sources."""
    import importlib.util
    import json
    import sys
    from dataclasses import replace

    from deskscore.collectors import formats

    name = "steps_json_format"
    plugin = Path(__file__).parents[2] / "collectors" / "plugin" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, plugin)
    assert spec is not None and spec.loader is not None
    module = sys.modules.setdefault(name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)

    def read_episode(*args, **kwargs):
        got = module.read_episode(*args, **kwargs)
        got.read.steps[0]["x"] = "left"
        return got

    fmt = formats.register(replace(module.FORMAT, name="odd_steps", read_episode=read_episode))
    try:
        task = tmp_path / "odd" / "run" / "chrome" / "t1"
        task.mkdir(parents=True)
        (task / "steps.json").write_text(json.dumps(["pyautogui.click(1, 2)", "DONE"]))
        (task / "score.txt").write_text("1\n")
        wh = tmp_path / "wh"
        sources = (str(tmp_path / "odd"), str(small_archive["zip"]))
        run_ingest(IngestOptions(str(wh), sources=sources, engine="direct", workers=1))
    finally:
        formats.unregister(fmt.name)
    con = connect(wh)
    assert con.sql("SELECT count(*) FROM runs").fetchall() == [(1,)]
    [(location, message)] = con.sql(
        "SELECT location, message FROM quarantine WHERE reason = 'unstorable_run'"
    ).fetchall()
    assert location == "run"
    assert f"{tmp_path / 'odd'}!run: the run holds a value its tables cannot store" in message
    assert "left" in message and "the rest ingested" in message


def test_a_bad_layout_or_an_empty_name_is_an_option_error_before_anything_is_read(
    small_archive, tmp_path
) -> None:
    import pytest

    from deskscore.pipelines.jobs.ingest import IngestOptionError

    zipped = (str(small_archive["zip"]),)
    for bad in ({"layout": "{nope}"}, {"agent": " "}, {"run_name": ""}):
        with pytest.raises(IngestOptionError):
            run_ingest(IngestOptions(str(tmp_path / "wh"), sources=zipped, **bad))
    assert not (tmp_path / "wh" / "runs").exists()


def _lfs_pointer(content: bytes) -> bytes:
    """What a clone made without `git lfs` holds in place of `content`."""
    import hashlib

    oid = hashlib.sha256(content).hexdigest()
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {len(content)}\n".encode()


def test_git_lfs_pointers_in_place_of_run_files_are_quarantined_saying_to_fetch_them(
    tmp_path,
) -> None:
    """A repository of runs cloned without its LFS content holds three-line pointers where the
    files were: each is one row saying so and what to do, not three lines of invalid JSON or
    an unparseable result, and every line is still counted."""
    from deskscore.pipelines.cli.check import check_warehouse

    run = tmp_path / "src" / "run"
    task = run / "chrome" / _UUID
    task.mkdir(parents=True)
    traj = b'{"step_num": 1, "action": "DONE"}\n'
    (task / "traj.jsonl").write_bytes(_lfs_pointer(traj))
    (task / "result.txt").write_bytes(_lfs_pointer(b"1.0\n"))
    (run / "args.json").write_bytes(_lfs_pointer(b'{"model": "m"}'))
    wh = tmp_path / "wh"
    result = run_ingest(IngestOptions(str(wh), sources=(str(tmp_path / "src"),), engine="direct"))
    assert (result.traj_lines, result.steps, result.quarantined) == (3, 0, 3 + 2)  # lines, files
    rows = (
        connect(wh)
        .sql("SELECT location, reason, line_no, n_lines, message FROM quarantine ORDER BY location")
        .fetchall()
    )
    assert [r[:4] for r in rows] == [
        ("run/args.json", "lfs_pointer", None, None),
        (f"run/chrome/{_UUID}/result.txt", "lfs_pointer", None, None),
        (f"run/chrome/{_UUID}/traj.jsonl", "lfs_pointer", 1, 3),
    ]
    for location, *_, message in rows:
        assert f"{location} is a Git LFS pointer to a" in message
        assert "git lfs pull" in message
    assert f"pointer to a {len(traj)}-byte file" in rows[2][-1]
    check = check_warehouse(wh)
    assert check.ok, check.problems

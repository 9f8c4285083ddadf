"""`deskscore check`: passes on an honest warehouse, and names every kind of loss or orphan."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.check import check_warehouse
from deskscore.pipelines.cli.main import main


@pytest.fixture(scope="module")
def scored(small_archive: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("checked") / "wh"
    sources = [str(small_archive["results"]), str(small_archive["zip"])]
    assert main(["ingest", *sources, "--warehouse", str(root), "--engine", "direct"]) == 0
    assert main(["score", "--warehouse", str(root), "--no-costs", "--engine", "direct"]) == 0
    return root


@pytest.fixture
def copy(scored: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(scored, tmp_path / "wh"))


def _one_file(root: Path, table: str) -> Path:
    return Warehouse(root).files(table)[0]


def test_an_ingested_and_scored_warehouse_passes(
    scored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--warehouse", str(scored)]) == 0
    out = capsys.readouterr().out
    assert "check passed" in out and "3 run(s); 3 re-counted from their source" in out


def test_a_lost_step_row_is_reported_with_its_task_folder(copy: Path) -> None:
    path = _one_file(copy, "steps")
    data = pq.read_table(path)
    lost = data.slice(0, 1).to_pylist()[0]
    pq.write_table(data.slice(1), path)
    problems = check_warehouse(copy, sources=False).problems
    assert any(lost["task_id"] in p and "step row(s)" in p for p in problems), problems


def test_orphan_rows_and_a_missing_run_are_named(copy: Path) -> None:
    steps = _one_file(copy, "steps")
    data = pq.read_table(steps)
    ghost = data.slice(0, 1).set_column(
        data.schema.get_field_index("task_id"),
        data.schema.field("task_id"),
        pa.array(["no-such-task"]),
    )
    wh = Warehouse(copy)
    [run] = [r for r in wh.read("runs").to_pylist() if r["run_id"] in str(steps)]
    wh.write(
        "steps",
        pa.concat_tables([data, ghost]),
        {"benchmark": run["benchmark"], "run_id": run["run_id"]},
    )
    gone = run["run_id"]
    wh.remove("runs", {"benchmark": run["benchmark"], "run_id": gone})
    problems = check_warehouse(copy, sources=False).problems
    assert any("steps: 1 row(s)" in p and "no-such-task" in p for p in problems), problems
    assert any(gone in p and "no runs row" in p for p in problems), problems


def test_a_listed_file_missing_on_disk_is_named_with_what_to_do(copy: Path) -> None:
    steps = _one_file(copy, "steps")
    steps.unlink()
    problems = check_warehouse(copy, sources=False).problems
    assert len(problems) == 1 and str(steps) in problems[0] and "re-run" in problems[0]


def test_a_file_of_another_schema_version_fails_the_check(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _one_file(copy, "episodes")
    data = pq.read_table(path)
    meta = dict(data.schema.metadata or {})
    meta[b"deskscore.schema_version"] = b"0"
    pq.write_table(data.replace_schema_metadata(meta), path)
    assert main(["check", "--warehouse", str(copy), "--no-sources"]) == 1
    out = capsys.readouterr().out
    assert "check FAILED" in out and f"{path}: schema version 0" in out


@pytest.fixture
def ingested_copy(small_archive: dict[str, Path], tmp_path: Path) -> tuple[Path, Path]:
    """(a copy of the small archive's results folder, the warehouse it was ingested into)."""
    results = Path(shutil.copytree(small_archive["results"], tmp_path / "results"))
    root = tmp_path / "wh"
    assert main(["ingest", str(results), "--warehouse", str(root), "--engine", "direct"]) == 0
    return results, root


def test_a_source_that_grew_lines_after_ingest_is_reported(ingested_copy) -> None:
    results, root = ingested_copy
    assert check_warehouse(root).ok
    traj = sorted(results.rglob("traj.jsonl"))[0]
    traj.write_bytes(traj.read_bytes() + b'{"step_num": 99}\n')
    problems = check_warehouse(root).problems
    assert any(traj.name in p and "in the source" in p for p in problems), problems


def test_a_trajectory_file_deleted_from_the_source_after_ingest_is_reported(
    ingested_copy,
) -> None:
    results, root = ingested_copy
    traj = sorted(results.rglob("traj.jsonl"))[0]
    n = len(traj.read_bytes().splitlines())
    traj.unlink()  # its task folder stays (result.txt): the task count alone does not change
    problems = check_warehouse(root).problems
    rel = traj.relative_to(results).as_posix()
    assert [p for p in problems if rel in p] == [
        f"{results}!{rel}: {n} line(s) in the warehouse, but the file is no longer "
        "in the source; re-ingest the run"
    ], problems


def test_a_trajectory_member_that_cannot_be_read_is_not_reported_as_gone(tmp_path: Path) -> None:
    """Its quarantine row accounts for it; it is still in the source (a bad CRC here)."""
    import zipfile

    task = "pyautogui/screenshot/m/chrome/030eeff7-b492-4218-b312-701ec99ee0cc"
    archive = tmp_path / "run.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{task}/traj.jsonl", b'{"step_num": 1, "action": "pyautogui.click(1, 2)"}\n')
        z.writestr(f"{task}/result.txt", b"1\n")
    archive.write_bytes(archive.read_bytes().replace(b'"step_num": 1', b'"step_num": 7', 1))
    root = tmp_path / "wh"
    assert main(["ingest", str(archive), "--warehouse", str(root), "--engine", "direct"]) == 0
    assert check_warehouse(root).problems == []


# ---------------------------------------------------------------- the states a job can leave


def _a_run(root: Path) -> dict:
    return sorted(Warehouse(root).read("runs").to_pylist(), key=lambda r: r["run_id"])[0]


def _repaired(root: Path, problems: list[str], command: list[str]) -> None:
    """Run the repair the check suggested; the check then passes."""
    assert main([*command, "--warehouse", str(root), "--engine", "direct"]) == 0
    after = check_warehouse(root, sources=False)
    assert after.ok, (problems, after.problems)


def test_a_run_recorded_as_scored_without_its_figures_is_named(copy: Path) -> None:
    run = _a_run(copy)
    part = {"benchmark": run["benchmark"], "run_id": run["run_id"]}
    [scored] = Warehouse(copy).read("score_inputs").to_pylist()[:1]
    from deskscore.scorers.config import ScoreConfig

    config = ScoreConfig(scored["human_version"], scored["max_steps_scoring"], scored["compat"])
    Warehouse(copy).remove("run_scores", part, file=config.file)
    problems = check_warehouse(copy, sources=False).problems
    [named] = [p for p in problems if p.startswith("score_inputs:")]
    assert run["run_id"] in named and "run_scores" in named and "--force" in named
    _repaired(copy, problems, ["score", "--no-costs", "--force", "--run", run["run_id"]])


def test_a_run_held_twice_is_named(copy: Path) -> None:
    run = _a_run(copy)
    part = {"benchmark": run["benchmark"], "run_id": run["run_id"]}
    wh = Warehouse(copy)
    rows = wh.read("runs", part).to_pylist()
    wh.write("runs", rows + rows, part)
    problems = check_warehouse(copy, sources=False).problems
    assert any(run["run_id"] in p and "2 rows" in p for p in problems), problems
    _repaired(copy, problems, ["ingest", run["source"], "--force"])


def test_a_run_without_episodes_is_named(copy: Path) -> None:
    run = _a_run(copy)
    part = {"benchmark": run["benchmark"], "run_id": run["run_id"]}
    wh = Warehouse(copy)
    for name in ("episodes", "steps", "step_actions"):
        wh.remove(name, part)
    problems = check_warehouse(copy, sources=False).problems
    assert any(run["run_id"] in p and "has no episode" in p for p in problems), problems
    _repaired(copy, problems, ["ingest", run["source"], "--force"])


def test_hashed_references_without_screenshot_rows_are_named(tmp_path: Path) -> None:
    from deskscore.collectors.synthetic import load_profiles, task_slice, write_run

    results = tmp_path / "results"
    for i in range(2):
        write_run(results, load_profiles()[i], task_slice(per_domain=1), seed=i, screenshots="tiny")
    root = tmp_path / "wh"
    assert main(["ingest", str(results), "--warehouse", str(root), "--engine", "direct"]) == 0
    assert main(["hash", "--warehouse", str(root), "--engine", "direct"]) == 0
    assert check_warehouse(root, sources=False).ok
    run = _a_run(root)
    Warehouse(root).remove("screenshots", {"benchmark": run["benchmark"], "run_id": run["run_id"]})
    problems = check_warehouse(root, sources=False).problems
    assert any(
        p.startswith("screenshot_refs:") and run["run_id"] in p and "hash --run" in p
        for p in problems
    ), problems
    _repaired(root, problems, ["hash", "--run", run["run_id"]])


def test_loops_on_a_scored_warehouse_without_loop_files_lists_none(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wh = Warehouse(copy)
    for run in wh.read("runs").to_pylist():  # as if no run had a loop (no file kept)
        wh.remove("loop_spans", {"benchmark": run["benchmark"], "run_id": run["run_id"]})
    assert not wh.files("loop_spans")
    assert main(["loops", "--warehouse", str(copy)]) == 0
    assert "deskscore score" not in capsys.readouterr().out


def test_a_damaged_manifest_is_reported_by_check_and_other_commands_name_it(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from deskscore.schemas.manifest import CURRENT, manifest_dir

    pointer = manifest_dir(copy) / CURRENT
    pointer.write_text("")
    assert main(["check", "--warehouse", str(copy), "--no-sources"]) == 1
    out = capsys.readouterr().out
    assert "check FAILED: 1 problem(s)" in out and str(pointer) in out
    assert main(["sql", "SELECT count(*) FROM runs", "--warehouse", str(copy)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(pointer) in err and "Traceback" not in err


def test_a_pack_cut_short_is_named_once(copy: Path) -> None:
    Warehouse(copy).compact(["runs"], min_files=2)
    [pack] = Warehouse(copy).files("runs")
    pack.write_bytes(pack.read_bytes()[:100])
    problems = check_warehouse(copy, sources=False).problems
    assert len(problems) == 1 and f"{pack} is listed but not a readable" in problems[0]


def test_a_data_file_cut_short_is_named_by_check_and_other_commands_in_one_line(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = _one_file(copy, "steps")
    steps.write_bytes(steps.read_bytes()[:100])
    assert main(["check", "--warehouse", str(copy), "--no-sources"]) == 1
    out = capsys.readouterr().out
    assert "check FAILED: 1 problem(s)" in out
    assert f"{steps} is listed but not a readable Parquet file" in out and "--force" in out
    for command in (["sql", "SELECT count(*) FROM steps"], ["loops"]):  # Arrow, DuckDB
        assert main([*command, "--warehouse", str(copy)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(steps) in err and "Traceback" not in err

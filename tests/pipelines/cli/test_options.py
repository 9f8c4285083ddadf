"""Options: a mistyped one is an error naming it (and the one meant), Beam's own reach Beam
from the commands that run a Beam job only, and an ingest that finds nothing to ingest fails
with a hint instead of leaving an empty warehouse behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deskscore.pipelines.cli.main import main


@pytest.fixture(scope="module")
def warehouse(small_archive: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("options") / "wh"
    assert main(["ingest", str(small_archive["zip"]), "--warehouse", str(root)]) == 0
    assert main(["score", "--warehouse", str(root), "--no-costs"]) == 0
    return root


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The error line of a command line argparse refuses (status 2, nothing run)."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["score", "--max-step-scoring=50"], "--max-steps-scoring"),
        (["leaderboard", "--warehose=elsewhere"], "--warehouse"),
        (["leaderboard", "--human-verison", "verified"], "--human-version"),
        (["ingest", "src", "--no-compat"], "--no-compact"),
        (["score", "--runer=DirectRunner"], "--runner"),
    ],
)
def test_a_mistyped_option_is_an_error_naming_it_and_the_option_meant(
    warehouse: Path, capsys: pytest.CaptureFixture[str], argv: list[str], meant: str
) -> None:
    command, *rest = argv
    error = _refused([command, "--warehouse", str(warehouse), *rest], capsys)
    typed = rest[0].split("=")[0] if rest[0].startswith("-") else rest[1]
    assert typed in error and f"did you mean {meant}?" in error


@pytest.fixture
def handed_to_beam(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The Beam arguments `deskscore score` would run with (its handler replaced)."""
    from deskscore.pipelines.cli import score

    seen: list[list[str]] = []

    def record(args: Any, beam_args: list[str]) -> int:
        seen.append(list(beam_args))
        return 0

    monkeypatch.setattr(score, "run", record)
    return seen


def test_beam_options_reach_beam_from_a_command_that_runs_beam(
    warehouse: Path, handed_to_beam: list[list[str]]
) -> None:
    argv = ["score", "--warehouse", str(warehouse), "--runner=DirectRunner"]
    argv += ["--direct_num_workers", "2", "--save_main_session"]
    after = ["--a_flag_beam_checks_itself=1", "x"]
    assert main([*argv, "--", *after]) == 0
    assert handed_to_beam == [[*argv[3:], *after]]


@pytest.mark.parametrize(
    "argv",
    [
        ["leaderboard", "--runner=DirectRunner"],
        ["sql", "SELECT 1", "--direct_num_workers=2"],
        ["check", "--", "--runner=DirectRunner"],
    ],
)
def test_a_command_that_runs_no_beam_job_refuses_beam_options(
    warehouse: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    error = _refused([*argv, "--warehouse", str(warehouse)], capsys)
    assert "runs no Beam job" in error


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--a_flag_beam_lacks=1"], "--a_flag_beam_lacks=1"),
        (["--runner"], "--runner=VALUE"),
        (["--layout", "{domain}/{task_id}"], "--layout"),
    ],
)
def test_an_option_neither_the_command_nor_beam_knows_is_refused(
    warehouse: Path,
    handed_to_beam: list[list[str]],
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    named: str,
) -> None:
    error = _refused(["score", "--warehouse", str(warehouse), *extra], capsys)
    assert named in error
    assert handed_to_beam == []


def test_a_bad_layout_is_one_line_and_creates_no_warehouse(
    small_archive: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wh = tmp_path / "wh"
    argv = ["ingest", str(small_archive["results"]), "--warehouse", str(wh)]
    assert main([*argv, "--layout", "{domain}/{nope}", "--engine", "beam"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad layout" in err
    assert not wh.exists()


@pytest.mark.parametrize("source", ["empty", "missing", "empty-and-missing"])
def test_an_ingest_that_finds_no_task_folder_fails_and_leaves_no_warehouse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str
) -> None:
    (tmp_path / "empty" / "notes").mkdir(parents=True)
    (tmp_path / "empty" / "notes" / "readme.txt").write_text("no runs here")
    sources = [str(tmp_path / s) for s in source.split("-and-")]
    wh = tmp_path / "wh"
    assert main(["ingest", *sources, "--warehouse", str(wh)]) == 2
    captured = capsys.readouterr()
    assert "ingested" not in captured.out
    assert "no task folder found in any source" in captured.err
    assert "--layout" in captured.err and "not created" in captured.err
    assert not wh.exists()


def test_an_ingest_that_finds_nothing_keeps_the_warehouse_it_was_given(
    warehouse: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from deskscore.sql import connect

    runs = connect(warehouse).sql("SELECT run_id FROM runs").fetchall()
    assert main(["ingest", str(tmp_path / "missing"), "--warehouse", str(warehouse)]) == 2
    assert "no task folder found in any source" in capsys.readouterr().err
    assert connect(warehouse).sql("SELECT run_id FROM runs").fetchall() == runs != []

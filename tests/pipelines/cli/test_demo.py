"""`deskscore demo`: where it writes is checked before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskscore.pipelines.cli.main import main


def test_demo_out_onto_an_existing_file_says_so_and_leaves_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out in (afile, afile / "demo"):
        assert main(["demo", "--out", str(out), "--per-domain", "1"]) == 2
        err = capsys.readouterr().err
        assert f"--out {out}: " in err and "Traceback" not in err
    assert afile.read_text() == "x"


def test_demo_into_a_runs_folder_no_demo_wrote_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "archive" / "runs" / "mine.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("keep")
    assert main(["demo", "--out", str(tmp_path), "--per-domain", "1"]) == 2
    err = capsys.readouterr().err
    assert "is not a previous demo; choose another folder" in err and "Traceback" not in err
    assert mine.read_text() == "keep"

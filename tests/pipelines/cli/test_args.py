"""The arguments read-only commands share are declared as the jobs declare them."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from deskscore.pipelines.cli.args import warehouse_arg
from deskscore.pipelines.cli.main import main
from deskscore.pipelines.cli.settings import SettingsError, file_settings
from deskscore.pipelines.options import JobOptions, add_options


def _declared(parser: argparse.ArgumentParser) -> list[dict[str, object]]:
    return [{k: v for k, v in vars(a).items() if k != "container"} for a in parser._actions]


def test_warehouse_is_declared_as_the_jobs_declare_it() -> None:
    ours, jobs = argparse.ArgumentParser(), argparse.ArgumentParser()
    warehouse_arg(ours)
    add_options(jobs, JobOptions, skip=("wait",))
    assert _declared(ours) == _declared(jobs)
    assert "--warehouse" in ours.format_help()


def test_the_settings_defaults_are_the_jobs_defaults() -> None:
    from deskscore.pipelines import options
    from deskscore.pipelines.cli import settings

    assert settings.DEFAULT_WAREHOUSE == options.DEFAULT_WAREHOUSE
    assert settings.DEFAULT_WAIT == options.DEFAULT_WAIT


@pytest.mark.parametrize("command", ["sql", "leaderboard", "loops", "cost", "compare", "demo"])
@pytest.mark.parametrize("digits", ["-1", "1000"])
def test_digits_out_of_range_is_refused_by_argparse_in_one_line(
    command: str, digits: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([command, "--digits", digits])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    assert f"argument --digits: must be from 0 to 15, not {digits}" in err


def test_digits_out_of_range_in_deskscore_toml_says_what_to_fix(tmp_path: Path) -> None:
    (tmp_path / "deskscore.toml").write_text("digits = -1\n")
    with pytest.raises(SettingsError, match="digits must be from 0 to 15, not -1"):
        file_settings(tmp_path)

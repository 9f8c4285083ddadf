"""The arguments read-only commands share are declared as the jobs declare them."""

from __future__ import annotations

import argparse

from deskscore.pipelines.cli.args import warehouse_arg
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

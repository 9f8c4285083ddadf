"""The `deskscore` command: one module per subcommand, each with `add_parser` and `run`.

A command module declares its arguments in `add_parser(sub)` (the options of a job come from
its options class, pipelines/options.py) and sets `handler=run`; `beam=True` marks the
commands that run a Beam job, which pass Beam's own options on (see cli.beam_options); any
other option a command does not know is an error. `run(args, beam_args)` returns the exit
code; a UserError (or a damaged warehouse) is printed as one line, without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

COMMANDS = (
    "ingest", "score", "cost", "hash", "loops", "sql", "export", "check", "leaderboard",
    "report", "judge", "collect", "sandbox", "demo", "compare", "view",
)  # fmt: skip
"""The subcommands, in the order `--help` lists them: modules of deskscore.pipelines.cli."""

NEEDS = {
    "report": ("matplotlib", "deskscore report (its charts)"),
    "sandbox": ("docker", "deskscore sandbox (the Docker engine's client)"),
    "view": ("starlette", "deskscore view (its web app)"),
}
"""Commands that need an extra whatever their options (pipelines.infra.extras); `collect`
checks its own (the Docker client for --provider docker only)."""


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `deskscore` parser, every command declared; or, for a command line `argv` that
    starts with a command, that command alone, so that only its module is imported (the
    others' imports would be most of a quick command's time). `--help`, no command or an
    unknown one still declare them all: the help and the suggestions are those of the full
    parser, and a command's own parser is the same either way."""
    names = COMMANDS
    if argv and argv[0] in COMMANDS:
        names = (argv[0],)
    parser = argparse.ArgumentParser(
        prog="deskscore",
        description="Re-score computer-use-agent trajectory archives offline and query them with SQL.",
        epilog="The commands that run Beam pipelines (ingest, score, hash, cost, demo) pass "
        "Apache Beam's own options on (e.g. --runner=FlinkRunner; whatever follows -- goes to "
        "Beam as given); any other option a command does not know is an error.",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in names:
        importlib.import_module(f"deskscore.pipelines.cli.{name}").add_parser(sub)
    from deskscore.pipelines.cli.args import digits_arg

    for command in sub.choices.values():  # every command's tables
        digits_arg(command)
    return parser


class _Version(argparse.Action):
    """--version, looked up only when asked (reading the metadata costs every start)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **_: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"deskscore {version()}")
        parser.exit()


def version() -> str:
    """The installed distribution's version."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("deskscore")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown (not installed)"


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def main(argv: Sequence[str] | None = None) -> int:
    from deskscore.pipelines.infra.memory import lean_allocators

    lean_allocators()  # before anything imports pyarrow
    from deskscore.pipelines.cli import common, output, settings
    from deskscore.pipelines.cli.beam_options import beam_args as split_beam_args
    from deskscore.pipelines.cli.common import UserError
    from deskscore.pipelines.cli.output import say
    from deskscore.pipelines.infra.extras import MissingExtra, require
    from deskscore.pipelines.infra.runner import RunnerUnavailable, check_runner, runner_args
    from deskscore.schemas.manifest import WarehouseDamaged

    argv = list(sys.argv[1:] if argv is None else argv)
    after: list[str] = []
    if "--" in argv:  # what follows goes to Beam as given
        cut = argv.index("--")
        argv, after = argv[:cut], argv[cut + 1 :]
    parser = build_parser(argv)
    args, unknown = parser.parse_known_args(argv)
    # Beam's import warns about optional cloud clients on the root logger; keep stderr for
    # what the user can act on.
    logging.getLogger().setLevel(logging.ERROR)
    command = _subparsers(parser).choices[args.command]
    beam_args = split_beam_args(command, args.command, getattr(args, "beam", False), unknown, after)
    try:
        settings.apply(args)
        common.WAREHOUSE_FROM[:] = [getattr(args, "warehouse_from", "--warehouse")]
        output.DIGITS[:] = [args.digits]
        if args.command in NEEDS:
            require(*NEEDS[args.command])
        if getattr(args, "beam", False):
            check_runner(runner_args(beam_args, None))  # before the warehouse is touched
        return args.handler(args, beam_args)
    except (
        UserError,
        RunnerUnavailable,
        MissingExtra,
        settings.SettingsError,
        WarehouseDamaged,
    ) as exc:
        say(f"deskscore {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["COMMANDS", "build_parser", "main", "version"]

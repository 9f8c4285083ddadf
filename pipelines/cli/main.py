"""The `deskscore` command: one module per subcommand, each with `add_parser` and `run`.

A command module declares its arguments in `add_parser(sub)` (the options of a job come from
its options class, pipelines/options.py) and sets `handler=run`; `beam=True` marks the
commands whose unknown options go to Apache Beam. `run(args, beam_args)` returns the exit
code; a UserError is printed as one line, without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

COMMANDS = (
    "ingest", "score", "cost", "hash", "loops", "sql", "check", "leaderboard", "report",
    "judge", "collect", "sandbox", "demo",
)  # fmt: skip
"""The subcommands, in the order `--help` lists them: modules of deskscore.pipelines.cli."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deskscore",
        description="Re-score computer-use-agent trajectory archives offline and query them with SQL.",
        epilog="Options a job does not know (e.g. --runner=FlinkRunner) are passed to Apache Beam "
        "by the commands that run Beam pipelines (ingest, score, hash, cost, demo).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"deskscore.pipelines.cli.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from deskscore.pipelines.cli.common import UserError
    from deskscore.pipelines.infra.runner import RunnerUnavailable, check_runner, runner_args

    parser = build_parser()
    args, beam_args = parser.parse_known_args(argv)
    unknown = [a for a in beam_args if not a.startswith("--")]
    if unknown:
        parser.error(f"unexpected arguments: {' '.join(unknown)}")
    # Beam's import warns about optional cloud clients on the root logger; keep stderr for
    # what the user can act on.
    logging.getLogger().setLevel(logging.ERROR)
    try:
        if getattr(args, "beam", False):
            check_runner(runner_args(beam_args, None))  # before the warehouse is touched
        return args.handler(args, beam_args)
    except (UserError, RunnerUnavailable) as exc:
        print(f"deskscore {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["COMMANDS", "build_parser", "main"]

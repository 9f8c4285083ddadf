"""The `deskscore` command: thin argument parsing over the pipelines and the SQL views."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from deskscore.pipelines.cli.args import DEFAULT_WAREHOUSE, wait_arg, warehouse_arg, workers_arg
from deskscore.pipelines.cli.output import FORMATS

COMPAT_HELP = (
    "scoring rules: 'deskscore' (default) counts executed actions as t_agent (runner error "
    "lines and blank or garbled lines are not steps), scores an episode with no action 0 instead "
    "of dividing by zero, treats an empty, unparseable or non-finite result.txt as not run, "
    "clamps r into [0, 1] and caps a task's WES+ at r; 'osworld-human' reproduces OSWorld-Human's "
    "score.py exactly, quirks included (t_agent = lines of traj.jsonl). See the README."
)


def _score_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-steps-scoring",
        type=int,
        default=15,
        help="S floor for WES- and WES (default 15, as OSWorld-Human)",
    )
    p.add_argument(
        "--human-version",
        default="verified",
        choices=("2025-06", "verified"),
        help="OSWorld-Human data version (default verified)",
    )
    p.add_argument(
        "--human-path", help="an OSWorld-Human data folder to read instead of the bundled figures"
    )
    p.add_argument(
        "--compat", default="deskscore", choices=("deskscore", "osworld-human"), help=COMPAT_HELP
    )


PRICES_HELP = (
    "a price CSV (columns model,input_per_mtok,cached_input_per_mtok,cache_write_per_mtok,"
    "output_per_mtok,read_on,source; USD per million tokens) whose rows replace or add to the "
    "bundled price table"
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deskscore",
        description="Re-score computer-use-agent trajectory archives offline and query them with SQL.",
        epilog="Any option a subcommand does not know (e.g. --runner=FlinkRunner) is passed to Apache Beam.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "ingest", help="read archives (folders, .zip, fsspec URLs) into the warehouse"
    )
    p.add_argument(
        "sources",
        nargs="+",
        help="result folders, .zip archives, fsspec URLs, globs ('runs/*.zip', "
        "'s3://bucket/*.zip') or @FILE (a list file, one source per line)",
    )
    warehouse_arg(p)
    p.add_argument(
        "--force",
        action="store_true",
        help="read and rewrite every source, even those already ingested unchanged",
    )
    workers_arg(p)
    p.add_argument(
        "--no-compact",
        action="store_true",
        help="leave small run files as they are (default: fold them into packs afterwards)",
    )
    p.add_argument(
        "--layout",
        help="where task folders sit, e.g. '{domain}/{task_id}' (default: find <domain>/<uuid>/ folders)",
    )
    p.add_argument(
        "--benchmark",
        default="osworld",
        help="benchmark name stored with the runs (default osworld)",
    )
    wait_arg(p)

    p = sub.add_parser(
        "score", help="compute episode and run scores (success, WES+, WES-, WES, step ratios)"
    )
    warehouse_arg(p)
    _score_args(p)
    p.add_argument(
        "--run", action="append", dest="runs", help="score only this run id (repeatable)"
    )
    p.add_argument("--no-loops", action="store_true", help="skip loop detection (loop_spans)")
    p.add_argument("--prices", help=PRICES_HELP)
    p.add_argument(
        "--no-costs", action="store_true", help="skip pricing the model calls (run_costs, ...)"
    )
    p.add_argument(
        "--deskcraft-tasks",
        metavar="DIR",
        help="DeskCraft's evaluation_examples folder, read into the tasks table (default: the "
        "bundled DeskCraft task figures, written when DeskCraft runs are scored)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="score every run again, even those whose inputs are unchanged since last time",
    )
    workers_arg(p)
    p.add_argument("--no-compact", action="store_true", help="leave small run files as they are")
    wait_arg(p)

    p = sub.add_parser(
        "cost",
        help="print each run's tokens, cost and time beside its success, and where the time goes",
    )
    warehouse_arg(p)
    p.add_argument(
        "--prices", help=PRICES_HELP + "; the runs are priced again with it before printing"
    )
    p.add_argument("--run", action="append", dest="runs", help="only this run id (repeatable)")
    p.add_argument("--format", default="table", choices=FORMATS)

    p = sub.add_parser(
        "hash", help="hash every screenshot the steps refer to (content hash, phash, size)"
    )
    warehouse_arg(p)
    p.add_argument("--run", action="append", dest="runs", help="hash only this run id (repeatable)")
    wait_arg(p)

    p = sub.add_parser("loops", help="list the episodes that loop most, with their loop spans")
    warehouse_arg(p)
    p.add_argument("--run", help="only this run id")
    p.add_argument("--top", type=int, default=10, help="how many episodes (default 10)")
    p.add_argument("--format", default="table", choices=FORMATS)

    p = sub.add_parser("sql", help="run a SQL query against the warehouse views")
    p.add_argument("query", help='SQL, e.g. "SELECT * FROM leaderboard"')
    warehouse_arg(p)
    p.add_argument(
        "--write",
        action="store_true",
        help="allow statements that write (COPY, ATTACH, CREATE ...); default: read-only queries",
    )
    p.add_argument("--format", default="table", choices=FORMATS)

    p = sub.add_parser(
        "check",
        help="prove nothing was lost: every source line in a table or quarantine, no orphan rows",
    )
    warehouse_arg(p)
    p.add_argument(
        "--no-sources", action="store_true", help="do not re-read the archives to re-count lines"
    )

    p = sub.add_parser("leaderboard", help="print the leaderboard")
    warehouse_arg(p)
    p.add_argument("--human-version", choices=("2025-06", "verified"))
    p.add_argument("--max-steps-scoring", type=int)
    p.add_argument("--compat", choices=("deskscore", "osworld-human"))
    p.add_argument("--format", default="table", choices=FORMATS)
    p.add_argument(
        "--by",
        choices=("level", "app", "domain", "mode"),
        help="DeskCraft runs sliced by difficulty level, app, DeskCraft domain or collaboration "
        "mode (marts per_level, per_app, deskcraft_per_domain, per_mode)",
    )
    p.add_argument(
        "--level-source",
        default="stem",
        choices=("stem", "difficulty"),
        help="with --by level: levels from the task stem prefix (default) or the difficulty field",
    )
    p.add_argument(
        "--split",
        default="all",
        choices=("all", "standard", "interactive"),
        help="with --by level|app|domain: one DeskCraft split (default all)",
    )

    p = sub.add_parser(
        "report", help="write one self-contained HTML page of charts and episode drill-downs"
    )
    warehouse_arg(p)
    p.add_argument("--out", default="report.html", help="the HTML file (default report.html)")
    p.add_argument("--run", action="append", dest="runs", help="only this run id (repeatable)")
    p.add_argument("--png", help="also write each figure as a PNG into this folder")

    from deskscore.pipelines.jobs.judge import add_parser as add_judge_parser

    add_judge_parser(sub)  # `judge`: its arguments and handler live in pipelines/judge.py

    from deskscore.pipelines.cli.collect import add_parser as add_collect_parser

    add_collect_parser(sub)  # `collect`: its arguments and handler live in pipelines/collect.py

    from deskscore.pipelines.cli.sandbox import add_parser as add_sandbox_parser

    add_sandbox_parser(sub)  # `sandbox build|image|clean`: collectors/live/sandbox/command.py

    p = sub.add_parser(
        "demo", help="generate a demo archive, ingest it, score it, print the leaderboard"
    )
    p.add_argument(
        "--out", default="demo", help="folder for the archive and the warehouse (default ./demo)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps-scoring", type=int, default=50)
    p.add_argument(
        "--screenshots",
        default="none",
        choices=("none", "tiny", "realistic"),
        help="write PNG screenshots too (default none: the files are named in traj.jsonl but not written, which keeps the demo fast on slow disks)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, beam_args = parser.parse_known_args(argv)
    unknown = [a for a in beam_args if not a.startswith("--")]
    if unknown:
        parser.error(f"unexpected arguments: {' '.join(unknown)}")
    # Beam's import warns about optional cloud clients on the root logger; keep stderr for
    # what the user can act on.
    logging.getLogger().setLevel(logging.ERROR)
    from deskscore.pipelines.cli import commands

    handler = getattr(args, "handler", None) or getattr(commands, f"cmd_{args.command}")
    try:
        return handler(args, beam_args)
    except commands.UserError as exc:
        print(f"deskscore {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["DEFAULT_WAREHOUSE", "build_parser", "main"]

"""`deskscore leaderboard`: the runs ranked, or DeskCraft runs sliced (`--by`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from deskscore.pipelines.cli.args import warehouse_arg
from deskscore.pipelines.cli.breakdowns import BREAKDOWNS, LEVEL_SOURCES, SPLITS, breakdown_text
from deskscore.pipelines.cli.columns import leaderboard_columns
from deskscore.pipelines.cli.common import UserError, existing_warehouse
from deskscore.pipelines.cli.output import FORMATS, render
from deskscore.scorers.config import COMPAT_MODES, HUMAN_VERSIONS


def add_parser(sub: Any) -> None:
    p = sub.add_parser("leaderboard", help="print the leaderboard")
    warehouse_arg(p)
    p.add_argument(
        "--human-version", choices=HUMAN_VERSIONS, help="only figures against this data version"
    )
    p.add_argument("--max-steps-scoring", type=int, help="only figures with this floor of S")
    p.add_argument("--compat", choices=COMPAT_MODES, help="only figures under these rules")
    p.add_argument("--format", default="table", choices=FORMATS)
    p.add_argument(
        "--by",
        choices=tuple(BREAKDOWNS),
        help="DeskCraft runs sliced by difficulty level, app, DeskCraft domain or collaboration "
        "mode (marts per_level, per_app, deskcraft_per_domain, per_mode)",
    )
    p.add_argument(
        "--level-source",
        default=LEVEL_SOURCES[0],
        choices=LEVEL_SOURCES,
        help="with --by level: levels from the task stem prefix (default) or the difficulty field",
    )
    p.add_argument(
        "--split",
        default=SPLITS[0],
        choices=SPLITS,
        help="with --by level|app|domain: one DeskCraft split (default all)",
    )
    p.add_argument(
        "--trials",
        action="store_true",
        help="one row per run group (the trials of one configuration: trial folders, epochs, "
        "ingest --trial-of) with pass@1, pass@k and pass^k at k = its trial count (mart trials)",
    )
    p.set_defaults(handler=run)


def leaderboard_text(warehouse: str, fmt: str = "table", **filters: Any) -> str:
    from deskscore.sql import connect

    con = connect(warehouse)
    where = " AND ".join(f"{k} = ${k}" for k, v in filters.items() if v is not None) or "true"
    params = {k: v for k, v in filters.items() if v is not None}
    columns = leaderboard_columns()
    cols = ", ".join(c for c, _ in columns)
    relation = con.sql(f"SELECT {cols} FROM leaderboard WHERE {where}", params=params)
    rows = relation.fetchall()
    headers = [h for _, h in columns] if fmt in {"table", "md"} else [c for c, _ in columns]
    return render(headers, rows, fmt)


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    existing_warehouse(args.warehouse)
    if getattr(args, "trials", False):  # run groups: pipelines/cli/trials_board.py
        return _trials(args)
    if getattr(args, "by", None):  # DeskCraft slices: pipelines/cli/breakdowns.py
        text, n_rows = breakdown_text(
            args.warehouse, args.by, args.format, level_source=args.level_source, split=args.split
        )
        if not n_rows:
            raise UserError(
                "no scored DeskCraft runs: ingest them with --benchmark deskcraft, then run "
                f"'deskscore score --warehouse {args.warehouse}'"
            )
        print(text)
        return 0
    print(
        leaderboard_text(
            args.warehouse,
            args.format,
            human_version=args.human_version,
            max_steps_scoring=args.max_steps_scoring,
            compat=args.compat,
        )
    )
    return 0


def _trials(args: argparse.Namespace) -> int:
    from deskscore.pipelines.cli.trials_board import trials_text

    filters = {"human_version": args.human_version, "max_steps_scoring": args.max_steps_scoring}
    text, n_rows = trials_text(args.warehouse, args.format, **filters, compat=args.compat)
    if not n_rows:
        raise UserError(
            f"no trial figures: run 'deskscore score --warehouse {args.warehouse}' (with the "
            "options asked for here) to compute them"
        )
    print(text)
    return 0

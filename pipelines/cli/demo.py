"""`deskscore demo`: generate a demo archive, ingest it, score it, print the leaderboard."""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deskscore.pipelines.cli.common import UserError, make_folder

DEMO_MAX_STEPS_SCORING = 50
"""The demo's runs have step budgets of 50 and more, as OSWorld's leaderboard runs do."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "demo", help="generate a demo archive, ingest it, score it, print the leaderboard"
    )
    p.add_argument(
        "--out", default="demo", help="folder for the archive and the warehouse (default ./demo)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--per-domain",
        type=int,
        metavar="N",
        help="only the first N tasks of each domain (default: every task of the human index)",
    )
    p.add_argument("--max-steps-scoring", type=int, default=DEMO_MAX_STEPS_SCORING)
    p.add_argument(
        "--screenshots",
        default="none",
        choices=("none", "tiny", "realistic"),
        help="write PNG screenshots too (default none: the files are named in traj.jsonl but "
        "not written, which keeps the demo fast on slow disks)",
    )
    p.set_defaults(handler=run, beam=True)


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.collectors.synthetic import task_slice, write_demo_archive
    from deskscore.pipelines.cli.ingest import reconciliation
    from deskscore.pipelines.cli.leaderboard import leaderboard_text
    from deskscore.pipelines.infra import progress
    from deskscore.pipelines.jobs.ingest import run_ingest
    from deskscore.pipelines.jobs.score import run_score
    from deskscore.pipelines.options import HashOptions, IngestOptions, ScoreOptions

    out = Path(args.out)
    make_folder(out, f"--out {out}", "the demo (made if missing)")
    warehouse = str(out / "warehouse")
    started = time.perf_counter()
    tasks = task_slice(per_domain=args.per_domain) if args.per_domain else None
    try:
        demo = write_demo_archive(
            out / "archive", seed=args.seed, screenshots=args.screenshots, tasks=tasks
        )
    except FileExistsError as exc:  # a runs/ folder that no demo wrote: left as it is
        raise UserError(str(exc)) from None
    sources = tuple(str(s) for s in demo.sources)
    print(
        f"wrote a demo archive of {len(sources)} source(s) under {out / 'archive'} in "
        f"{time.perf_counter() - started:.1f} s"
    )
    beam = tuple(beam_args)
    with progress.show("ingest", ["task folders", "episodes", "runs written"]):
        result = run_ingest(IngestOptions(warehouse, sources=sources, beam_args=beam))
    print(reconciliation(warehouse, sources, result).text)
    if args.screenshots != "none":
        from deskscore.pipelines.jobs.hash import run_hash

        with progress.show("hash", ["screenshots", "decoded"]):
            run_hash(HashOptions(warehouse, beam_args=beam))
    score = ScoreOptions(warehouse, max_steps_scoring=args.max_steps_scoring, beam_args=beam)
    with progress.show("score", ["runs scored", "loops", "costs"]):
        run_score(score)
    print()
    cfg = score.config
    print(
        leaderboard_text(
            warehouse,
            human_version=cfg.human_version,
            max_steps_scoring=cfg.max_steps_scoring,
            compat=cfg.compat,
        )
    )
    print(f"\ndone in {time.perf_counter() - started:.1f} s; explore with:")
    print(f'  deskscore sql --warehouse {warehouse} "SELECT * FROM per_domain"')
    print(f"  deskscore loops --warehouse {warehouse} --top 5")
    print(f"  deskscore cost --warehouse {warehouse}")
    return 0

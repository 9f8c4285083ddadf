"""`deskscore judge`: LLM-judged verdicts (the job is pipelines/jobs/judge.py)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from deskscore.pipelines.cli.common import UserError, existing_warehouse, writing
from deskscore.pipelines.cli.output import FORMATS, printable, render, say
from deskscore.pipelines.options import JudgeOptions, add_options
from deskscore.scorers import judge_prompt

if TYPE_CHECKING:
    from deskscore.pipelines.jobs.judge import JudgeSummary

SHOWN_ERRORS = 5
"""Episodes without a verdict listed with their error (all are counted)."""


SUMMARY_COLUMNS = (
    "agent", "run", "episodes", "judged", "requests sent", "cache hits", "passed", "failed",
    "errors", "success %",
)  # fmt: skip


def summary_text(summary: JudgeSummary, cfg: JudgeOptions, fmt: str = "table") -> str:
    """The aligned per-run table (and a total when there are several runs)."""
    from deskscore.pipelines.jobs.judge import RunInfo, RunTally

    def row(agent: str, run: str, t: Any) -> list[Any]:
        rate = 100.0 * t.passed / t.judged if t.judged else None
        return [agent, run, t.episodes, t.judged, t.requests, t.cache_hits, t.passed,
                t.failed, t.errors, rate]  # fmt: skip

    rows = [row(t.run.agent, t.run.run_id, t) for t in summary.runs]
    if len(summary.runs) > 1:
        total = RunTally(RunInfo("", "", "", ""))
        for name in ("episodes", "judged", "requests", "cache_hits", "passed", "failed", "errors"):
            setattr(total, name, summary.total(name))
        rows.append(row("(all)", "", total))
    title = (
        f"Judged verdicts ({cfg.model}, k={cfg.k} consecutive passes in at most "
        f"{cfg.budget} round(s), template {judge_prompt.TEMPLATE_VERSION})"
    )
    table = render(list(SUMMARY_COLUMNS), rows, fmt)
    return table if fmt in {"csv", "json"} else f"{title}\n{table}"


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.collectors.redact import redact
    from deskscore.pipelines.jobs.judge import run_judge

    cfg = JudgeOptions.from_args(args)
    existing_warehouse(cfg.warehouse)
    if beam_args:
        raise UserError(f"unknown options {' '.join(beam_args)} (judge does not run in Beam)")
    api_key = os.environ.get(cfg.api_key_env) or None
    if api_key is None:
        say(
            f"deskscore judge: ${cfg.api_key_env} is not set: requests go without an "
            "Authorization header (set it, or name another variable with --api-key-env)",
            file=sys.stderr,
        )
    try:
        with writing(cfg.warehouse, "judge", cfg.wait, ["episodes", "requests", "cache hits"]):
            summary = run_judge(cfg, api_key=api_key)
    except ValueError as e:
        raise UserError(redact(str(e), api_key)) from None
    say(summary_text(summary, cfg, args.format), args.format)
    if summary.errors:
        shown = summary.errors[:SHOWN_ERRORS]
        more = len(summary.errors) - len(shown)
        print(
            f"deskscore judge: {len(summary.errors)} episode(s) without a verdict:",
            file=sys.stderr,
        )
        for line in shown:
            say(f"  {printable(redact(line, api_key))}", file=sys.stderr)
        if more:
            print(f"  ... and {more} more", file=sys.stderr)
        return 1
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "judge",
        help="judge every episode with an LLM (OpenAI-compatible endpoint), k consecutive passes",
        description=(
            "Send each episode (instruction, actions and reasoning, a few screenshots) to an "
            "OpenAI-compatible chat-completions endpoint and write verdicts (source judged): an "
            "episode passes only if the judge passes it in k consecutive rounds. Every round is "
            "cached in judge_calls by (episode, model, prompt hash, round): a re-run with the "
            "same inputs sends no request."
        ),
    )
    add_options(p, JudgeOptions)
    p.add_argument("--format", default="table", choices=FORMATS)
    p.set_defaults(handler=run)


__all__ = ["add_parser", "run", "summary_text"]

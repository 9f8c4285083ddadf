"""`deskscore cost`: each run's tokens, cost and time beside its success, and where the time
goes."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deskscore.pipelines.cli.common import UserError, check_runs, existing_warehouse, writing
from deskscore.pipelines.cli.output import FORMATS, decimals, render, say
from deskscore.pipelines.options import CostOptions, add_options


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "cost",
        help="print each run's tokens, cost and time beside its success, and where the time goes",
    )
    add_options(p, CostOptions)
    p.add_argument("--format", default="table", choices=FORMATS)
    p.set_defaults(handler=run, beam=True)


COST_COLUMNS = (
    ("agent", "agent", "agent"),
    ("n_episodes", "n_episodes", "tasks"),
    ("n_episodes_with_usage", "n_episodes_with_usage", "with usage"),
    ("n_llm_calls", "n_llm_calls", "calls"),
    ("prompt_tokens / 1e6", "prompt_mtok", "prompt Mtok"),
    ("100 * cached_share", "cached_pct", "cached %"),
    ("completion_tokens / 1e6", "output_mtok", "output Mtok"),
    ("cost_usd", "cost_usd", "cost $"),
    ("cost_per_task_usd", "cost_per_task_usd", "$/task"),
    ("success_rate_run_pct", "success_rate_run_pct", "success %"),
    ("n_successes", "n_successes", "successes"),
    ("cost_per_success_usd", "cost_per_success_usd", "$/success"),
    ("median_task_s", "median_task_s", "median task s"),
    ("100 * llm_time_share", "llm_time_pct", "LLM time %"),
    ("run_id", "run_id", "run"),
)
"""The run-level cost table `deskscore cost` prints: (expression over cost_per_run, name for
csv / json, header for tables)."""

STAGE_ORDER = ("planning", "reflection", "judging", "grounding", "retrieval", "other",
               "screenshot", "action", "unattributed")  # fmt: skip


def _run_filter(run_ids: Sequence[str] | None) -> tuple[str, dict[str, Any]]:
    if not run_ids:
        return "true", {}
    return "run_id IN (SELECT unnest($runs))", {"runs": list(run_ids)}


def cost_text(warehouse: str, fmt: str = "table", run_ids: Sequence[str] | None = None) -> str:
    """The run-level cost table, what could not be priced and why, the cost-accuracy front
    and, per agent, where the task time goes (latency_breakdown over all domains)."""
    from deskscore.sql import connect

    read = ("cost_per_run", "run_costs", "llm_call_costs", "cost_pareto", "latency_breakdown")
    con = connect(warehouse, only=read)  # what is queried below
    where, params = _run_filter(run_ids)
    exprs = ", ".join(f"{e} AS {n}" for e, n, _ in COST_COLUMNS)
    runs = con.sql(f"SELECT {exprs} FROM cost_per_run WHERE {where}", params=params)
    headers = [h if fmt in {"table", "md"} else n for _, n, h in COST_COLUMNS]
    if fmt in {"csv", "json"}:
        return render(headers, runs.fetchall(), fmt)
    [(label,)] = con.sql(
        f"SELECT coalesce(string_agg(DISTINCT prices, '; '), 'none') FROM run_costs WHERE {where}",
        params=params,
    ).fetchall()
    lines = [f"Cost per run (prices: {label})", render(headers, runs.fetchall(), fmt)]
    unpriced = con.sql(
        f"""
        SELECT coalesce(model, '(no model named)') AS model, count(*) AS n
        FROM llm_call_costs WHERE cost_usd IS NULL AND unpriced_reason = 'no_price' AND {where}
        GROUP BY ALL ORDER BY n DESC, model
        """,
        params=params,
    ).fetchall()
    if unpriced:
        listed = ", ".join(f"{m} ({n} calls)" for m, n in unpriced)
        lines.append(
            f"{sum(n for _, n in unpriced)} calls of models without a price: {listed}; "
            "add them with --prices FILE (columns: model,input_per_mtok,cached_input_per_mtok,"
            "cache_write_per_mtok,output_per_mtok,read_on,source)"
        )
    [(no_tokens,)] = con.sql(
        f"SELECT count(*) FROM llm_call_costs WHERE unpriced_reason <> 'no_price' AND {where}",
        params=params,
    ).fetchall()
    if no_tokens:
        lines.append(
            f"{no_tokens} calls report no usable token counts (no_tokens or inconsistent_tokens "
            "in llm_call_costs.unpriced_reason): their runs have no total"
        )
    bare = con.sql(
        f"SELECT agent FROM cost_per_run WHERE n_llm_calls = 0 AND {where} ORDER BY agent",
        params=params,
    ).fetchall()
    if bare:
        lines.append(
            f"{len(bare)} run(s) record no model calls (task time from timestamps only): "
            + ", ".join(a for (a,) in bare)
        )
    front = con.sql(
        f"""
        SELECT agent, success_rate_run_pct, cost_per_task_usd FROM cost_pareto
        WHERE on_front AND {where} ORDER BY cost_per_task_usd
        """,
        params=params,
    ).fetchall()
    if front:
        lines.append(
            "cost-accuracy front (no other run is both cheaper and more successful): "
            + ", ".join(f"{a} ({s:.1f}% at ${c:.{decimals(c, 2)}f}/task)" for a, s, c in front)
        )
    breakdown = con.sql(
        f"""
        SELECT agent, stage, share, note FROM latency_breakdown
        WHERE domain = '(all)'
          AND agent IN (SELECT agent FROM cost_per_run WHERE {where})
        ORDER BY agent
        """,
        params=params,
    ).fetchall()
    stages = [s for s in STAGE_ORDER if any(b[1] == s for b in breakdown)]
    by_agent: dict[str, dict[str, Any]] = {}
    for agent, stage, share, note in breakdown:
        row = by_agent.setdefault(agent, {"note": note})
        row[stage] = 100 * share if share is not None else None
    if by_agent:
        lines.append("")
        lines.append("Where the task time goes (% of task time, all domains; latency_breakdown)")
        lines.append(
            render(
                ["agent", *stages, "note"],
                [[a, *(r.get(s) for s in stages), r["note"] or ""] for a, r in by_agent.items()],
                fmt,
            )
        )
    return "\n".join(lines)


def _to_price(warehouse: Path, options: CostOptions) -> list[str]:
    """The runs to price: with --prices every run (of --run), else those no score or cost has
    priced yet."""
    from deskscore.collectors.warehouse import Warehouse

    wh = Warehouse(warehouse)
    wanted = {r["run_id"] for r in wh.read("runs", columns=["run_id"]).to_pylist()}
    if options.runs:
        wanted &= set(options.runs)
    if options.prices:
        return sorted(wanted)
    priced = {r["run_id"] for r in wh.read("run_costs", columns=["run_id"]).to_pylist()}
    return sorted(wanted - priced)


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.pipelines.jobs.cost import run_costs
    from deskscore.pipelines.jobs.score import IncompleteJob
    from deskscore.scorers.cost import PriceError

    options = CostOptions.from_args(args, beam_args)
    root = existing_warehouse(options.warehouse)
    if options.runs:
        check_runs(root, options.runs)
    if options.prices or _to_price(root, options):
        try:
            # what to price is decided again under the writer lock, where no job changes it
            with writing(options.warehouse, "cost", options.wait, ["costs"]):
                todo = _to_price(root, options)
                if todo:
                    run_costs(options, todo)
        except (PriceError, IncompleteJob) as exc:
            raise UserError(str(exc)) from None
    say(cost_text(str(root), args.format, options.runs), args.format)
    return 0

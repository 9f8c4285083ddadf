"""`deskscore compare RUN_A RUN_B`: two runs on the tasks both ran, with a test.

Per-task wins, losses and ties; each figure's paired difference with its bootstrap interval
(tasks resampled within their domain, the same draws for both runs); McNemar's exact test for
strict success; the minimum detectable difference at 80% power; and a verdict in one sentence.
`--by domain` breaks strict success down by domain; `--all` compares every pair of runs of
the configuration, with Holm's correction for the number of pairs. Counts come from the
`compare` mart; the statistics are deskscore.scorers.comparison's.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from deskscore.pipelines.cli.args import int_in, warehouse_arg
from deskscore.pipelines.cli.common import UserError, existing_warehouse
from deskscore.pipelines.cli.output import FORMATS, render, say
from deskscore.scorers.config import (
    COMPAT_MODES,
    DEFAULT_BOOTSTRAP_RESAMPLES,
    DEFAULT_BOOTSTRAP_SEED,
    HUMAN_VERSIONS,
)

FIGURES: tuple[tuple[str, str, str, float], ...] = (
    ("reward", "s.reward", "success rate %", 100.0),
    ("success", "CASE WHEN s.reward IS NOT NULL THEN CAST(s.success AS DOUBLE) END",
     "strict success %", 100.0),
    ("wes_plus_single", "CASE WHEN s.scored THEN s.wes_plus_single END", "WES+ single %", 100.0),
    ("wes_minus", "CASE WHEN s.scored THEN s.wes_minus END", "WES-", 1.0),
    ("step_ratio_single", "CASE WHEN s.scored AND s.success THEN s.step_ratio_single END",
     "steps / human", 1.0),
    ("cost_usd", "c.cost_usd", "$/task", 1.0),
)  # fmt: skip
"""(name, expression over episode_scores s and episode_costs c, label, scale): the figures
compared, each a mean over the tasks where both runs have a value."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "compare", help="compare two runs on the tasks both ran (paired differences, tests)"
    )
    p.add_argument("runs", nargs="*", metavar="RUN", help="two runs: run id, label or agent")
    warehouse_arg(p)
    p.add_argument("--all", action="store_true", help="every pair of runs (Holm-corrected)")
    p.add_argument("--by", choices=("domain",), help="strict success per domain")
    p.add_argument("--human-version", choices=HUMAN_VERSIONS)
    p.add_argument("--max-steps-scoring", type=int)
    p.add_argument("--compat", choices=COMPAT_MODES)
    p.add_argument(
        "--resamples",
        type=int_in(1),
        default=DEFAULT_BOOTSTRAP_RESAMPLES,
        help=f"bootstrap resamples (default {DEFAULT_BOOTSTRAP_RESAMPLES})",
    )
    p.add_argument(
        "--seed",
        type=int_in(0),
        default=DEFAULT_BOOTSTRAP_SEED,
        help=f"the bootstrap's seed (default {DEFAULT_BOOTSTRAP_SEED})",
    )
    p.add_argument("--format", default="table", choices=FORMATS)
    p.set_defaults(handler=run)  # fmt: skip


def _resolve(con: Any, name: str, condition: str, params: dict[str, Any]) -> tuple[str, str]:
    """(run_id, label) of the run scored under the configuration that `name` names."""
    rows = con.sql(
        "SELECT DISTINCT s.run_id, l.label FROM run_scores AS s JOIN run_labels AS l "
        "USING (run_id) JOIN runs AS r USING (run_id) "
        f"WHERE {condition} AND (s.run_id = $name OR l.label = $name OR r.agent = $name)",
        params=params | {"name": name},
    ).fetchall()
    if len(rows) != 1:
        why = "no run" if not rows else f"{len(rows)} runs"
        raise UserError(
            f"{why} called {name!r} under this configuration: give a run id or label as "
            "`deskscore leaderboard` shows it"
        )
    return rows[0]


def _values(
    con: Any, run_ids: Sequence[str], condition: str, params: dict[str, Any]
) -> tuple[list[tuple[str, str]], dict[str, dict[str, list[float]]]]:
    """Tasks (domain, task_id) run by any of the runs, and each run's per-task figures (NaN:
    no value) aligned with them."""
    cols = ", ".join(f"{expr} AS {name}" for name, expr, _, _ in FIGURES)
    rows = con.sql(
        f"SELECT s.run_id, s.domain, s.task_id, {cols} FROM episode_scores AS s "
        "LEFT JOIN episode_costs AS c USING (run_id, domain, task_id) "
        f"WHERE {' AND '.join('s.' + c.strip() for c in condition.split(' AND '))} "
        "AND list_contains($runs, s.run_id)",
        params=params | {"runs": list(run_ids)},
    ).fetchall()
    tasks = sorted({(r[1], r[2]) for r in rows})
    at = {t: i for i, t in enumerate(tasks)}
    nan = float("nan")
    out = {
        run: {name: [nan] * len(tasks) for name, *_ in FIGURES} for run in run_ids
    }  # fmt: skip
    for run_id, domain, task_id, *figures in rows:
        for (name, *_), v in zip(FIGURES, figures, strict=True):
            if v is not None:
                out[run_id][name][at[(domain, task_id)]] = float(v)
    return tasks, out


def _pair_text(
    label_a: str, label_b: str, c: Any, by_domain: list[list[Any]] | None, fmt: str, title: str
) -> str:
    from deskscore.scorers.comparison import verdict

    rows = []
    for name, _, label, scale in FIGURES:
        d = c.figures[name]
        if not d.n:
            continue
        rows.append([
            label, d.mean_a * scale, d.mean_b * scale, d.difference * scale,
            d.ci_low * scale, d.ci_high * scale, d.n,
        ])  # fmt: skip
    headers = ["figure", "A", "B", "A - B", "95% CI low", "95% CI high", "tasks"]
    if fmt in {"csv", "json"}:
        return render(headers, rows, fmt)
    o = c.outcomes
    lines = [
        title,
        f"A = {label_a}, B = {label_b}: {c.n_tasks} tasks both ran; A better on {o.wins}, "
        f"B better on {o.losses}, tied on {o.ties} (by reward)",
        render(headers, rows, fmt),
        f"strict success: A only {c.a_only}, B only {c.b_only}; McNemar exact p "
        + (f"= {c.p_value:.4f}" if c.p_value >= 0.0001 else "< 0.0001"),
        f"minimum detectable difference (80% power, alpha 0.05): {100 * c.mdd:.1f} points on "
        f"{c.n_tasks} tasks",
        f"verdict: {verdict(c, label_a, label_b)}",
    ]
    if by_domain is not None:
        lines += ["", "strict success by domain", render(
            ["domain", "tasks", "A %", "B %", "A - B", "95% CI low", "95% CI high", "A only",
             "B only", "McNemar p"], by_domain, fmt)]  # fmt: skip
    return "\n".join(lines)


def _by_domain(tasks: list[tuple[str, str]], a: dict, b: dict, resamples: int, seed: int):
    from deskscore.scorers.comparison import compare

    out = []
    for domain in sorted({d for d, _ in tasks}):
        idx = [i for i, t in enumerate(tasks) if t[0] == domain]
        pick = {k: [v[i] for i in idx] for k, v in a.items() if k in ("reward", "success")}
        other = {k: [v[i] for i in idx] for k, v in b.items() if k in ("reward", "success")}
        c = compare(pick, other, n_resamples=resamples, seed=seed)
        d = c.figures["success"]
        if not c.n_tasks:
            continue
        out.append([
            domain, c.n_tasks, 100 * d.mean_a, 100 * d.mean_b, 100 * d.difference,
            100 * d.ci_low, 100 * d.ci_high, c.a_only, c.b_only, c.p_value,
        ])  # fmt: skip
    return out


def _all_text(con: Any, condition: str, params: dict[str, Any], args: Any, title: str) -> str:
    from deskscore.scorers.paired import holm, mcnemar_exact

    pairs = con.sql(
        "SELECT label_a, label_b, n_tasks, strict_difference_pct, a_only, b_only FROM compare "
        f"WHERE {condition} AND run_a < run_b ORDER BY label_a, label_b",
        params=params,
    ).fetchall()
    if not pairs:
        raise UserError("fewer than two runs under this configuration ran a task in common")
    raw = [mcnemar_exact(a, b) for *_, a, b in pairs]
    adjusted = holm(raw)
    rows = [
        [a, b, n, diff, a_only, b_only, p, q, "yes" if q < 0.05 else "no"]
        for (a, b, n, diff, a_only, b_only), p, q in zip(pairs, raw, adjusted, strict=True)
    ]
    headers = ["A", "B", "tasks", "A - B (points)", "A only", "B only", "McNemar p", "Holm p",
               "differ"]  # fmt: skip
    table = render(headers, rows, args.format)
    if args.format in {"csv", "json"}:
        return table
    labels = sorted({r[0] for r in pairs} | {r[1] for r in pairs})
    cell = {}
    for (a, b, _, diff, *_), q in zip(pairs, adjusted, strict=True):
        mark = "*" if q < 0.05 else ""
        cell[(a, b)] = f"{diff:+.1f}{mark}"
        cell[(b, a)] = f"{-diff:+.1f}{mark}"
    matrix = [[row] + [cell.get((row, col), "") for col in labels] for row in labels]
    return "\n".join([
        title,
        f"strict success, row minus column, in points ({len(pairs)} pairs; * : differ at 5% "
        "after Holm's correction of McNemar's exact p)",
        render(["run", *labels], matrix, "table"),
        "",
        table,
    ])  # fmt: skip


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.pipelines.cli.scored import configuration, where
    from deskscore.scorers.comparison import compare
    from deskscore.sql import connect

    existing_warehouse(args.warehouse)
    if not args.all and len(args.runs) != 2:
        raise UserError("name two runs to compare (or --all for every pair)")
    read = ("run_scores", "run_labels", "runs", "episode_scores", "episode_costs")
    con = connect(args.warehouse, only=(*read, "compare") if args.all else read)  # read below
    config = configuration(
        con, args.warehouse, human_version=args.human_version,
        max_steps_scoring=args.max_steps_scoring, compat=args.compat,
    )  # fmt: skip
    condition, params = where(config)
    title = f"Compare ({config.describe()})"
    if args.all:
        say(_all_text(con, condition, params, args, title), args.format)
        return 0
    (run_a, label_a), (run_b, label_b) = (_resolve(con, n, condition, params) for n in args.runs)
    if run_a == run_b:
        raise UserError("name two different runs")
    tasks, values = _values(con, [run_a, run_b], condition, params)
    strata = [domain for domain, _ in tasks]
    c = compare(values[run_a], values[run_b], strata=strata, n_resamples=args.resamples,
                seed=args.seed)  # fmt: skip
    by = None
    if args.by == "domain":
        by = _by_domain(tasks, values[run_a], values[run_b], args.resamples, args.seed)
    say(_pair_text(label_a, label_b, c, by, args.format, title), args.format)
    return 0


__all__ = ["FIGURES", "add_parser", "run"]

"""What each `deskscore` subcommand does, once its arguments are parsed."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from deskscore.pipelines.cli.columns import LEADERBOARD_COLUMNS
from deskscore.pipelines.cli.output import render, render_relation


class UserError(Exception):
    """A problem the user can fix; printed without a traceback."""


def _existing_warehouse(path: str) -> Path:
    root = Path(path)
    if not root.is_dir():
        raise UserError(
            f"no warehouse at {root}: run 'deskscore ingest SOURCE --warehouse {root}' first"
        )
    return root


SHOWN_QUARANTINE = 10
"""Quarantined items listed with their message after an ingest (all are in the table)."""


class Reconciliation(NamedTuple):
    text: str
    unreadable_sources: int


def reconciliation(
    warehouse: str,
    sources: Sequence[str],
    counters: dict[str, int],
    unchanged: Sequence[str] = (),
) -> Reconciliation:
    """What went in against what came out, per source (those read now, and those skipped as
    unchanged, from what the warehouse holds of them); quarantined items by reason, and the
    first few of them with the message that says what to do."""
    from deskscore.collectors.archives import canonical_uri
    from deskscore.collectors.ids import source_id
    from deskscore.sql import connect

    con = connect(warehouse)
    normalised = [canonical_uri(s) for s in sources]
    con.execute("CREATE TEMP TABLE ingested_sources(source VARCHAR, status VARCHAR)")
    named = [[s, "read"] for s in normalised] + [[canonical_uri(s), "unchanged"] for s in unchanged]
    if named:
        con.executemany("INSERT INTO ingested_sources VALUES (?, ?)", named)
    per_source = con.sql(
        """
        WITH r AS (SELECT run_id, source, status FROM runs JOIN ingested_sources USING (source)),
        e AS (SELECT run_id, count(*) AS episodes, sum(n_lines) AS lines, sum(n_steps) AS actions,
                     sum(n_error_lines) AS error_lines, sum(n_quarantined) AS quarantined_lines,
                     count(*) FILTER (WHERE result_status = 'ok') AS with_result
              FROM episodes GROUP BY run_id),
        s AS (SELECT run_id, count(*) AS step_rows FROM steps GROUP BY run_id)
        SELECT r.source, any_value(r.status) AS this_time, count(*) AS runs, sum(e.episodes) AS episodes,
               sum(e.with_result) AS with_result, sum(e.lines) AS traj_lines, sum(s.step_rows) AS step_rows,
               sum(e.quarantined_lines) AS quarantined_lines,
               coalesce(sum(e.lines), 0) = coalesce(sum(s.step_rows), 0) + coalesce(sum(e.quarantined_lines), 0) AS reconciled
        FROM r LEFT JOIN e USING (run_id) LEFT JOIN s USING (run_id)
        GROUP BY r.source ORDER BY r.source
        """
    )
    ids = [source_id(s) for s, _ in named]
    con.execute("CREATE TEMP TABLE source_ids(run_id VARCHAR)")
    if ids:
        con.executemany("INSERT INTO source_ids VALUES (?)", [[i] for i in ids])
    con.execute(
        """
        CREATE TEMP VIEW ingested_quarantine AS
        SELECT * FROM quarantine
        WHERE source IN (SELECT source FROM ingested_sources) OR run_id IN (SELECT run_id FROM source_ids)
        """
    )
    reasons = con.sql(
        "SELECT reason, count(*) AS items FROM ingested_quarantine GROUP BY reason ORDER BY items DESC, reason"
    )
    first = con.sql(
        f"""
        SELECT message FROM ingested_quarantine
        ORDER BY location <> '', source, location, line_no LIMIT {SHOWN_QUARANTINE}
        """
    ).fetchall()
    lines = [
        "Reconciliation",
        f"files seen: {counters.get('files_seen', 0)}   task folders: {counters.get('task_folders', 0)}   "
        f"episodes read: {counters.get('episodes', 0)}   step rows: {counters.get('steps', 0)}   "
        f"trajectory lines: {counters.get('traj_lines', 0)}   quarantined: {counters.get('quarantined', 0)}   "
        f"model calls: {counters.get('llm_calls', 0)}",
        render_relation(per_source),
    ]
    reason_rows = reasons.fetchall()
    lines.append("quarantined by reason:" if reason_rows else "quarantined by reason: none")
    if reason_rows:
        lines.append(render(["reason", "items"], reason_rows))
        total = sum(n for _, n in reason_rows)
        lines.append(
            f"first {len(first)} of {total} (all are in the quarantine table):"
            if total > len(first)
            else "items:"
        )
        lines.extend(f"  {message}" for (message,) in first)  # messages name file and line
    unreadable = dict(reason_rows).get("unreadable_source", 0)
    return Reconciliation("\n".join(lines), unreadable)


@contextmanager
def _writer(args: argparse.Namespace, command: str) -> Iterator[None]:
    """Hold the warehouse's writer lock (see pipelines.lock) or fail with a clear message."""
    from deskscore.collectors.warehouse.lock import WarehouseBusy, writer_lock

    try:
        with writer_lock(args.warehouse, command, getattr(args, "wait", 0.0) or 0.0):
            yield
    except WarehouseBusy as exc:
        raise UserError(str(exc)) from None


def cmd_ingest(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.collectors.archives import SourceListError, expand_sources
    from deskscore.pipelines.infra import progress
    from deskscore.pipelines.jobs.ingest import run_ingest

    started = time.perf_counter()
    try:
        sources = expand_sources(args.sources)
    except SourceListError as exc:
        raise UserError(f"{exc}; check the pattern or the list file") from None
    with (
        _writer(args, "ingest"),
        progress.show("ingest", ["runs found", "episodes", "runs written", "runs unchanged"]),
    ):
        result = run_ingest(
            sources,
            args.warehouse,
            benchmark=args.benchmark,
            layout=args.layout,
            force=args.force,
            compact=not args.no_compact,
            workers=args.workers,
            beam_args=beam_args,
        )
    report = reconciliation(
        args.warehouse, result.plan.todo, result.counters, result.plan.unchanged
    )
    print(report.text)
    unchanged = result.plan.unchanged
    if unchanged:
        print(
            f"skipped {len(unchanged)} source(s) already ingested and unchanged (same size and "
            "mtime, or ETag); --force reads them again"
        )
    kept = result.counters.get("runs_unchanged", 0)
    if kept:
        print(f"{kept} run(s) re-read with the same content: their tables were kept")
    if result.counters.get("runs_dropped"):
        print(
            f"dropped {result.counters['runs_dropped']} run(s) no longer found in their source "
            "(with their scores)"
        )
    if result.compacted:
        print(f"packed {result.compacted} small file(s) into larger ones")
    print(
        f"ingested {len(result.plan.todo)} of {len(sources)} source(s) into {args.warehouse} "
        f"in {time.perf_counter() - started:.1f} s"
    )
    if report.unreadable_sources:
        print(
            f"deskscore ingest: {report.unreadable_sources} source(s) could not be read (see above); "
            "the others were ingested",
            file=sys.stderr,
        )
        return 1
    return 0


def cmd_score(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.pipelines.infra import progress
    from deskscore.pipelines.jobs.score import run_score
    from deskscore.scorers.cost import PriceError

    _existing_warehouse(args.warehouse)
    try:
        with _writer(args, "score"), progress.show("score", ["runs scored"]):
            counters = run_score(
                args.warehouse,
                human_version=args.human_version,
                max_steps_scoring=args.max_steps_scoring,
                compat=args.compat,
                human_path=args.human_path,
                run_ids=args.runs,
                loops=not args.no_loops,
                costs=not args.no_costs,
                prices=args.prices,
                deskcraft_tasks=getattr(args, "deskcraft_tasks", None),
                force=args.force,
                compact=not args.no_compact,
                workers=args.workers,
                beam_args=beam_args,
            )
    except PriceError as exc:
        raise UserError(str(exc)) from None
    print(
        f"scored {counters.get('runs_scored', 0)} run(s), {counters.get('episodes_scored', 0)} episodes "
        f"(human data {args.human_version}, S >= {args.max_steps_scoring}, rules {args.compat})"
    )
    if counters.get("runs_unchanged"):
        print(
            f"{counters['runs_unchanged']} run(s) unchanged since they were last scored this way: "
            "kept (--force scores them again)"
        )
    if not args.no_costs:
        unpriced = counters.get("calls_unpriced", 0)
        print(
            f"priced {counters.get('calls_priced', 0)} model call(s)"
            + (f"; {unpriced} without a price (see 'deskscore cost')" if unpriced else "")
        )
    disagree = counters.get("verdicts_disagree", 0)
    print(
        f"verdicts: {counters.get('verdicts_archived', 0)} archived, "
        f"{counters.get('verdicts_recomputed', 0)} recomputed offline, {disagree} disagreeing "
        "with result.txt"
        + (" (see 'deskscore sql \"SELECT * FROM verdict_disagreements\"')" if disagree else "")
    )
    return 0


def cmd_hash(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.pipelines.infra import progress
    from deskscore.pipelines.jobs.hash import run_hash
    from deskscore.pipelines.options import HashOptions

    _existing_warehouse(args.warehouse)
    started = time.perf_counter()
    with _writer(args, "hash"), progress.show("hash", ["screenshots", "decoded"]):
        counters = run_hash(HashOptions.from_args(args, beam_args))
    print(
        f"hashed {counters.get('refs', 0)} screenshot reference(s) in {counters.get('runs', 0)} run(s): "
        f"{counters.get('decoded', 0)} decoded, {counters.get('known', 0)} already known, "
        f"{counters.get('bad_images', 0)} bad image(s), {counters.get('unreadable', 0)} unreadable file(s) "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return 0


def cmd_loops(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.collectors.warehouse import Warehouse
    from deskscore.pipelines.cli.loops import worst_episodes_text

    root = _existing_warehouse(args.warehouse)
    if not Warehouse(root).files("loop_spans"):  # every scored run has a file, loops or not
        raise UserError(
            f"loops are found by scoring: run 'deskscore score --warehouse {root}' first"
        )
    print(worst_episodes_text(str(root), run_id=args.run, top=args.top, fmt=args.format))
    return 0


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

    con = connect(warehouse)
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
            + ", ".join(f"{a} ({s:.1f}% at ${c:.2f}/task)" for a, s, c in front)
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


def cmd_cost(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.collectors.warehouse import Warehouse
    from deskscore.pipelines.infra import progress
    from deskscore.scorers.cost import PriceError

    root = _existing_warehouse(args.warehouse)
    wh = Warehouse(root)
    wanted = {r["run_id"] for r in wh.read("runs", columns=["run_id"]).to_pylist()}
    if args.runs:
        wanted &= set(args.runs)
    priced = {r["run_id"] for r in wh.read("run_costs", columns=["run_id"]).to_pylist()}
    # --prices prices every run again; otherwise only runs no score (or cost) has priced yet
    todo = sorted(wanted) if args.prices else sorted(wanted - priced)
    if todo:
        from deskscore.pipelines.stages.costs import run_costs

        try:
            with progress.show("cost", ["costs"]):
                run_costs(str(root), prices=args.prices, run_ids=todo, beam_args=beam_args)
        except PriceError as exc:
            raise UserError(str(exc)) from None
    print(cost_text(str(root), args.format, args.runs))
    return 0


def cmd_check(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.pipelines.cli.check import check_text, check_warehouse

    result = check_warehouse(_existing_warehouse(args.warehouse), sources=not args.no_sources)
    print(check_text(result))
    return 0 if result.ok else 1


def cmd_sql(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    import duckdb

    from deskscore.sql import connect
    from deskscore.sql.loader import sandbox, writing_statements

    root = _existing_warehouse(args.warehouse)
    con = connect(root)
    if not getattr(args, "write", False):
        writes = writing_statements(con, args.query)
        if writes:
            raise UserError(
                f"{', '.join(sorted(set(writes)))} statement(s) refused: the warehouse is opened "
                "read-only; pass --write to run statements that write"
            )
        sandbox(con, root)
    try:
        relation = con.sql(args.query)
    except duckdb.Error as exc:
        raise UserError(f"{exc}\n(views: see 'deskscore sql \"SHOW TABLES\"')") from None
    if relation is None:
        return 0
    print(render_relation(relation, args.format))
    return 0


def leaderboard_text(warehouse: str, fmt: str = "table", **filters: Any) -> str:
    from deskscore.sql import connect

    con = connect(warehouse)
    where = " AND ".join(f"{k} = ${k}" for k, v in filters.items() if v is not None) or "true"
    params = {k: v for k, v in filters.items() if v is not None}
    cols = ", ".join(c for c, _ in LEADERBOARD_COLUMNS)
    relation = con.sql(f"SELECT {cols} FROM leaderboard WHERE {where}", params=params)
    rows = relation.fetchall()
    headers = (
        [h for _, h in LEADERBOARD_COLUMNS]
        if fmt in {"table", "md"}
        else [c for c, _ in LEADERBOARD_COLUMNS]
    )
    return render(headers, rows, fmt)


def cmd_leaderboard(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    _existing_warehouse(args.warehouse)
    if getattr(args, "by", None):  # DeskCraft slices: pipelines/breakdowns.py
        from deskscore.pipelines.cli.breakdowns import breakdown_text

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


def cmd_report(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.pipelines.cli.report import build_report

    root = _existing_warehouse(args.warehouse)
    result = build_report(str(root), args.out, run_ids=args.runs, png_dir=args.png)
    print(
        f"wrote {result.path}: {len(result.figures)} figure(s), {result.n_episodes} episode(s), "
        f"{result.n_thumbnails} thumbnail(s)" + (f"; PNGs in {args.png}" if args.png else "")
    )
    return 0


def cmd_demo(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    from deskscore.collectors.synthetic import write_demo_archive
    from deskscore.pipelines.infra import progress
    from deskscore.pipelines.jobs.ingest import run_ingest
    from deskscore.pipelines.jobs.score import run_score

    out = Path(args.out)
    warehouse = str(out / "warehouse")
    started = time.perf_counter()
    demo = write_demo_archive(out / "archive", seed=args.seed, screenshots=args.screenshots)
    sources = [str(s) for s in demo.sources]
    print(
        f"wrote a demo archive of {len(sources)} source(s) under {out / 'archive'} in {time.perf_counter() - started:.1f} s"
    )
    with progress.show("ingest", ["task folders", "episodes", "runs written"]):
        result = run_ingest(sources, warehouse, beam_args=beam_args)
    print(reconciliation(warehouse, sources, result.counters).text)
    if args.screenshots != "none":
        from deskscore.pipelines.jobs.hash import run_hash
        from deskscore.pipelines.options import HashOptions

        with progress.show("hash", ["screenshots", "decoded"]):
            run_hash(HashOptions(warehouse=warehouse, beam_args=tuple(beam_args)))
    with progress.show("score", ["runs scored", "loops", "costs"]):
        run_score(warehouse, max_steps_scoring=args.max_steps_scoring, beam_args=beam_args)
    print()
    print(f"Leaderboard (OSWorld-Human verified, S >= {args.max_steps_scoring}, deskscore rules)")
    print(leaderboard_text(warehouse))
    print(f"\ndone in {time.perf_counter() - started:.1f} s; explore with:")
    print(f'  deskscore sql --warehouse {warehouse} "SELECT * FROM per_domain"')
    print(f"  deskscore loops --warehouse {warehouse} --top 5")
    print(f"  deskscore cost --warehouse {warehouse}")
    return 0

"""`deskscore score`: every ingested run scored against one human data version and budget."""

from __future__ import annotations

from collections.abc import Sequence

import apache_beam as beam

from deskscore.collectors.formats import BY_INSTRUCTION, get, process_local
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.infra.runner import counters, pipeline
from deskscore.pipelines.jobs.score_inputs import inputs_digests, record, stale
from deskscore.pipelines.jobs.task_facts import (
    ensure_deskcraft_tasks,
    facts_by_benchmark,
    uses_deskcraft_tasks,
)
from deskscore.pipelines.stages.costs import ComputeCosts
from deskscore.pipelines.stages.loops import DetectLoops
from deskscore.pipelines.stages.scores import ScoreConfig, ScoreRuns
from deskscore.pipelines.stages.verdicts import ComputeVerdicts


def human_refs(
    warehouse: Warehouse, version: str, human_path: str | None = None
) -> list[tuple[str, str, int, int]]:
    """The human reference counts to score against, and make sure the warehouse holds them.

    With `human_path`, the OSWorld-Human folder is read and its tasks and human_refs are
    (re)written; otherwise the warehouse's own human_refs for `version` are used, and failing
    those the figures bundled with deskscore.
    """
    from deskscore.collectors.human import load_bundled, read_human_dir

    part = {"benchmark": "osworld", "data_version": version}
    if human_path:
        tasks, refs, quarantine = read_human_dir(human_path, version=version)
        warehouse.write("tasks", tasks, part)
        warehouse.write("human_refs", refs, {"human_version": version})
        if quarantine:
            warehouse.write(
                "quarantine", quarantine, {"benchmark": "osworld", "run_id": f"human-{version}"}
            )
    else:
        existing = warehouse.read("human_refs", {"human_version": version})
        if existing.num_rows:
            refs = existing.to_pylist()
        else:
            bundled = load_bundled(version)
            refs = [
                {
                    "human_version": version,
                    "domain": r["domain"],
                    "task_id": r["task_id"],
                    "alias_task_id": r.get("alias_task_id") or None,
                    "single_steps": int(r["single_steps"]),
                    "grouped_steps": int(r["grouped_steps"]),
                }
                for r in bundled
            ]
            warehouse.write("human_refs", refs, {"human_version": version})
    ordered = sorted(refs, key=lambda r: (r["domain"], r["task_id"]))
    return [
        (r["domain"], r["task_id"], int(r["single_steps"]), int(r["grouped_steps"]))
        for r in ordered
    ]


def human_by_instruction(warehouse: Warehouse, version: str) -> list[tuple[str, str, int, int]]:
    """('uitars', instruction, single, grouped) for runs whose format keys tasks by instruction
    (UI-TARS submissions).

    Instructions come from the `tasks` table, which only a human data folder fills
    (`--human-path`): the bundled figures carry ids and counts, no text.
    """
    from deskscore.scorers.run import UITARS_DOMAIN

    tasks = warehouse.read("tasks", {"benchmark": "osworld", "data_version": version}).to_pylist()
    refs = {
        (r["domain"], r["task_id"]): r
        for r in warehouse.read("human_refs", {"human_version": version}).to_pylist()
    }
    out = []
    for t in sorted(tasks, key=lambda t: (t["domain"], t["task_id"])):
        ref = refs.get((t["domain"], t["task_id"]))
        if ref is not None and t["instruction"] is not None:
            out.append(
                (
                    UITARS_DOMAIN,
                    t["instruction"],
                    int(ref["single_steps"]),
                    int(ref["grouped_steps"]),
                )
            )
    return out


def run_score(
    warehouse_root: str,
    *,
    human_version: str = "verified",
    max_steps_scoring: int = 15,
    compat: str = "deskscore",
    human_path: str | None = None,
    run_ids: Sequence[str] | None = None,
    loops: bool = True,
    costs: bool = True,
    prices: str | None = None,
    deskcraft_tasks: str | None = None,
    force: bool = False,
    compact: bool = True,
    workers: int | None = None,
    beam_args: Sequence[str] = (),
) -> dict[str, int]:
    """Score every run (or `run_ids`) of the warehouse, and in the same pipeline find its loops
    (`loop_spans`) and price its model calls (`llm_call_costs`, `episode_costs`, `run_costs`,
    with the bundled price table overridden by the `prices` file); returns the counters.
    Its `verdicts` stage writes each episode's archived verdict and the rules the archive lets
    it recompute. DeskCraft tasks (levels, modes) are read from `deskcraft_tasks` (an
    evaluation_examples folder) or, when the warehouse has none, from the bundled figures.
    Runs whose inputs are unchanged since they were last scored with this configuration are
    skipped (see `score_inputs`) unless `force`; afterwards small files are packed.
    Raises PriceError for a bad price file, before anything is written."""
    from deskscore.scorers.cost import load_prices

    table = load_prices(prices) if costs else None
    wh = Warehouse(warehouse_root)
    human = human_refs(wh, human_version, human_path)
    runs = wh.read("runs").select(["benchmark", "run_id", "format"]).to_pylist()
    keys = sorted(
        {
            (r["benchmark"], r["run_id"], r["format"])
            for r in runs
            if not run_ids or r["run_id"] in run_ids
        }
    )
    if deskcraft_tasks or uses_deskcraft_tasks(keys):
        ensure_deskcraft_tasks(wh, deskcraft_tasks)  # levels, modes and flags for the marts
    if not keys:
        return {"runs_scored": 0}
    config = ScoreConfig(human_version, max_steps_scoring, compat)
    by_instruction = (
        human_by_instruction(wh, human_version)
        if any(get(k[2]).human_key == BY_INSTRUCTION for k in keys)
        else []
    )
    facts = facts_by_benchmark(wh, keys, human_version)
    given = (config, human, by_instruction, sorted(facts.items()), loops, table)
    digests = inputs_digests(wh, keys, given)
    todo = stale(wh, keys, digests, config, force)
    skipped = len(keys) - len(todo)
    if not todo:
        return {"runs_scored": 0, "runs_unchanged": skipped}
    if process_local():
        workers = 1  # a format registered in this process: its runs are scored here
    p = pipeline(beam_args, parallel=len(todo), workers=workers)
    runs = p | "Runs" >> beam.Create(todo)
    _ = runs | "ScoreRuns" >> ScoreRuns(str(wh.root), human, config, by_instruction)
    _ = runs | "ComputeVerdicts" >> ComputeVerdicts(str(wh.root), facts)
    if loops:
        _ = runs | "DetectLoops" >> DetectLoops(str(wh.root))
    if table is not None:
        _ = runs | "ComputeCosts" >> ComputeCosts(str(wh.root), table)
    result = p.run()
    result.wait_until_finish()
    record(wh, todo, digests, config)
    if compact:
        wh.compact()
    return {**counters(result), "runs_unchanged": skipped}

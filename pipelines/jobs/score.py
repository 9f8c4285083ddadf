"""`deskscore score`: every ingested run scored under one configuration, with its verdicts,
loops and costs.

Wiring only: what the job is given (human references, task facts, prices) is loaded once,
before anything runs; runs whose inputs are unchanged since they were last scored this way
are skipped (`score_inputs`); the rest go through the per-run stages (scores, verdicts,
loops, costs); only when every stage's files are there is the job recorded as done, and the
figures it prints are read back from what was written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deskscore.collectors.formats import BY_INSTRUCTION, get
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.options import ScoreOptions
from deskscore.pipelines.stages.base import RunKey, RunStage
from deskscore.scorers.config import (
    DEFAULT_BOOTSTRAP_RESAMPLES,
    DEFAULT_BOOTSTRAP_SEED,
    ScoreConfig,
)

if TYPE_CHECKING:
    from deskscore.scorers.cost import PriceTable


class IncompleteJob(RuntimeError):
    """A job's pipeline finished but some run lacks a stage's output: nothing is recorded as
    done, so the next run of the job computes it again."""


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


@dataclass(frozen=True)
class ScoreResult:
    """What a score job did, read back from the warehouse after it finished."""

    runs_scored: int = 0
    runs_unchanged: int = 0
    episodes_scored: int = 0
    calls_priced: int = 0
    calls_unpriced: int = 0
    verdicts_archived: int = 0
    verdicts_recomputed: int = 0
    verdicts_disagree: int = 0
    trial_groups: int = 0
    """Run groups of two trials or more whose trial_scores were written."""
    engine: str = "direct"


@dataclass(frozen=True)
class ScoreInputs:
    """Everything a score job is given besides the runs, loaded once before anything runs:
    its digest (with each run's content) says whether a run's figures are still current."""

    config: ScoreConfig
    human: list[tuple[str, str, int, int]]
    human_by_instruction: list[tuple[str, str, int, int]]
    facts: dict[str, Any]
    loops: bool
    prices: PriceTable | None
    bootstrap: tuple[int, int] = (DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED)
    """(resamples, seed) of the intervals stage; 0 resamples: no intervals."""

    def digest_parts(self) -> tuple[Any, ...]:
        """What `score_inputs` digests, as values with a stable repr (the bootstrap settings
        only when not the defaults, so adding intervals rescored no warehouse)."""
        parts = (
            self.config,
            self.human,
            self.human_by_instruction,
            sorted(self.facts.items()),
            self.loops,
            self.prices,
        )
        default = (DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED)
        return parts if self.bootstrap == default else (*parts, ("bootstrap", self.bootstrap))

    def stages(self, warehouse: str, job: str | None = None) -> list[RunStage]:
        """The per-run stages of the job, in order (their writes part of transaction `job`)."""
        from deskscore.pipelines.stages.costs import CostsStage
        from deskscore.pipelines.stages.loops import LoopsStage
        from deskscore.pipelines.stages.scores import ScoresStage
        from deskscore.pipelines.stages.verdicts import VerdictsStage

        stages: list[RunStage] = [
            ScoresStage(warehouse, self.config, self.human, self.human_by_instruction, job=job),
            VerdictsStage(warehouse, self.facts, job=job),
        ]
        if self.loops:
            stages.append(LoopsStage(warehouse, job=job))
        if self.prices is not None:
            stages.append(CostsStage(warehouse, self.prices, job=job))
        resamples, seed = self.bootstrap
        if resamples > 0:  # after the costs: it resamples them too
            from deskscore.pipelines.stages.intervals import IntervalsStage

            stages.append(
                IntervalsStage(
                    warehouse,
                    self.config,
                    self.human,
                    self.human_by_instruction,
                    n_resamples=resamples,
                    seed=seed,
                    costs=self.prices is not None,
                    job=job,
                )
            )
        return stages


def load_inputs(
    options: ScoreOptions, wh: Warehouse, keys: list[RunKey], prices: PriceTable | None
) -> ScoreInputs:
    """What the job is given, read once (`prices`: the loaded price table, None without costs)."""
    from deskscore.pipelines.jobs.task_facts import facts_by_benchmark

    config = options.config
    return ScoreInputs(
        config=config,
        human=human_refs(wh, config.human_version, options.human_path),
        human_by_instruction=(
            human_by_instruction(wh, config.human_version)
            if any(get(k.format).human_key == BY_INSTRUCTION for k in keys)
            else []
        ),
        facts=facts_by_benchmark(wh, keys, config.human_version),
        loops=options.loops,
        prices=prices,
        bootstrap=(options.bootstrap_resamples, options.bootstrap_seed),
    )


def without_intervals(wh: Warehouse, keys: list[RunKey], inputs: ScoreInputs) -> list[RunKey]:
    """Runs scored before intervals existed (their figures current, their interval file
    missing): scored again, so every run of the warehouse gets its intervals."""
    from deskscore.pipelines.stages.intervals import TABLE

    if inputs.bootstrap[0] <= 0:
        return []
    return [k for k in keys if not wh.has_file(TABLE, k.partition, inputs.config.file)]


def check_outputs(wh: Warehouse, stages: list[RunStage], keys: list[RunKey]) -> None:
    """Raise IncompleteJob naming the runs that lack an output of a stage."""
    gaps = [(k.partition["run_id"], m) for k in keys for s in stages for m in s.missing(wh, k)]
    if gaps:
        listed = ", ".join(f"{run} ({what})" for run, what in gaps[:5])
        raise IncompleteJob(
            f"{len(gaps)} output file(s) missing after the pipeline finished: {listed}"
            + (" ..." if len(gaps) > 5 else "")
            + "; nothing was recorded as done: run the job again"
        )


def _figures(wh: Warehouse, keys: list[RunKey], options: ScoreOptions) -> dict[str, int]:
    """The figures `score` prints, counted in the files the job wrote."""
    from deskscore.scorers.verdicts import ARCHIVED, RECOMPUTED

    out = dict.fromkeys(
        ("episodes_scored", "calls_priced", "calls_unpriced", "verdicts_archived",
         "verdicts_recomputed", "verdicts_disagree"),
        0,
    )  # fmt: skip
    parts = [key.partition for key in keys]
    out["episodes_scored"] = wh.read_partitions(
        "episode_scores", parts, columns=["run_id"], file=options.config.file
    ).num_rows
    verdicts = wh.read_partitions("verdicts", parts, columns=["source", "agrees_with_archived"])
    for source, agrees in zip(*verdicts.to_pydict().values(), strict=True):
        if source == ARCHIVED:
            out["verdicts_archived"] += 1
        elif source == RECOMPUTED:
            out["verdicts_recomputed"] += 1
            out["verdicts_disagree"] += agrees is False
    if options.costs:
        costs = wh.read_partitions("llm_call_costs", parts, columns=["cost_usd"]).column(0)
        out["calls_unpriced"] = costs.null_count
        out["calls_priced"] = len(costs) - costs.null_count
    return out


def run_score(options: ScoreOptions) -> ScoreResult:
    """Score every run of the warehouse (or `options.runs`) under `options.config`, and in the
    same job recompute its verdicts, find its loops (`loop_spans`) and price its model calls
    (`llm_call_costs`, `episode_costs`, `run_costs`; the bundled price table overridden by
    `options.prices`). DeskCraft tasks (levels, modes) are read from `options.deskcraft_tasks`
    (an evaluation_examples folder) or, when the warehouse has none, from the bundled figures.
    Runs whose inputs are unchanged since they were last scored this way are skipped (see
    `score_inputs`) unless `options.force`; afterwards small files are packed. Raises
    PriceError for a bad price file, before anything is written."""
    from deskscore.pipelines.infra.runner import choose_engine, local_workers, run_stages
    from deskscore.pipelines.jobs.compaction import compact_tables, pack_as_written
    from deskscore.pipelines.jobs.score_inputs import inputs_digests, record, stale
    from deskscore.pipelines.jobs.task_facts import ensure_deskcraft_tasks, uses_deskcraft_tasks
    from deskscore.pipelines.stages.base import run_keys
    from deskscore.pipelines.stages.trials import TrialScores
    from deskscore.scorers.cost import load_prices

    prices = load_prices(options.prices) if options.costs else None  # fails before any write
    # One transaction: the figures, the task facts and human data they used, the trial
    # figures, the record that they are done, and the packing of small files become visible
    # together, or not at all.
    with Warehouse(options.warehouse).transaction() as wh:
        keys = run_keys(wh, options.runs)
        if options.deskcraft_tasks or uses_deskcraft_tasks(keys):
            ensure_deskcraft_tasks(wh, options.deskcraft_tasks)  # levels, modes, flags for marts
        if not keys:
            return ScoreResult()
        inputs = load_inputs(options, wh, keys, prices)
        digests = inputs_digests(wh, keys, inputs.digest_parts())
        todo = stale(wh, keys, digests, options.config, options.force)
        todo += without_intervals(wh, [k for k in keys if k not in todo], inputs)
        skipped = len(keys) - len(todo)
        groups = TrialScores(wh, options.config)  # after the per-run stages: see its doc
        if not todo:
            missing = groups.missing(k.benchmark for k in keys)
            trial_groups = groups.run() if missing else 0
            return ScoreResult(runs_unchanged=skipped, trial_groups=trial_groups)
        stages = inputs.stages(str(wh.root), wh.job)
        chosen = choose_engine(options.engine, len(todo), options.workers, options.beam_args)
        if pack_as_written(chosen, options.compact, len(todo)):
            for stage in stages:
                stage.pack_writes = True
        engine = run_stages(
            stages,
            todo,
            engine=options.engine,
            workers=options.workers,
            beam_args=options.beam_args,
        )
        check_outputs(wh, stages, todo)
        trial_groups = groups.run(k.partition["run_id"] for k in todo)
        record(wh, todo, digests, options.config)
        figures = _figures(wh, todo, options)
        if options.compact:  # the workers have exited: their cores pack (see compaction)
            threads = 1 if engine == "direct" else local_workers(len(todo), options.workers)
            compact_tables(wh, threads=threads)
    return ScoreResult(
        runs_scored=len(todo),
        runs_unchanged=skipped,
        trial_groups=trial_groups,
        engine=engine,
        **figures,
    )

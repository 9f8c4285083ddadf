"""The group step of `deskscore score`: trial figures (`trial_scores`) per run group.

It runs once per job, after the per-run stages, because a group's figures need every one of
its trials' episode scores: the runs sharing a `runs.run_group` (a run alone is its own group)
that have figures under the configuration being scored are its trials. The maths is
`deskscore.scorers.trials`; this only reads, groups and writes one file per benchmark and
configuration, rewritten whole each time (so a run that left or joined a group is counted
right), with rows in a fixed order, so the same figures give the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from deskscore.scorers.config import ScoreConfig

TABLE = "trial_scores"
VARIANCE = "trial_variance"
"""The standard error's split into within- and between-task parts, per group of trials."""


def _config_rows(wh: Any, name: str, columns: list[str], config: ScoreConfig) -> list[dict]:
    """Rows of a score table under `config` (its file in every run's partition)."""
    import pyarrow.compute as pc

    keys = ["human_version", "max_steps_scoring", "compat"]
    data = wh.read(name, columns=[*columns, *keys])
    human, budget, compat = config.key()
    mask = pc.and_(
        pc.and_(
            pc.equal(data.column("human_version"), human),
            pc.equal(data.column("max_steps_scoring"), budget),
        ),
        pc.equal(data.column("compat"), compat),
    )
    return data.filter(mask).select(columns).to_pylist()


class TrialScores:
    """Writes `trial_scores` for every run group of the warehouse under one configuration."""

    label = "trial groups"

    def __init__(self, wh: Any, config: ScoreConfig) -> None:
        self.wh = wh
        """The job's warehouse (its transaction: reads see the job's own writes)."""
        self.config = config

    def missing(self, benchmarks: Iterable[str]) -> bool:
        """Whether a benchmark of these lacks this configuration's trial_scores file."""
        wh = self.wh
        return any(
            not wh.has_file(TABLE, {"benchmark": b}, self.config.file) for b in set(benchmarks)
        )

    def run(self) -> int:
        """Compute and write every group's rows; returns the groups of two trials or more."""
        from deskscore.scorers.trials import tasks_of, trial_rows, variance_split

        wh = self.wh
        runs = wh.read("runs", columns=["run_id", "benchmark", "trial", "run_group"]).to_pylist()
        scored = {r["run_id"] for r in _config_rows(wh, "run_scores", ["run_id"], self.config)}
        outcomes: dict[str, list[tuple[str, str, float | None, bool | None]]] = {}
        columns = ["run_id", "domain", "task_id", "reward", "success"]
        for e in _config_rows(wh, "episode_scores", columns, self.config):
            outcomes.setdefault(e["run_id"], []).append(
                (e["domain"], e["task_id"], e["reward"], e["success"])
            )
        groups: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
        for r in runs:
            group = r["run_group"] or r["run_id"]
            groups.setdefault((r["benchmark"], group), [])
            if r["run_id"] in scored:
                groups[(r["benchmark"], group)].append((r["run_id"], r["trial"]))
        config = {
            "human_version": self.config.human_version,
            "max_steps_scoring": self.config.max_steps_scoring,
            "compat": self.config.compat,
        }
        by_benchmark: dict[str, list[dict[str, Any]]] = {r["benchmark"]: [] for r in runs}
        variance: dict[str, list[dict[str, Any]]] = {r["benchmark"]: [] for r in runs}
        several = 0
        for (benchmark, group), trials in sorted(groups.items()):
            if not trials:
                continue
            several += len(trials) > 1
            tasks = tasks_of(o for run_id, _ in trials for o in outcomes.get(run_id, ()))
            by_benchmark[benchmark].extend(trial_rows(group, benchmark, config, trials, tasks))
            if len(trials) > 1:
                split = variance_split(tasks)._asdict()
                split["mean_success"] = split.pop("mean")
                variance[benchmark].append(
                    {"run_group": group, "benchmark": benchmark, **config}
                    | {"n_trials": len(trials)}
                    | split
                )
        for benchmark, rows in sorted(by_benchmark.items()):
            part = {"benchmark": benchmark}
            if rows:
                wh.write(TABLE, rows, part, file=self.config.file)
            else:
                wh.remove(TABLE, part, file=self.config.file)
            if variance[benchmark]:
                wh.write(VARIANCE, variance[benchmark], part, file=self.config.file)
            else:
                wh.remove(VARIANCE, part, file=self.config.file)
        return several


__all__ = ["TABLE", "VARIANCE", "TrialScores"]

"""The group step of `deskscore score`: trial figures (`trial_scores`) per run group.

It runs once per job, after the per-run stages, because a group's figures need every one of
its trials' episode scores: the runs sharing a `runs.run_group` (a run alone is its own group)
that have figures under the configuration being scored are its trials. The maths is
`deskscore.scorers.trials`; this only reads, groups and writes one file per benchmark and
configuration, rewritten whole each time (so a run that left or joined a group is counted
right), with rows in a fixed order, so the same figures give the same bytes. Only the groups
of the runs a job scored, and those whose trials changed, are computed again; the others keep
their stored rows (a change to the maths bumps the scorers' version, which re-scores every
run and so every group).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from deskscore.pipelines.stages.base import config_rows
from deskscore.scorers.config import ScoreConfig

TABLE = "trial_scores"
VARIANCE = "trial_variance"
"""The standard error's split into within- and between-task parts, per group of trials."""

Rows = dict[str, list[dict[str, Any]]]
"""A table's rows by benchmark."""


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

    def run(self, changed: Iterable[str] | None = None) -> int:
        """Write every group's rows; returns the groups of two trials or more.

        A group is computed again when one of its trials is among `changed` (the run ids this
        job scored; None: every group) or its trials are not the ones its stored rows name
        (a run joined, left or was dropped); any other group keeps its stored rows, which the
        same scores would give again. So a job reads the episode scores of its own runs'
        groups, not of the whole warehouse."""
        by_benchmark, variance, several = self._rows(changed)
        for benchmark, rows in sorted(by_benchmark.items()):
            part = {"benchmark": benchmark}
            if rows:
                self.wh.write(TABLE, rows, part, file=self.config.file)
            else:
                self.wh.remove(TABLE, part, file=self.config.file)
            if variance[benchmark]:
                self.wh.write(VARIANCE, variance[benchmark], part, file=self.config.file)
            else:
                self.wh.remove(VARIANCE, part, file=self.config.file)
        return several

    def _rows(self, changed: Iterable[str] | None) -> tuple[Rows, Rows, int]:
        """`run`'s rows of both tables by benchmark, and the groups of two trials or more."""
        from deskscore.scorers.trials import tasks_of, trial_order, trial_rows, variance_split

        changed = None if changed is None else set(changed)
        wh = self.wh
        runs = wh.read("runs", columns=["run_id", "benchmark", "trial", "run_group"]).to_pylist()
        scored = {r["run_id"] for r in config_rows(wh, "run_scores", ["run_id"], self.config)}
        groups: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
        for r in runs:
            group = r["run_group"] or r["run_id"]
            groups.setdefault((r["benchmark"], group), [])
            if r["run_id"] in scored:
                groups[(r["benchmark"], group)].append((r["run_id"], r["trial"]))
        benchmarks = sorted({r["benchmark"] for r in runs})
        stored = self._stored(TABLE, benchmarks)
        stored_split = self._stored(VARIANCE, benchmarks)
        redo = set()
        for key, trials in groups.items():
            rows = stored.get(key)
            members = (rows[0]["run_ids"], rows[0]["trials"]) if rows else None
            kept = trial_order(trials) == members and (len(trials) < 2 or key in stored_split)
            if trials and (not kept or changed is None or any(r in changed for r, _ in trials)):
                redo.add(key)
        outcomes: dict[str, list[tuple[str, str, float | None, bool | None]]] = {}
        columns = ["run_id", "domain", "task_id", "reward", "success"]
        parts = [
            {"benchmark": benchmark, "run_id": run_id}
            for benchmark, group in sorted(redo)
            for run_id, _ in groups[(benchmark, group)]
        ]
        for e in config_rows(wh, "episode_scores", columns, self.config, parts):
            outcomes.setdefault(e["run_id"], []).append(
                (e["domain"], e["task_id"], e["reward"], e["success"])
            )
        config = {
            "human_version": self.config.human_version,
            "max_steps_scoring": self.config.max_steps_scoring,
            "compat": self.config.compat,
        }
        by_benchmark: dict[str, list[dict[str, Any]]] = {b: [] for b in benchmarks}
        variance: dict[str, list[dict[str, Any]]] = {b: [] for b in benchmarks}
        several = 0
        for (benchmark, group), trials in sorted(groups.items()):
            if not trials:
                continue
            several += len(trials) > 1
            if (benchmark, group) not in redo:
                by_benchmark[benchmark].extend(stored[(benchmark, group)])
                variance[benchmark].extend(stored_split.get((benchmark, group), []))
                continue
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
        return by_benchmark, variance, several

    def _stored(self, name: str, benchmarks: list[str]) -> dict[tuple[str, str], list[dict]]:
        """The rows `name` holds under this configuration, by (benchmark, run group); none
        from a file that is gone (its groups are computed again)."""
        out: dict[tuple[str, str], list[dict]] = {}
        for benchmark in benchmarks:
            part = {"benchmark": benchmark}
            if not self.wh.has_file(name, part, self.config.file):
                continue
            for row in self.wh.read(name, part, file=self.config.file).to_pylist():
                out.setdefault((benchmark, row["run_group"]), []).append(row)
        return out


__all__ = ["TABLE", "VARIANCE", "TrialScores"]

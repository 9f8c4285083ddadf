"""The verdicts stage of `deskscore score`: each run's archived and recomputed verdicts.

One file per source in a run's `verdicts` partition (`archived.parquet`, `recomputed.parquet`)
so the judge, which writes `judged.parquet`, never erases these rows nor they its. The rules
are `deskscore.scorers.verdicts`; this stage only reads the run's episodes and the last
executed step of each, and writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deskscore.pipelines.stages.base import RunKey, RunStage

_STEP_COLUMNS = ["domain", "task_id", "step_idx", "action_kind", "info_json"]


class VerdictsStage(RunStage):
    """A run's episodes and last executed steps -> its archived and recomputed verdict files.

    `facts` holds, per task family, each task's (infeasible, conj) as the task index has them.
    """

    label = "verdicts"
    writes = ("verdicts",)

    def outputs(self) -> list[tuple[str, str]]:
        from deskscore.scorers.verdicts import ARCHIVED, RECOMPUTED

        return [("verdicts", ARCHIVED), ("verdicts", RECOMPUTED)]

    def __init__(
        self,
        warehouse: str,
        facts: Mapping[str, Mapping[tuple[str, str], Any]],
        job: str | None = None,
    ) -> None:
        super().__init__(warehouse, job)
        self.facts = {k: dict(v) for k, v in facts.items()}

    def run(self, key: RunKey) -> None:
        from deskscore.collectors.formats import task_family
        from deskscore.scorers.verdicts import (
            ARCHIVED,
            RECOMPUTED,
            episode_verdicts,
            last_action_is_fail,
        )

        part = key.partition
        episodes = self.wh.read("episodes", part).to_pylist()
        steps: dict[tuple[str, str], list[dict]] = {}
        for s in self.wh.read("steps", part, columns=_STEP_COLUMNS).to_pylist():
            steps.setdefault((s["domain"], s["task_id"]), []).append(s)
        facts = self.facts.get(task_family(key.benchmark, key.format), {})
        rows: list[dict[str, Any]] = []
        for ep in sorted(episodes, key=lambda e: (e["domain"], e["task_id"])):
            ep_steps = sorted(
                steps.get((ep["domain"], ep["task_id"]), ()), key=lambda s: s["step_idx"]
            )
            fact = facts.get((ep["domain"], ep["task_id"]))
            rows.extend(
                episode_verdicts(
                    ep,
                    last_is_fail=last_action_is_fail(ep_steps),
                    infeasible=fact[0] if fact is not None else None,
                    task_conj=fact[1] if fact is not None else None,
                )
            )
        by_source: dict[str, list[dict[str, Any]]] = {ARCHIVED: [], RECOMPUTED: []}
        for r in rows:
            by_source[r["source"]].append(r)
        for source, items in by_source.items():
            self.wh.write("verdicts", items, part, file=source)

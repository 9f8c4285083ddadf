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
            EPISODE_INPUTS,
            RECOMPUTED,
            episode_verdicts,
            last_action_is_fail,
        )

        part = key.partition
        episodes = self.wh.read("episodes", part, columns=list(EPISODE_INPUTS)).to_pylist()
        last = _last_executed(self.wh.read("steps", part, columns=_STEP_COLUMNS))
        facts = self.facts.get(task_family(key.benchmark, key.format), {})
        rows: list[dict[str, Any]] = []
        for ep in sorted(episodes, key=lambda e: (e["domain"], e["task_id"])):
            step = last.get((ep["domain"], ep["task_id"]))
            fact = facts.get((ep["domain"], ep["task_id"]))
            rows.extend(
                episode_verdicts(
                    ep,
                    last_is_fail=last_action_is_fail([step] if step is not None else []),
                    infeasible=fact[0] if fact is not None else None,
                    task_conj=fact[1] if fact is not None else None,
                )
            )
        by_source: dict[str, list[dict[str, Any]]] = {ARCHIVED: [], RECOMPUTED: []}
        for r in rows:
            by_source[r["source"]].append(r)
        for source, items in by_source.items():
            self.wh.write("verdicts", items, part, file=source)


def _last_executed(steps: Any) -> dict[tuple[str, str], dict[str, Any]]:
    """Each episode's last executed step row (by step_idx), from the run's step columns: only
    those rows become dicts (a run has tens of thousands of steps, and the rules read one per
    episode)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from deskscore.scorers.verdicts import NOT_EXECUTED

    kinds = pa.array(sorted(NOT_EXECUTED), type=pa.string())
    skipped = pc.fill_null(pc.is_in(steps["action_kind"], value_set=kinds), False)
    executed = steps.filter(pc.invert(skipped)).sort_by(
        [("domain", "ascending"), ("task_id", "ascending"), ("step_idx", "ascending")]
    )
    at: dict[tuple[str, str], int] = {}
    episode = zip(executed["domain"].to_pylist(), executed["task_id"].to_pylist(), strict=True)
    for i, k in enumerate(episode):
        at[k] = i  # the last row of each episode wins
    rows = executed.take(pa.array(list(at.values()), type=pa.int64())).to_pylist()
    return dict(zip(at, rows, strict=True))

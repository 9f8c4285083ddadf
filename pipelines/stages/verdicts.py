"""The verdicts stage of `deskscore score`: each run's archived and recomputed verdicts.

One file per source in a run's `verdicts` partition (`archived.parquet`, `recomputed.parquet`)
so the judge, which writes `judged.parquet`, never erases these rows nor they its. The rules
are `deskscore.scorers.verdicts`; this stage only reads the run's episodes and the last
executed step of each, and writes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics

from deskscore.pipelines.infra import progress
from deskscore.pipelines.infra.memory import per_run

_STEP_COLUMNS = ["domain", "task_id", "step_idx", "action_kind", "info_json"]


class VerdictsFn(beam.DoFn):
    """(benchmark, run_id, format, ...) -> paths of the run's verdict files."""

    def __init__(self, warehouse: str, facts: Mapping[str, Mapping[tuple[str, str], Any]]) -> None:
        self.warehouse = warehouse
        self.facts = {k: dict(v) for k, v in facts.items()}
        self.archived = Metrics.counter("verdicts", "verdicts_archived")
        self.recomputed = Metrics.counter("verdicts", "verdicts_recomputed")
        self.disagree = Metrics.counter("verdicts", "verdicts_disagree")

    def setup(self) -> None:
        from deskscore.collectors.warehouse import Warehouse

        self._wh = Warehouse(self.warehouse)

    @per_run
    def process(self, key: tuple[str, ...]) -> Iterator[str]:
        """key: (benchmark, run_id, format[, ...])."""
        from deskscore.collectors.formats import task_family
        from deskscore.scorers.verdicts import (
            ARCHIVED,
            RECOMPUTED,
            episode_verdicts,
            last_action_is_fail,
        )

        benchmark, run_id, fmt = key[:3]
        part = {"benchmark": benchmark, "run_id": run_id}
        episodes = self._wh.read("episodes", part).to_pylist()
        steps: dict[tuple[str, str], list[dict]] = {}
        for s in self._wh.read("steps", part, columns=_STEP_COLUMNS).to_pylist():
            steps.setdefault((s["domain"], s["task_id"]), []).append(s)
        facts = self.facts.get(task_family(benchmark, fmt), {})
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
        by_source = {ARCHIVED: [], RECOMPUTED: []}
        for r in rows:
            by_source[r["source"]].append(r)
        self.archived.inc(len(by_source[ARCHIVED]))
        self.recomputed.inc(len(by_source[RECOMPUTED]))
        self.disagree.inc(
            sum(1 for r in by_source[RECOMPUTED] if r["agrees_with_archived"] is False)
        )
        progress.tick("verdicts")
        for source, items in by_source.items():
            yield str(self._wh.write("verdicts", items, part, file=source))


class ComputeVerdicts(beam.PTransform):
    """(benchmark, run_id, format, ...) keys -> verdict files written (archived, recomputed)."""

    def __init__(self, warehouse: str, facts: Mapping[str, Mapping[tuple[str, str], Any]]) -> None:
        super().__init__()
        self.fn = VerdictsFn(warehouse, facts)

    def expand(self, runs: beam.PCollection) -> beam.PCollection:
        return runs | "Spread" >> beam.Reshuffle() | "Verdicts" >> beam.ParDo(self.fn)

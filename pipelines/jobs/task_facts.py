"""The task facts scoring needs beyond the runs: which tasks are infeasible, how metrics combine.

OSWorld's come from the `tasks` table an OSWorld-Human folder filled (`--human-path`), else
from the figures bundled with deskscore. DeskCraft's come from the `tasks` table, which
`ensure_deskcraft_tasks` fills from a DeskCraft `evaluation_examples` folder or, failing one,
from the bundled `datasets/deskcraft_tasks.csv`, so levels and modes can be sliced right
after scoring.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deskscore.collectors.formats import FAMILY_DESKCRAFT, FAMILY_OSWORLD, task_family
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.stages.base import RunKey

TaskFacts = dict[tuple[str, str], tuple[bool, str | None]]
"""(domain, task_id) -> (infeasible, conj)."""


def ensure_deskcraft_tasks(wh: Warehouse, tasks_path: str | None = None) -> list[dict]:
    """Write DeskCraft's `tasks` partition from `tasks_path` (its quarantine too) or, when the
    warehouse has none yet, from the bundled figures; returns the quarantine rows written."""
    from deskscore.collectors.deskcraft_tasks import (
        BENCHMARK,
        DATA_VERSION,
        load_bundled_tasks,
        read_deskcraft_tasks,
    )

    part = {"benchmark": BENCHMARK, "data_version": DATA_VERSION}
    quarantine: list[dict] = []
    if tasks_path:
        rows, quarantine = read_deskcraft_tasks(tasks_path)
        wh.write("tasks", rows, part)
        qpart = {"benchmark": BENCHMARK, "run_id": "tasks-deskcraft"}
        if quarantine:
            wh.write("quarantine", quarantine, qpart, file="tasks")
        else:
            wh.remove("quarantine", qpart, file="tasks")
    elif not wh.read("tasks", part, columns=["task_id"]).num_rows:
        wh.write("tasks", load_bundled_tasks(), part)
    return quarantine


def task_facts(wh: Warehouse, family: str, human_version: str) -> TaskFacts:
    """Infeasible flag and conj of every task the runs of a task-facts family
    (`deskscore.collectors.formats.task_family`) may name."""
    if family == FAMILY_DESKCRAFT:
        rows = wh.read("tasks", columns=["benchmark", "domain", "task_id", "infeasible", "conj"])
        return {
            (r["domain"], r["task_id"]): (bool(r["infeasible"]), r["conj"])
            for r in rows.to_pylist()
            if r["benchmark"] == FAMILY_DESKCRAFT
        }
    stored = wh.read("tasks", {"benchmark": FAMILY_OSWORLD, "data_version": human_version})
    if stored.num_rows:
        return {
            (r["domain"], r["task_id"]): (bool(r["infeasible"]), r["conj"])
            for r in stored.to_pylist()
        }
    from deskscore.collectors.human import load_bundled

    return {
        (r["domain"], r["task_id"]): (bool(r["infeasible"]), None)
        for r in load_bundled(human_version)
    }


def uses_deskcraft_tasks(keys: Sequence[RunKey]) -> bool:
    """Whether any run takes DeskCraft's task facts, so its `tasks` partition must exist
    (levels, modes and flags for the marts)."""
    return any(task_family(k.benchmark, k.format) == FAMILY_DESKCRAFT for k in keys)


def facts_by_benchmark(
    wh: Warehouse, keys: Sequence[RunKey], human_version: str
) -> dict[str, TaskFacts]:
    """The facts each run needs, one lookup per family (`task_family`: the format's,
    DeskCraft's for every DeskCraft-benchmark run)."""
    out: dict[str, Any] = {}
    for key in keys:
        family = task_family(key.benchmark, key.format)
        if family not in out:
            out[family] = task_facts(wh, family, human_version)
    return out

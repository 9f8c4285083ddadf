"""Reading DeskCraft's task definitions into `tasks` rows, and the figures bundled from them.

DeskCraft (REFERENCE.md section 3) lists its 538 tasks in two index files,
`evaluation_examples/standard_task.json` and `interactive_task.json` (app key -> file stems),
and defines each in `evaluation_examples/ubuntu_examples/<app>/<stem>.json`. The stem, not the
file's `id`, is the task id here: run folders are named by it, and two standard tasks of the
calc app share one `id` under different levels (L1_ and L2_ stems).

Levels have three sources that disagree (386 standard tasks): the stem prefix (L1_/L2_/L3_;
interactive stems start INTERACTIVE_ and carry none), the file's `difficulty` field (absent on
35 standard and 63 interactive tasks), and the paper's figure, which exists only as totals
(`PAPER_LEVEL_TOTALS`). Both per-task sources are kept (`level_stem`, `level_difficulty`);
every mart names the one it uses.

`datasets/deskcraft_tasks.csv` holds the figures of every task (ids, app, domain, split,
levels, mode, triggers, counts; no task text), written by `python -m
deskscore.collectors.deskcraft_tasks <evaluation_examples> <csv>` from mrwwk/DeskCraft at
3e11457, so that a machine without the task files can still slice runs by level and mode.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from deskscore.collectors.files import read_regular
from deskscore.collectors.ids import source_id
from deskscore.collectors.json_text import parse_error

BENCHMARK = "deskcraft"
DATA_VERSION = "main"
"""DeskCraft publishes one task set; its rows live in one `tasks` partition, rewritten whole."""
SOURCE_FILES = "deskcraft"
SOURCE_BUNDLED = "deskcraft-bundled"

SPLITS: dict[str, str] = {
    "standard": "standard_task.json",
    "interactive": "interactive_task.json",
}
"""Split name -> index file under evaluation_examples/."""

CATEGORIES: dict[str, str] = {
    "writ": "Office",
    "calc": "Office",
    "impr": "Office",
    "chrome": "Browser",
    "vscode": "Development",
    "os": "Development",
    "gimp": "Creative Design",
    "inkscape": "Creative Design",
    "kdenlive": "Multimedia & 3D",
    "audacity": "Multimedia & 3D",
    "blender": "Multimedia & 3D",
    "multi_app": "Multi-app",
}
"""App key -> DeskCraft domain (REFERENCE.md section 3); multi-app workflows are their own."""

APPS: tuple[str, ...] = tuple(sorted(CATEGORIES))

LEVELS: tuple[str, ...] = ("L1", "L2", "L3")
PAPER_LEVEL_TOTALS: dict[str, int] = {"L1": 141, "L2": 137, "L3": 108}
"""The paper's per-level task counts (standard split). Only totals exist, no per-task list,
so no table can use this source; it is kept to show how far the other two are from it."""

MODES: dict[str, str] = {
    "ambiguous_instruction": "clarification",
    "ambiguous_detail": "clarification",
    "ambiguous_scope": "clarification",
    "ambiguous_target": "clarification",
    "requirement_change": "requirement_change",
    "progressive_refinement": "progressive_refinement",
    "interruption": "interruption",
    "task_interruption": "interruption",
    "correction": "correction",
    "error_correction": "correction",
    "multi_step_workflow": "workflow",
}
"""scenario_type -> collaboration mode. Any other ambiguous_* type is a clarification too."""

TRIGGER_DEFAULT = "agent_done"
"""What DeskCraft's runner does for a phase that names no trigger."""


def level_from_stem(stem: str) -> str | None:
    """L1/L2/L3 from a stem prefix such as 'L2_calc_<uuid>'; None for INTERACTIVE_ stems."""
    prefix = stem.split("_", 1)[0]
    return prefix if prefix in LEVELS else None


def level_from_difficulty(value: Any) -> str | None:
    """The `difficulty` field when it is one of L1/L2/L3 (any case, spaces ignored)."""
    if not isinstance(value, str):
        return None
    norm = value.strip().upper()
    return norm if norm in LEVELS else None


def mode_of(scenario_type: Any) -> str | None:
    """Collaboration mode of a scenario_type: None when untyped, 'other' when unknown."""
    if not isinstance(scenario_type, str) or not scenario_type.strip():
        return None
    key = scenario_type.strip().lower()
    if key in MODES:
        return MODES[key]
    return "clarification" if key.startswith("ambiguous_") else "other"


def trigger_label(trigger: Any) -> str | None:
    """'agent_done', 'agent_asks', 'step_count:3', ...; None for a trigger of the wrong shape."""
    if trigger is None:
        return TRIGGER_DEFAULT
    if not isinstance(trigger, Mapping):
        return None
    kind = trigger.get("type", TRIGGER_DEFAULT)
    if not isinstance(kind, str) or not kind:
        return None
    value = trigger.get("value")
    if value is None:
        return kind
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    return f"{kind}:{value}"


def _per_metric(value: Any, n: int) -> list[Any]:
    """A getter/options entry spread over `n` metrics: lists are per metric, else shared."""
    if isinstance(value, list):
        return value
    return [value] * n


def evaluator_funcs(evaluator: Mapping[str, Any]) -> list[str] | None:
    """Metric function names in order; None when `func` is neither a name nor a list of names."""
    func = evaluator.get("func")
    if isinstance(func, str):
        return [func]
    if isinstance(func, list) and func and all(isinstance(f, str) for f in func):
        return list(func)
    return None


def _leaves(value: Any) -> int:
    if isinstance(value, Mapping):
        return sum(_leaves(v) for k, v in value.items() if k != "type")
    if isinstance(value, list):
        return sum(_leaves(v) for v in value)
    return 1


def count_rule_atoms(evaluator: Mapping[str, Any]) -> int:
    """How many atomic checks the evaluator's rules hold.

    An atom is one scalar leaf of a `rules` object, wherever a metric has one: in its
    `expected` getter (types rule, rule_relativeTime, ...) and in its `options`
    (compare_table's list of sheet rules). Each scalar value counts once, each element of a
    list once, nested objects and lists are walked; `type` keys are not atoms, they select
    a rule's form (`{"type": "url", "url": ...}` is one atom). Tolerances and other
    parameters count: the definition is mechanical, reproducible from the file alone, and
    needs no knowledge of the hundred-odd metric functions. Metrics that compare against a
    gold file or a command output with no rules add no atom (they count in n_evaluators).
    """
    funcs = evaluator_funcs(evaluator) or []
    n = max(len(funcs), 1)
    total = 0
    for entry in (
        *_per_metric(evaluator.get("expected"), n),
        *_per_metric(evaluator.get("options"), n),
    ):
        if isinstance(entry, Mapping) and "rules" in entry:
            total += _leaves(entry["rules"])
    return total


class TaskFile(NamedTuple):
    """One task named by an index: its app key, stem, split and path under the data root."""

    app: str
    stem: str
    split: str
    location: str


def task_row(task: TaskFile, obj: Mapping[str, Any]) -> dict[str, Any]:
    """The `tasks` row of one parsed task file (fields of the wrong type stay null)."""
    evaluator = obj.get("evaluator")
    evaluator = evaluator if isinstance(evaluator, Mapping) else {}
    funcs = evaluator_funcs(evaluator)
    phases = obj.get("phases")
    phases = phases if isinstance(phases, list) else []
    triggers = [trigger_label(p.get("trigger")) if isinstance(p, Mapping) else None for p in phases]
    instruction = obj.get("instruction")
    if not isinstance(instruction, str) and phases and isinstance(phases[0], Mapping):
        instruction = phases[0].get("instruction")  # what the agent is told first
    apps = obj.get("related_apps")
    conj = evaluator.get("conj")
    scenario = obj.get("scenario_type")
    return {
        "benchmark": BENCHMARK,
        "data_version": DATA_VERSION,
        "domain": task.app,
        "task_id": task.stem,
        "instruction": instruction if isinstance(instruction, str) else None,
        "related_apps": apps
        if isinstance(apps, list) and all(isinstance(a, str) for a in apps)
        else None,
        "snapshot": obj.get("snapshot") if isinstance(obj.get("snapshot"), str) else None,
        "evaluator_funcs": funcs,
        "conj": conj if isinstance(conj, str) else None,
        "infeasible": bool(funcs and "infeasible" in funcs),
        "source": SOURCE_FILES,
        "source_file": task.location,
        "category": CATEGORIES.get(task.app),
        "split": task.split,
        "level_stem": level_from_stem(task.stem),
        "level_difficulty": level_from_difficulty(obj.get("difficulty")),
        "mode": mode_of(scenario),
        "scenario_type": scenario if isinstance(scenario, str) else None,
        "n_phases": len(phases),
        "triggers": triggers if all(t is not None for t in triggers) else None,
        "n_evaluators": len(funcs) if funcs is not None else None,
        "n_rule_atoms": count_rule_atoms(evaluator),
    }


def _quarantine(source: str, location: str, reason: str, message: str, excerpt: str | None) -> dict:
    return {
        "run_id": source_id(source),
        "benchmark": BENCHMARK,
        "source": source,
        "location": location,
        "line_no": None,
        "reason": reason,
        "message": message,
        "excerpt": excerpt[:200] if excerpt is not None else None,
    }


_TODO = "the task is left out of the tasks table; fix the file and read the folder again"


def _index_entries(root: Path, source: str, quarantine: list[dict]) -> list[TaskFile]:
    """Every (app, stem, split) the two index files name; a bad index is quarantined."""
    out: list[TaskFile] = []
    for split, name in SPLITS.items():
        path = root / name
        try:
            index = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as e:
            quarantine.append(_quarantine(source, name, "unreadable_index",
                              f"{source}/{name}: cannot read the {split} index ({e}); its tasks "
                              "are left out", None))  # fmt: skip
            continue
        if not isinstance(index, Mapping):
            quarantine.append(_quarantine(source, name, "not_an_object",
                              f"{source}/{name}: the index is not an object of app -> stems",
                              None))  # fmt: skip
            continue
        for app, stems in index.items():
            if not isinstance(stems, list) or not all(isinstance(s, str) for s in stems):
                quarantine.append(_quarantine(source, name, "bad_index_entry",
                                  f"{source}/{name}: app {app!r} does not list stems", None))  # fmt: skip
                continue
            out.extend(TaskFile(app, s, split, f"ubuntu_examples/{app}/{s}.json") for s in stems)
    return out


def read_deskcraft_tasks(
    root: str | Path, source: str | None = None
) -> tuple[list[dict], list[dict]]:
    """(tasks rows, quarantine rows) from an `evaluation_examples` folder.

    A task file that is missing, not UTF-8, not JSON, not an object or without an evaluator
    becomes a quarantine row naming the file, and the others are read; so does a stem listed
    twice, and a task file no index names (it is read as no split: left out). Rows are sorted
    by (app, stem).
    """
    base = Path(root)
    src = source or str(root)
    quarantine: list[dict] = []
    rows: list[dict] = []
    seen: set[tuple[str, str]] = set()
    for task in _index_entries(base, src, quarantine):
        where = f"{src}/{task.location}"
        if (task.app, task.stem) in seen:
            quarantine.append(_quarantine(src, task.location, "duplicate_task",
                              f"{where}: listed twice in the indexes; read once", task.stem))  # fmt: skip
            continue
        seen.add((task.app, task.stem))
        try:
            raw = read_regular(str(base / task.location))  # never a FIFO or a device
        except OSError as e:
            quarantine.append(_quarantine(src, task.location, "missing_task_file",
                              f"{where}: the index names it but it cannot be read ({e}); {_TODO}",
                              None))  # fmt: skip
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            quarantine.append(_quarantine(src, task.location, "not_utf8",
                              f"{where}: not UTF-8 ({e}); {_TODO}",
                              raw[:200].decode("utf-8", "replace")))  # fmt: skip
            continue
        except (ValueError, RecursionError) as e:
            quarantine.append(_quarantine(src, task.location, "invalid_json",
                              f"{where}: truncated or invalid JSON ({parse_error(e)}); {_TODO}",
                              raw[:200].decode("utf-8", "replace")))  # fmt: skip
            continue
        if not isinstance(obj, Mapping):
            quarantine.append(_quarantine(src, task.location, "not_an_object",
                              f"{where}: JSON {type(obj).__name__} where a task object was "
                              f"expected; {_TODO}", raw[:200].decode("utf-8", "replace")))  # fmt: skip
            continue
        if (
            not isinstance(obj.get("evaluator"), Mapping)
            or evaluator_funcs(obj["evaluator"]) is None
        ):
            quarantine.append(_quarantine(src, task.location, "no_evaluator",
                              f"{where}: no evaluator with a func name (or list of names); "
                              f"{_TODO}", raw[:200].decode("utf-8", "replace")))  # fmt: skip
            continue
        rows.append(task_row(task, obj))
    listed = {(t["domain"], t["task_id"]) for t in rows} | seen
    examples = base / "ubuntu_examples"
    if examples.is_dir():
        for path in sorted(examples.glob("*/*.json")):
            key = (path.parent.name, path.stem)
            if key not in listed:
                loc = f"ubuntu_examples/{key[0]}/{path.name}"
                quarantine.append(_quarantine(src, loc, "unindexed_task_file",
                                  f"{src}/{loc}: no index names this task, so it has no split; "
                                  "add its stem to standard_task.json or interactive_task.json",
                                  key[1]))  # fmt: skip
    rows.sort(key=lambda r: (r["domain"], r["task_id"]))
    return rows, quarantine


# --------------------------------------------------------------------------- bundled figures

FIGURE_COLUMNS: tuple[str, ...] = (
    "task_id",
    "app",
    "category",
    "split",
    "level_stem",
    "level_difficulty",
    "mode",
    "scenario_type",
    "n_phases",
    "triggers",
    "n_evaluators",
    "n_rule_atoms",
    "evaluator_funcs",
    "conj",
    "infeasible",
    "related_apps",
)
"""Columns of `datasets/deskcraft_tasks.csv`: ids, slices and counts of each task, no text.
List cells are joined with ';' (no id, trigger or function name holds one)."""

_LISTS = ("triggers", "evaluator_funcs", "related_apps")
_INTS = ("n_phases", "n_evaluators", "n_rule_atoms")
BUNDLED_FILE = "deskcraft_tasks.csv"


def figures_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """The figures table of `tasks` rows, as CSV text (LF line ends, sorted by app, stem)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(FIGURE_COLUMNS)
    for r in sorted(rows, key=lambda r: (r["domain"], r["task_id"])):
        cells = []
        for col in FIGURE_COLUMNS:
            v = r["domain"] if col == "app" else r.get(col)
            if col in _LISTS:
                v = ";".join(v) if v is not None else ""
            elif isinstance(v, bool):
                v = "true" if v else "false"
            cells.append("" if v is None else str(v))
        w.writerow(cells)
    return out.getvalue()


def parse_figures_csv(text: str) -> list[dict[str, Any]]:
    """`tasks` rows (source deskcraft-bundled, no instruction or snapshot) from figures CSV."""
    rows = []
    for rec in csv.DictReader(io.StringIO(text)):
        row: dict[str, Any] = {
            "benchmark": BENCHMARK,
            "data_version": DATA_VERSION,
            "domain": rec["app"],
            "task_id": rec["task_id"],
            "source": SOURCE_BUNDLED,
            "source_file": BUNDLED_FILE,
        }
        for col in FIGURE_COLUMNS[2:]:
            v: Any = rec[col]
            if col in _LISTS:
                v = v.split(";") if v else ([] if col == "triggers" else None)
            elif col in _INTS:
                v = int(v) if v else None
            elif col == "infeasible":
                v = v == "true"
            else:
                v = v or None
            row[col] = v
        rows.append(row)
    return rows


@cache
def _bundled_text() -> str:
    from importlib import resources

    return resources.files("deskscore.datasets").joinpath(BUNDLED_FILE).read_text(encoding="utf-8")


def load_bundled_tasks() -> list[dict[str, Any]]:
    """The `tasks` rows of the figures shipped with deskscore (one per DeskCraft task)."""
    return parse_figures_csv(_bundled_text())


def main(argv: Sequence[str] | None = None) -> int:
    """Write the figures CSV from an `evaluation_examples` folder; quarantined files are
    listed on stderr and make the exit status 1."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: python -m deskscore.collectors.deskcraft_tasks EVALUATION_EXAMPLES OUT_CSV",
              file=sys.stderr)  # fmt: skip
        return 2
    rows, quarantine = read_deskcraft_tasks(args[0])
    Path(args[1]).write_text(figures_csv(rows), encoding="utf-8")
    for q in quarantine:
        print(q["message"], file=sys.stderr)
    print(f"wrote {len(rows)} tasks to {args[1]}")
    return 1 if quarantine else 0


if __name__ == "__main__":
    sys.exit(main())

"""Task sets for live collection: OSWorld task configs, as a JSON file or a folder of them.

Accepted forms, so OSWorld's and DeskCraft's own task folders work as they are:

- a JSON list of task configs, or `{"tasks": [...]}`;
- a JSON object `{domain: [config, ...]}`;
- a folder of `<domain>/<id>.json` files (OSWorld's `evaluation_examples/examples`).

A config needs an `id`, a `domain` (or the folder it sits in) and an `instruction` or
DeskCraft `phases`; `config` (setup steps), `evaluator`, `snapshot`, `related_apps`,
`max_steps` and DeskCraft's `scenario_type`, `scenario_description` and `user_persona` are
used when present. A config that lacks what is needed is reported with its file and index,
and the others are collected.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

BUNDLED = "sandbox_tasks.json"
"""The task set shipped for the sandbox image (datasets/)."""


class TaskSet(NamedTuple):
    tasks: list[dict[str, Any]]
    problems: list[str]
    """One line per config left out, naming the file and the entry."""
    name: str
    base_dir: str | None
    """Folder that relative local paths in the configs resolve against."""


def bundled_path() -> str:
    return str(resources.files("deskscore.datasets").joinpath(BUNDLED))


def _check(task: Any, where: str, domain: str | None) -> tuple[dict[str, Any] | None, str | None]:
    if not isinstance(task, Mapping):
        return None, f"{where}: not a JSON object"
    out = dict(task)
    if domain and not out.get("domain"):
        out["domain"] = domain
    for key in ("id", "domain"):
        if not isinstance(out.get(key), str) or not out[key].strip():
            return None, f"{where}: no {key!r} string"
    phases = out.get("phases")
    if phases is not None:
        if not isinstance(phases, list) or not phases:
            return None, f"{where}: 'phases' is not a non-empty list"
        for i, p in enumerate(phases):
            if not isinstance(p, Mapping) or not isinstance(p.get("instruction"), str):
                return None, f"{where}: phase {i} has no instruction"
        out.setdefault("instruction", phases[0]["instruction"])
    if not isinstance(out.get("instruction"), str):
        return None, f"{where}: no 'instruction' (nor 'phases')"
    if not isinstance(out.get("config", []), list):
        return None, f"{where}: 'config' is not a list of setup steps"
    return out, None


def load_tasks(path: str | os.PathLike[str] | None = None) -> TaskSet:
    """The tasks of a file or folder (default: the bundled sandbox set)."""
    path = Path(path) if path is not None else Path(bundled_path())
    tasks: list[dict[str, Any]] = []
    problems: list[str] = []
    if path.is_dir():
        for file in sorted(path.glob("*/*.json")):
            try:
                data = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                problems.append(f"{file}: not readable JSON ({e})")
                continue
            if isinstance(data, dict):
                data.setdefault("id", file.stem)
            task, problem = _check(data, str(file), file.parent.name)
            if task is None:
                problems.append(problem or str(file))
            else:
                tasks.append(task)
        return TaskSet(tasks, problems, path.name, str(path))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"task file {path}: cannot be read as JSON ({e})") from None
    if isinstance(data, Mapping) and isinstance(data.get("tasks"), list):
        data = data["tasks"]
    entries: list[tuple[Any, str, str | None]] = []
    if isinstance(data, list):
        entries = [(t, f"{path}: task {i}", None) for i, t in enumerate(data)]
    elif isinstance(data, Mapping):
        for domain, items in data.items():
            if not isinstance(items, list):
                problems.append(f"{path}: {domain!r} is not a list of tasks")
                continue
            entries += [(t, f"{path}: {domain} task {i}", str(domain)) for i, t in enumerate(items)]
    else:
        raise ValueError(f"task file {path}: a JSON list of task configs was expected")
    seen: set[tuple[str, str]] = set()
    for task, where, domain in entries:
        checked, problem = _check(task, where, domain)
        if checked is None:
            problems.append(problem or where)
            continue
        key = (checked["domain"], checked["id"])
        if key in seen:
            problems.append(f"{where}: {key[0]}/{key[1]} appears twice; the first is kept")
            continue
        seen.add(key)
        tasks.append(checked)
    return TaskSet(tasks, problems, path.stem, str(path.parent))


__all__ = ["BUNDLED", "TaskSet", "bundled_path", "load_tasks"]

"""Finding runs and task folders in a list of source paths.

OSWorld runners nest results as `<result_dir>/<action_space>/<obs>/<model>/<domain>/<task_id>/`,
but models with '/' add levels, some runners drop or add levels, and zips add prefixes. So by
default we anchor on what is stable: a folder named by a UUID that holds a trajectory or a
result, whose parent is the domain; the run root is what lies above. A `layout` pattern such
as '{domain}/{task_id}' covers archives whose task folders are not UUIDs.

What a task folder of each format looks like is the format's to say
(`deskscore.collectors.formats`); this module walks the listing and groups what they find.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

_HEX = frozenset("0123456789abcdefABCDEF")
_UUID_GROUPS = (8, 4, 4, 4, 12)
_PLACEHOLDERS = ("{domain}", "{task_id}", "{run}", "{trial}")
_LAYOUT_EXAMPLE = "'{domain}/{task_id}' or '{run}/*/{domain}/{task_id}'"


@dataclass(frozen=True)
class TaskFolder:
    """One task attempt: its folder inside the source, domain, id as named, and its files."""

    path: str
    domain: str
    task_id: str
    files: tuple[str, ...]


@dataclass(frozen=True)
class RunFolder:
    """One agent run: the run root inside the source ('' = the source), the name of its
    format (`deskscore.collectors.formats`), its task folders; for a trial of a configuration
    (`deskscore.collectors.trials`), the trial and the root of the configuration's runs."""

    run_path: str
    format: str
    tasks: tuple[TaskFolder, ...]
    trial: str | None = None
    """The trial this run is (a trial folder's name, an epoch); None: not a trial."""
    group_path: str | None = None
    """Where the configuration's trials live: the run root itself for trials below the task
    folders, the folder above the trial level otherwise; None when the run is not a trial."""


def is_uuid(name: str) -> bool:
    """8-4-4-4-12 hex digits, any case: how OSWorld names task folders."""
    if len(name) != 36:
        return False
    parts = name.split("-")
    return len(parts) == 5 and all(
        len(p) == n and all(c in _HEX for c in p) for p, n in zip(parts, _UUID_GROUPS, strict=True)
    )


_DESKCRAFT_PREFIXES = ("L1_", "L2_", "L3_", "INTERACTIVE_")


def is_deskcraft_stem(name: str, app: str) -> bool:
    """A DeskCraft task folder: named by the task's file stem, `<L1|L2|L3|INTERACTIVE>_<app>_...`,
    inside the folder of its app key (DeskCraft runs keep OSWorld's layout, stems for uuids)."""
    for prefix in _DESKCRAFT_PREFIXES:
        if name.startswith(prefix):
            return bool(app) and name[len(prefix) :].startswith(app + "_")
    return False


def _folders(files: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Folder path -> sorted basenames of the files directly in it ('' is the source root):
    the listing formats detect their task folders in (`deskscore.collectors.formats.Listing`).

    macOS archive metadata (`__MACOSX/` trees, `._name` AppleDouble files) is left out: in an
    unpacked zip it mirrors the real tree, `._traj.jsonl` included.
    """
    out: dict[str, list[str]] = {}
    for f in files:
        folder, _, base = f.rpartition("/")
        if base.startswith("._") or f.startswith("__MACOSX/") or "/__MACOSX/" in f:
            continue
        out.setdefault(folder, []).append(base)
    return {folder: tuple(sorted(names)) for folder, names in out.items()}


def _drop_nested(candidates: Iterable[str]) -> list[str]:
    """Task folders that lie under another task folder are part of it, not new tasks."""
    found = set(candidates)
    kept: list[str] = []
    for path in sorted(found):
        parent = path
        while "/" in parent:
            parent = parent.rpartition("/")[0]
            if parent in found:
                break
        else:
            kept.append(path)
    return kept


def _group(entries: list[tuple[str, str, TaskFolder, str | None]]) -> list[RunFolder]:
    """Task folders into runs: one per run root, format and trial (trial folders below the
    task folders make one run per trial of the same root)."""
    runs: dict[tuple[str, str, str], list[TaskFolder]] = {}
    for run_path, fmt, task, trial in entries:
        runs.setdefault((run_path, fmt, trial or ""), []).append(task)
    return [
        RunFolder(
            run_path,
            fmt,
            tuple(sorted(tasks, key=lambda t: (t.domain, t.task_id, t.path))),
            trial or None,
            run_path if trial else None,
        )
        for (run_path, fmt, trial), tasks in sorted(runs.items())
    ]


def _discover_default(folders: dict[str, tuple[str, ...]]) -> list[RunFolder]:
    """Each format finds its task folders; a folder two formats find is the one registered
    first's. Trial levels above the domains are then recognised (`collectors.trials`)."""
    from deskscore.collectors.formats import registered
    from deskscore.collectors.trials import mark_trial_levels

    claims: dict[str, tuple[str, str, TaskFolder, str | None]] = {}
    for fmt in registered():
        for found in fmt.find(folders):
            claims.setdefault(found.task.path, (found.run_path, fmt.name, found.task, found.trial))
    return mark_trial_levels(_group([claims[path] for path in _drop_nested(claims)]))


def parse_layout(layout: str) -> tuple[str, ...]:
    """Check a layout pattern and return its segments; ValueError shows a valid example."""
    segments = tuple(layout.strip().strip("/").split("/"))
    task_end = segments[:-1] if segments[-1:] == ("{trial}",) else segments
    problem = None
    if not layout.strip().strip("/") or any(not s for s in segments):
        problem = "it has empty levels"
    elif segments.count("{task_id}") != 1 or task_end[-1:] != ("{task_id}",):
        problem = "it must end with exactly one {task_id} level (or {task_id}/{trial})"
    elif segments.count("{domain}") != 1:
        problem = "it must hold exactly one {domain} level, before {task_id}"
    elif segments.count("{trial}") > 1:
        problem = "it may hold one {trial} level, after {task_id} or before {domain}"
    else:
        for s in task_end:
            if ("{" in s or "}" in s) and s not in _PLACEHOLDERS:
                problem = f"unknown placeholder {s!r} (known: {', '.join(_PLACEHOLDERS)}, *)"
                break
            if s in ("{run}", "*", "{trial}") and segments.index("{domain}") < task_end.index(s):
                problem = f"{s!r} after {{domain}}: run levels must come before the domain"
                break
    if problem:
        raise ValueError(
            f"bad layout {layout!r}: {problem}. Levels are '{{domain}}', '{{task_id}}', "
            f"'{{run}}', '{{trial}}', '*' (any one level) or literal folder names; e.g. "
            f"{_LAYOUT_EXAMPLE}"
        )
    return segments


def _discover_layout(
    folders: dict[str, tuple[str, ...]], segments: tuple[str, ...]
) -> list[RunFolder]:
    from deskscore.collectors.formats import registered

    formats = registered()
    claiming = [f for f in formats if not f.layout_default]
    default = next((f for f in formats if f.layout_default), None)
    depth = len(segments)
    d_at = segments.index("{domain}")
    t_at = segments.index("{task_id}")
    trial_at = segments.index("{trial}") if "{trial}" in segments else None
    entries = []
    for folder, names in folders.items():
        levels = folder.split("/") if folder else []
        if len(levels) != depth:
            continue
        if any(
            s not in _PLACEHOLDERS and s != "*" and s != lv
            for s, lv in zip(segments, levels, strict=True)
        ):
            continue
        task = TaskFolder(folder, levels[d_at], levels[t_at], names)
        fmt = next((f for f in claiming if f.at_layout(task)), default)
        if fmt is not None:
            trial = levels[trial_at] if trial_at is not None else None
            entries.append(("/".join(levels[:d_at]), fmt.name, task, trial))
    runs = _group(entries)
    if trial_at is not None and trial_at < d_at:  # a trial level above the domains
        runs = [replace(r, group_path="/".join(r.run_path.split("/")[:trial_at])) for r in runs]
    return runs


def discover(files: Iterable[str], layout: str | None = None) -> list[RunFolder]:
    """Group source paths into runs of task folders, sorted by run path.

    Default: every registered format finds its task folders (`deskscore.collectors.formats`:
    UUID task folders holding a *.jsonl or result.txt under a domain folder, DeskCraft task
    folders named by a task stem under the folder of its app key, UI-TARS folders with
    data.json + meta.json, ...), and trials are recognised (`deskscore.collectors.trials`).
    With `layout`, task folders are the folders at the pattern's depth whose levels match it,
    and each is the first format's that claims it; a `{trial}` level (after `{task_id}`, or
    before `{domain}`) makes one run per trial value.
    """
    folders = _folders(files)
    if layout is None:
        return _discover_default(folders)
    return _discover_layout(folders, parse_layout(layout))


def discover_source(source: Any, layout: str | None = None) -> tuple[list[RunFolder], list[dict]]:
    """The runs of an open source (`collectors.source.Source`), and what listing them could not
    read: `discover` over its files, then each run as its format expands it (an inspect_ai log
    is one run per epoch, known only from inside the file). Problems are quarantine-shaped
    dicts (location, reason, message) of the source's own."""
    from deskscore.collectors.formats import get

    runs: list[RunFolder] = []
    problems: list[dict] = []
    files = source.files()
    found_runs = discover(files, layout)
    for run in found_runs:
        expanded, found = get(run.format).expand(source, run)
        runs.extend(expanded)
        problems.extend(found)
    if found_runs:  # a source with none gets one row saying where to point instead
        problems.extend(_stray_trajectories(source.uri, files, found_runs))
    return runs, problems


STRAY_TRAJECTORY = "outside_task_folder"
_TRAJECTORY = "traj.jsonl"


def _stray_trajectories(uri: str, files: Iterable[str], runs: list[RunFolder]) -> list[dict]:
    """A row for each OSWorld trajectory that lies in no task folder found (its folder is not
    named like a task: 'abc 123', a cut UUID), so it is not dropped unseen: it says which
    --layout reads it, one with a level per folder above its domain."""
    tasks = {t.path for r in runs for t in r.tasks}
    rows = []
    for f in sorted(files):
        folder, _, base = f.rpartition("/")
        if base != _TRAJECTORY or f.startswith("__MACOSX/") or "/__MACOSX/" in f:
            continue
        levels = folder.split("/") if folder else []
        if any("/".join(levels[:i]) in tasks for i in range(1, len(levels) + 1)):
            continue
        if len(levels) >= 2:
            pattern = "/".join(["*"] * (len(levels) - 2) + ["{domain}", "{task_id}"])
            todo = (
                f"if it is a task, name its folder by the task id, or ingest again with "
                f"--layout '{pattern}' (which reads every folder at that depth as a task)"
            )
        else:
            todo = "a task's files belong in <run>/<domain>/<task_id>/; move it into one"
        rows.append(
            {
                "location": f,
                "reason": STRAY_TRAJECTORY,
                "message": (
                    f"{uri}!{f}: a trajectory in no task folder found (its folder is not named "
                    f"like a task, e.g. by a UUID); it was not read: {todo}"
                ),
            }
        )
    return rows

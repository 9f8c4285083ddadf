"""Finding runs and task folders in a list of source paths.

OSWorld runners nest results as `<result_dir>/<action_space>/<obs>/<model>/<domain>/<task_id>/`,
but models with '/' add levels, some runners drop or add levels, and zips add prefixes. So by
default we anchor on what is stable: a folder named by a UUID that holds a trajectory or a
result, whose parent is the domain; the run root is what lies above. A `layout` pattern such
as '{domain}/{task_id}' covers archives whose task folders are not UUIDs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

_HEX = frozenset("0123456789abcdefABCDEF")
_UUID_GROUPS = (8, 4, 4, 4, 12)
_PLACEHOLDERS = ("{domain}", "{task_id}", "{run}")
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
    """One agent run: the run root inside the source ('' = the source), reader, task folders."""

    run_path: str
    format: str
    tasks: tuple[TaskFolder, ...]


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


def _folders(files: Iterable[str]) -> dict[str, list[str]]:
    """Folder path -> basenames of the files directly in it ('' is the source root).

    macOS archive metadata (`__MACOSX/` trees, `._name` AppleDouble files) is left out: in an
    unpacked zip it mirrors the real tree, `._traj.jsonl` included.
    """
    out: dict[str, list[str]] = {}
    for f in files:
        folder, _, base = f.rpartition("/")
        if base.startswith("._") or f.startswith("__MACOSX/") or "/__MACOSX/" in f:
            continue
        out.setdefault(folder, []).append(base)
    return out


def _split(path: str) -> tuple[str, str]:
    parent, _, name = path.rpartition("/")
    return parent, name


def _has_jsonl(names: list[str]) -> bool:
    return any(n.endswith(".jsonl") for n in names)


def _is_uitars(names: list[str]) -> bool:
    return "data.json" in names and "meta.json" in names and not _has_jsonl(names)


def _drop_nested(candidates: dict[str, tuple[str, str]]) -> list[str]:
    """Task folders that lie under another task folder are part of it, not new tasks."""
    kept: list[str] = []
    for path in sorted(candidates):
        parent = path
        while "/" in parent:
            parent = parent.rpartition("/")[0]
            if parent in candidates:
                break
        else:
            kept.append(path)
    return kept


def _group(entries: list[tuple[str, str, TaskFolder]]) -> list[RunFolder]:
    runs: dict[tuple[str, str], list[TaskFolder]] = {}
    for run_path, fmt, task in entries:
        runs.setdefault((run_path, fmt), []).append(task)
    return [
        RunFolder(run_path, fmt, tuple(sorted(tasks, key=lambda t: (t.domain, t.task_id, t.path))))
        for (run_path, fmt), tasks in sorted(runs.items())
    ]


def _discover_default(folders: dict[str, list[str]]) -> list[RunFolder]:
    candidates: dict[str, tuple[str, str]] = {}
    for folder, names in folders.items():
        if not folder:
            continue
        parent, name = _split(folder)
        if is_uuid(name) and parent and (_has_jsonl(names) or "result.txt" in names):
            candidates[folder] = ("osworld", parent)
        elif (
            parent
            and is_deskcraft_stem(name, _split(parent)[1])
            and (_has_jsonl(names) or "result.txt" in names or "interaction_log.json" in names)
        ):
            candidates[folder] = ("deskcraft", parent)
        elif _is_uitars(names):
            candidates[folder] = ("uitars", parent)
    entries = []
    for path in _drop_nested(candidates):
        fmt, parent = candidates[path]
        name = _split(path)[1]
        files = tuple(sorted(folders[path]))
        if fmt in ("osworld", "deskcraft"):
            run_path, domain = _split(parent)
            entries.append((run_path, fmt, TaskFolder(path, domain, name, files)))
        else:
            entries.append((parent, fmt, TaskFolder(path, "uitars", name, files)))
    return _group(entries)


def parse_layout(layout: str) -> tuple[str, ...]:
    """Check a layout pattern and return its segments; ValueError shows a valid example."""
    segments = tuple(layout.strip().strip("/").split("/"))
    problem = None
    if not layout.strip().strip("/") or any(not s for s in segments):
        problem = "it has empty levels"
    elif segments.count("{task_id}") != 1 or segments[-1] != "{task_id}":
        problem = "it must end with exactly one {task_id} level"
    elif segments.count("{domain}") != 1:
        problem = "it must hold exactly one {domain} level, before {task_id}"
    else:
        for s in segments:
            if ("{" in s or "}" in s) and s not in _PLACEHOLDERS:
                problem = f"unknown placeholder {s!r} (known: {', '.join(_PLACEHOLDERS)}, *)"
                break
            if s in ("{run}", "*") and segments.index("{domain}") < segments.index(s):
                problem = f"{s!r} after {{domain}}: run levels must come before the domain"
                break
    if problem:
        raise ValueError(
            f"bad layout {layout!r}: {problem}. Levels are '{{domain}}', '{{task_id}}', "
            f"'{{run}}', '*' (any one level) or literal folder names; e.g. {_LAYOUT_EXAMPLE}"
        )
    return segments


def _discover_layout(folders: dict[str, list[str]], segments: tuple[str, ...]) -> list[RunFolder]:
    depth = len(segments)
    d_at = segments.index("{domain}")
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
        run_path = "/".join(levels[:d_at])
        fmt = "uitars" if _is_uitars(names) else "osworld"
        if fmt == "osworld" and is_deskcraft_stem(levels[-1], levels[d_at]):
            fmt = "deskcraft"
        task = TaskFolder(folder, levels[d_at], levels[-1], tuple(sorted(names)))
        entries.append((run_path, fmt, task))
    return _group(entries)


def discover(files: Iterable[str], layout: str | None = None) -> list[RunFolder]:
    """Group source paths into runs of task folders, sorted by run path.

    Default: UUID task folders (holding a *.jsonl or result.txt) under a domain folder,
    DeskCraft task folders (named by a task stem, under the folder of its app key), and
    UI-TARS folders (data.json + meta.json). With `layout`, task folders are the folders at
    the pattern's depth whose levels match it.
    """
    folders = _folders(files)
    if layout is None:
        return _discover_default(folders)
    return _discover_layout(folders, parse_layout(layout))

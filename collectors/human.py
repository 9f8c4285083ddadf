"""Reading OSWorld-Human's human reference data: one JSON file per task.

`<human_dir>/<domain>/<task_id>.json` is an OSWorld task config plus
`"human-ground-truth": {"single-action": [...], "grouped-action": [[...], ...]}`. The files
are both the task index (the `tasks` table) and the human step counts t_human (`human_refs`).

Two paths read them. `read_human_dir` builds warehouse rows and turns every bad file into a
quarantine row. `iter_human_counts` is the fast, stdlib-only path for `score.py`: it walks
the folders in `os.listdir` order and reports skipped files with the message OSWorld-Human's
`score.py` prints, so a drop-in can reproduce its output line for line. `load_bundled` reads
the step counts shipped with the package, for machines without the human data.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from deskscore.collectors.files import open_regular, read_regular
from deskscore.collectors.ids import canonical_task_id, source_id, thunderbird_old_to_new
from deskscore.scorers.domains import OSWORLD_DOMAINS

BUNDLED_VERSIONS: tuple[str, ...] = ("2025-06", "verified")
"""Human data versions whose step counts ship in `deskscore.datasets`."""

BUNDLED_COLUMNS: tuple[str, ...] = (
    "domain",
    "task_id",
    "alias_task_id",
    "single_steps",
    "grouped_steps",
    "infeasible",
    "related_apps",
)
"""Columns of `datasets/osworld_human_<version>.csv`: ids and figures only, no task text."""

GROUND_TRUTH = "human-ground-truth"
BENCHMARK = "osworld"
SOURCE = "osworld-human"
_EXCERPT = 200
_DOMAINS = frozenset(OSWORLD_DOMAINS)


class HumanTask(NamedTuple):
    """One human reference as the fast path sees it."""

    domain: str
    task_id: str
    """The file's key as text (the original prints a key that is not a string so)."""
    single_steps: int | None
    """None when the ground truth has no len(): the original fails only if it scores it."""
    grouped_steps: int | None
    instruction: str | None
    file: str
    key_type: str = "str"
    """The JSON type of the key (its Python type name): a key that is not a string never
    equals a folder name, so the original never finds the task's trajectory."""


class HumanSkip(NamedTuple):
    """A task file the fast path left out, with OSWorld-Human's message for it."""

    domain: str
    file: str
    message: str


def _listing(human_dir: Path, listdir_order: bool) -> Iterator[tuple[str, str]]:
    """(domain, file name) of every `*.json` under the ten domain folders.

    In `listdir_order` the folders and files come in `os.listdir` order, as OSWorld-Human's
    score.py builds its task dict; otherwise sorted, for reproducible tables.
    """
    order = (lambda names: names) if listdir_order else sorted
    for domain in order(os.listdir(human_dir)):
        if domain not in _DOMAINS:
            continue
        app_path = os.path.join(human_dir, domain)
        if not os.path.isdir(app_path):
            continue
        for name in order(os.listdir(app_path)):
            if name.endswith(".json"):
                yield domain, name


def _skip_message(file: str, error: BaseException) -> str:
    """OSWorld-Human's wording for a task file it leaves out."""
    return f"Skipping task {file} due to exception: {error}"


def iter_human_tasks(
    human_dir: str | Path, *, listdir_order: bool = True, use_query: bool = False
) -> Iterator[HumanTask | HumanSkip]:
    """Every task file as a HumanTask, or a HumanSkip when OSWorld-Human's score.py skips it.

    The key is the file's "id" (raw: an old thunderbird id stays old, as the original keys
    it), or its "instruction" with `use_query` (UI-TARS results are keyed by instruction).
    The checks run in the original's order (key, single-action, grouped-action), so the
    message names the same KeyError or TypeError. Where the original would crash instead
    (invalid JSON, unreadable file) this yields a skip with the same wording, naming that
    exception. A ground truth without len() and a key that is not a string are kept, as the
    original keeps them (see HumanTask). A missing folder yields one skip naming the folder.
    """
    base = Path(human_dir)
    try:
        listing = list(_listing(base, listdir_order))
    except OSError as e:
        yield HumanSkip("", str(base), f"Human data folder {base} could not be listed: {e}")
        return
    key_name = "instruction" if use_query else "id"
    for domain, name in listing:
        try:
            # as open(..., encoding="utf-8"), but never blocking on a FIFO or a device
            with io.TextIOWrapper(open_regular(os.path.join(base, domain, name)), "utf-8") as f:
                data = json.load(f)
            key = data[key_name]
            single = data[GROUND_TRUTH]["single-action"]
            grouped = data[GROUND_TRUTH]["grouped-action"]
        except Exception as e:
            yield HumanSkip(domain, name, _skip_message(name, e))
            continue
        instruction = data.get("instruction") if isinstance(data, dict) else None
        yield HumanTask(
            domain,
            key if isinstance(key, str) else str(key),
            _size(single),
            _size(grouped),
            instruction if isinstance(instruction, str) else None,
            f"{domain}/{name}",
            type(key).__name__,
        )


def _size(ground_truth: Any) -> int | None:
    """len() of a ground truth, as the original takes it when it scores the task."""
    try:
        return len(ground_truth)
    except TypeError:
        return None


def iter_human_counts(
    human_dir: str | Path, *, listdir_order: bool = True, use_query: bool = False
) -> Iterator[tuple[str, str, int, int] | tuple[str, str, str]]:
    """(domain, task_id, single_steps, grouped_steps) per kept file (a count None where the
    ground truth has no len()), ('skip', file, message) per skipped one, in OSWorld-Human
    score.py's order; see `iter_human_tasks`."""
    for item in iter_human_tasks(human_dir, listdir_order=listdir_order, use_query=use_query):
        if isinstance(item, HumanTask):
            yield item.domain, item.task_id, item.single_steps, item.grouped_steps
        else:
            yield "skip", item.file, item.message


def _text(value: Any) -> str:
    """Action text verbatim; any non-string item becomes its JSON text."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _group(value: Any) -> list[str]:
    """One action group as a list of strings; a bare string is a group of one action."""
    if isinstance(value, list):
        return [_text(v) for v in value]
    return [_text(value)]


def _str_list(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [_text(v) for v in value]
    return None


@cache
def _new_to_old() -> dict[str, str]:
    return {new: old for old, new in thunderbird_old_to_new().items()}


def alias_task_id(domain: str, task_id: str) -> str | None:
    """The id a task had before OSWorld's 2025-02-10 thunderbird renumbering, if it had one."""
    if domain != "thunderbird":
        return None
    return _new_to_old().get(task_id)


def _evaluator(data: dict) -> tuple[list[str] | None, str | None, bool]:
    """(metric function names, conj, infeasible) of a task config's evaluator."""
    ev = data.get("evaluator")
    if not isinstance(ev, dict):
        return None, None, False
    funcs = _str_list(ev.get("func"))
    conj = ev.get("conj")
    return funcs, conj if isinstance(conj, str) else None, bool(funcs and "infeasible" in funcs)


def _quarantine(
    source: str,
    location: str,
    reason: str,
    message: str,
    excerpt: str | None,
    line_no: int | None = None,
) -> dict:
    return {
        "run_id": source_id(source),
        "benchmark": BENCHMARK,
        "source": source,
        "location": location,
        "line_no": line_no,
        "reason": reason,
        "message": message,
        "excerpt": excerpt[:_EXCERPT] if excerpt is not None else None,
    }


def read_human_dir(
    human_dir: str | Path, *, version: str, ordered_like_listdir: bool = False
) -> tuple[list[dict], list[dict], list[dict]]:
    """(tasks rows, human_refs rows, quarantine rows) from one human data folder.

    Task ids are canonical (an old thunderbird id maps to its new one; the old one is kept as
    alias_task_id). Files that OSWorld-Human's score.py would skip or choke on (invalid JSON,
    not an object, no id, no human-ground-truth, action lists that are not lists) become
    quarantine rows whose message includes the original's skip line; a second file with the
    same (domain, id) is quarantined too. Rows come sorted by domain and file name unless
    `ordered_like_listdir`.
    """
    base = Path(human_dir)
    source = str(human_dir)
    tasks: list[dict] = []
    refs: list[dict] = []
    quarantine: list[dict] = []
    try:
        listing = list(_listing(base, ordered_like_listdir))
    except OSError as e:
        quarantine.append(
            _quarantine(
                source,
                "",
                "unreadable",
                f"Human data folder {source} could not be listed ({e}); pass the folder that "
                f"holds the domain folders (chrome/, gimp/, ...).",
                None,
            )
        )
        return tasks, refs, quarantine
    seen: dict[tuple[str, str], str] = {}
    for domain, name in listing:
        loc = f"{domain}/{name}"
        path = base / domain / name
        try:
            raw = read_regular(str(path))
        except OSError as e:
            quarantine.append(
                _quarantine(
                    source,
                    loc,
                    "unreadable",
                    f"{loc}: could not be read ({e}); the task is left out. Check the file's "
                    f"permissions or re-download the human data.",
                    None,
                )
            )
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            quarantine.append(
                _quarantine(
                    source,
                    loc,
                    "not_utf8",
                    f"{loc}: not UTF-8 ({e}); the task is left out (OSWorld-Human's score.py "
                    f"stops here). Re-save the file as UTF-8.",
                    raw[:_EXCERPT].decode("utf-8", "replace"),
                )
            )
            continue
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            quarantine.append(
                _quarantine(
                    source,
                    loc,
                    "invalid_json",
                    f"{loc}, line {e.lineno}: invalid JSON ({e.msg}, column {e.colno}); the "
                    f"task is left out (OSWorld-Human's score.py stops here). Fix or "
                    f"re-download the file.",
                    text,
                    e.lineno,
                )
            )
            continue
        except RecursionError:
            quarantine.append(
                _quarantine(
                    source, loc, "invalid_json",
                    f"{loc}: JSON nested too deeply to read; the task is left out "
                    f"(OSWorld-Human's score.py stops here). Fix or re-download the file.",
                    text[:_EXCERPT],
                )
            )  # fmt: skip
            continue
        skip = None
        try:
            data["id"]
            data[GROUND_TRUTH]["single-action"]
            data[GROUND_TRUTH]["grouped-action"]
        except Exception as e:
            skip = _skip_message(name, e)
        if skip is not None or not isinstance(data, dict):
            if not isinstance(data, dict):
                reason, why = "not_an_object", f"holds a JSON {type(data).__name__}, not a task"
            elif "id" not in data:
                reason, why = "missing_id", 'has no "id"'
            else:
                reason, why = (
                    "missing_human_ground_truth",
                    (f'has no "{GROUND_TRUTH}" with "single-action" and "grouped-action"'),
                )
            quarantine.append(
                _quarantine(
                    source,
                    loc,
                    reason,
                    f"{loc} {why}; the task is left out of the human tasks, as OSWorld-Human's "
                    f"score.py does ({skip}). Add the missing keys to score this task.",
                    text,
                )
            )
            continue
        gt = data[GROUND_TRUTH]
        single, grouped, raw_id = gt["single-action"], gt["grouped-action"], data["id"]
        if (
            not isinstance(single, list)
            or not isinstance(grouped, list)
            or not isinstance(raw_id, str)
        ):
            quarantine.append(
                _quarantine(
                    source,
                    loc,
                    "invalid_human_ground_truth",
                    f'{loc}: "id" must be a string and "single-action" / "grouped-action" '
                    f"lists; the task is left out. Fix the file.",
                    text,
                )
            )
            continue
        task_id = canonical_task_id(domain, raw_id)
        key = (domain, task_id)
        if key in seen:
            quarantine.append(
                _quarantine(
                    source,
                    loc,
                    "duplicate_task_id",
                    f"{loc}: task {domain}/{task_id} is already defined by {seen[key]}; this "
                    f"file is left out. Remove one of the two.",
                    text,
                )
            )
            continue
        seen[key] = loc
        alias = raw_id if raw_id != task_id else alias_task_id(domain, task_id)
        funcs, conj, infeasible = _evaluator(data)
        instruction, snapshot = data.get("instruction"), data.get("snapshot")
        tasks.append(
            {
                "benchmark": BENCHMARK,
                "data_version": version,
                "domain": domain,
                "task_id": task_id,
                "instruction": instruction if isinstance(instruction, str) else None,
                "related_apps": _str_list(data.get("related_apps")),
                "snapshot": snapshot if isinstance(snapshot, str) else None,
                "evaluator_funcs": funcs,
                "conj": conj,
                "infeasible": infeasible,
                "source": SOURCE,
                "source_file": loc,
            }
        )
        refs.append(
            {
                "human_version": version,
                "domain": domain,
                "task_id": task_id,
                "alias_task_id": alias,
                "single_steps": len(single),
                "grouped_steps": len(grouped),
                "single_actions": [_text(a) for a in single],
                "grouped_actions": [_group(g) for g in grouped],
            }
        )
    return tasks, refs, quarantine


def bundled_rows(tasks: list[dict], refs: list[dict]) -> list[dict]:
    """The bundled CSV's rows (ids and counts, no text) from read_human_dir's rows."""
    by_key = {(t["domain"], t["task_id"]): t for t in tasks}
    rows = []
    for r in refs:
        t = by_key[(r["domain"], r["task_id"])]
        rows.append(
            {
                "domain": r["domain"],
                "task_id": r["task_id"],
                "alias_task_id": r["alias_task_id"] or "",
                "single_steps": r["single_steps"],
                "grouped_steps": r["grouped_steps"],
                "infeasible": "true" if t["infeasible"] else "false",
                "related_apps": ";".join(t["related_apps"] or []),
            }
        )
    rows.sort(key=lambda row: (row["domain"], row["task_id"]))
    return rows


def write_bundled(human_dir: str | Path, version: str, out_path: str | Path) -> int:
    """Write `osworld_human_<version>.csv` from a human data folder; returns the row count.

    Files that would be quarantined are left out (the count says how many made it).
    """
    tasks, refs, _ = read_human_dir(human_dir, version=version)
    rows = bundled_rows(tasks, refs)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(BUNDLED_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    Path(out_path).write_text(buf.getvalue(), encoding="utf-8")
    return len(rows)


def parse_bundled(text: str, version: str) -> list[dict]:
    """Rows of a bundled CSV's text, typed: counts as int, infeasible as bool, apps as list."""
    rows = []
    for row in csv.DictReader(io.StringIO(text)):
        apps = row["related_apps"]
        rows.append(
            {
                "human_version": version,
                "domain": row["domain"],
                "task_id": row["task_id"],
                "alias_task_id": row["alias_task_id"] or None,
                "single_steps": int(row["single_steps"]),
                "grouped_steps": int(row["grouped_steps"]),
                "infeasible": row["infeasible"] == "true",
                "related_apps": apps.split(";") if apps else [],
            }
        )
    return rows


@cache
def _bundled_text(version: str) -> str:
    if version not in BUNDLED_VERSIONS:
        raise ValueError(
            f"no bundled human data for version {version!r}; known: {', '.join(BUNDLED_VERSIONS)}"
        )
    name = f"osworld_human_{version}.csv"
    from importlib import resources  # costs ~6 ms at start-up; only the bundled path needs it

    return resources.files("deskscore.datasets").joinpath(name).read_text(encoding="utf-8")


def load_bundled(version: str) -> list[dict]:
    """Step counts shipped with the package: human_version, domain, task_id, alias_task_id,
    single_steps, grouped_steps, infeasible, related_apps; sorted by (domain, task_id).

    Keep only the human_refs columns (see `bundled_human_refs`) to write the table.
    """
    return parse_bundled(_bundled_text(version), version)


def bundled_human_refs(version: str) -> list[dict]:
    """human_refs rows from the bundled counts (no action text: those columns stay null)."""
    keep = ("human_version", "domain", "task_id", "alias_task_id", "single_steps", "grouped_steps")
    return [{k: row[k] for k in keep} for row in load_bundled(version)]


def bundled_tasks(version: str) -> list[dict]:
    """tasks rows from the bundled data (no instruction, snapshot or evaluator names)."""
    return [
        {
            "benchmark": BENCHMARK,
            "data_version": version,
            "domain": row["domain"],
            "task_id": row["task_id"],
            "related_apps": row["related_apps"],
            "infeasible": row["infeasible"],
            "source": SOURCE,
        }
        for row in load_bundled(version)
    ]

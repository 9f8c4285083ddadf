"""Trials: several runs of one configuration over the same tasks, told apart and grouped.

A trial is a run. Runners write trials in three forms, and discovery turns each into one run
per trial, all sharing a `run_group`:

- trial folders below the task folders, `<run root>/<domain>/<task_id>/<trial>/` (each with its
  own traj.jsonl and result.txt; `--num_rollout_per_trial`): one run per trial value, with the
  same run root; the task folders of trial k are the `<trial>` subfolders named k. A task
  folder that holds a trajectory (*.jsonl) itself is never split: its subfolders are part of
  it (CoAct's `cua_output_N/result.txt` holds text, not a score, and is never a trial or a task);
- a trial level above the domains, `<run root>/<trial>/<domain>/<task_id>/` (`--trial-id`):
  the run found at `<run root>/<trial>` is trial `<trial>` of the group `<run root>`;
- whole result folders per trial (Agent S3's results1/, results2/), ingested separately and
  labelled as trials of one group with `ingest --trial-of NAME`.

Trial names: a trial folder is named by a whole number without leading zeros, 0 to 999
(`0`, `1`, ..., `12`). A folder above the domains is only taken for a trial level when the
numbered run roots beside it (same parent, same format), itself included, start at 0 or 1 and
stay below 100: date folders (`20250101`, `2025-01-01`), model names and step budgets such as
`15/` and `50/` side by side are not trials.

Ids: a run's id hashes its source and run path as always (`collectors.ids.run_id`); trial
runs that share their run root (trial folders below the tasks, the epochs of one inspect_ai
log) add their trial to the hash, so each trial keeps its own stable id. The group of trial
runs is the id the trial-less run root would have: `run_id(source, group path)`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from deskscore.collectors.ids import run_id as path_run_id
from deskscore.collectors.layout import RunFolder

if TYPE_CHECKING:
    from deskscore.collectors.formats import Found, Listing

_TRIAL_NAME = re.compile(r"0|[1-9][0-9]{0,2}")
LEVEL_FIRST = (0, 1)
"""A trial level above the domains starts at one of these (runners count from 0 or 1)."""
LEVEL_LIMIT = 100
"""...and its numbers stay below this (step budgets such as 100/ are not trials)."""


def is_trial_name(name: str) -> bool:
    """A whole number without leading zeros, 0 to 999: how runners name trial folders."""
    return _TRIAL_NAME.fullmatch(name) is not None


def _has_trajectory(names: Sequence[str]) -> bool:
    return any(n.endswith(".jsonl") for n in names)


def with_trial_folders(
    detect: Callable[[str, tuple[str, ...]], Found | None],
) -> Callable[[Listing], Iterator[Found]]:
    """A `find` from a test of one task folder, that also finds trial folders below task
    folders: a folder named by a trial number whose parent, tested with the trial folder's
    files, is a task folder that holds no trajectory of its own. It is found as that task
    (path: the trial folder) with `trial` set; the parent is then not a task folder itself."""
    from deskscore.collectors.formats import Found

    def find(listing: Listing) -> Iterator[Found]:
        trials: list[Found] = []
        parents: set[str] = set()
        for folder, names in listing.items():
            parent, _, name = folder.rpartition("/")
            if not parent or not is_trial_name(name) or _has_trajectory(listing.get(parent, ())):
                continue
            found = detect(parent, names)
            if found is not None:
                task = replace(found.task, path=folder, files=names)
                trials.append(Found(found.run_path, task, name))
                parents.add(parent)
        yield from trials
        for folder, names in listing.items():
            if folder and folder not in parents:
                found = detect(folder, names)
                if found is not None:
                    yield found

    return find


def mark_trial_levels(runs: Sequence[RunFolder]) -> list[RunFolder]:
    """Runs whose root ends in a trial level above the domains, marked as trials of the folder
    above (see the module doc for the rule); every other run unchanged, in the same order."""
    candidates: dict[tuple[str, str], list[int]] = {}
    for i, run in enumerate(runs):
        if run.trial is None and run.run_path:
            parent, _, name = run.run_path.rpartition("/")
            if is_trial_name(name):
                candidates.setdefault((parent, run.format), []).append(i)
    out = list(runs)
    for (parent, _), indices in candidates.items():
        numbers = [int(runs[i].run_path.rpartition("/")[2]) for i in indices]
        if min(numbers) in LEVEL_FIRST and max(numbers) < LEVEL_LIMIT:
            for i in indices:
                out[i] = replace(
                    runs[i], trial=runs[i].run_path.rpartition("/")[2], group_path=parent
                )
    return out


def shares_root(run: RunFolder) -> bool:
    """Whether the run shares its run root with its other trials (trial folders below the
    tasks, epochs of one log): its id must then include the trial."""
    return run.trial is not None and run.group_path == run.run_path


def run_identity(source: str, run: RunFolder) -> tuple[str, str]:
    """(run_id, run_group) of a run found in `source` (its canonical URI)."""
    if run.trial is None or run.group_path is None:
        rid = path_run_id(source, run.run_path)
        return rid, rid
    if shares_root(run):
        key = f"{source}\x00{run.run_path}\x00trial\x00{run.trial}"
        rid = hashlib.sha1(key.encode()).hexdigest()[:16]
    else:
        rid = path_run_id(source, run.run_path)
    return rid, path_run_id(source, run.group_path)


def trial_label(run: RunFolder, source_name: str, trial_of: str | None) -> str | None:
    """The `runs.trial` of a run: its trial as discovery found it; with `--trial-of`, the
    source's name and the run's path in it, with '#<trial>' for trials that share that path,
    so the trials of separately ingested sources (results1/, results2/) keep apart."""
    if trial_of is None:
        return run.trial
    where = f"{source_name}/{run.run_path}" if run.run_path else source_name
    return f"{where}#{run.trial}" if shares_root(run) else where


__all__ = [
    "LEVEL_FIRST",
    "LEVEL_LIMIT",
    "is_trial_name",
    "mark_trial_levels",
    "run_identity",
    "shares_root",
    "trial_label",
    "with_trial_folders",
]

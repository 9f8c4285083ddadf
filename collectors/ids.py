"""Deterministic ids and the OSWorld thunderbird id renumbering."""

from __future__ import annotations

import csv
import hashlib
from functools import cache


def run_id(source: str, run_path: str) -> str:
    """Id of a run: stable for the same source and run path, so re-ingesting changes nothing."""
    return hashlib.sha1(f"{source}\x00{run_path}".encode()).hexdigest()[:16]


def source_id(source: str) -> str:
    """Id under which items that belong to no run (an unreadable archive, say) are kept."""
    return "source-" + hashlib.sha1(source.encode()).hexdigest()[:12]


@cache
def thunderbird_old_to_new() -> dict[str, str]:
    """OSWorld renumbered its thunderbird tasks on 2025-02-10; runs from before use the old ids."""
    from importlib import resources  # costs ~6 ms at start-up; only needed here

    text = resources.files("deskscore.datasets").joinpath("osworld_thunderbird_ids.csv").read_text()
    return {row["old_id"]: row["new_id"] for row in csv.DictReader(text.splitlines())}


def canonical_task_id(domain: str, task_id: str) -> str:
    """The current id of a task: old thunderbird ids map to new ones; all else is unchanged."""
    if domain == "thunderbird":
        return thunderbird_old_to_new().get(task_id, task_id)
    return task_id

"""The rows that record screenshots, per run: `screenshot_refs`, `screenshots` and the
`hash` quarantine file; how they are built, matched, read and written.

- `screenshot_refs`: one row per step with a screenshot, its content hash (null when the file
  could not be read);
- `screenshots`: one row per content hash, held by one run's partition: the facts of
  `collectors.images` (perceptual hash, size, format, status);
- quarantine rows: a file that could not be read or decoded, with a reason, a message that
  says where the file is, which step shows it, what that costs and what to do, and the
  file's first bytes.

A run's three files are rewritten whole, rows sorted, so a second pass writes the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from deskscore.collectors.images import ImageFacts

if TYPE_CHECKING:
    from deskscore.collectors.screenshots import Decoded
    from deskscore.collectors.source import SourceError
    from deskscore.collectors.warehouse import Warehouse

QUARANTINE_FILE = "hash"
"""The screenshot rows' quarantine file in each run's partition (ingest keeps its own)."""
IMAGE_REASONS = {
    "corrupt": "corrupt_image",
    "truncated": "truncated_image",
    "too_large": "image_too_large",
    "not_an_image": "not_an_image",
}
"""The quarantine reason of each `screenshots.status` but ok."""
STEP_COLUMNS = ["domain", "task_id", "step_idx", "line_no", "screenshot_path"]
QUARANTINE_COLUMNS = [
    "run_id",
    "benchmark",
    "source",
    "location",
    "line_no",
    "reason",
    "message",
    "excerpt",
]


class RunPart(Protocol):
    """A run, as its partition of the per-run tables names it."""

    @property
    def run_id(self) -> str: ...

    @property
    def benchmark(self) -> str: ...


class RunRef(RunPart, Protocol):
    """A run, and where its files are (`runs.source`)."""

    @property
    def source(self) -> str: ...


class ShotRef(RunRef, Protocol):
    """A screenshot file of a run, and the first step that shows it."""

    @property
    def path(self) -> str: ...

    @property
    def where(self) -> str: ...


class Origin(NamedTuple):
    """A screenshot file of a run (a `ShotRef`)."""

    run_id: str
    benchmark: str
    source: str
    path: str
    where: str


def partition(run: RunPart) -> dict[str, str]:
    """The run's partition of the per-run tables."""
    return {"benchmark": run.benchmark, "run_id": run.run_id}


# --------------------------------------------------------------------------- rows


def step_location(step: Mapping[str, Any]) -> str:
    """Which step a screenshot belongs to, for people: step, episode and traj.jsonl line."""
    return f"step {step['step_idx']} of {step['domain']}/{step['task_id']}, line {step['line_no']}"


def first_steps(steps: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """screenshot_path -> the first of `steps` (in their order) that shows it."""
    first: dict[str, Mapping[str, Any]] = {}
    for step in steps:
        first.setdefault(step["screenshot_path"], step)
    return first


def ref_rows(
    run: RunPart, steps: Iterable[Mapping[str, Any]], hashes: Mapping[str, str | None]
) -> list[dict[str, Any]]:
    """The run's `screenshot_refs` rows: each step's path and its content hash."""
    return [
        {
            "run_id": run.run_id,
            "benchmark": run.benchmark,
            "domain": s["domain"],
            "task_id": s["task_id"],
            "step_idx": s["step_idx"],
            "screenshot_path": s["screenshot_path"],
            "content_hash": hashes.get(s["screenshot_path"]),
        }
        for s in steps
    ]


def screenshot_row(run: RunPart, facts: ImageFacts) -> dict[str, Any]:
    """The `screenshots` row of a file's facts, held by `run`'s partition."""
    return {
        "content_hash": facts.content_hash,
        "run_id": run.run_id,
        "benchmark": run.benchmark,
        "phash": facts.phash,
        "width": facts.width,
        "height": facts.height,
        "n_bytes": facts.n_bytes,
        "format": facts.format,
        "status": facts.status,
    }


def quarantine_row(
    run: RunRef, location: str, reason: str, message: str, excerpt: str | None = None
) -> dict[str, Any]:
    """A quarantine row of the run's screenshots (`location`: the file's path, or '')."""
    return {
        "run_id": run.run_id,
        "benchmark": run.benchmark,
        "source": run.source,
        "location": location,
        "line_no": None,
        "reason": reason,
        "message": message,
        "excerpt": excerpt,
    }


def _at(shot: ShotRef) -> str:
    return f"{shot.source}!{shot.path} ({shot.where})"


def bad_image_rows(shot: ShotRef, decoded: Decoded) -> list[dict[str, Any]]:
    """The quarantine row of a file that is not a usable image (none when it is)."""
    facts = decoded.facts
    if facts.status == "ok":
        return []
    at = f"{_at(shot)}: {facts.message}; its steps have no phash"
    if facts.status == "too_large":
        message = f"{at}; check where this file came from"
    else:
        message = (
            f"{at}, so loop detection uses their other signals; replace the file with the "
            "run's original screenshot and run `deskscore hash` again"
        )
    reason = IMAGE_REASONS[facts.status]
    return [quarantine_row(shot, shot.path, reason, message, decoded.excerpt)]


def unreadable_file_row(
    shot: ShotRef, error: SourceError, *, again: bool = False
) -> dict[str, Any]:
    """A file that could not be read: first (`again` False; its steps keep no hash), or when
    read again to be decoded."""
    if again:
        then = "it could not be read again to decode it"
    else:
        then = "the step keeps its screenshot_path with no content hash"
    message = (
        f"{_at(shot)}: {error.message}; {then}; restore the file and run `deskscore hash` again"
    )
    return quarantine_row(shot, shot.path, "unreadable_screenshot", message)


def changed_file_row(shot: ShotRef, excerpt: str) -> dict[str, Any]:
    """A file whose bytes, read again to be decoded, no longer have the hash first read."""
    message = (
        f"{_at(shot)}: the file changed while it was being hashed; run `deskscore hash` again "
        "once the archive is complete"
    )
    return quarantine_row(shot, shot.path, "screenshot_changed", message, excerpt)


def unreadable_source_row(
    run: RunRef, error: SourceError, n_refs: int, n_kept: int
) -> dict[str, Any]:
    """A run's source that cannot be opened: its `n_refs` references keep the last pass's
    `n_kept` rows (a moved disk or an expired URL must not erase them)."""
    message = (
        f"{error}; the run's {n_refs} screenshot references could not be hashed, so "
        f"those of the last pass ({n_kept}) are kept; make the source readable again "
        "and run `deskscore hash` again"
    )
    return quarantine_row(run, "", "unreadable_source", message)


def quarantine_of_rows(
    rows: Iterable[dict[str, Any]],
    quarantine: Iterable[dict[str, Any]],
    hashes: Mapping[str, str | None],
) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Each `screenshots` row with the quarantine rows that name it: found by location (the
    path that holds that content now, by `hashes`) and by the reason of its status."""
    by_hash: dict[str, list[dict[str, Any]]] = {}
    for q in quarantine:
        digest = hashes.get(q["location"])
        if digest is not None:
            by_hash.setdefault(digest, []).append(q)
    for row in rows:
        reason = IMAGE_REASONS.get(row["status"])
        yield row, [q for q in by_hash.get(row["content_hash"], []) if q["reason"] == reason]


# --------------------------------------------------------------------------- the warehouse


def screenshot_steps(wh: Warehouse, run: RunPart) -> list[dict[str, Any]]:
    """The run's steps that name a screenshot (STEP_COLUMNS), in episode and step order."""
    rows = wh.read("steps", partition(run), columns=STEP_COLUMNS).to_pylist()
    steps = [s for s in rows if s["screenshot_path"] is not None]
    steps.sort(key=lambda s: (s["domain"], s["task_id"], s["step_idx"]))
    return steps


def content_hashes(wh: Warehouse, table: str, *, excluding: Iterable[RunPart] = ()) -> set[str]:
    """The content hashes of `table` (screenshots or screenshot_refs), but for the runs
    `excluding` names (wherever their rows are: their own files or packs)."""
    skip = {run.run_id for run in excluding}
    data = wh.read(table, columns=["run_id", "content_hash"]).to_pylist()
    return {
        r["content_hash"] for r in data if r["content_hash"] is not None and r["run_id"] not in skip
    }


def quarantine_rows(wh: Warehouse, run: RunPart) -> list[dict[str, Any]]:
    """The run's screenshot quarantine rows, as last written."""
    data = wh.read("quarantine", partition(run), columns=QUARANTINE_COLUMNS, file=QUARANTINE_FILE)
    return data.to_pylist()


def write_run(
    wh: Warehouse,
    run: RunPart,
    refs: Sequence[dict[str, Any]],
    rows: Sequence[dict[str, Any]],
    quarantine: Sequence[dict[str, Any]],
) -> list[Path]:
    """The run's three files rewritten whole, rows sorted (a file with no rows is removed);
    returns the paths written."""
    part = partition(run)
    refs = sorted(refs, key=lambda r: (r["domain"], r["task_id"], r["step_idx"]))
    rows = sorted(rows, key=lambda r: r["content_hash"])
    quarantine = sorted(
        quarantine, key=lambda q: (q["location"], q["line_no"] or 0, q["reason"], q["message"])
    )
    out = [wh.write("screenshot_refs", refs, part)]
    if rows:
        out.append(wh.write("screenshots", rows, part))
    else:
        wh.remove("screenshots", part)
    if quarantine:
        out.append(wh.write("quarantine", quarantine, part, file=QUARANTINE_FILE))
    else:
        wh.remove("quarantine", part, file=QUARANTINE_FILE)
    return out


__all__ = [
    "IMAGE_REASONS",
    "QUARANTINE_COLUMNS",
    "QUARANTINE_FILE",
    "STEP_COLUMNS",
    "Origin",
    "RunPart",
    "RunRef",
    "ShotRef",
    "bad_image_rows",
    "changed_file_row",
    "content_hashes",
    "first_steps",
    "partition",
    "quarantine_of_rows",
    "quarantine_row",
    "quarantine_rows",
    "ref_rows",
    "screenshot_row",
    "screenshot_steps",
    "unreadable_file_row",
    "unreadable_source_row",
    "write_run",
]

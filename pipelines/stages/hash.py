"""`deskscore hash`'s stages: every screenshot a step refers to -> screenshot_refs and
screenshots.

Two per-run stages with a plan made on the driver between them (`pipelines.jobs.hash`):

1. `HashRefsStage` (per run): the run's `steps` rows with a screenshot, each file read once
   and SHA-256'd -> the run's `screenshot_refs` rows, and a quarantine row per unreadable
   file (slot `REFS_QUARANTINE`). A source that cannot be opened keeps the references of the
   last pass (a moved disk or an expired URL must not erase them) and gets one quarantine row.
2. the plan (`plan_shots`, pure): decode nothing the warehouse already holds. A content
   stored in a run outside this pass stays there; a run in the pass keeps, verbatim, the
   rows it had for contents it still references (with their quarantine rows); anything else
   is decoded once, by the smallest run_id whose source could be read.
3. `HashShotsStage` (per run): the kept rows, and the contents the plan gave the run read
   again, checked against their hash and decoded on a thread pool -> the run's
   `screenshots` rows and their quarantine rows (slot `QUARANTINE_FILE`), rewritten whole and
   sorted, so a second pass writes the same bytes.

Both stages are plain per-run stages of `infra.runner` (no tagged outputs, side inputs,
batching or output from `finish_bundle`), so every Beam runner computes them alike, and
every figure the command prints is counted in what they wrote. Bytes never travel between
stages: only paths and hashes do, so memory stays flat whatever the archive's size.

The screenshot rules (reading, hashing and decoding files, the rows and quarantine rows they
become) are `collectors.screenshots` and `collectors.screenshot_tables`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from deskscore.collectors.images import DEFAULT_MAX_PIXELS
from deskscore.collectors.screenshot_tables import (
    QUARANTINE_FILE,
    Origin,
    bad_image_rows,
    changed_file_row,
    first_steps,
    partition,
    quarantine_of_rows,
    quarantine_rows,
    ref_rows,
    screenshot_row,
    screenshot_steps,
    step_location,
    unreadable_file_row,
    unreadable_source_row,
)
from deskscore.collectors.screenshots import ScreenshotPool
from deskscore.collectors.source import SourceError
from deskscore.pipelines.infra import progress
from deskscore.pipelines.stages.base import RunKey, RunStage, Stage

REFS_QUARANTINE = f"{QUARANTINE_FILE}-refs"
"""The quarantine slot of a run's unreadable screenshot files and unreadable source."""
UNREADABLE_SOURCE = "unreadable_source"


def _sorted_quarantine(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda q: (q["location"], q["line_no"] or 0, q["reason"], q["message"]))


def _write_or_remove(
    wh: Any, name: str, rows: list[dict[str, Any]], run: RunKey, file: str
) -> None:
    if rows:
        wh.write(name, rows, partition(run), file=file)
    else:
        wh.remove(name, partition(run), file=file)


class HashRefsStage(RunStage):
    """RunKey -> the run's screenshot_refs (every step's path and content hash) and the
    quarantine rows of the files (or source) that could not be read."""

    label = "runs hashed"
    writes = ("screenshot_refs",)

    def __init__(self, warehouse: str, job: str | None = None, threads: int | None = None):
        super().__init__(warehouse, job)
        self.threads = threads

    def setup(self) -> None:
        super().setup()
        self.pool = ScreenshotPool(self.threads, DEFAULT_MAX_PIXELS)

    def teardown(self) -> None:
        if hasattr(self, "pool"):
            self.pool.close()
        super().teardown()

    def run(self, key: RunKey) -> None:
        steps = screenshot_steps(self.wh, key)
        first_step = first_steps(steps)
        hashes: dict[str, str | None] = {}
        quarantine: list[dict[str, Any]] = []
        if first_step:
            self.pool.sources.prune()
            try:
                source = self.pool.sources.get(key.source)
            except SourceError as e:
                refs = self.wh.read("screenshot_refs", partition(key)).to_pylist()
                row = unreadable_source_row(key, e, len(steps), len(refs))
                self.wh.write("screenshot_refs", refs, partition(key))
                self.wh.write("quarantine", [row], partition(key), file=REFS_QUARANTINE)
                return
            for event in self.pool.hash_files(source, first_step):
                progress.tick("screenshots")
                hashes[event.path] = event.content_hash
                if event.error is not None:
                    where = step_location(first_step[event.path])
                    at = Origin(key.run_id, key.benchmark, key.source, event.path, where)
                    quarantine.append(unreadable_file_row(at, event.error))
        refs = sorted(
            ref_rows(key, steps, hashes), key=lambda r: (r["domain"], r["task_id"], r["step_idx"])
        )
        self.wh.write("screenshot_refs", refs, partition(key))
        _write_or_remove(
            self.wh, "quarantine", _sorted_quarantine(quarantine), key, REFS_QUARANTINE
        )


class ShotWork(NamedTuple):
    """What `HashShotsStage` does for one run, as the plan decided."""

    key: RunKey
    keep: tuple[str, ...] = ()
    """Contents whose existing row (and its quarantine rows) the run keeps."""
    keep_bare: tuple[str, ...] = ()
    """Contents whose existing row the run keeps without quarantine rows: no run of the pass
    shows them any more, but a run outside the pass does."""
    decode: tuple[str, ...] = ()
    """Contents the run reads again and decodes (the first of its paths that shows each)."""


class Plan(NamedTuple):
    """The plan of a pass, and what it found (the command's figures count from it)."""

    work: list[ShotWork]
    distinct: int
    """Contents the runs of the pass show."""
    known: int
    """Of those, how many the warehouse already holds (elsewhere, or kept by the run)."""


def plan_shots(
    keys: Iterable[RunKey],
    shown: Mapping[str, set[str]],
    unreadable: set[str],
    held: Mapping[str, set[str]],
    stored_elsewhere: set[str],
    referenced_elsewhere: set[str],
) -> Plan:
    """Who keeps and who decodes each content. `shown`: run_id -> the contents its refs show;
    `unreadable`: runs whose source could not be opened; `held`: run_id -> the contents its
    screenshots partition holds now; `*_elsewhere`: contents of runs outside the pass."""
    keys = sorted(keys, key=lambda k: k.run_id)
    showing: dict[str, list[str]] = {}
    for key in keys:
        for digest in shown.get(key.run_id, ()):
            showing.setdefault(digest, []).append(key.run_id)
    holding: dict[str, list[str]] = {}
    for key in keys:
        for digest in held.get(key.run_id, ()):
            holding.setdefault(digest, []).append(key.run_id)
    keep: dict[str, list[str]] = {}
    bare: dict[str, list[str]] = {}
    decode: dict[str, list[str]] = {}
    known = 0
    for digest in sorted(set(showing) | set(holding)):
        runs = showing.get(digest, [])
        if digest in stored_elsewhere:
            known += bool(runs)
            continue
        keeper = next((r for r in holding.get(digest, []) if r in runs), None)
        if keeper is not None:
            known += 1
            keep.setdefault(keeper, []).append(digest)
            continue
        readable = [r for r in runs if r not in unreadable]
        if readable:
            decode.setdefault(readable[0], []).append(digest)
        elif not runs and digest in referenced_elsewhere:
            bare.setdefault(holding[digest][0], []).append(digest)
    work = [
        ShotWork(
            k,
            tuple(keep.get(k.run_id, ())),
            tuple(bare.get(k.run_id, ())),
            tuple(decode.get(k.run_id, ())),
        )
        for k in keys
    ]
    return Plan(work, len(showing), known)


class HashShotsStage(Stage):
    """ShotWork -> the run's screenshots rows (kept and decoded) and their quarantine rows,
    rewritten whole; yields the run's key."""

    label = "runs decoded"

    def __init__(
        self,
        warehouse: str,
        job: str | None = None,
        threads: int | None = None,
        max_pixels: int = DEFAULT_MAX_PIXELS,
    ) -> None:
        super().__init__(warehouse, job)
        self.threads = threads
        self.max_pixels = max_pixels

    def setup(self) -> None:
        from deskscore.collectors.warehouse import Warehouse

        # pending: this job's own references (written by HashRefsStage) are read back
        self.wh = Warehouse(self.warehouse, self.job, pending=True)
        self.pool = ScreenshotPool(self.threads, self.max_pixels)

    def teardown(self) -> None:
        if hasattr(self, "pool"):
            self.pool.close()
        super().teardown()

    def process(self, element: ShotWork) -> Iterator[RunKey]:
        run = element.key
        refs = self.wh.read("screenshot_refs", partition(run)).to_pylist()
        hashes = {r["screenshot_path"]: r["content_hash"] for r in refs}
        existing = self.wh.read("screenshots", partition(run)).to_pylist()
        rows: list[dict[str, Any]] = []
        quarantine: list[dict[str, Any]] = []
        keep = set(element.keep)
        held = [r for r in existing if r["content_hash"] in keep]
        for row, named in quarantine_of_rows(held, quarantine_rows(self.wh, run), hashes):
            rows.append(row)
            quarantine.extend(named)
        rows.extend(r for r in existing if r["content_hash"] in set(element.keep_bare))
        for task, result in self.pool.decode_files(self._tasks(run, element.decode, hashes)):
            if isinstance(result, SourceError):
                quarantine.append(unreadable_file_row(task, result, again=True))
                continue
            progress.tick("decoded")
            if result.facts.content_hash != task.content_hash:
                quarantine.append(changed_file_row(task, result.excerpt))
                continue
            rows.append(screenshot_row(task, result.facts))
            quarantine.extend(bad_image_rows(task, result))
        rows.sort(key=lambda r: r["content_hash"])
        _write_or_remove(self.wh, "screenshots", rows, run, "data")
        _write_or_remove(
            self.wh, "quarantine", _sorted_quarantine(quarantine), run, QUARANTINE_FILE
        )
        progress.tick(self.label)
        yield run

    def _tasks(
        self, run: RunKey, digests: Iterable[str], hashes: Mapping[str, str | None]
    ) -> list[DecodeTask]:
        """Each content to decode at the first path (in step order) that shows it."""
        wanted = set(digests)
        if not wanted:
            return []
        tasks = []
        for path, step in first_steps(screenshot_steps(self.wh, run)).items():
            digest = hashes.get(path)
            if digest in wanted:
                wanted.discard(digest)
                where = step_location(step)
                tasks.append(DecodeTask(run.run_id, run.benchmark, run.source, path, where, digest))
        return tasks


class DecodeTask(NamedTuple):
    """A content to decode, at a path of the run whose partition will hold its row."""

    run_id: str
    benchmark: str
    source: str
    path: str
    where: str
    content_hash: str


__all__ = [
    "REFS_QUARANTINE",
    "DecodeTask",
    "HashRefsStage",
    "HashShotsStage",
    "Plan",
    "ShotWork",
    "plan_shots",
]

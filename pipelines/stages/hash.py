"""`deskscore hash`'s stages: every screenshot a step refers to -> screenshot_refs and
screenshots.

Four stages, composed in `HashScreenshots`:

1. per run (`ReadRunFn`): the run's `steps` rows with a screenshot, each file read once and
   SHA-256'd -> the run's `screenshot_refs` rows, one `Seen` per distinct content per run,
   and the run's existing `screenshots` rows as `Carried`;
2. per content hash (`ResolveFn`): decode nothing the warehouse already holds. A hash stored
   in a run outside this pass stays there; a run in the pass keeps, verbatim, the rows it
   had for hashes it still references (with their quarantine rows); anything else is decoded
   once, by the smallest run_id that references it;
3. per batch (`DecodeBatchFn`): files read again, checked against their hash and decoded
   on a thread pool (batches are large and fixed, as the pool idles while a batch drains);
4. per run (`WriteRunFn`): the run's three partition files, rewritten whole and sorted, so
   a second pass writes the same bytes.

Bytes never travel between stages: only paths and hashes do, so memory stays flat whatever
the archive's size; a decoded file is read twice, which costs far less than decoding it.
Unreadable files get a reference with no hash and a quarantine row; a source that cannot be
opened at all changes nothing but its quarantine row (the last pass's rows are kept).

The screenshot rules (reading, hashing and decoding files, the rows and quarantine rows they
become) are `collectors.screenshots` and `collectors.screenshot_tables`; the job is
`pipelines.jobs.hash`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import apache_beam as beam
from apache_beam.metrics import Metrics

from deskscore.collectors.images import DEFAULT_MAX_PIXELS
from deskscore.collectors.screenshot_tables import (
    Origin,
    ShotRef,
    bad_image_rows,
    changed_file_row,
    content_hashes,
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
    write_run,
)
from deskscore.collectors.screenshots import Decoded, HashedDecoded, ScreenshotPool
from deskscore.collectors.source import SourceError
from deskscore.pipelines.infra import progress
from deskscore.pipelines.stages.base import RunKey

NAMESPACE = "hash"
SEEN_TAG = "seen"
SHOTS_TAG = "shots"
CARRIED_TAG = "carried"
DECODE_TAG = "decode"


class Seen(NamedTuple):
    """A content hash a run references, with the first step that shows it."""

    run_id: str
    benchmark: str
    source: str
    path: str
    where: str
    readable: bool = True
    """False when the run's source could not be opened (the reference is the last pass's)."""
    decoded: bool = False
    """True when the run decoded it while reading it (see ReadRunFn)."""


class Carried(NamedTuple):
    """A `screenshots` row a run's partition already holds, with its quarantine rows."""

    run_id: str
    row: dict[str, Any]
    quarantine: list[dict[str, Any]]


class DecodeTask(NamedTuple):
    """A content to decode, and the run whose partition will hold its row."""

    run_id: str
    benchmark: str
    source: str
    path: str
    where: str
    content_hash: str


class Shot(NamedTuple):
    """A `screenshots` row for a run's partition (None when none could be made), and its
    quarantine rows."""

    row: dict[str, Any] | None
    quarantine: list[dict[str, Any]]


class RunRefs(NamedTuple):
    """A run's `screenshot_refs` rows and the quarantine rows of its unreadable files."""

    run_id: str
    benchmark: str
    refs: list[dict[str, Any]]
    quarantine: list[dict[str, Any]]


def _shot(ref: ShotRef, decoded: Decoded) -> Shot:
    """The `screenshots` row of a decoded file, and its quarantine row when it is not ok."""
    return Shot(screenshot_row(ref, decoded.facts), bad_image_rows(ref, decoded))


# --------------------------------------------------------------------------- stage 1


class ReadRunFn(beam.DoFn):
    """RunKey -> (run_id, RunRefs); tagged (hash, Seen), (hash, Carried), (run_id, Shot).

    The run with the smallest run_id of the pass owns every content it shows that the
    warehouse does not hold yet (no other run of the pass can claim it), so it decodes
    those at once, from the bytes it has just read and hashed: for a pass of one run, each
    file is read and hashed once. Other runs leave decoding to `ResolveFn`."""

    def __init__(
        self, warehouse: str, threads: int | None = None, max_pixels: int = DEFAULT_MAX_PIXELS
    ) -> None:
        self.warehouse = warehouse
        self.threads = threads
        self.max_pixels = max_pixels
        self.runs = Metrics.counter(NAMESPACE, "runs")
        self.refs = Metrics.counter(NAMESPACE, "refs")
        self.files_read = Metrics.counter(NAMESPACE, "files_read")
        self.unreadable = Metrics.counter(NAMESPACE, "unreadable")
        self.decoded = Metrics.counter(NAMESPACE, "decoded")
        self.bad = Metrics.counter(NAMESPACE, "bad_images")

    def setup(self) -> None:
        from deskscore.collectors.warehouse import Warehouse

        self._wh = Warehouse(self.warehouse)
        self._pool = ScreenshotPool(self.threads, self.max_pixels)
        self._stored: set[str] | None = None

    def _stored_hashes(self) -> set[str]:
        """Every content hash the warehouse's screenshots table holds, in any partition."""
        if self._stored is None:
            self._stored = content_hashes(self._wh, "screenshots")
        return self._stored

    def teardown(self) -> None:
        if hasattr(self, "_pool"):
            self._pool.close()

    def process(self, run: RunKey, runs: Sequence[RunKey]) -> Iterator[Any]:
        first_of_pass = run.run_id == min(r.run_id for r in runs)
        steps = screenshot_steps(self._wh, run)
        first_step = first_steps(steps)
        quarantine: list[dict[str, Any]] = []
        source = None
        if first_step:
            self._pool.sources.prune()
            try:
                source = self._pool.sources.get(run.source)
            except SourceError as e:
                yield from self._unreadable_source(run, e, len(steps))
                return
        hashes: dict[str, str | None] = {}
        shots: list[Shot] = []
        if source is not None:
            hashes = self._hash_files(run, source, first_step, first_of_pass, quarantine, shots)
        refs = ref_rows(run, steps, hashes)
        self.runs.inc()
        self.refs.inc(len(refs))
        yield run.run_id, RunRefs(run.run_id, run.benchmark, refs, quarantine)

        for shot in shots:
            yield beam.pvalue.TaggedOutput(SHOTS_TAG, (run.run_id, shot))
        decoded = {shot.row["content_hash"] for shot in shots if shot.row is not None}
        seen: dict[str, Seen] = {}
        for path, digest in hashes.items():
            if digest is not None and digest not in seen:
                where = step_location(first_step[path])
                item = Seen(run.run_id, run.benchmark, run.source, path, where)
                seen[digest] = item._replace(decoded=digest in decoded)
        for digest, item in seen.items():
            yield beam.pvalue.TaggedOutput(SEEN_TAG, (digest, item))
        yield from self._carried(run, hashes)

    def _hash_files(
        self,
        run: RunKey,
        source: Any,
        first_step: dict[str, Any],
        decode_new: bool,
        quarantine: list[dict[str, Any]],
        shots: list[Shot],
    ) -> dict[str, str | None]:
        """path -> SHA-256 of its bytes (None when unreadable, with a quarantine row). With
        `decode_new`, contents the warehouse lacks are decoded too, once each, from the
        first path that shows them, and their Shots appended to `shots`."""

        def origin(path: str) -> Origin:
            where = step_location(first_step[path])
            return Origin(run.run_id, run.benchmark, run.source, path, where)

        known = self._stored_hashes() if decode_new else frozenset()
        hashes: dict[str, str | None] = {}
        for event in self._pool.hash_files(source, first_step, decode_new=decode_new, known=known):
            if isinstance(event, HashedDecoded):
                progress.tick("decoded")
                self.decoded.inc()
                self.bad.inc(event.decoded.facts.status != "ok")
                shots.append(_shot(origin(event.path), event.decoded))
                continue
            progress.tick("screenshots")
            hashes[event.path] = event.content_hash
            if event.error is None:
                self.files_read.inc()
            else:
                self.unreadable.inc()
                quarantine.append(unreadable_file_row(origin(event.path), event.error))
        return hashes

    def _unreadable_source(self, run: RunKey, error: SourceError, n_steps: int) -> Iterator[Any]:
        """A source that cannot be opened changes nothing: the run keeps the references and
        rows of its last pass (a moved disk or an expired URL must not erase them)."""
        refs = self._wh.read("screenshot_refs", partition(run)).to_pylist()
        row = unreadable_source_row(run, error, n_steps, len(refs))
        self.runs.inc()
        self.refs.inc(len(refs))
        yield run.run_id, RunRefs(run.run_id, run.benchmark, refs, [row])
        hashes: dict[str, str | None] = {}
        shown: set[str] = set()
        for ref in refs:
            digest = ref["content_hash"]
            if digest is not None and digest not in shown:
                shown.add(digest)
                item = Seen(
                    run.run_id, run.benchmark, run.source, ref["screenshot_path"], "", False
                )
                yield beam.pvalue.TaggedOutput(SEEN_TAG, (digest, item))
            hashes[ref["screenshot_path"]] = digest
        yield from self._carried(run, hashes)

    def _carried(self, run: RunKey, hashes: dict[str, str | None]) -> Iterator[Any]:
        """The run's existing screenshots rows, each with the quarantine rows that name it."""
        existing = self._wh.read("screenshots", partition(run)).to_pylist()
        if not existing:
            return
        kept = quarantine_of_rows(existing, quarantine_rows(self._wh, run), hashes)
        for row, rows in kept:
            carried = Carried(run.run_id, row, rows)
            yield beam.pvalue.TaggedOutput(CARRIED_TAG, (row["content_hash"], carried))


# --------------------------------------------------------------------------- stage 2


class ResolveFn(beam.DoFn):
    """(hash, {seen, carried}) -> (run_id, Shot) to keep; tagged DecodeTask to decode.

    `runs` (a side input: every RunKey of the pass) tells which partitions this pass rewrites;
    hashes stored in any other partition are known, and stay where they are."""

    def __init__(self, warehouse: str) -> None:
        self.warehouse = warehouse
        self.distinct = Metrics.counter(NAMESPACE, "distinct")
        self.known = Metrics.counter(NAMESPACE, "known")
        self.to_decode = Metrics.counter(NAMESPACE, "to_decode")

    def setup(self) -> None:
        from deskscore.collectors.warehouse import Warehouse

        self._wh = Warehouse(self.warehouse)
        self._runs: Sequence[RunKey] | None = None
        self._stored_elsewhere: set[str] = set()
        self._referenced_elsewhere: set[str] | None = None

    def process(
        self, element: tuple[str, dict[str, Iterable[Any]]], runs: Sequence[RunKey]
    ) -> Iterator[Any]:
        if self._runs is None:
            self._runs = runs
            self._stored_elsewhere = content_hashes(self._wh, "screenshots", excluding=runs)
        digest, groups = element
        seen = sorted(groups.get(SEEN_TAG, ()), key=lambda s: s.run_id)
        carried = sorted(groups.get(CARRIED_TAG, ()), key=lambda c: c.run_id)
        if seen:
            self.distinct.inc()
        if digest in self._stored_elsewhere:
            if seen:
                self.known.inc()
            return
        referencing = {s.run_id for s in seen}
        keep = next((c for c in carried if c.run_id in referencing), None)
        if keep is not None:
            self.known.inc()
            yield keep.run_id, Shot(keep.row, keep.quarantine)
            return
        readable = [s for s in seen if s.readable]
        if readable and readable[0].decoded:
            return  # decoded by its owner while reading it
        if readable:
            first = readable[0]
            self.to_decode.inc()
            yield beam.pvalue.TaggedOutput(
                DECODE_TAG,
                DecodeTask(
                    first.run_id, first.benchmark, first.source, first.path, first.where, digest
                ),
            )
            return
        if seen:
            return  # only runs whose source is unreadable show it: the next pass decodes it
        if carried and digest in self._referenced():
            # no run of this pass shows it any more, but a run outside the pass does
            yield carried[0].run_id, Shot(carried[0].row, [])

    def _referenced(self) -> set[str]:
        if self._referenced_elsewhere is None:
            self._referenced_elsewhere = content_hashes(
                self._wh, "screenshot_refs", excluding=self._runs or ()
            )
        return self._referenced_elsewhere


# --------------------------------------------------------------------------- stage 3


class DecodeBatchFn(beam.DoFn):
    """[DecodeTask] -> (run_id, Shot): files read here, decoded on a thread pool."""

    def __init__(self, threads: int | None = None, max_pixels: int = DEFAULT_MAX_PIXELS) -> None:
        self.threads = threads
        self.max_pixels = max_pixels
        self.decoded = Metrics.counter(NAMESPACE, "decoded")
        self.bad = Metrics.counter(NAMESPACE, "bad_images")
        self.unreadable = Metrics.counter(NAMESPACE, "unreadable")

    def setup(self) -> None:
        self._pool = ScreenshotPool(self.threads, self.max_pixels)

    def teardown(self) -> None:
        if hasattr(self, "_pool"):
            self._pool.close()

    def process(self, batch: list[DecodeTask]) -> Iterator[tuple[str, Shot]]:
        for task, result in self._pool.decode_files(batch):
            if isinstance(result, SourceError):
                self.unreadable.inc()
                yield task.run_id, Shot(None, [unreadable_file_row(task, result, again=True)])
                continue
            progress.tick("decoded")
            if result.facts.content_hash != task.content_hash:
                yield task.run_id, Shot(None, [changed_file_row(task, result.excerpt)])
                continue
            self.decoded.inc()
            self.bad.inc(result.facts.status != "ok")
            yield task.run_id, _shot(task, result)


# --------------------------------------------------------------------------- stage 4


class WriteRunFn(beam.DoFn):
    """(run_id, {refs, shots}) -> paths of the run's screenshot_refs, screenshots and
    quarantine files, each rewritten whole, rows sorted (a file with no rows is removed)."""

    def __init__(self, warehouse: str, job: str | None = None) -> None:
        self.warehouse = warehouse
        self.job = job
        self.quarantined = Metrics.counter(NAMESPACE, "quarantined")
        self.written = Metrics.counter(NAMESPACE, "screenshots_written")
        self.files = Metrics.counter(NAMESPACE, "files_written")

    def setup(self) -> None:
        from deskscore.collectors.warehouse import Warehouse

        self._wh = Warehouse(self.warehouse, self.job)

    def process(self, element: tuple[str, dict[str, Iterable[Any]]]) -> Iterator[str]:
        _, groups = element
        [run_refs] = list(groups["refs"])
        shots: list[Shot] = list(groups.get("shots", ()))
        rows = [s.row for s in shots if s.row is not None]
        quarantine = list(run_refs.quarantine) + [q for s in shots for q in s.quarantine]
        out = write_run(self._wh, run_refs, run_refs.refs, rows, quarantine)
        self.written.inc(len(rows))
        self.quarantined.inc(len(quarantine))
        self.files.inc(len(out))
        yield from (str(p) for p in out)


# --------------------------------------------------------------------------- the stage


class HashScreenshots(beam.PTransform):
    """RunKey -> paths written: every referenced screenshot hashed, each content decoded once.

    `threads`: pool size of each reading and decoding DoFn (default: the CPU count, 2 to 8);
    `max_pixels`: images above it are not decoded (status too_large); `batch_size`: decode
    tasks per batch (paths only, so a large batch costs no memory).
    """

    def __init__(
        self,
        warehouse: str,
        *,
        threads: int | None = None,
        max_pixels: int = DEFAULT_MAX_PIXELS,
        batch_size: int = 256,
        job: str | None = None,
    ) -> None:
        super().__init__()
        self.warehouse = warehouse
        self.job = job
        self.threads = threads
        self.max_pixels = max_pixels
        self.batch_size = batch_size

    def expand(self, runs: beam.PCollection) -> beam.PCollection:
        read = (
            runs
            | "Spread" >> beam.Reshuffle()
            | "ReadRuns"
            >> beam.ParDo(
                ReadRunFn(self.warehouse, self.threads, self.max_pixels),
                runs=beam.pvalue.AsList(runs),
            ).with_outputs(SEEN_TAG, CARRIED_TAG, SHOTS_TAG, main="refs")
        )
        resolved = (
            {SEEN_TAG: read[SEEN_TAG], CARRIED_TAG: read[CARRIED_TAG]}
            | "ByHash" >> beam.CoGroupByKey()
            | "Resolve"
            >> beam.ParDo(ResolveFn(self.warehouse), runs=beam.pvalue.AsList(runs)).with_outputs(
                DECODE_TAG, main="keep"
            )
        )
        decoded = (
            resolved[DECODE_TAG]
            | "Batch"
            >> beam.BatchElements(min_batch_size=self.batch_size, max_batch_size=self.batch_size)
            | "Decode" >> beam.ParDo(DecodeBatchFn(self.threads, self.max_pixels))
        )
        shots = (resolved["keep"], decoded, read[SHOTS_TAG]) | "Shots" >> beam.Flatten()
        return (
            {"refs": read["refs"], "shots": shots}
            | "ByRun" >> beam.CoGroupByKey()
            | "Write" >> beam.ParDo(WriteRunFn(self.warehouse, self.job))
        )

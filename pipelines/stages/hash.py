"""`deskscore hash`: every screenshot a step refers to -> screenshot_refs and screenshots.

Four stages, composed in `HashScreenshots`:

1. per run (`ReadRunFn`): the run's `steps` rows with a screenshot, each file read once and
   SHA-256'd -> the run's `screenshot_refs` rows, one `Seen` per distinct content per run,
   and the run's existing `screenshots` rows as `Carried`;
2. per content hash (`ResolveFn`): decode nothing the warehouse already holds. A hash stored
   in a run outside this pass stays there; a run in the pass keeps, verbatim, the rows it
   had for hashes it still references (with their quarantine rows); anything else is decoded
   once, by the smallest run_id that references it;
3. per batch (`DecodeBatchFn`): files read again, checked against their hash and decoded
   by a thread pool (Pillow, numpy and hashlib release the GIL, so threads use every core;
   batches are large and fixed, as the pool idles while a batch drains);
4. per run (`WriteRunFn`): the run's three partition files, rewritten whole and sorted, so
   a second pass writes the same bytes.

Bytes never travel between stages: only paths and hashes do, so memory stays flat whatever
the archive's size; a decoded file is read twice, which costs far less than decoding it.
Unreadable files get a reference with no hash and a quarantine row; a source that cannot be
opened at all changes nothing but its quarantine row (the last pass's rows are kept).
"""

from __future__ import annotations

import os
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

import apache_beam as beam
from apache_beam.metrics import Metrics

from deskscore.collectors.images import DEFAULT_MAX_PIXELS
from deskscore.pipelines.infra import progress
from deskscore.pipelines.infra.runner import counters, pipeline

COUNTERS = (
    "runs",
    "refs",
    "files_read",
    "unreadable",
    "distinct",
    "known",
    "to_decode",
    "decoded",
    "bad_images",
    "screenshots_written",
    "quarantined",
    "files_written",
)
"""Every counter `run_hash` returns (0 when nothing counted)."""
STAGE = "hash"
"""The stage's quarantine file in each run's partition (ingest keeps its own)."""
NAMESPACE = "hash"
SEEN_TAG = "seen"
SHOTS_TAG = "shots"
CARRIED_TAG = "carried"
DECODE_TAG = "decode"
IMAGE_REASONS = {
    "corrupt": "corrupt_image",
    "truncated": "truncated_image",
    "too_large": "image_too_large",
    "not_an_image": "not_an_image",
}
_STEP_COLUMNS = ["domain", "task_id", "step_idx", "line_no", "screenshot_path"]
_QUARANTINE_COLUMNS = [
    "run_id",
    "benchmark",
    "source",
    "location",
    "line_no",
    "reason",
    "message",
    "excerpt",
]
_OPEN_SOURCES = 8
_EXCERPT_BYTES = 48  # hex with spaces: 143 characters, within the 200 allowed


class RunKey(NamedTuple):
    """A run to hash: where its partitions are and where its files are."""

    benchmark: str
    run_id: str
    source: str


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

    benchmark: str
    refs: list[dict[str, Any]]
    quarantine: list[dict[str, Any]]


# --------------------------------------------------------------------------- helpers


def _where(step: dict[str, Any]) -> str:
    return f"step {step['step_idx']} of {step['domain']}/{step['task_id']}, line {step['line_no']}"


def _quarantine_row(
    run: RunKey | Seen | DecodeTask, location: str, reason: str, message: str, excerpt: str | None
) -> dict[str, Any]:
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


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _in_order(
    pool: ThreadPoolExecutor, fn: Callable[[Any], Any], items: Iterable[Any], window: int
):
    """fn over items on the pool, results in input order, at most `window` in flight, so the
    items (file bytes read by the calling thread) never pile up in memory."""
    pending: deque[Future[Any]] = deque()
    for item in items:
        pending.append(pool.submit(fn, item))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


class _Sources:
    """Open sources by URI (a zip's directory is parsed once, not per file). Opened by the
    DoFn's thread only; pool threads only read from them. `prune` closes the least recently
    used beyond a few, between elements, when no read is in flight."""

    def __init__(self) -> None:
        self._open: OrderedDict[str, Any] = OrderedDict()

    def get(self, uri: str) -> Any:
        from deskscore.collectors.source import open_source

        if uri in self._open:
            self._open.move_to_end(uri)
            return self._open[uri]
        source = open_source(uri)
        source.files()  # listed once: reads of listed paths then skip per-file safety checks
        self._open[uri] = source
        return source

    def prune(self) -> None:
        while len(self._open) > _OPEN_SOURCES:
            _, old = self._open.popitem(last=False)
            old.close()

    def close(self) -> None:
        for source in self._open.values():
            source.close()
        self._open.clear()


def _read_columns(paths: Iterable[os.PathLike[str] | str], columns: list[str]) -> list[dict]:
    """Some columns of a few Parquet files, as rows (whatever other columns they hold)."""
    import pyarrow.parquet as pq

    rows: list[dict] = []
    for path in paths:
        rows.extend(pq.read_table(path, columns=columns).to_pylist())
    return rows


def _partition_files(wh: Any, table: str, part: dict[str, str], name: str | None = None) -> list:
    base = wh.partition_dir(table, part)
    if not base.is_dir():
        return []
    pattern = f"{name}.parquet" if name else "*.parquet"
    return sorted(p for p in base.glob(pattern) if not p.name.startswith("."))


def _threads(threads: int | None) -> int:
    return threads if threads and threads > 0 else max(2, min(8, os.cpu_count() or 2))


def _keep_image_blocks(threads: int) -> None:
    """Let Pillow keep a few freed image blocks for the next decode (its documented block
    allocator setting; default 0). Without them, each screenshot's memory is handed back to
    the system and faulted in again: about 2000 page faults, 4 ms per 1024x768 screenshot
    on a 2-core VM, more than the whole perceptual hash costs."""
    from PIL import Image

    wanted = 4 * threads
    if Image.core.get_blocks_max() < wanted:
        Image.core.set_blocks_max(wanted)


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
        self._sources = _Sources()
        self._pool = ThreadPoolExecutor(_threads(self.threads))
        self._stored: set[str] | None = None
        _keep_image_blocks(_threads(self.threads))

    def _stored_hashes(self) -> set[str]:
        """Every content hash the warehouse's screenshots table holds, in any partition."""
        if self._stored is None:
            self._stored = {
                r["content_hash"]
                for r in _read_columns(self._wh.files("screenshots"), ["content_hash"])
            }
        return self._stored

    def teardown(self) -> None:
        if hasattr(self, "_pool"):
            self._pool.shutdown()
            self._sources.close()

    def process(self, run: RunKey, runs: Sequence[RunKey]) -> Iterator[Any]:
        from deskscore.collectors.source import SourceError

        part = {"benchmark": run.benchmark, "run_id": run.run_id}
        first_of_pass = run.run_id == min(r.run_id for r in runs)
        steps = [
            s
            for s in _read_columns(_partition_files(self._wh, "steps", part), _STEP_COLUMNS)
            if s["screenshot_path"] is not None
        ]
        steps.sort(key=lambda s: (s["domain"], s["task_id"], s["step_idx"]))
        first_step: dict[str, dict[str, Any]] = {}
        for step in steps:
            first_step.setdefault(step["screenshot_path"], step)
        quarantine: list[dict[str, Any]] = []
        source = None
        if first_step:
            self._sources.prune()
            try:
                source = self._sources.get(run.source)
            except SourceError as e:
                yield from self._unreadable_source(run, part, e, len(steps))
                return
        hashes: dict[str, str | None] = {}
        shots: list[Shot] = []
        if source is not None:
            hashes = self._hash_files(run, source, first_step, quarantine, first_of_pass, shots)
        refs = [
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
        self.runs.inc()
        self.refs.inc(len(refs))
        yield run.run_id, RunRefs(run.benchmark, refs, quarantine)

        for shot in shots:
            yield beam.pvalue.TaggedOutput(SHOTS_TAG, (run.run_id, shot))
        decoded = {shot.row["content_hash"] for shot in shots}
        seen: dict[str, Seen] = {}
        for path, digest in hashes.items():
            if digest is not None and digest not in seen:
                where = _where(first_step[path])
                item = Seen(run.run_id, run.benchmark, run.source, path, where)
                seen[digest] = item._replace(decoded=digest in decoded)
        for digest, item in seen.items():
            yield beam.pvalue.TaggedOutput(SEEN_TAG, (digest, item))
        yield from self._carried(part, run, hashes)

    def _unreadable_source(
        self, run: RunKey, part: dict[str, str], error: Exception, n_steps: int
    ) -> Iterator[Any]:
        """A source that cannot be opened changes nothing: the run keeps the references and
        rows of its last pass (a moved disk or an expired URL must not erase them)."""
        refs = self._wh.read("screenshot_refs", part).to_pylist()
        message = (
            f"{error}; the run's {n_steps} screenshot references could not be hashed, so "
            f"those of the last pass ({len(refs)}) are kept; make the source readable again "
            "and run `deskscore hash` again"
        )
        row = _quarantine_row(run, "", "unreadable_source", message, None)
        self.runs.inc()
        self.refs.inc(len(refs))
        yield run.run_id, RunRefs(run.benchmark, refs, [row])
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
        yield from self._carried(part, run, hashes)

    def _hash_files(
        self,
        run: RunKey,
        source: Any,
        first_step: dict[str, dict[str, Any]],
        quarantine: list[dict[str, Any]],
        decode_new: bool,
        shots: list[Shot],
    ) -> dict[str, str | None]:
        """path -> SHA-256 of its bytes (None when unreadable, with a quarantine row). With
        `decode_new`, contents the warehouse lacks are decoded too, once each, from the
        first path that shows them, and their Shots appended to `shots`."""
        from deskscore.collectors.source import SourceError

        stored = self._stored_hashes() if decode_new else set()

        def read(path: str) -> tuple[str, str | SourceError, bytes | None]:
            try:
                data = source.read_bytes(path)
            except SourceError as e:
                return path, e, None
            return path, _digest(data), data if decode_new else None

        def collect(future: Future[tuple[DecodeTask, tuple[Any, str]]]) -> None:
            task, (facts, excerpt) = future.result()
            progress.tick("decoded")
            self.decoded.inc()
            self.bad.inc(facts.status != "ok")
            shots.append(_shot(task, facts, excerpt))

        out: dict[str, str | None] = {}
        decoding: deque[Future[tuple[DecodeTask, tuple[Any, str]]]] = deque()
        claimed: set[str] = set()
        threads = _threads(self.threads)
        for path, result, data in _in_order(self._pool, read, first_step, 4 * threads):
            progress.tick("screenshots")
            if isinstance(result, SourceError):
                self.unreadable.inc()
                out[path] = None
                message = (
                    f"{run.source}!{path} ({_where(first_step[path])}): {result.message}; "
                    "the step keeps its screenshot_path with no content hash; restore the file "
                    "and run `deskscore hash` again"
                )
                quarantine.append(
                    _quarantine_row(run, path, "unreadable_screenshot", message, None)
                )
                continue
            self.files_read.inc()
            out[path] = result
            if data is not None and result not in stored and result not in claimed:
                claimed.add(result)
                where = _where(first_step[path])
                task = DecodeTask(run.run_id, run.benchmark, run.source, path, where, result)
                decoding.append(self._pool.submit(_decode_task, task, data, self.max_pixels))
                while len(decoding) > 2 * threads + 2:
                    collect(decoding.popleft())
        while decoding:
            collect(decoding.popleft())
        return out

    def _carried(
        self, part: dict[str, str], run: RunKey, hashes: dict[str, str | None]
    ) -> Iterator[Any]:
        """The run's existing screenshots rows, each with the quarantine rows that name it
        (found by location: the path that holds that content now)."""
        existing = self._wh.read("screenshots", part).to_pylist()
        if not existing:
            return
        by_hash: dict[str, list[dict[str, Any]]] = {}
        for q in _read_columns(
            _partition_files(self._wh, "quarantine", part, STAGE), _QUARANTINE_COLUMNS
        ):
            digest = hashes.get(q["location"])
            if digest is not None:
                by_hash.setdefault(digest, []).append(q)
        for row in existing:
            digest = row["content_hash"]
            reason = IMAGE_REASONS.get(row["status"])
            rows = [q for q in by_hash.get(digest, []) if q["reason"] == reason]
            yield beam.pvalue.TaggedOutput(CARRIED_TAG, (digest, Carried(run.run_id, row, rows)))


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
        self._parts: set[tuple[str, str]] | None = None
        self._stored_elsewhere: set[str] = set()
        self._referenced_elsewhere: set[str] | None = None

    def _hashes_outside(self, table: str) -> set[str]:
        """Content hashes of `table` in the partitions of runs this pass does not rewrite."""
        inside = {
            self._wh.partition_dir(table, {"benchmark": b, "run_id": r})
            for b, r in self._parts or ()
        }
        files = [p for p in self._wh.files(table) if p.parent not in inside]
        return {
            r["content_hash"]
            for r in _read_columns(files, ["content_hash"])
            if r["content_hash"] is not None
        }

    def process(
        self, element: tuple[str, dict[str, Iterable[Any]]], runs: Sequence[RunKey]
    ) -> Iterator[Any]:
        if self._parts is None:
            self._parts = {(r.benchmark, r.run_id) for r in runs}
            self._stored_elsewhere = self._hashes_outside("screenshots")
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
            self._referenced_elsewhere = self._hashes_outside("screenshot_refs")
        return self._referenced_elsewhere


# --------------------------------------------------------------------------- stage 3


def _decode(data: bytes, max_pixels: int, known_hash: str | None = None) -> tuple[Any, str]:
    """Facts about one file's bytes, and their excerpt for a quarantine row."""
    from deskscore.collectors.images import hash_image

    facts = hash_image(data, max_pixels=max_pixels, known_hash=known_hash)
    return facts, data[:_EXCERPT_BYTES].hex(" ")


def _decode_task(
    task: DecodeTask, data: bytes, max_pixels: int
) -> tuple[DecodeTask, tuple[Any, str]]:
    """`_decode` of bytes already hashed (runs on a pool thread)."""
    return task, _decode(data, max_pixels, task.content_hash)


def _shot(task: DecodeTask, facts: Any, excerpt: str) -> Shot:
    """The `screenshots` row of decoded facts, and a quarantine row when it is not ok."""
    row = {
        "content_hash": facts.content_hash,
        "run_id": task.run_id,
        "benchmark": task.benchmark,
        "phash": facts.phash,
        "width": facts.width,
        "height": facts.height,
        "n_bytes": facts.n_bytes,
        "format": facts.format,
        "status": facts.status,
    }
    if facts.status == "ok":
        return Shot(row, [])
    at = f"{task.source}!{task.path} ({task.where}): {facts.message}; its steps have no phash"
    if facts.status == "too_large":
        message = f"{at}; check where this file came from"
    else:
        message = (
            f"{at}, so loop detection uses their other signals; replace the file with the "
            "run's original screenshot and run `deskscore hash` again"
        )
    reason = IMAGE_REASONS[facts.status]
    return Shot(row, [_quarantine_row(task, task.path, reason, message, excerpt)])


class DecodeBatchFn(beam.DoFn):
    """[DecodeTask] -> (run_id, Shot): files read here, decoded on a thread pool."""

    def __init__(self, threads: int | None = None, max_pixels: int = DEFAULT_MAX_PIXELS) -> None:
        self.threads = threads
        self.max_pixels = max_pixels
        self.decoded = Metrics.counter(NAMESPACE, "decoded")
        self.bad = Metrics.counter(NAMESPACE, "bad_images")
        self.unreadable = Metrics.counter(NAMESPACE, "unreadable")

    def setup(self) -> None:
        self._sources = _Sources()
        self._pool = ThreadPoolExecutor(_threads(self.threads))
        _keep_image_blocks(_threads(self.threads))

    def teardown(self) -> None:
        if hasattr(self, "_pool"):
            self._pool.shutdown()
            self._sources.close()

    def process(self, batch: list[DecodeTask]) -> Iterator[tuple[str, Shot]]:
        from deskscore.collectors.source import SourceError

        self._sources.prune()
        sources: dict[str, Any] = {}
        for uri in {task.source for task in batch}:
            try:
                sources[uri] = self._sources.get(uri)
            except SourceError as e:
                sources[uri] = e

        def decode(task: DecodeTask) -> tuple[DecodeTask, Any]:
            source = sources[task.source]
            if isinstance(source, SourceError):
                return task, source
            try:
                data = source.read_bytes(task.path)
            except SourceError as e:
                return task, e
            return task, _decode(data, self.max_pixels)

        window = 2 * _threads(self.threads) + 2
        for task, result in _in_order(self._pool, decode, batch, window):
            if isinstance(result, SourceError):
                self.unreadable.inc()
                message = (
                    f"{task.source}!{task.path} ({task.where}): {result.message}; it could not "
                    "be read again to decode it; restore the file and run `deskscore hash` again"
                )
                row = _quarantine_row(task, task.path, "unreadable_screenshot", message, None)
                yield task.run_id, Shot(None, [row])
                continue
            facts, excerpt = result
            progress.tick("decoded")
            if facts.content_hash != task.content_hash:
                message = (
                    f"{task.source}!{task.path} ({task.where}): the file changed while it was "
                    "being hashed; run `deskscore hash` again once the archive is complete"
                )
                row = _quarantine_row(task, task.path, "screenshot_changed", message, excerpt)
                yield task.run_id, Shot(None, [row])
                continue
            self.decoded.inc()
            self.bad.inc(facts.status != "ok")
            yield task.run_id, _shot(task, facts, excerpt)


# --------------------------------------------------------------------------- stage 4


class WriteRunFn(beam.DoFn):
    """(run_id, {refs, shots}) -> paths of the run's screenshot_refs, screenshots and
    quarantine files, each rewritten whole, rows sorted (a file with no rows is removed)."""

    def __init__(self, warehouse: str) -> None:
        self.warehouse = warehouse
        self.quarantined = Metrics.counter(NAMESPACE, "quarantined")
        self.written = Metrics.counter(NAMESPACE, "screenshots_written")
        self.files = Metrics.counter(NAMESPACE, "files_written")

    def setup(self) -> None:
        from deskscore.collectors.warehouse import Warehouse

        self._wh = Warehouse(self.warehouse)

    def process(self, element: tuple[str, dict[str, Iterable[Any]]]) -> Iterator[str]:
        run_id, groups = element
        [run_refs] = list(groups["refs"])
        shots: list[Shot] = list(groups.get("shots", ()))
        part = {"benchmark": run_refs.benchmark, "run_id": run_id}
        refs = sorted(run_refs.refs, key=lambda r: (r["domain"], r["task_id"], r["step_idx"]))
        rows = sorted((s.row for s in shots if s.row is not None), key=lambda r: r["content_hash"])
        quarantine = list(run_refs.quarantine) + [q for s in shots for q in s.quarantine]
        quarantine.sort(key=lambda q: (q["location"], q["line_no"] or 0, q["reason"], q["message"]))
        out = [self._wh.write("screenshot_refs", refs, part)]
        if rows:
            out.append(self._wh.write("screenshots", rows, part))
        else:
            self._wh.remove("screenshots", part)
        if quarantine:
            out.append(self._wh.write("quarantine", quarantine, part, file=STAGE))
        else:
            self._wh.remove("quarantine", part, file=STAGE)
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
    ) -> None:
        super().__init__()
        self.warehouse = warehouse
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
            | "Write" >> beam.ParDo(WriteRunFn(self.warehouse))
        )


def run_keys(warehouse_root: str, run_ids: Sequence[str] | None = None) -> list[RunKey]:
    """The runs of the warehouse (or those of `run_ids`), sorted."""
    from deskscore.collectors.warehouse import Warehouse

    runs = Warehouse(warehouse_root).read("runs").select(["benchmark", "run_id", "source"])
    wanted = set(run_ids) if run_ids else None
    return sorted(
        {
            RunKey(r["benchmark"], r["run_id"], r["source"])
            for r in runs.to_pylist()
            if wanted is None or r["run_id"] in wanted
        }
    )


def run_hash(
    warehouse_root: str,
    *,
    run_ids: Sequence[str] | None = None,
    beam_args: Sequence[str] = (),
    threads: int | None = None,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> dict[str, int]:
    """Hash the screenshots of every run (or `run_ids`) of the warehouse; returns the counters
    (runs, refs, files_read, unreadable, distinct, known, decoded, bad_images, quarantined, ...).

    `threads` decoding threads per worker (default: the CPU count, 2 to 8); images above
    `max_pixels` are not decoded (status too_large).
    """
    keys = run_keys(warehouse_root, run_ids)
    if not keys:
        return dict.fromkeys(COUNTERS, 0)
    root = str(os.path.abspath(warehouse_root))
    p = pipeline(beam_args)
    _ = (
        p
        | "Runs" >> beam.Create(keys)
        | "HashScreenshots" >> HashScreenshots(root, threads=threads, max_pixels=max_pixels)
    )
    result = p.run()
    result.wait_until_finish()
    return {**dict.fromkeys(COUNTERS, 0), **counters(result)}

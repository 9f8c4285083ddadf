"""The loop stage: each run's steps (with screenshot hashes, where known) -> loop_spans.

Per run it reads the steps, episodes and runs partitions, and the screenshot hashes: a step's
screenshot_refs row gives the content hash of its file, and the screenshots table gives that
content's perceptual hash (status ok only). A content is hashed once, in the partition of the
run that first showed it, so hashes the run's own partition lacks are looked up in the other
partitions. Steps without a hash simply have none: the phash signal does not vote for them
(see `deskscore.scorers.loops`). The detection itself is `find_loops`, pure and vectorised
over Arrow columns: the stage imports no Polars.

Every run gets its loop_spans file, an empty one when it has no loop, so a re-run replaces
whatever an earlier detector wrote and gives the same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deskscore.pipelines.stages.base import RunKey, RunStage
from deskscore.scorers.loops import EPISODE_COLUMNS, STEP_COLUMNS, LoopParams

if TYPE_CHECKING:
    import pyarrow as pa

    from deskscore.collectors.warehouse import Warehouse

_SPAN_ORDER = ("domain", "task_id", "first_step")


class SharedHashes:
    """The screenshots table's hash columns of every run, read once when a run first needs a
    content hashed in another run's partition, then kept for the job (a job writes no
    screenshots). Releases whose runs share screenshots (a task's first screen, say) would
    otherwise read the whole table again for every run: quadratic in runs."""

    COLUMNS = ("run_id", "content_hash", "phash", "status")

    def __init__(self, wh: Warehouse) -> None:
        self.wh = wh
        self._table: pa.Table | None = None

    def table(self) -> pa.Table:
        if self._table is None:
            self._table = self.wh.read("screenshots", columns=list(self.COLUMNS))
        return self._table


def _phash_by_content(
    wh: Warehouse, part: dict[str, str], hashes: set[str], shared: SharedHashes | None = None
) -> dict[str, int]:
    """content_hash -> phash of the usable (status ok) hashes among `hashes`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = ["content_hash", "phash", "status"]
    own = wh.read("screenshots", part, columns=cols)
    own = own.filter(pc.is_in(own.column("content_hash"), pa.array(sorted(hashes))))
    rows = own.to_pylist()
    missing = hashes - {r["content_hash"] for r in rows}
    if missing:  # a content is hashed once, in the partition of the first run that showed it
        others = (shared or SharedHashes(wh)).table()
        wanted = pc.and_(
            pc.not_equal(others.column("run_id"), part["run_id"]),
            pc.is_in(others.column("content_hash"), pa.array(sorted(missing))),
        )
        rows += others.filter(wanted).select(cols).to_pylist()
    found: dict[str, int] = {}
    for r in rows:
        if r["status"] == "ok" and r["phash"] is not None:
            found.setdefault(r["content_hash"], r["phash"])
    return found


def run_frames(
    wh: Warehouse, benchmark: str, run_id: str, shared: SharedHashes | None = None
) -> tuple[pa.Table, pa.Table]:
    """The (steps, episodes) tables `find_loops` takes, for one run of the warehouse (`shared`:
    the job's other runs' hashes, when it keeps them between runs)."""
    import pyarrow as pa

    part = {"benchmark": benchmark, "run_id": run_id}
    step_cols = [c for c in STEP_COLUMNS if c != "phash"]
    # only the columns used: a run's steps whole (their texts, extra, info) take four times
    # as long to read as these
    steps = wh.read("steps", part, columns=step_cols)
    refs = wh.read(
        "screenshot_refs", part, columns=["domain", "task_id", "step_idx", "content_hash"]
    )
    phash: list[int | None] = [None] * steps.num_rows
    hashes = {h for h in refs.column("content_hash").to_pylist() if h is not None}
    if hashes:
        by_content = _phash_by_content(wh, part, hashes, shared)
        by_step = {
            (d, t, i): by_content[h]
            for d, t, i, h in zip(*refs.to_pydict().values(), strict=True)
            if h in by_content
        }
        columns = (steps.column(c).to_pylist() for c in ("domain", "task_id", "step_idx"))
        phash = [by_step.get(k) for k in zip(*columns, strict=True)]
    steps = steps.append_column("phash", pa.array(phash, pa.int64()))
    runs = wh.read("runs", part, columns=["run_id", "max_steps"]).to_pylist()
    max_steps = runs[0]["max_steps"] if runs else None
    episodes = wh.read("episodes", part, columns=[c for c in EPISODE_COLUMNS if c != "max_steps"])
    episodes = episodes.append_column(
        "max_steps", pa.array([max_steps] * episodes.num_rows, pa.int32())
    )
    return steps.select(list(STEP_COLUMNS)), episodes


def spans_table(spans: pa.Table) -> pa.Table:
    """The spans in the loop_spans schema, in a stable row order."""
    from deskscore.schemas import arrow_schema

    schema = arrow_schema("loop_spans")
    ordered = spans.sort_by([(c, "ascending") for c in _SPAN_ORDER])
    return ordered.select(schema.names).cast(schema)


def detect_run(
    wh: Warehouse,
    benchmark: str,
    run_id: str,
    params: LoopParams,
    shared: SharedHashes | None = None,
) -> tuple[pa.Table, int]:
    """Detect one run's loops: (loop_spans table, looping steps)."""
    import pyarrow.compute as pc

    from deskscore.scorers.loops import find_loops

    steps, episodes = run_frames(wh, benchmark, run_id, shared)
    _, spans = find_loops(steps, episodes, params)
    looping = pc.sum(spans.column("looping_steps")).as_py() or 0
    return spans_table(spans), int(looping)


class LoopsStage(RunStage):
    """A run's steps (with their screenshots' phashes, where known) -> its loop_spans file."""

    label = "loops"
    writes = ("loop_spans",)

    def __init__(
        self, warehouse: str, params: LoopParams | None = None, job: str | None = None
    ) -> None:
        super().__init__(warehouse, job)
        self.params = params or LoopParams()

    def setup(self) -> None:
        import rapidfuzz  # noqa: F401  (heavy imports once per worker, not per run)

        super().setup()
        self.shared = SharedHashes(self.wh)

    def run(self, key: RunKey) -> None:
        table, _ = detect_run(self.wh, key.benchmark, key.run_id, self.params, self.shared)
        self.wh.write("loop_spans", table, key.partition, file="data")


__all__ = ["LoopsStage", "SharedHashes", "detect_run", "run_frames", "spans_table"]

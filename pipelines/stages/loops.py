"""The loop stage: each run's steps (with screenshot hashes, where known) -> loop_spans.

Per run it reads the steps, episodes and runs partitions, and the screenshot hashes: a step's
screenshot_refs row gives the content hash of its file, and the screenshots table gives that
content's perceptual hash (status ok only). A content is hashed once, in the partition of the
run that first showed it, so hashes the run's own partition lacks are looked up in the other
partitions. Steps without a hash simply have none: the phash signal does not vote for them
(see `deskscore.scorers.loops`). The detection itself is `detect_loops`, pure and vectorised.

Every run gets its loop_spans file, an empty one when it has no loop, so a re-run replaces
whatever an earlier detector wrote and gives the same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskscore.pipelines.stages.base import RunKey, RunStage
from deskscore.scorers.loops import EPISODE_COLUMNS, STEP_COLUMNS, LoopParams

if TYPE_CHECKING:
    import polars as pl

    from deskscore.collectors.warehouse import Warehouse

_SPAN_ORDER = ("domain", "task_id", "first_step")


def _phash_by_content(wh: Warehouse, part: dict[str, str], hashes: set[str]) -> pl.DataFrame:
    """(content_hash, phash) of the usable (status ok) hashes among `hashes`."""
    import polars as pl

    cols = ["content_hash", "phash", "status"]
    own = pl.from_arrow(wh.read("screenshots", part).select(cols))
    found = own.filter(pl.col("content_hash").is_in(list(hashes)))
    missing = hashes - set(found.get_column("content_hash").to_list())
    if missing:  # a content is hashed once, in the partition of the first run that showed it
        others = pl.from_arrow(wh.read("screenshots", columns=["run_id", *cols])).filter(
            (pl.col("run_id") != part["run_id"]) & pl.col("content_hash").is_in(sorted(missing))
        )
        found = pl.concat([found, others.select(cols).cast(found.schema)])
    return (
        found.filter((pl.col("status") == "ok") & pl.col("phash").is_not_null())
        .unique(subset="content_hash", keep="first", maintain_order=True)
        .select("content_hash", pl.col("phash").cast(pl.Int64))
    )


def run_frames(wh: Warehouse, benchmark: str, run_id: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The (steps, episodes) frames `detect_loops` takes, for one run of the warehouse."""
    import polars as pl

    part = {"benchmark": benchmark, "run_id": run_id}
    step_cols = [c for c in STEP_COLUMNS if c != "phash"]
    steps = pl.from_arrow(wh.read("steps", part).select(step_cols))
    refs = pl.from_arrow(
        wh.read("screenshot_refs", part).select(["domain", "task_id", "step_idx", "content_hash"])
    ).filter(pl.col("content_hash").is_not_null())
    if refs.height:
        hashes = _phash_by_content(wh, part, set(refs.get_column("content_hash").to_list()))
        phash = refs.join(hashes, on="content_hash", how="inner").select(
            "domain", "task_id", "step_idx", "phash"
        )
        steps = steps.join(phash, on=["domain", "task_id", "step_idx"], how="left")
    else:
        steps = steps.with_columns(pl.lit(None, pl.Int64).alias("phash"))
    runs = wh.read("runs", part).select(["run_id", "max_steps"]).to_pylist()
    max_steps = runs[0]["max_steps"] if runs else None
    episodes = pl.from_arrow(
        wh.read("episodes", part).select([c for c in EPISODE_COLUMNS if c != "max_steps"])
    ).with_columns(pl.lit(max_steps, pl.Int32).alias("max_steps"))
    order = ["domain", "task_id", "step_idx"]
    return steps.select(STEP_COLUMNS).sort(order), episodes


def spans_table(spans: pl.DataFrame) -> Any:
    """The spans as a pyarrow table in the loop_spans schema, in a stable row order."""
    from deskscore.schemas import arrow_schema

    schema = arrow_schema("loop_spans")
    return spans.sort(list(_SPAN_ORDER)).to_arrow().select(schema.names).cast(schema)


def detect_run(wh: Warehouse, benchmark: str, run_id: str, params: LoopParams) -> tuple[Any, int]:
    """Detect one run's loops: (loop_spans pyarrow table, looping steps)."""
    from deskscore.scorers.loops import detect_loops

    steps, episodes = run_frames(wh, benchmark, run_id)
    _, spans = detect_loops(steps, episodes, params)
    looping = int(spans.get_column("looping_steps").sum() or 0)
    return spans_table(spans), looping


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
        import polars  # noqa: F401  (heavy imports once per worker, not per run)

        super().setup()

    def run(self, key: RunKey) -> None:
        table, _ = detect_run(self.wh, key.benchmark, key.run_id, self.params)
        self.wh.write("loop_spans", table, key.partition, file="data")


__all__ = ["LoopsStage", "detect_run", "run_frames", "spans_table"]

"""Which runs `deskscore score` must compute again: those whose inputs changed.

When a score job has finished, each run's row in `score_inputs` holds the digest of what its
figures were computed from: the run's content hash from ingest, the rows of the screenshot
hash tables (loops read them, across runs), and everything the score job was given (human
data, price table, options, DeskCraft facts, the scorers' version). A run whose digest is
unchanged for the same configuration is skipped; a re-ingested changed archive, a new price
file or a new `deskscore hash` makes exactly the affected runs count again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deskscore.scorers.config import ScoreConfig

SCORER_VERSION = 1
"""Bumped whenever a scorer outside the metric registry (loops, verdicts) changes its figures
for the same inputs, so old figures are redone."""


def score_version() -> int:
    """The scorers' version: SCORER_VERSION plus every version bump of a registered metric, so
    changing one metric's definition (and its version) re-scores. A metric added or removed
    changes the score tables' columns, which SCHEMA_VERSION counts."""
    from deskscore.scorers.metrics import version_bumps

    return SCORER_VERSION + version_bumps()


_HASH_TABLES = ("screenshots", "screenshot_refs")


def _screenshot_state(wh: Any) -> str:
    """A digest of the screenshot hash tables' rows, order-free (each partition's rows fed in
    sorted order), so a `deskscore hash` that adds or changes a hash changes it and repacking
    files does not. Read one run's partition at a time with pyarrow alone, so the scoring
    command's memory neither grows with the warehouse nor holds a query engine while its
    stages run."""
    h = hashlib.sha1()
    for name in _HASH_TABLES:
        for part in wh.partitions(name):
            h.update(f"{name}:{sorted(part.items())}\n".encode())
            _feed_rows(wh.read(name, part), h)
    return h.hexdigest()


def _feed_rows(table: Any, h: Any) -> None:
    """`table`'s rows into `h`, sorted by every column, column by column: validity, then the
    values (strings as their lengths and bytes), so equal rows in any order feed the same."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    h.update(f"{table.num_rows}\n".encode())
    if not table.num_rows:
        return
    keys = [(c, "ascending") for c in table.column_names]
    table = table.take(pc.sort_indices(table, sort_keys=keys))
    for column in table.columns:
        values = column.combine_chunks()
        h.update(pc.is_valid(values).to_numpy(zero_copy_only=False).tobytes())
        if pa.types.is_integer(values.type):
            h.update(pc.fill_null(values, 0).to_numpy().astype("<i8").tobytes())
            continue
        text = pc.fill_null(values.cast(pa.large_string()), "")
        h.update(pc.binary_length(text).to_numpy().astype("<i8").tobytes())
        offsets = np.frombuffer(text.buffers()[1], dtype=np.int64)
        start, end = offsets[text.offset], offsets[text.offset + len(text)]
        if end > start:
            h.update(memoryview(text.buffers()[2])[start:end])


def inputs_digests(wh: Any, keys: Sequence[tuple], given: Sequence[Any]) -> dict[str, str | None]:
    """run_id -> digest of its inputs; None for a run with no content hash (always scored).

    `given` is everything the job was handed (configuration, human references, prices, ...),
    as values with a stable repr."""
    from deskscore.schemas import SCHEMA_VERSION

    common = hashlib.sha1()
    common.update(f"score {SCHEMA_VERSION}.{score_version()}\n".encode())
    common.update(_screenshot_state(wh).encode())
    for value in given:
        common.update(repr(value).encode("utf-8", "surrogateescape") + b"\n")
    base = common.hexdigest()
    runs = wh.read("runs", columns=["run_id", "content_hash"]).to_pylist()
    content = {r["run_id"]: r["content_hash"] for r in runs}
    out: dict[str, str | None] = {}
    for key in keys:
        run_id = key[1]
        ch = content.get(run_id)
        out[run_id] = hashlib.sha1(f"{base}\x00{ch}".encode()).hexdigest() if ch else None
    return out


def stale(
    wh: Any,
    keys: Sequence[tuple],
    digests: dict[str, str | None],
    config: ScoreConfig,
    force: bool,
) -> list[tuple]:
    """The keys whose last finished score with `config` was computed from other inputs, or
    that have none."""
    stored: dict[str, str | None] = {}
    if not force:
        for r in wh.read("score_inputs").to_pylist():
            if (r["human_version"], r["max_steps_scoring"], r["compat"]) == config.key():
                stored[r["run_id"]] = r["inputs_digest"]
    return [
        k for k in keys if force or digests.get(k[1]) is None or stored.get(k[1]) != digests[k[1]]
    ]


def record(
    wh: Any, keys: Sequence[tuple], digests: dict[str, str | None], config: ScoreConfig
) -> None:
    """After the whole score job succeeded: remember the digests its runs were scored from."""
    rows = {
        (r["run_id"], r["human_version"], r["max_steps_scoring"], r["compat"]): r
        for r in wh.read("score_inputs").to_pylist()
    }
    for benchmark, run_id, *_ in keys:
        if digests.get(run_id) is None:
            continue
        rows[(run_id, *config.key())] = {
            "run_id": run_id,
            "benchmark": benchmark,
            "human_version": config.human_version,
            "max_steps_scoring": config.max_steps_scoring,
            "compat": config.compat,
            "inputs_digest": digests[run_id],
        }
    wh.write("score_inputs", [rows[k] for k in sorted(rows)], {})

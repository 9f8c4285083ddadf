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
    """A digest of the screenshot hash tables' rows, order-free (the sorted row hashes), so a
    `deskscore hash` that adds or changes a hash changes it and repacking files does not.
    (Polars keeps row hashes stable within one version: an upgrade rescores once.)"""
    import polars as pl

    h = hashlib.sha1()
    for name in _HASH_TABLES:
        frame = pl.from_arrow(wh.read(name))
        h.update(f"{name}:{frame.height}\n".encode())
        if frame.height:
            h.update(frame.hash_rows(seed=0).sort().to_numpy().tobytes())
    return h.hexdigest()


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

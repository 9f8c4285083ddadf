"""Which runs `deskscore score` must compute again: those whose inputs changed.

When a score job has finished, each run's row in `score_inputs` holds the digest of what its
figures were computed from: the run's content hash from ingest, the rows of the screenshot
hash tables (loops read them, across runs), and everything the score job was given (human
data, price table, options, DeskCraft facts, the scorers' version). A run whose digest is
unchanged for the same configuration is skipped; a re-ingested changed archive, a new price
file or a new `deskscore hash` makes exactly the affected runs count again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskscore.collectors.warehouse.store import TMP_DIR, named_by_bytes
from deskscore.schemas.manifest import Entry, manifest_dir, split_partition, split_slot

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

DIGEST_CACHE = ("_cache", "row_digests.json")
"""Where, under the warehouse root, the digests of the hash tables' slots are kept between
score jobs (derived data: deleting it costs one read of those tables, nothing else)."""
_DIGEST_FORMAT = 1
"""Bumped when a slot's digest is computed differently, so kept digests are not reused."""


def _screenshot_state(wh: Any) -> str:
    """A digest of the screenshot hash tables' rows, order-free (each slot's rows fed in
    sorted order), so a `deskscore hash` that adds or changes a hash changes it and repacking
    files does not.

    Every score job needs it, and reading those tables grows with the warehouse (about 2 s for
    the 781,000 screenshot references of 80 runs), so each slot's digest is kept in
    DIGEST_CACHE under where its rows are: a file named by its bytes, and its row groups. A
    slot whose file is unchanged is not read again; one that moved (a repack) is read once
    and gives the same digest. Missing slots are read one at a time with pyarrow alone, so
    the scoring command's memory neither grows with the warehouse nor holds a query engine
    while its stages run."""
    kept = _load_digests(wh.root)
    now: dict[str, str] = {}
    h = hashlib.sha1()
    for name in _HASH_TABLES:
        for key, entry in wh.slots(name):
            where = _where(name, entry)
            digest = kept.get(where) if where else None
            if digest is None:
                folder, slot = split_slot(key)
                rows = hashlib.sha1()
                _feed_rows(wh.read(name, split_partition(folder), file=slot), rows)
                digest = rows.hexdigest()
            if where:
                now[where] = digest
            h.update(f"{name}:{key}:{digest}\n".encode())
    if now != kept:
        _save_digests(wh.root, now)
    return h.hexdigest()


def _where(name: str, entry: Entry) -> str | None:
    """Where a slot's rows are, as a key that names their bytes (None for a file that is not
    named by them: it may have been rewritten in place)."""
    if not named_by_bytes(entry.file):
        return None
    groups = "" if entry.groups is None else "#" + ",".join(map(str, entry.groups))
    return f"{name}/{entry.file}{groups}"


def _digest_file(root: Path) -> Path:
    return root.joinpath(*DIGEST_CACHE)


def _load_digests(root: Path) -> dict[str, str]:
    """The kept slot digests, or none if the file is missing, unreadable or of another schema
    or digest format (the rows a slot reads as depend on the schema)."""
    from deskscore.schemas import SCHEMA_VERSION

    try:
        data = json.loads(_digest_file(root).read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != [SCHEMA_VERSION, _DIGEST_FORMAT]:
        return {}
    digests = data.get("digests")
    if not isinstance(digests, dict):
        return {}
    return {k: v for k, v in digests.items() if isinstance(k, str) and isinstance(v, str)}


def _save_digests(root: Path, digests: dict[str, str]) -> None:
    """Keep the digests of the slots listed now, atomically: a reader sees the old file or the
    new one, and a write cut short leaves its temporary file where the next writer clears
    them. A warehouse this process cannot write to is scored all the same."""
    from deskscore.schemas import SCHEMA_VERSION

    target = _digest_file(root)
    tmp = manifest_dir(root) / TMP_DIR / f"{target.name}.{uuid.uuid4().hex}.tmp"
    body = {"version": [SCHEMA_VERSION, _DIGEST_FORMAT], "digests": dict(sorted(digests.items()))}
    try:
        for folder in (tmp.parent, target.parent):
            folder.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(body, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


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

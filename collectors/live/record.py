"""Recording a live episode into the warehouse as it happens.

Where things go, inside the warehouse `W`:

- `W/_store/screenshots/<h[:2]>/<h>.png`: every frame, once, named by its SHA-256 `h`. The
  run's `runs.source` is this folder and `steps.screenshot_path` the frame's path in it, so
  `deskscore hash` and the report read collected screenshots like archived ones. The content
  hash and the perceptual hash (the hash stage's own `hash_image`, so the values are the same)
  are computed from the frame in memory when it is taken; nothing is decoded later.
- `W/_live/<benchmark>/<run_id>/<domain>/<task_id>/`: the episode while it runs. Each event
  is one unit folder (`000007-step/`), written aside and renamed into place, holding a
  `unit.json` and small Parquet files of the very tables and columns the archive ingest
  writes (`steps`, `screenshot_refs`, `screenshots`, `llm_calls`, `interactions`). A unit is
  there whole or not at all, so `kill -9` loses at most the event in flight.
- At the episode's end its units are folded into the run's partition files
  (`W/<table>/benchmark=<b>/run_id=<id>/data.parquet`): the episode's rows replace any it
  had (folding twice gives the same tables), `episodes` is written last and the `runs` row
  counts the folded episodes; then the live folder goes.

Readers never double count: they read `W/<table>/...` only, and an episode's rows reach
those files in one fold, when it has ended. An episode in flight is visible in `_live`
only (ask `deskscore collect --resume` to finish or restart it); a fold interrupted between
two tables is redone by `--resume`, and `deskscore check` names the half-folded episode
meanwhile.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from deskscore.collectors.images import ImageFacts, hash_image, sniff_format
from deskscore.collectors.layout import TaskFolder
from deskscore.collectors.osworld import (
    QuarantineRows,
    first_step_indexes,
    read_steps,
    set_step_intervals,
    summarise,
)
from deskscore.collectors.screenshot_tables import screenshot_row
from deskscore.collectors.timestamps import parse_action_timestamp
from deskscore.collectors.usage import call_rows, file_calls

LIVE_DIR = "_live"
STORE_DIR = "_store/screenshots"
TRASH_PREFIX = ".trash-"
UNIT_META = "unit.json"
EPISODE_META = "episode.json"
FOLDED_TABLES = ("steps", "step_actions", "screenshot_refs", "llm_calls", "interactions")
"""Tables whose rows belong to one episode; `screenshots` (per content) and `episodes` are
folded apart."""
USAGE_FILE = "token_usage.json"
TRAJ_FILE = "traj.jsonl"
_EXT = {"PNG": "png", "JPEG": "jpg"}


class Frame(NamedTuple):
    """A screenshot as taken: its bytes, where the store keeps them, and its row."""

    data: bytes
    content_hash: str
    store_path: str
    """Path inside the store folder (the run's source)."""
    facts: ImageFacts
    """What the frame is (the columns of its `screenshots` row), hashed when it was taken."""


class ScreenshotStore:
    """Content-addressed screenshot files; hashing a frame decodes it once, in memory."""

    def __init__(self, warehouse: str | os.PathLike[str]) -> None:
        self.root = Path(warehouse).resolve() / STORE_DIR
        self._facts: dict[str, ImageFacts] = {}
        self._lock = threading.Lock()

    @property
    def uri(self) -> str:
        return str(self.root)

    def put(self, data: bytes) -> Frame:
        digest = hashlib.sha256(data).hexdigest()
        ext = _EXT.get(sniff_format(data) or "", "bin")
        rel = f"{digest[:2]}/{digest}.{ext}"
        target = self.root / rel
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, target)
        with self._lock:
            facts = self._facts.get(digest)
        if facts is None:
            facts = hash_image(data, known_hash=digest)
            with self._lock:
                self._facts[digest] = facts
        return Frame(data, digest, rel, facts)

    def read(self, rel: str) -> bytes | None:
        try:
            return (self.root / rel).read_bytes()
        except OSError:
            return None


# --------------------------------------------------------------------------- units


def _write_parquet(name: str, rows: Sequence[Mapping[str, Any]], path: Path) -> None:
    import pyarrow.parquet as pq

    from deskscore.schemas import conform_rows

    pq.write_table(conform_rows(name, rows), path, compression="zstd")


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


class Unit(NamedTuple):
    """One recorded event of an episode."""

    n: int
    kind: str
    meta: dict[str, Any]
    tables: dict[str, list[dict[str, Any]]]


def _atomic_json(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, default=str))
    os.replace(tmp, path)


class LiveEpisode:
    """The live folder of one episode: units written whole, read back in order."""

    def __init__(
        self,
        warehouse: str | os.PathLike[str],
        benchmark: str,
        run_id: str,
        domain: str,
        task_id: str,
    ) -> None:
        from deskscore.collectors.warehouse.store import _segment

        self.path = (
            Path(warehouse).resolve()
            / LIVE_DIR
            / _segment(benchmark)
            / _segment(run_id)
            / _segment(domain)
            / _segment(task_id)
        )

    def exists(self) -> bool:
        return (self.path / EPISODE_META).is_file()

    def begin(self, meta: Mapping[str, Any]) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        _atomic_json(self.path / EPISODE_META, dict(meta))

    def meta(self) -> dict[str, Any]:
        return json.loads((self.path / EPISODE_META).read_text())

    def write_unit(
        self, n: int, kind: str, meta: Mapping[str, Any], tables: Mapping[str, Sequence[Mapping]]
    ) -> None:
        """Unit `n` with its tables, all or nothing (a folder renamed into place)."""
        final = self.path / f"{n:06d}-{kind}"
        tmp = self.path / f".{final.name}.{uuid.uuid4().hex}.tmp"
        tmp.mkdir(parents=True)
        try:
            for name, rows in tables.items():
                if rows:
                    _write_parquet(name, rows, tmp / f"{name}.parquet")
            _atomic_json(tmp / UNIT_META, dict(meta))
            os.rename(tmp, final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    def units(self) -> list[Unit]:
        if not self.path.is_dir():
            return []
        out = []
        for d in sorted(p for p in self.path.iterdir() if p.is_dir() and p.name[:1].isdigit()):
            n, _, kind = d.name.partition("-")
            tables = {p.stem: _read_parquet(p) for p in sorted(d.glob("*.parquet"))}
            out.append(Unit(int(n), kind, json.loads((d / UNIT_META).read_text()), tables))
        return out

    def discard(self) -> None:
        """Remove the live folder: renamed aside first, so a kill mid-way leaves no half."""
        if not self.path.exists():
            return
        trash = self.path.with_name(f"{TRASH_PREFIX}{self.path.name}.{uuid.uuid4().hex}")
        os.rename(self.path, trash)
        shutil.rmtree(trash, ignore_errors=True)
        parent = self.path.parent  # the empty domain / run / benchmark folders go too
        while parent.name != LIVE_DIR:
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent


def purge_trash(warehouse: str | os.PathLike[str]) -> None:
    """Finish removals a kill interrupted."""
    base = Path(warehouse).resolve() / LIVE_DIR
    if base.is_dir():
        for trash in base.rglob(f"{TRASH_PREFIX}*"):
            shutil.rmtree(trash, ignore_errors=True)


# --------------------------------------------------------------------------- rows


class EpisodeKeys(NamedTuple):
    run_id: str
    benchmark: str
    domain: str
    task_id: str

    @property
    def task_path(self) -> str:
        """The task folder's path in an OSWorld-style layout (what --osworld-dir writes)."""
        return f"{self.domain}/{self.task_id}"

    def row(self) -> dict[str, str]:
        return {
            "run_id": self.run_id,
            "benchmark": self.benchmark,
            "domain": self.domain,
            "task_id": self.task_id,
        }


def step_row(
    keys: EpisodeKeys,
    record: Mapping[str, Any],
    step_idx: int,
    screenshot_path: str | None,
    actions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The `steps` row of one trajectory record, built by the archive reader itself, so a
    collected step and the same step ingested from `--osworld-dir` are the same row; with
    `actions`, its `step_actions` rows are appended to it."""
    q = QuarantineRows("live", keys.run_id, keys.benchmark)
    task = TaskFolder(keys.task_path, keys.domain, keys.task_id, ())
    line = json.dumps(record, ensure_ascii=False).encode()
    rows, calls = read_steps(
        [line],
        path=f"{keys.task_path}/{TRAJ_FILE}",
        task=task,
        run_id=keys.run_id,
        benchmark=keys.benchmark,
        task_id=keys.task_id,
        q=q,
    )
    [row] = rows
    row.update(step_idx=step_idx, line_no=step_idx + 1, screenshot_path=screenshot_path)
    if actions is not None:
        actions.extend({**c, "step_idx": step_idx} for c in calls)
    return row


def usage_entry(call: Any, turn: int) -> dict[str, Any]:
    """A model call as a token_usage.json entry (the form the archive reader parses)."""
    return {
        "stage": call.stage,
        "model": call.model,
        "usage": call.usage,
        "latency_s": call.latency_s,
        "started_at": call.started_at,
        "step_num": turn,
    }


def call_rows_of(
    keys: EpisodeKeys, entries: Sequence[Mapping[str, Any]], first_step_idx: Mapping[int, int]
) -> list[dict[str, Any]]:
    """`llm_calls` rows of token_usage entries, parsed by the archive reader."""
    if not entries:
        return []
    calls, _ = file_calls(json.dumps(list(entries), ensure_ascii=False).encode())
    return call_rows(
        calls,
        first_step_idx=dict(first_step_idx),
        source_file=f"{keys.task_path}/{USAGE_FILE}",
        **keys.row(),
    )


def interaction_row(keys: EpisodeKeys, seq: int, ex: Any) -> dict[str, Any]:
    return {
        **keys.row(),
        "seq": seq,
        "step": ex.step,
        "phase": ex.phase,
        "type": ex.type,
        "message": ex.message,
        "phase_complete": ex.phase_complete,
        "reason": ex.reason,
        "timestamp": parse_action_timestamp(ex.timestamp_raw),
        "timestamp_raw": ex.timestamp_raw,
    }


# --------------------------------------------------------------------------- recorder


class Recorder:
    """Writes one episode's events as units: steps, exchanges, turn ends, the end."""

    def __init__(self, live: LiveEpisode, keys: EpisodeKeys, store: ScreenshotStore) -> None:
        self.live = live
        self.keys = keys
        self.store = store
        self.next_unit = 0
        self.next_step = 0
        self.next_seq = 0
        self._pending_calls: list[dict[str, Any]] = []

    @classmethod
    def resume(
        cls, live: LiveEpisode, keys: EpisodeKeys, store: ScreenshotStore, units: Sequence[Unit]
    ) -> Recorder:
        rec = cls(live, keys, store)
        rec.next_unit = (units[-1].n + 1) if units else 0
        rec.next_step = sum(len(u.tables.get("steps", ())) for u in units)
        rec.next_seq = sum(len(u.tables.get("interactions", ())) for u in units)
        return rec

    def calls(self, calls: Iterable[Any], turn: int) -> None:
        """The turn's model calls; they go into the turn's first unit."""
        self._pending_calls.extend(usage_entry(c, turn) for c in calls)

    def _unit(self, kind: str, meta: dict[str, Any], tables: dict[str, list[dict]]) -> None:
        if self._pending_calls:
            meta = {**meta, "calls": self._pending_calls}
            rows = call_rows_of(self.keys, self._pending_calls, {})
            for i, row in enumerate(rows):
                row["call_idx"] = i  # provisional: the fold numbers the episode's calls
            tables["llm_calls"] = rows
        self.live.write_unit(self.next_unit, kind, meta, tables)
        self._pending_calls = []
        self.next_unit += 1

    def step(self, record: dict[str, Any], frame: Frame | None) -> int:
        """One executed action (its trajectory record) and the frame it left."""
        idx = self.next_step
        path = frame.store_path if frame else None
        actions: list[dict] = []
        row = step_row(self.keys, record, idx, path, actions)
        tables: dict[str, list[dict]] = {"steps": [row], "step_actions": actions}
        if frame is not None:
            tables["screenshot_refs"] = [
                {
                    **self.keys.row(),
                    "step_idx": idx,
                    "screenshot_path": frame.store_path,
                    "content_hash": frame.content_hash,
                }
            ]
            tables["screenshots"] = [screenshot_row(self.keys, frame.facts)]
        meta = {
            "record": record,
            "content_hash": frame.content_hash if frame else None,
            "store_path": path,
        }
        self._unit("step", meta, tables)
        self.next_step += 1
        return idx

    def error(self, message: str, turn: int | None) -> None:
        """A runner error line ({"Error": ...}), as OSWorld's runners log one."""
        self.step({"Error": message}, None)

    def exchanges(self, exchanges: Sequence[Any]) -> None:
        if not exchanges:
            return
        rows = []
        for ex in exchanges:
            rows.append(interaction_row(self.keys, self.next_seq, ex))
            self.next_seq += 1
        self._unit(
            "interaction", {"exchanges": [ex._asdict() for ex in exchanges]}, {"interactions": rows}
        )

    def turn_start(self, meta: dict[str, Any]) -> None:
        """The agent answered: written before any of its actions runs, so a record that ends
        here (or in a step) tells resume the kill came inside the turn."""
        self._unit("act", meta, {})

    def turn_end(self, meta: dict[str, Any]) -> None:
        self._unit("turn", meta, {})

    def end(self, meta: dict[str, Any]) -> None:
        self._unit("end", meta, {})


# --------------------------------------------------------------------------- folding


class Folded(NamedTuple):
    """An episode's final rows, as the run's partitions will hold them."""

    episode: dict[str, Any]
    tables: dict[str, list[dict[str, Any]]]
    screenshots: list[dict[str, Any]]
    """Every distinct frame's row (the fold keeps those the warehouse lacks)."""
    units: list[Unit]


def episode_row(
    keys: EpisodeKeys, steps: list[dict[str, Any]], begin: Mapping[str, Any], end: Mapping[str, Any]
) -> dict[str, Any]:
    """The `episodes` row of a collected episode.

    result_status is ok with the evaluator's score, unevaluated when the task has no
    evaluator deskscore implements (a judge may score it later), or missing when the episode
    could not be evaluated (the agent or the desktop failed; err_message says why)."""
    summary = summarise(steps, 0)
    last_error = summary.pop("last_error")
    status = end.get("result_status") or "missing"
    score = end.get("score") if status == "ok" else None
    details = end.get("details") or {}
    metrics = details.get("metrics") if isinstance(details, Mapping) else None
    return {
        **keys.row(),
        "source_task_id": keys.task_id,
        "task_path": keys.task_path,
        "instruction": begin.get("instruction"),
        "traj_file": f"{keys.task_path}/{TRAJ_FILE}",
        "n_lines": len(steps),
        **summary,
        "result_raw": f"{score}" if score is not None else None,
        "result_status": status,
        "score": score,
        "reported_score": None,
        "reported_status": None,
        "err_message": end.get("err_message") or last_error,
        "metric_scores_json": (
            json.dumps({"conj": details.get("conj"), "metrics": metrics}, sort_keys=True)
            if status == "ok" and metrics
            else None
        ),
    }


def fold_rows(keys: EpisodeKeys, units: Sequence[Unit], begin: Mapping[str, Any]) -> Folded:
    """The episode's rows from its units: step intervals over the whole episode, calls
    numbered and joined to their turn's first step, exchanges numbered in order."""
    steps: list[dict[str, Any]] = []
    actions: list[dict[str, Any]] = []
    for u in units:
        renumbered = {}
        for row in u.tables.get("steps", ()):
            renumbered[row["step_idx"]] = len(steps)
            row["step_idx"], row["line_no"] = len(steps), len(steps) + 1
            steps.append(row)
        for call in u.tables.get("step_actions", ()):
            call["step_idx"] = renumbered[call["step_idx"]]
            actions.append(call)
    set_step_intervals(steps)
    first_step_idx = first_step_indexes(steps)
    entries = [e for u in units for e in u.meta.get("calls", ())]
    calls = call_rows_of(keys, entries, first_step_idx)
    for i, row in enumerate(calls):
        row["call_idx"] = i
    interactions = [r for u in units for r in u.tables.get("interactions", ())]
    for i, row in enumerate(interactions):
        row["seq"] = i
    refs = [r for u in units for r in u.tables.get("screenshot_refs", ())]
    shots: dict[str, dict[str, Any]] = {}
    for u in units:
        for r in u.tables.get("screenshots", ()):
            shots.setdefault(r["content_hash"], r)
    end = next((u.meta for u in reversed(units) if u.kind == "end"), {})
    episode = episode_row(keys, steps, begin, end)
    if "metric_scores_json" not in _episode_columns():
        episode.pop("metric_scores_json", None)
    tables = {
        "steps": steps,
        "step_actions": actions,
        "screenshot_refs": refs,
        "llm_calls": calls,
        "interactions": interactions,
    }
    return Folded(episode, tables, list(shots.values()), list(units))


def _episode_columns() -> set[str]:
    from deskscore.schemas import TABLES

    return {f.name for f in TABLES["episodes"].fields}


def _sort_key(name: str) -> Any:
    from deskscore.schemas import TABLES

    key = TABLES[name].key

    def k(row: Mapping[str, Any]) -> tuple:
        return tuple((row.get(c) is None, row.get(c) if row.get(c) is not None else 0) for c in key)

    return k


class KnownScreenshots:
    """Content hashes the warehouse's `screenshots` table holds (any run), kept up to date
    by the folds of this process (the only writer while it holds the writer lock)."""

    def __init__(self, wh: Any) -> None:
        self.hashes: set[str] = {
            h for h in wh.read("screenshots", columns=["content_hash"]).column(0).to_pylist() if h
        }


def merge_episode(
    wh: Any, keys: EpisodeKeys, folded: Folded, run_row: dict[str, Any], known: KnownScreenshots
) -> None:
    """Replace the episode's rows in the run's partitions (episodes last), add the frames the
    warehouse lacks to its `screenshots`, and rewrite the `runs` row with the episode count."""
    part = {"benchmark": keys.benchmark, "run_id": keys.run_id}
    ours = (keys.domain, keys.task_id)
    for name in (*FOLDED_TABLES, "episodes"):
        new = [folded.episode] if name == "episodes" else folded.tables[name]
        existing = wh.read(name, part).to_pylist()
        rows = [r for r in existing if (r["domain"], r["task_id"]) != ours] + new
        rows.sort(key=_sort_key(name))
        if rows or name in ("llm_calls", "step_actions"):  # as ingest writes them, even empty
            wh.write(name, rows, part)
        else:
            wh.remove(name, part)
    fresh = [r for r in folded.screenshots if r["content_hash"] not in known.hashes]
    if fresh:
        existing = wh.read("screenshots", part).to_pylist()
        held = {r["content_hash"] for r in existing}
        rows = existing + [r for r in fresh if r["content_hash"] not in held]
        rows.sort(key=lambda r: r["content_hash"])
        wh.write("screenshots", rows, part)
        known.hashes.update(r["content_hash"] for r in fresh)
    n_episodes = wh.read("episodes", part, columns=["task_id"]).num_rows
    wh.write("runs", [{**run_row, "n_task_folders": n_episodes}], part)


__all__ = [
    "LIVE_DIR",
    "STORE_DIR",
    "EpisodeKeys",
    "Folded",
    "Frame",
    "KnownScreenshots",
    "LiveEpisode",
    "Recorder",
    "ScreenshotStore",
    "Unit",
    "episode_row",
    "fold_rows",
    "merge_episode",
    "purge_trash",
    "step_row",
]

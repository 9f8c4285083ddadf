"""One DeskCraft task folder: OSWorld's files plus the interactive protocol's.

DeskCraft runs keep OSWorld's layout and files (REFERENCE.md section 3), so the OSWorld reader
does the trajectory, the result and the usage. On top of it:

- `traj.jsonl` lines of interactive runs carry `phase` (the steps table has the column);
- `interaction_log.json` lists what the simulated user said: `[{step, phase, type, user_message,
  phase_complete, timestamp}]`, one entry per exchange, becomes `interactions` rows;
- a CALL_USER action (the agent asking the user) is an interaction, never an environment step.
  DeskCraft's own runner skips it without a trajectory line; runners that log it keep a
  `steps` row of kind `call_user` (every line stays accounted for) which also becomes an
  `interactions` row of type `call_user`, and the episode's step counts (`n_steps`,
  `n_turns`, the last action, how it ended) leave it out, so step ratios and budgets count
  environment steps only;
- `task_instruction.jsonl` (the runner's record of the first instruction) is not a
  trajectory: it gives the episode's instruction;
- `eval_details.json`, where a runner archives the evaluator's per-metric scores, fills
  `episodes.metric_scores_json` so the score pipeline can recompute `conj` offline. DeskCraft's
  runner does not write it (it keeps only result.txt); the format deskscore reads is
  `{"conj": "and"|"or", "metrics": [{"func": name, "score": number}, ...]}`, or a bare list
  of such objects or of numbers.

Nothing here raises on content: a bad log or details file, or a bad entry in one, becomes a
quarantine row naming the file (and the entry), and the rest is read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from deskscore.collectors import limits
from deskscore.collectors.json_text import parse_error, scrub_surrogates
from deskscore.collectors.layout import RunFolder, TaskFolder
from deskscore.collectors.osworld import (
    EpisodeCalls,
    EpisodeRead,
    QuarantineRows,
    dumps_json,
    read_episode_calls,
    summarise,
)
from deskscore.collectors.source import TOO_LARGE, Source, SourceError, read_document
from deskscore.collectors.timestamps import parse_action_timestamp

INTERACTION_LOG = "interaction_log.json"
EVAL_DETAILS = "eval_details.json"
TASK_INSTRUCTION = "task_instruction.jsonl"
MAX_JSON_BYTES = limits.DOCUMENT_BYTES.default
"""Larger interaction logs or details files are quarantined unread by default (the cap in
force is `limits.DOCUMENT_BYTES`): a real log holds a few dozen short messages, so a file this
big is damage or an attack, not data."""

TYPES = ("initial_instruction", "new_instruction", "clarify", "call_user")
"""Interaction types DeskCraft's protocol defines. A simulator that logs another word
(feedback, wait, ...) keeps it verbatim: the row is real, only its type is unusual."""

_INT32 = (-(2**31), 2**31 - 1)
_MESSAGE_KEYS = ("user_message", "message", "agent_message", "question")


def _int32(v: Any) -> int | None:
    if type(v) is int and _INT32[0] <= v <= _INT32[1]:
        return v
    return None


def _excerpt(data: bytes | str) -> str:
    if isinstance(data, bytes):
        return data[:200].decode("utf-8", "backslashreplace")
    return data[:200]


def _load_json(source: Source, path: str, q: QuarantineRows, what: str) -> tuple[bool, Any]:
    """(ok, value) of a small JSON file; too large, unreadable, not UTF-8 or invalid JSON is
    quarantined (ok False)."""
    todo = f"the {what} is left out; fix the file and re-ingest"
    try:
        data = read_document(source, path)  # within limits.DOCUMENT_BYTES
    except SourceError as e:
        q.add(path, None, e.reason, e.message, todo, "" if e.reason == TOO_LARGE else path)
        return False, None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        q.add(path, None, "not_utf8", f"not UTF-8 ({e})", todo, _excerpt(data))
        return False, None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as e:
        why = f"truncated or invalid JSON ({parse_error(e)})"
        q.add(path, None, "invalid_json", why, todo, _excerpt(data))
        return False, None
    return True, scrub_surrogates(value)


def _text(v: Any) -> str | None:
    if isinstance(v, str):
        return v
    return None


def interaction_rows(
    entries: Any, *, path: str, keys: Mapping[str, str], q: QuarantineRows
) -> list[dict]:
    """`interactions` rows (without seq) from a parsed interaction log, in file order.

    An entry that is not an object, or whose `type` is not a string, is quarantined (it says
    nothing usable). Other fields of the wrong type are left null and reported once per entry.
    `step` 0 (the initial instruction, logged before the first step) is stored as null.
    """
    if not isinstance(entries, list):
        q.add(path, None, "not_a_list", f"JSON {type(entries).__name__} where a list of "
              "exchanges was expected", "the log is left out; fix it and re-ingest",
              _excerpt(dumps_json(entries)))  # fmt: skip
        return []
    rows = []
    for i, entry in enumerate(entries):
        where = f"entry {i}"
        if not isinstance(entry, dict):
            q.add(path, None, "not_an_object", f"{where}: JSON {type(entry).__name__} where an "
                  "exchange object was expected", "the entry is left out",
                  _excerpt(dumps_json(entry)))  # fmt: skip
            continue
        kind = entry.get("type")
        if not isinstance(kind, str) or not kind.strip():
            q.add(path, None, "bad_interaction", f"{where}: no type (got {kind!r})",
                  "the entry is left out", _excerpt(dumps_json(entry)))  # fmt: skip
            continue
        bad = []
        step = entry.get("step")
        if step is not None and _int32(step) is None:
            bad.append("step")
        step = _int32(step)
        phase = entry.get("phase")
        if phase is not None and _int32(phase) is None:
            bad.append("phase")
        message = None
        for k in _MESSAGE_KEYS:
            if k in entry:
                message = _text(entry[k])
                if message is None and entry[k] is not None:
                    bad.append(k)
                break
        complete = entry.get("phase_complete")
        if complete is not None and not isinstance(complete, bool):
            bad.append("phase_complete")
        reason = entry.get("reason")
        if reason is not None and not isinstance(reason, str):
            bad.append("reason")
        raw_ts = entry.get("timestamp")
        ts = parse_action_timestamp(raw_ts) if isinstance(raw_ts, str) else None
        if raw_ts is not None and ts is None:
            bad.append("timestamp")
        if bad:
            q.add(path, None, "bad_interaction_field", f"{where}: {', '.join(bad)} of the "
                  "wrong type or unparseable", "the entry is kept with those fields null",
                  _excerpt(dumps_json(entry)))  # fmt: skip
        rows.append(
            {
                **keys,
                "step": step if step else None,
                "phase": _int32(phase),
                "type": kind.strip(),
                "message": message,
                "phase_complete": complete if isinstance(complete, bool) else None,
                "reason": reason if isinstance(reason, str) else None,
                "timestamp": ts,
                "timestamp_raw": raw_ts if isinstance(raw_ts, str) else None,
            }
        )
    return rows


_ASK_PREFIX = "[CALL_USER]"


def _question(step: Mapping[str, Any]) -> str | None:
    """The agent's question: the action's text, else the turn's response without DeskCraft's
    `[CALL_USER]` marker."""
    text = step["text"] or step["response"]
    if isinstance(text, str) and text.startswith(_ASK_PREFIX):
        text = text[len(_ASK_PREFIX) :].strip()
    return text


def call_user_rows(steps: list[dict], keys: Mapping[str, str]) -> list[dict]:
    """An `interactions` row for each CALL_USER step row."""
    return [
        {
            **keys,
            "step": s["step_num"],
            "phase": s["phase"],
            "type": "call_user",
            "message": _question(s),
            "phase_complete": None,
            "reason": None,
            "timestamp": s["ts"],
            "timestamp_raw": s["action_timestamp"],
        }
        for s in steps
        if s["action_kind"] == "call_user"
    ]


def merge_interactions(logged: list[dict], asked: list[dict]) -> list[dict]:
    """One ordered list, numbered by `seq`: the log's entries in file order, each CALL_USER
    question placed before the first later user entry (a reply follows its question).

    A question at step s goes before the first non-initial log entry whose step is s or
    more; questions after every entry go last. When the log itself records call_user
    entries, it is the record and the trajectory's questions are not added twice.
    """
    if any(r["type"] == "call_user" for r in logged):
        asked = []
    out: list[dict] = []
    pending = list(asked)
    for row in logged:
        step = row["step"]
        if row["type"] != "initial_instruction" and step is not None:
            while pending and (pending[0]["step"] is None or pending[0]["step"] <= step):
                out.append(pending.pop(0))
        out.append(row)
    out.extend(pending)
    for i, row in enumerate(out):
        row["seq"] = i
    return out


def metric_scores(value: Any) -> tuple[dict | None, str | None]:
    """eval_details.json normalised to {"conj", "metrics": [{"func", "score"}]}, or (None, why)."""
    conj = None
    metrics = value
    if isinstance(value, dict):
        conj = value.get("conj")
        metrics = value.get("metrics", value.get("scores"))
        if conj is not None and conj not in ("and", "or"):
            return None, f"conj {conj!r} is neither 'and' nor 'or'"
    if not isinstance(metrics, list) or not metrics:
        return None, "no non-empty list of metric scores (key 'metrics')"
    out = []
    for i, m in enumerate(metrics):
        func, score = None, m
        if isinstance(m, dict):
            func, score = m.get("func"), m.get("score")
            if func is not None and not isinstance(func, str):
                return None, f"metric {i}: func is not a name"
        if isinstance(score, bool) or not isinstance(score, int | float):
            return None, f"metric {i}: score {score!r} is not a number"
        try:
            finite = math.isfinite(score)
        except OverflowError:  # an integer beyond a float's range
            finite = False
        if not finite:
            return None, f"metric {i}: score {str(score)[:40]} is not finite"
        out.append({"func": func, "score": float(score)})
    return {"conj": conj, "metrics": out}, None


def _instruction(source: Source, path: str, q: QuarantineRows) -> str | None:
    """The first instruction task_instruction.jsonl records (its first parseable line)."""
    try:
        data = read_document(source, path)
    except SourceError as e:
        q.add(path, None, e.reason, e.message, "the instruction is left out", path)
        return None
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict) and isinstance(rec.get("instruction"), str):
            return rec["instruction"]
    return None


def read_deskcraft_episode(
    source: Source,
    run: RunFolder,
    task: TaskFolder,
    *,
    run_id: str,
    benchmark: str,
    reported: dict | None = None,
) -> EpisodeCalls:
    """Read one DeskCraft task folder: the OSWorld read, its model calls and its exchanges
    (`interactions`, a list even when empty); never raises on bad content."""
    trajectory_files = tuple(n for n in task.files if n != TASK_INSTRUCTION)
    base: EpisodeCalls = read_episode_calls(
        source,
        run,
        replace(task, files=trajectory_files),
        run_id=run_id,
        benchmark=benchmark,
        reported=reported,
    )
    episode = dict(base.read.episode)
    steps = base.read.steps
    q = QuarantineRows(source.uri, run_id, benchmark)
    prefix = task.path + "/"
    keys = {
        "benchmark": benchmark,
        "run_id": run_id,
        "domain": episode["domain"],
        "task_id": episode["task_id"],
    }
    if any(s["action_kind"] == "call_user" for s in steps):
        env_steps = [s for s in steps if s["action_kind"] != "call_user"]
        summary = summarise(env_steps, episode["n_quarantined"])
        summary.pop("last_error")
        for k in ("started_at", "ended_at"):
            summary.pop(k)  # the episode's span still includes its questions
        episode.update(summary)
    logged: list[dict] = []
    if INTERACTION_LOG in task.files:
        ok, value = _load_json(source, prefix + INTERACTION_LOG, q, "interaction log")
        if ok:
            logged = interaction_rows(value, path=prefix + INTERACTION_LOG, keys=keys, q=q)
    interactions = merge_interactions(logged, call_user_rows(steps, keys))
    if EVAL_DETAILS in task.files:
        ok, value = _load_json(source, prefix + EVAL_DETAILS, q, "per-metric scores file")
        if ok:
            details, why = metric_scores(value)
            if details is None:
                q.add(prefix + EVAL_DETAILS, None, "bad_metric_scores", str(why),
                      "the conj rule is not recomputed for this episode",
                      _excerpt(dumps_json(value)))  # fmt: skip
            else:
                episode["metric_scores_json"] = dumps_json(details)
    if episode.get("instruction") is None and TASK_INSTRUCTION in task.files:
        episode["instruction"] = _instruction(source, prefix + TASK_INSTRUCTION, q)
    read = EpisodeRead(episode, steps, base.read.quarantine + q.rows, base.read.actions)
    return EpisodeCalls(read, base.llm_calls, interactions)

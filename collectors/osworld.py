"""One OSWorld task folder (traj.jsonl, result.txt, screenshots) to episode, step, quarantine rows.

This is the hot path of single-run scoring, so the trajectory is read once, a block at a time
(`collectors.lines`: never held whole), split on bytes, and parsed with orjson when it is
installed; the slow json fallback only runs for lines orjson refuses (NaN, Infinity, lone
surrogates) so that nothing Python's json accepts is lost. Every line of the trajectory ends
either as a step row or in a quarantine row; consecutive lines quarantined for the same reason
share one row (`QuarantineRows`), and lines past the caps of `collectors.limits` are counted
and quarantined, not parsed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any, NamedTuple

from deskscore.collectors import limits
from deskscore.collectors.action_code import SubAction
from deskscore.collectors.actions import action_columns, parse_action
from deskscore.collectors.ids import canonical_task_id
from deskscore.collectors.json_text import (
    compact_json_writers,
    json_writer,
    parse_error,
    scrub_surrogates,
)
from deskscore.collectors.layout import RunFolder, TaskFolder
from deskscore.collectors.lfs import LFS_POINTER, LFS_TODO, is_lfs_pointer, lfs_pointer
from deskscore.collectors.lines import Counted, LongLine, blocks, iter_lines
from deskscore.collectors.source import Source, SourceError, read_document
from deskscore.collectors.timestamps import parse_action_timestamp
from deskscore.collectors.usage import (
    USAGE_FILE,
    Call,
    CallColumns,
    call_columns,
    call_key,
    file_call_columns,
    record_calls,
    record_timings,
)
from deskscore.schemas.validate import ColumnRows

_BOM = b"\xef\xbb\xbf"
_BAD = object()  # a line that went to quarantine
_INT32 = (-(2**31), 2**31 - 1)
MAX_RESULT_CHARS = 200
"""result_raw keeps this much of result.txt's first line (the score is parsed from all of it):
a 10 MB value is neither stored nor printed whole."""
OVER_RUN_CAP = "over_run_cap"
"""The quarantine reason of lines counted but not parsed: the run's budget of lines (or of
their bytes) was spent (`limits.RUN_LINES`, `limits.RUN_BYTES`)."""
OVER_TRAJECTORY_CAP = "over_trajectory_cap"
"""The same for the lines of one trajectory file past its own cap (`limits.TRAJECTORY_LINES`)."""
LINE_TOO_LONG = "line_too_long"


class EpisodeRead(NamedTuple):
    """What one task folder yields: its EPISODES row, its STEPS rows, its QUARANTINE rows and
    the STEP_ACTIONS rows of its steps."""

    episode: dict
    steps: Sequence[dict]
    quarantine: list[dict]
    actions: Sequence[dict] | None = None
    """None: the reader built its steps without sub-actions (a plugin format); ingest then
    derives them from the step rows (`actions.derived_action_rows`)."""


class EpisodeCalls(NamedTuple):
    """A full read of a task folder, the LLM_CALLS rows of its recorded model calls and, for
    a format that records user/agent exchanges (DeskCraft), its INTERACTIONS rows: what every
    format's episode reader returns (see `deskscore.collectors.formats`)."""

    read: EpisodeRead
    llm_calls: Sequence[dict]
    """A list, or a `ColumnRows` (the same rows, held as columns until read as dicts)."""
    interactions: list[dict] | None = None
    """None: the format records no exchanges, so its runs get no interactions partition."""


@cache
def _fast_loads() -> Callable[[bytes], Any]:
    """orjson.loads when installed (several times faster), else json.loads."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a declared dependency
        return json.loads
    return orjson.loads


def count_lines(data: bytes) -> int:
    """Lines as Python's text-mode iteration counts them: \\n, \\r and \\r\\n end a line, and a
    last line without an ending still counts (OSWorld-Human's t_agent)."""
    if not data:
        return 0
    n = data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")
    if data[-1] not in (10, 13):
        n += 1
    return n


def split_lines(data: bytes) -> list[bytes]:
    """The lines `count_lines` counts, without their endings."""
    if not data:
        return []
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    lines = data.split(b"\n")
    if not lines[-1]:
        lines.pop()
    return lines


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0].split("\r", 1)[0]


def parse_result(text: str) -> tuple[str, float | None, str]:
    """result.txt as OSWorld-Human reads it: first line stripped, float(), True/False -> 1/0.

    Returns (result_raw, score, result_status): status 'ok', 'empty' (nothing but whitespace)
    or 'unparseable' (score None), which includes values float() accepts but that are not
    finite ('nan', 'inf').
    """
    if not text.strip():
        return "", None, "empty"
    raw = _first_line(text).strip()
    shown = raw if len(raw) <= MAX_RESULT_CHARS else raw[:MAX_RESULT_CHARS] + "…"
    try:
        score = float(raw)
    except ValueError:
        if raw == "True":
            return raw, 1.0, "ok"
        if raw == "False":
            return raw, 0.0, "ok"
        return shown, None, "unparseable"
    if not math.isfinite(score):
        return shown, None, "unparseable"
    return shown, score, "ok"


def _excerpt(raw: bytes) -> str:
    return raw[:200].decode("utf-8", "backslashreplace")[:200]


dumps_json = json_writer(sort_keys=True)
"""`json.dumps(obj, sort_keys=True, ensure_ascii=False)`: for text that must read as Python's
json writes it (a dict action's input matched to its result, a step trace's records)."""
dumps_fast, dumps_compact = compact_json_writers()
"""The text of a step's info and leftover keys: compact, keys sorted; `dumps_fast` for a line
orjson parsed (`_fast_loads`; both are Python's json without orjson), `dumps_compact` for one
only Python's json accepts."""


def as_int32(v: Any) -> int | None:
    if type(v) is int and _INT32[0] <= v <= _INT32[1]:
        return v
    return None


class QuarantineRows:
    """Builds quarantine rows that name the source, the file and the line.

    Consecutive lines of one file quarantined for the same reason become one row: line_no
    the first, line_end the last, n_lines how many; its message and excerpt are the first
    line's. Four million blank lines are one row, and every line is still counted (`count`).
    Reading `rows` ends the run being gathered: lines added after it start a new row.
    """

    __slots__ = ("_open", "_rows", "benchmark", "run_id", "uri")

    def __init__(self, uri: str, run_id: str, benchmark: str) -> None:
        self.uri, self.run_id, self.benchmark = uri, run_id, benchmark
        self._rows: list[dict] = []
        self._open: tuple[dict, str, str] | None = None  # a line row that may still grow

    @property
    def rows(self) -> list[dict]:
        self._close()
        return self._rows

    def add(
        self,
        location: str,
        line_no: int | None,
        reason: str,
        what: str,
        todo: str,
        excerpt: str,
        n_lines: int = 1,
    ) -> None:
        """Quarantine a file (line_no None), or `n_lines` consecutive lines from line_no."""
        run = self._open
        if run is not None and line_no is not None:
            row = run[0]
            if (
                row["line_end"] == line_no - 1
                and row["reason"] == reason
                and row["location"] == location
            ):
                row["line_end"] = line_no + n_lines - 1
                row["n_lines"] += n_lines
                return
        self._close()
        where = f"{self.uri}!{location}" + (f":{line_no}" if line_no is not None else "")
        row = {
            "run_id": self.run_id,
            "benchmark": self.benchmark,
            "source": self.uri,
            "location": location,
            "line_no": line_no,
            "line_end": None if line_no is None else line_no + n_lines - 1,
            "n_lines": None if line_no is None else n_lines,
            "reason": reason,
            "message": f"{where}: {what}; {todo}",
            "excerpt": excerpt[:200] if excerpt is not None else None,
        }
        self._rows.append(row)
        self._open = (row, what, todo) if line_no is not None else None
        if n_lines > 1:
            self._close()  # a range from the start: its message says so

    def _close(self) -> None:
        """Give the run gathered so far its message (a range when it grew)."""
        if self._open is None:
            return
        row, what, todo = self._open
        self._open = None
        if row["n_lines"] > 1:
            row["message"] = (
                f"{self.uri}!{row['location']}:{row['line_no']}-{row['line_end']}: "
                f"{row['n_lines']} consecutive lines quarantined as {row['reason']}; the first: "
                f"{what}; {todo}"
            )

    def count(self, since: int = 0) -> int:
        """Items quarantined in rows[since:]: the lines of line rows, 1 for any other row."""
        return sum(r["n_lines"] or 1 for r in self.rows[since:])


def load_json_file(
    source: Source, path: str, q: QuarantineRows, what: str, todo: str, encoding: str = "utf-8"
) -> tuple[Any, str] | None:
    """(the JSON value of a file parsed whole, its text), or None after a quarantine row saying
    why it could not be (too large or unreadable, not text in `encoding`, not valid JSON);
    `what` names the file in messages."""
    try:
        data = read_document(source, path)
    except SourceError as e:
        q.add(path, None, e.reason, e.message, todo, path)
        return None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        q.add(path, None, "not_utf8", f"{what} is not UTF-8 ({e})", todo,
              data[:200].decode("utf-8", "backslashreplace"))  # fmt: skip
        return None
    try:
        return json.loads(text), text
    except json.JSONDecodeError as e:
        q.add(path, e.lineno, "invalid_json", f"{what} is not valid JSON ({e.msg} at line "
              f"{e.lineno} column {e.colno})", todo, text[:200])  # fmt: skip
    except (ValueError, RecursionError) as e:
        why = f"{what} is not valid JSON ({parse_error(e)})"
        q.add(path, None, "invalid_json", why, todo, text[:200])
    return None


_LINE_TODO = "the line is kept in quarantine; fix or drop it and re-ingest"


def _parse_slow(raw: bytes | LongLine, path: str, line_no: int, q: QuarantineRows) -> Any:
    """Classify a line orjson refused: the object when Python's json accepts it, else _BAD
    (after quarantining the line)."""
    if type(raw) is LongLine:
        what = limits.DOCUMENT_BYTES.exceeded(f"a line of {raw.length} bytes")
        q.add(path, line_no, LINE_TOO_LONG, what, "its first bytes are the excerpt",
              _excerpt(raw.head))  # fmt: skip
        return _BAD
    if not raw.strip():
        q.add(
            path, line_no, "blank_line", "blank line, it holds no record", _LINE_TODO, _excerpt(raw)
        )
        return _BAD
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        q.add(path, line_no, "not_utf8", f"line is not UTF-8 ({e})",
              "re-encode the file as UTF-8 and re-ingest", _excerpt(raw))  # fmt: skip
        return _BAD
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as e:
        why = f"truncated or invalid JSON ({parse_error(e)})"
        q.add(path, line_no, "invalid_json", why, _LINE_TODO, _excerpt(raw))
        return _BAD
    if "\\u" in text or "\\U" in text:
        obj = scrub_surrogates(obj)
    return obj


def _pick_trajectory(names: tuple[str, ...]) -> tuple[str | None, list[str]]:
    """traj.jsonl if present, else the lexicographically last *.jsonl; also the unread ones."""
    jsonl = sorted(n for n in names if n.endswith(".jsonl"))
    if not jsonl:
        return None, []
    chosen = "traj.jsonl" if "traj.jsonl" in jsonl else jsonl[-1]
    return chosen, [n for n in jsonl if n != chosen]


def _read(source: Source, path: str, q: QuarantineRows) -> bytes | None:
    """A file parsed whole (within `limits.DOCUMENT_BYTES`), or None after quarantining it."""
    try:
        return read_document(source, path)
    except SourceError as e:
        _unreadable(path, e, q)
        return None


def _unreadable(path: str, e: SourceError, q: QuarantineRows) -> None:
    q.add(path, None, e.reason, e.message, "the file was skipped; repair the archive and "
          "re-ingest", path)  # fmt: skip


def read_trajectory(
    source: Source, path: str, q: QuarantineRows, read: Callable[[Iterable[Any]], Sequence[dict]]
) -> tuple[Sequence[dict], int] | None:
    """`read` (a `read_steps` call) over the lines of the trajectory `path`, streamed; its
    rows and the number of lines, or None when the file cannot be read (quarantined, and
    nothing it yielded kept: a zip member whose CRC fails at its end is read as a whole)."""
    mark = len(q.rows)
    try:
        with source.open(path) as stream:
            lines = Counted(iter_lines(blocks(stream), limits.DOCUMENT_BYTES.value()))
            rows = read(lines)
    except SourceError as e:
        del q.rows[mark:]
        _unreadable(path, e, q)
        return None
    return rows, lines.n


def _read_result(
    source: Source, path: str, q: QuarantineRows
) -> tuple[str | None, float | None, str]:
    """Read result.txt into (result_raw, score, status), quarantining what is not a score."""
    data = _read(source, path, q)
    if data is None:
        return None, None, "unparseable"
    raw, score, status = parse_result(data.decode("utf-8", "replace"))
    if status == "empty":
        q.add(path, None, "empty_result", "result.txt is empty",
              "the episode keeps result_status 'empty' and no score", "")  # fmt: skip
    elif status == "unparseable":
        why = (
            f"result {raw!r} is not a finite number"
            if _is_number(raw)
            else f"result {raw!r} is not a number, True or False"
        )
        q.add(path, 1, "unparseable_result", why,
              "the episode keeps result_status 'unparseable' and no score", raw)  # fmt: skip
    return raw, score, status


def _is_number(raw: str) -> bool:
    try:
        float(raw)
    except ValueError:
        return False
    return True


STEP_VALUES: tuple[str, ...] = (
    "line_no", "step_num", "action_text", "action_format", "action_kind", "x", "y", "text",
    "response", "screenshot_file", "screenshot_path", "action_timestamp", "ts", "screenshot_s",
    "action_s", "reward", "done", "info_json", "phase", "extra",
)  # fmt: skip
"""The STEPS columns a full read takes from each line, in the order of its value tuples; the
episode's keys, step_idx and dt_s follow from the episode and the rows' order."""


def read_steps(
    lines: Iterable[bytes | LongLine],
    *,
    path: str,
    task: TaskFolder,
    run_id: str,
    benchmark: str,
    task_id: str,
    q: QuarantineRows,
    light: bool = False,
    calls: list[tuple[Any, int | None, int]] | None = None,
) -> tuple[Sequence[dict], Sequence[dict]]:
    """Trajectory lines (from `split_lines` or `lines.iter_lines`) to STEPS rows, in file order;
    bad lines go to `q`, and so do the lines after the run's line budget is spent
    (`limits.line_budget`) or past the trajectory's own cap (`limits.TRAJECTORY_LINES`):
    counted, not parsed.

    The keys step_num, action_timestamp, action, reward, done, info, screenshot_file, response
    and phase fill their columns; every other key, and a consumed key whose value has the
    wrong type (a string step_num, say), is kept verbatim in `extra`; so is a structured (dict)
    action, whole, under "action", since its columns hold only what it parses to.

    `light` rows are for counting only (single-run scoring): every line is classified exactly
    as in a full read, but actions and timestamps stay unparsed (keys `action`, `stamp`) until
    `summarise` needs the few it reports.

    Full rows also get their timing: dt_s from the previous row's timestamp, and screenshot_s /
    action_s where the record carries them (`usage.record_timings`). With `calls`, the model
    calls each record carries are appended to it as (Call, step_num, line_no).

    Returns the rows and the full rows' STEP_ACTIONS rows (their calls, in order). Full rows
    are held as columns (`ColumnRows`): each line becomes a tuple of its values
    (`STEP_VALUES`) and each call stays a `SubAction`, transposed into columns once the file
    is read, with no dict per row (building and then taking apart a 26-key dict per line cost
    more than the columns themselves). Light rows are dicts, and have no STEP_ACTIONS rows.
    """
    loads = _fast_loads()
    parse, parse_ts = parse_action, parse_action_timestamp
    lo, hi = _INT32
    files = set(task.files)
    prefix = task.path + "/"
    domain = task.domain
    keys = {"run_id": run_id, "benchmark": benchmark, "domain": domain, "task_id": task_id}
    rows: list[Any] = []
    subs: list[SubAction] = []
    sub_steps: list[int] = []
    sub_order: list[int] = []
    budget = limits.line_budget()
    take = budget.take
    file_cap = limits.TRAJECTORY_LINES.value()
    numbered = enumerate(lines, 1)
    for line_no, raw in numbered:
        long = type(raw) is LongLine
        # the rest is counted, not parsed: one row
        if line_no > file_cap or not take(0 if long else len(raw)):
            n = 1 + sum(1 for _ in numbered)
            if line_no > file_cap:
                reason, spent, message = OVER_TRAJECTORY_CAP, limits.TRAJECTORY_LINES, (
                    f"this trajectory reached the limit of {file_cap} lines per trajectory "
                    "file; its lines from here on are over it (the run's other tasks are read)"
                )  # fmt: skip
            else:
                spent = budget.spent or limits.RUN_LINES
                reason, message = OVER_RUN_CAP, _over_cap(spent)
            q.add(path, line_no, reason, message, _over_cap_todo(spent),
                  _excerpt(raw.head if long else raw), n)  # fmt: skip
            break
        if line_no == 1 and not long and raw.startswith(_BOM):
            raw = raw[3:]
        try:
            rec = loads(raw)
            dumps = dumps_fast  # exact for what orjson parsed
        except (ValueError, RecursionError, TypeError):
            if line_no == 1 and not long and is_lfs_pointer(raw):
                n, pointer = 1, raw
                for n, more in numbered:  # the pointer's lines, none of them a step
                    if n <= 3 and type(more) is not LongLine:
                        pointer += b"\n" + more
                q.add(path, 1, LFS_POINTER, lfs_pointer(path, pointer), LFS_TODO,
                      _excerpt(raw), n)  # fmt: skip
                break
            rec = _parse_slow(raw, path, line_no, q)
            if rec is _BAD:
                continue
            dumps = dumps_compact  # NaN, infinities, integers past 64 bits: Python's json
        if type(rec) is not dict:
            q.add(path, line_no, "not_an_object",
                  f"JSON {type(rec).__name__} where an object was expected", _LINE_TODO,
                  _excerpt(raw))  # fmt: skip
            continue
        if "Error" in rec and "step_num" not in rec:
            err = rec.pop("Error")
            values = (
                line_no, None, err if isinstance(err, str) else dumps(err), "none", "error",
                None, None, None, None, None, None, None, None, None, None, None, None, None,
                None, dumps(rec) if rec else None,
            )  # fmt: skip
            rows.append(_row(keys, len(rows), values) if light else values)
            continue
        pop = rec.pop
        step_num = pop("step_num", None)
        if step_num is not None and not (type(step_num) is int and lo <= step_num <= hi):
            rec["step_num"], step_num = step_num, None
        if light:
            stamp = rec.get("action_timestamp")
            rows.append({"action_kind": None, "step_num": step_num, "action": rec.get("action"),
                         "stamp": stamp if type(stamp) is str else None})  # fmt: skip
            continue
        if calls is not None and (found := record_calls(rec)):
            calls.extend((c, step_num, line_no) for c in found)
        shot_s, action_s = record_timings(rec)
        action = pop("action", None)
        act = parse(action)
        if type(action) is dict or type(action) is list:
            rec["action"] = action  # a structured action keeps every key (ids, checks, input)
        response = pop("response", None)
        if response is None:
            response = act["response"]
        elif type(response) is not str:
            response = dumps(response)
        stamp = pop("action_timestamp", None)
        ts = None
        if type(stamp) is str:
            ts = parse_ts(stamp)
        elif stamp is not None:
            rec["action_timestamp"], stamp = stamp, None
        reward = pop("reward", None)
        if reward is not None:
            kind = type(reward)
            if kind is int or kind is float:
                try:
                    reward = float(reward)
                except OverflowError:
                    rec["reward"], reward = reward, None
            else:
                rec["reward"], reward = reward, None
        done = pop("done", None)
        if done is not None and type(done) is not bool:
            rec["done"], done = done, None
        info = pop("info", _BAD)
        info_json = None if info is _BAD else "{}" if info == {} else dumps(info)
        shot = pop("screenshot_file", None)
        shot_path = None
        if type(shot) is str:
            if shot in files:
                shot_path = prefix + shot
        elif shot is not None:
            rec["screenshot_file"], shot = shot, None
        phase = pop("phase", None)
        if phase is not None and not (type(phase) is int and lo <= phase <= hi):
            rec["phase"], phase = phase, None
        step_subs = act["actions"]
        if step_subs:
            subs.extend(step_subs)
            sub_steps.extend([len(rows)] * len(step_subs))
            sub_order.extend(range(len(step_subs)))
        rows.append(
            (
                line_no, step_num, act["action_text"], act["action_format"] or "none",
                act["action_kind"] or "other", act["x"], act["y"], act["text"], response,
                shot, shot_path, stamp, ts, shot_s, action_s, reward, done, info_json, phase,
                dumps(rec) if rec else None,
            )
        )  # fmt: skip
    if light:
        return rows, []
    return _step_columns(keys, rows), action_columns(keys, sub_steps, sub_order, subs)


def _row(keys: dict[str, Any], step_idx: int, values: tuple[Any, ...]) -> dict[str, Any]:
    """A full STEPS row as a dict (a runner's error line in a light read)."""
    return dict(_step_columns(keys, [values])[0], step_idx=step_idx)


def _step_columns(keys: dict[str, Any], rows: list[tuple[Any, ...]]) -> ColumnRows:
    """Full rows' value tuples (`STEP_VALUES`) as the STEPS columns, in the table's order."""
    n = len(rows)
    values = (
        dict(zip(STEP_VALUES, map(list, zip(*rows, strict=True)), strict=True))
        if rows
        else {c: [] for c in STEP_VALUES}
    )
    columns: dict[str, list[Any]] = {k: [v] * n for k, v in keys.items()}
    columns["step_idx"] = list(range(n))
    for name in STEP_VALUES:
        columns[name] = values[name]
        if name == "ts":
            columns["dt_s"] = step_intervals(values["ts"])
    return ColumnRows(columns)


def _over_cap(cap: limits.Limit) -> str:
    return (
        f"the run's trajectory lines parsed so far reached the limit of {cap.value()} "
        f"{cap.unit}s per run; this file's lines from here on are over it"
    )


def _over_cap_todo(cap: limits.Limit) -> str:
    return (
        f"they are counted, not read; set {cap.env} to a larger number and ingest again to "
        "read them"
    )


def set_step_intervals(rows: list[dict]) -> None:
    """dt_s of each row dict (`step_intervals` of their ts)."""
    for row, dt in zip(rows, step_intervals([row["ts"] for row in rows]), strict=True):
        row["dt_s"] = dt


def step_intervals(stamps: Sequence[Any]) -> list[float | None]:
    """dt_s of each step: seconds since the previous step's ts (null for the first step, or
    when either timestamp is missing). OSWorld runners stamp an action just before executing
    it, so the first action of a turn waits for the turn's model calls and the previous
    action."""
    prev = None
    out: list[float | None] = []
    for ts in stamps:
        out.append((ts - prev).total_seconds() if ts is not None and prev is not None else None)
        prev = ts
    return out


def _first_stamp(steps: Iterable[dict]) -> Any:
    """The first timestamp of (light) rows that parses, parsing no more than needed."""
    for s in steps:
        if "stamp" in s:
            ts = parse_action_timestamp(s["stamp"]) if s["stamp"] is not None else None
        else:
            ts = s["ts"]
        if ts is not None:
            return ts
    return None


def summarise(steps: Sequence[dict], n_quarantined: int) -> dict[str, Any]:
    """Episode figures that follow from the step rows (full or light; dicts, or a full read's
    `ColumnRows`, read as columns) alone."""
    columns = getattr(steps, "columns", None)
    if columns is not None:
        kinds, nums, texts = columns["action_kind"], columns["step_num"], columns["action_text"]
        stamps = columns["ts"]
        started = next((ts for ts in stamps if ts is not None), None)
        ended = next((ts for ts in reversed(stamps) if ts is not None), None)
    else:
        kinds = [s["action_kind"] for s in steps]
        nums = [s["step_num"] for s in steps]
        texts = [s.get("action_text") for s in steps]
        started, ended = _first_stamp(steps), _first_stamp(reversed(steps))
    executed = [i for i, kind in enumerate(kinds) if kind != "error"]
    errors = [i for i, kind in enumerate(kinds) if kind == "error"]
    last_kind = kinds[executed[-1]] if executed else None
    if executed and last_kind is None:  # a light row: parse just this action
        last_kind = parse_action(steps[executed[-1]]["action"])["action_kind"] or "other"
    if last_kind in ("done", "fail"):
        ended_by = last_kind
    elif kinds and kinds[-1] == "error":
        ended_by = "error"
    else:
        ended_by = "none"
    return {
        "n_steps": len(executed),
        "n_turns": len({nums[i] for i in executed if nums[i] is not None}),
        "n_error_lines": len(errors),
        "n_quarantined": n_quarantined,
        "last_action_kind": last_kind,
        "ended_by": ended_by,
        "started_at": started,
        "ended_at": ended,
        "last_error": texts[errors[-1]] if errors else None,
    }


def read_episode(
    source: Source,
    run: RunFolder,
    task: TaskFolder,
    *,
    run_id: str,
    benchmark: str,
    reported: dict | None = None,
    steps: bool = True,
) -> EpisodeRead:
    """Read one task folder; never raises on bad content (it becomes quarantine rows).

    With `steps=False` the episode and quarantine rows are the same but no step rows are
    built: single-run scoring needs the counts, not 50 parsed actions per task.
    """
    return _read_episode(source, run, task, run_id=run_id, benchmark=benchmark,
                         reported=reported, want_steps=steps).read  # fmt: skip


def read_episode_calls(
    source: Source,
    run: RunFolder,
    task: TaskFolder,
    *,
    run_id: str,
    benchmark: str,
    reported: dict | None = None,
) -> EpisodeCalls:
    """A full `read_episode` plus the episode's model calls (llm_calls rows), from its traj
    records and its token_usage.json (see `deskscore.collectors.usage`)."""
    return _read_episode(source, run, task, run_id=run_id, benchmark=benchmark,
                         reported=reported, want_steps=True)  # fmt: skip


def _read_episode(
    source: Source,
    run: RunFolder,
    task: TaskFolder,
    *,
    run_id: str,
    benchmark: str,
    reported: dict | None,
    want_steps: bool,
) -> EpisodeCalls:
    q = QuarantineRows(source.uri, run_id, benchmark)
    task_id = canonical_task_id(task.domain, task.task_id)
    base = task.path + "/"
    traj_name, unread = _pick_trajectory(task.files)
    for name in unread:
        q.add(base + name, None, "unread_trajectory",
              f"the task folder holds several trajectories; {traj_name} was read, not this one",
              "remove or rename the extra file if it is not a trajectory", name)  # fmt: skip
    steps: Sequence[dict] = []
    n_lines = 0
    traj_file = None
    traj_calls: list[tuple[Any, int | None, int]] = []
    actions: Sequence[dict] = []
    n_traj_q = 0
    if traj_name is not None:
        traj_file = base + traj_name
        n_before = len(q.rows)

        def read(lines: Iterable[Any]) -> Sequence[dict]:
            nonlocal actions
            traj_calls.clear()
            rows, actions = read_steps(
                lines, path=traj_file, task=task, run_id=run_id, benchmark=benchmark,
                task_id=task_id, q=q, light=not want_steps,
                calls=traj_calls if want_steps else None,
            )  # fmt: skip
            return rows

        got = read_trajectory(source, traj_file, q, read)
        if got is not None:
            steps, n_lines = got
            n_traj_q = q.count(n_before)
        else:
            traj_calls.clear()
            actions = []
    if "result.txt" in task.files:
        result_raw, score, status = _read_result(source, base + "result.txt", q)
    else:
        result_raw, score, status = None, None, "missing"
    instruction = None
    if "instruction.txt" in task.files:
        text = _read(source, base + "instruction.txt", q)
        if text is not None:
            instruction = text.decode("utf-8", "replace").strip()
    file_usage = _read_usage_file(source, base, task.files, q)
    summary = summarise(steps, n_traj_q)
    last_error = summary.pop("last_error")
    rep = reported or {}
    episode = {
        "run_id": run_id,
        "benchmark": benchmark,
        "domain": task.domain,
        "task_id": task_id,
        "source_task_id": task.task_id,
        "task_path": task.path,
        "instruction": instruction,
        "traj_file": traj_file,
        "n_lines": n_lines,
        **summary,
        "result_raw": result_raw,
        "result_status": status,
        "score": score,
        "reported_score": rep.get("reported_score"),
        "reported_status": rep.get("reported_status"),
        "err_message": rep.get("err_message") or last_error,
        "metric_scores_json": None,  # per-metric scores: only DeskCraft's reader finds them
        "total_time_s": None,  # episode times: only inspect_ai logs record them
        "working_time_s": None,
    }
    if not want_steps:
        return EpisodeCalls(EpisodeRead(episode, [], q.rows, []), [])
    keys = {"run_id": run_id, "benchmark": benchmark, "domain": task.domain, "task_id": task_id}
    calls = episode_calls(steps, traj_calls, file_usage, traj_file=traj_file or "",
                          usage_file=base + USAGE_FILE, keys=keys)  # fmt: skip
    return EpisodeCalls(EpisodeRead(episode, steps, q.rows, actions), calls)


_USAGE_TODO = "the rest of the file is read; fix the entry and re-ingest to count it"


def _read_usage_file(
    source: Source, base: str, files: tuple[str, ...], q: QuarantineRows
) -> CallColumns | list[Any] | None:
    """The calls of the task folder's token_usage.json (None without one), as columns when
    the file is in the common form; what cannot be read is quarantined, in light reads too,
    so both reads quarantine the same items."""
    if USAGE_FILE not in files:
        return None
    path = base + USAGE_FILE
    data = _read(source, path, q)
    if data is None:
        return []
    calls, problems = file_call_columns(data)
    for p in problems:
        todo = (
            "no call of this file is counted; fix it and re-ingest"
            if p.reason == "invalid_json"
            else _USAGE_TODO
        )
        q.add(path, None, p.reason, p.what, todo, p.excerpt)
    return calls


def first_step_indexes(steps: Sequence[dict]) -> dict[int, int]:
    """Each turn's (step_num's) first executed step row's step_idx: where its model calls
    join the steps (runner error lines are no turn's)."""
    columns = getattr(steps, "columns", None)
    if columns is not None:
        turns = zip(columns["step_num"], columns["action_kind"], columns["step_idx"], strict=True)
    else:
        turns = ((s["step_num"], s["action_kind"], s["step_idx"]) for s in steps)
    first: dict[int, int] = {}
    for step_num, kind, step_idx in turns:
        if step_num is not None and kind != "error":
            first.setdefault(step_num, step_idx)
    return first


def episode_calls(
    steps: Sequence[dict],
    traj_calls: list[tuple[Any, int | None, int]],
    file_usage: CallColumns | list[Any] | None,
    *,
    traj_file: str,
    usage_file: str,
    keys: dict[str, str],
) -> ColumnRows:
    """The episode's llm_calls rows, numbered, held as columns.

    A token_usage.json that yields calls is taken as the episode's record and traj-embedded
    usage is then not read (runners that write both would count each call twice). Traj calls
    repeated on several lines of one turn (gpt54 writes the turn's model_usage on each of its
    actions) count once.
    """
    first_step_idx = first_step_indexes(steps)
    if file_usage:
        columns = call_columns(file_usage, first_step_idx=first_step_idx,
                               source_file=usage_file, **keys)  # fmt: skip
    else:
        kept, line_nos = [], []
        seen: dict[Any, set[tuple[Any, ...]]] = {}
        for call, step_num, line_no in traj_calls:
            group = step_num if step_num is not None else ("line", line_no)
            key = call_key(call)
            if key in seen.setdefault(group, set()):
                continue
            seen[group].add(key)
            kept.append(Call._make((*call[:-1], step_num)))  # _replace, without its keywords
            line_nos.append(line_no)
        columns = call_columns(kept, first_step_idx=first_step_idx, source_file=traj_file,
                               line_nos=line_nos, **keys)  # fmt: skip
    columns["call_idx"] = list(range(len(columns["run_id"])))
    return ColumnRows(columns)

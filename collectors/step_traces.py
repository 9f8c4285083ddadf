"""Runs written as one JSON file per step plus a results table:
`<run>/<task_id>/step_NN_trace.json` and `<run>/results.csv`.

One public runner is known to write this form (mvaishak/OSWorld-Benchmark-GPT-4o-Mini:
`results/run_<ts>/<uuid>/step_NN_trace.json` holding `step`, `thought` and `action`, beside
`step_NN.png`, and a `results.csv` of bare `task_id,score,last step index` lines, no header);
other runners' fields are not known for sure. So it is read defensively, the way
`collectors.uitars` reads UI-TARS JSON: each value is looked for under several usual key
names, first in the step object, then one level down in the objects it holds, and every key
is kept verbatim in `steps.extra`. What is read:

- the step number: NN of the file name, ordered numerically (step_2 before step_10);
- the action: `action`, `actions`, `code`, `command`, `pyautogui`, `action_code`, `tool_call`
  (a code string, a dict as the OSWorld agents log them, or a list: a list of code strings is
  read as one script, one statement per element; the list itself stays in `extra`);
- the model's text: `response`, `thought`, `thoughts`, `thinking`, `reasoning`,
  `model_response`, `raw_response`, `llm_output`, `output`;
- the screenshot: `screenshot_file`, `screenshot`, `screenshot_path`, `image`, `image_path`,
  `observation` (a file name, or a path whose last part names a file of the folder);
- the time: `action_timestamp`, `timestamp`, `time`, `start_time`, `started_at`, `ts`
  (OSWorld's `%Y%m%d@%H%M%S`, ISO-8601, or seconds since the epoch, taken as UTC);
- model usage: `usage`, `token_usage`, `model_usage` (see `collectors.usage`);
- an instruction: `instruction`, `task_instruction`, `goal`, `query`.

Step rows are built by OSWorld's row builder (`collectors.osworld.read_steps`) from these
values, so actions are parsed exactly as OSWorld's are. `steps.line_no` is the file's
1-based position in step order, `episodes.traj_file` is `<task folder>/step_*_trace.json` and
`episodes.n_lines` the number of step files: every step file is a step row, or a quarantine
row naming the file (unreadable, not UTF-8, invalid JSON with its line, not an object). A gap
in the step numbers (no step_3 between step_2 and step_4) is not data that was read and lost,
so it does not count as a quarantined line; it is noted by one quarantine row per task folder
(reason `missing_step_files`, without a line number) so a file lost in copying is seen.

`results.csv` (beside the task folders) gives each task its result. Columns are found by
header name, case-insensitively (spaces and dashes read as underscores): the task id
(`task_id`, `task`, `id`, `uuid`, `example_id`, `task_uuid`), the result (`score`, `result`,
`success`, `reward`, `passed`, `pass`, `correct`, `resolved`: a number, or true/false,
yes/no, pass/fail), and maybe the domain (`domain`, `app`, `application`) and the instruction.
A file whose first record names no such column but starts with a task id has no header: each
record is `task_id,score,...` (`csv_columns`). One row per task; a task without a row has no
result. Every data line of the file is a task's result or a quarantine row with its line: a
blank line, a row without a task id (or a file without a task id or result column), a row
naming no task folder, a second row for a task (the first one counts). A result that is
empty or no number is both: the episode keeps result_status 'empty' or 'unparseable' and the
line is quarantined, as OSWorld's result.txt.

The domain: the CSV's domain column when it names one; else OSWorld's, looked up by task id
in the OSWorld-Human task index bundled with deskscore (an OSWorld uuid alone does not say
its domain; old thunderbird ids that equal chrome ids read as chrome); else `unknown`. Under
`--layout` the pattern's {domain} level replaces the index.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Container, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import cache
from typing import Any, NamedTuple

from deskscore.collectors.ids import canonical_task_id
from deskscore.collectors.json_text import scrub_surrogates
from deskscore.collectors.layout import RunFolder, TaskFolder, is_uuid
from deskscore.collectors.osworld import (
    EpisodeCalls,
    EpisodeRead,
    QuarantineRows,
    dumps_json,
    episode_calls,
    load_json_file,
    parse_result,
    read_steps,
    summarise,
)
from deskscore.collectors.run_meta import RunMeta, read_run_meta
from deskscore.collectors.source import Source, SourceError, read_document

RESULTS_CSV = "results.csv"
TRACE_GLOB = "step_*_trace.json"
UNKNOWN_DOMAIN = "unknown"
"""Domain of a task that neither the CSV nor the bundled task index names."""

_TRACE = re.compile(r"step_(\d+)_trace\.json")
_ACTION_KEYS = ("action", "actions", "code", "command", "pyautogui", "action_code", "tool_call")
_RESPONSE_KEYS = ("response", "thought", "thoughts", "thinking", "reasoning", "model_response",
                  "raw_response", "llm_output", "output")  # fmt: skip
_SHOT_KEYS = ("screenshot_file", "screenshot", "screenshot_path", "image", "image_path",
              "observation")  # fmt: skip
_TS_KEYS = ("action_timestamp", "timestamp", "time", "start_time", "started_at", "ts")
_USAGE_KEYS = ("usage", "token_usage", "model_usage")
_INSTRUCTION_KEYS = ("instruction", "task_instruction", "goal", "query")

TASK_COLUMNS = ("task_id", "task", "id", "uuid", "example_id", "task_uuid")
SCORE_COLUMNS = ("score", "result", "success", "reward", "passed", "pass", "correct", "resolved")
DOMAIN_COLUMNS = ("domain", "app", "application")
INSTRUCTION_COLUMNS = ("instruction", "task_instruction", "goal", "query")
UNUSED_ROW_REASONS = ("blank_line", "unusable_row", "no_task_folder", "duplicate_row")
"""Quarantine reasons of results.csv lines that gave no task its result."""

_TRUE = frozenset(("true", "yes", "pass", "passed", "success", "succeeded"))
_FALSE = frozenset(("false", "no", "fail", "failed", "failure"))
_FILE_TODO = "the step is left out of the tables; fix the file and re-ingest"
_ROW_TODO = "the line gives no task a result; fix it and re-ingest"


def trace_number(name: str) -> int | None:
    """NN of `step_NN_trace.json`; None for any other name."""
    m = _TRACE.fullmatch(name)
    return int(m.group(1)) if m else None


def trace_files(names: Sequence[str]) -> list[tuple[int, str]]:
    """The folder's step files as (NN, name), in step order (numeric, then by name)."""
    return sorted((n, name) for name in names if (n := trace_number(name)) is not None)


def traj_pattern(task_path: str) -> str:
    """What `episodes.traj_file` holds for a task folder of this form."""
    return f"{task_path}/{TRACE_GLOB}"


# ---- detection --------------------------------------------------------------------------------


@cache
def _index_domains() -> dict[str, str]:
    """Task id -> OSWorld domain from the bundled OSWorld-Human index (current ids first, then
    the old thunderbird ids where they name no other task)."""
    from deskscore.collectors.human import BUNDLED_VERSIONS, load_bundled

    rows = [row for v in reversed(BUNDLED_VERSIONS) for row in load_bundled(v)]
    out: dict[str, str] = {}
    for row in rows:
        out.setdefault(row["task_id"], row["domain"])
    for row in rows:
        if row["alias_task_id"]:
            out.setdefault(row["alias_task_id"], row["domain"])
    return out


def index_domain(task_id: str) -> str:
    """The task's OSWorld domain by the bundled index, or UNKNOWN_DOMAIN."""
    return _index_domains().get(task_id, UNKNOWN_DOMAIN)


def holds_traces(names: Sequence[str]) -> bool:
    """Step trace files and no JSONL trajectory (a folder with one is OSWorld's)."""
    return any(_TRACE.fullmatch(n) for n in names) and not any(n.endswith(".jsonl") for n in names)


def find_trace_runs(listing: Mapping[str, tuple[str, ...]]) -> Iterator[tuple[str, TaskFolder]]:
    """(run path, task folder) of every folder holding step traces whose parent holds
    results.csv: the run is the parent. The domain is the bundled index's (see the module
    doc); the reader may replace it by the CSV's."""
    for folder, names in listing.items():
        if not folder or not holds_traces(names):
            continue
        parent, _, name = folder.rpartition("/")
        if RESULTS_CSV in listing.get(parent, ()):
            yield parent, TaskFolder(folder, index_domain(name), name, names)


# ---- results.csv ------------------------------------------------------------------------------


class CsvResult(NamedTuple):
    """What a results.csv row says about one task."""

    line_no: int
    result_raw: str | None
    score: float | None
    result_status: str
    domain: str | None
    instruction: str | None


def csv_records(data: bytes) -> list[tuple[int, list[str]]] | None:
    """(first line number, cells) of every record, the header included; None when the file
    is not UTF-8 text CSV can read."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    reader = csv.reader(io.StringIO(text, newline=""))
    out = []
    start = 1
    try:
        for cells in reader:
            out.append((start, cells))
            start = reader.line_num + 1
    except csv.Error:
        return None
    return out


def _norm_header(h: str) -> str:
    return re.sub(r"[\s\-]+", "_", h.strip().lower())


def _column(header: list[str], names: tuple[str, ...]) -> int | None:
    normed = [_norm_header(h) for h in header]
    for name in names:
        if name in normed:
            return normed.index(name)
    return None


class CsvColumns(NamedTuple):
    """Where a results.csv holds each value, and whether its first record is a header."""

    header: bool
    task: int | None
    score: int | None
    domain: int | None
    instruction: int | None


HEADERLESS = CsvColumns(False, 0, 1, None, None)
"""A file of bare `task_id,score[,...]` records, as a runner that appends one line per task
writes it."""


def csv_columns(first: list[str], task_ids: Container[str]) -> CsvColumns:
    """How to read a results.csv whose first record is `first`; `task_ids` are the run's
    task ids, lower-cased.

    A first record naming a task-id and a result column is a header. One that names neither
    but starts with a task id (one of the run's, or shaped like OSWorld's uuids) is the first
    task's result in a file without a header (`HEADERLESS`): the only public runner found to
    write this form appends `f"{task_id},{score},{step_idx}\n"` per task and no header
    (mvaishak/OSWorld-Benchmark-GPT-4o-Mini, archive/eval.py). Anything else is read as a
    header, and its data lines are quarantined for the column it lacks."""
    task, score = _column(first, TASK_COLUMNS), _column(first, SCORE_COLUMNS)
    if task is None and score is None and first:
        lead = first[0].strip()
        if lead.lower() in task_ids or is_uuid(lead):
            return HEADERLESS
    return CsvColumns(True, task, score, _column(first, DOMAIN_COLUMNS),
                      _column(first, INSTRUCTION_COLUMNS))  # fmt: skip


def parse_score(cell: str) -> tuple[str, float | None, str]:
    """(raw, score, status) of a result cell: status 'ok', 'empty' or 'unparseable'."""
    raw, score, status = parse_result(cell)
    if status == "unparseable":
        word = raw.strip().lower()
        if word in _TRUE:
            return raw, 1.0, "ok"
        if word in _FALSE:
            return raw, 0.0, "ok"
    return raw, score, status


def read_results_csv(
    data: bytes, path: str, tasks: Mapping[str, TaskFolder], q: QuarantineRows
) -> dict[str, CsvResult]:
    """Each task folder's row (by task path), quarantining every line that is no task's
    result; `tasks` maps the task ids as folders name them to their folders."""
    records = csv_records(data)
    if records is None:
        q.add(path, None, "not_utf8", f"{RESULTS_CSV} is not UTF-8 CSV text",
              "no task gets a result from it; re-encode the file and re-ingest",
              data[:200].decode("utf-8", "backslashreplace"))  # fmt: skip
        return {}
    while records and not any(c.strip() for c in records[0][1]):
        line_no, _ = records.pop(0)
        q.add(path, line_no, "blank_line", "blank line before the first record", _ROW_TODO, "")
    if not records:
        return {}
    lower = {k.lower(): t for k, t in tasks.items()}
    header = records[0][1]
    columns = csv_columns(header, lower)
    rows = records[1:] if columns.header else records
    col_task, col_score, col_domain, col_instr = columns[1:]
    out: dict[str, CsvResult] = {}

    def cell(cells: list[str], col: int | None) -> str | None:
        if col is None or col >= len(cells):
            return None
        return cells[col].strip() or None

    for line_no, cells in rows:
        excerpt = ",".join(cells)[:200]
        if not any(c.strip() for c in cells):
            q.add(path, line_no, "blank_line", "blank line, it holds no result", _ROW_TODO, "")
            continue
        if col_task is None or col_score is None:
            missing = "task id" if col_task is None else "result"
            q.add(path, line_no, "unusable_row", f"{RESULTS_CSV} has no {missing} column "
                  f"(headers: {', '.join(header)})", _ROW_TODO, excerpt)  # fmt: skip
            continue
        task_id = cell(cells, col_task)
        if task_id is None:
            q.add(path, line_no, "unusable_row", "the row names no task", _ROW_TODO, excerpt)
            continue
        task = tasks.get(task_id) or lower.get(task_id.lower())
        if task is None:
            q.add(path, line_no, "no_task_folder", f"no task folder for task {task_id!r}",
                  _ROW_TODO, excerpt)  # fmt: skip
            continue
        if task.path in out:
            q.add(path, line_no, "duplicate_row", f"task {task_id!r} already has its result on "
                  f"line {out[task.path].line_no}", "the first row counts", excerpt)  # fmt: skip
            continue
        raw, score, status = parse_score(cell(cells, col_score) or "")
        if status == "empty":
            q.add(path, line_no, "empty_result", f"task {task_id!r} has an empty result",
                  "the episode keeps result_status 'empty' and no score", excerpt)  # fmt: skip
        elif status == "unparseable":
            what = f"result {raw!r} of task {task_id!r} is not a number, true/false or pass/fail"
            todo = "the episode keeps result_status 'unparseable' and no score"
            q.add(path, line_no, "unparseable_result", what, todo, excerpt)
        out[task.path] = CsvResult(
            line_no, raw or None, score, status, cell(cells, col_domain), cell(cells, col_instr)
        )
    return out


def _csv_paths(run: RunFolder) -> list[str]:
    """Where the run's results.csv files sit: beside its task folders."""
    return sorted({t.path.rpartition("/")[0] for t in run.tasks})


def _tasks_in(run: RunFolder, folder: str) -> dict[str, TaskFolder]:
    """The run's task folders directly in `folder` (those its results.csv there covers), by
    task id."""
    return {t.task_id: t for t in run.tasks if t.path.rpartition("/")[0] == folder}


def _at(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def read_trace_run_meta(source: Source, run: RunFolder, *, run_id: str, benchmark: str) -> RunMeta:
    """OSWorld's run facts (args.json, summaries, folder names) plus each task's results.csv
    row, handed to the episode reader as its `reported` entry."""
    meta = read_run_meta(source, run, run_id=run_id, benchmark=benchmark)
    q = QuarantineRows(source.uri, run_id, benchmark)
    reported = dict(meta.reported)
    found_csv = False
    for folder in _csv_paths(run):
        path = _at(folder, RESULTS_CSV)
        if not source.exists(path):
            continue
        try:
            data = read_document(source, path)
        except SourceError as e:
            q.add(path, None, e.reason, e.message, "no task gets a result from it; "
                  "repair the archive and re-ingest", path)  # fmt: skip
            continue
        found_csv = True
        here = _tasks_in(run, folder)
        for task_path, result in read_results_csv(data, path, here, q).items():
            task = next(t for t in here.values() if t.path == task_path)
            key = (task.domain, task.task_id)
            reported[key] = {**reported.get(key, {}), "csv": result}
    row = dict(meta.run)
    if found_csv and row.get("summary_source") is None:
        row["summary_source"] = RESULTS_CSV
    return RunMeta(row, reported, [*meta.quarantine, *q.rows])


# ---- one task folder --------------------------------------------------------------------------


def _find(obj: Any, keys: tuple[str, ...], text_first: bool = False) -> tuple[str | None, Any]:
    """(key, value) of the first non-null value under `keys`: in `obj`, then in the dicts it
    holds, one level down (key None). `text_first`: a string value wins over an earlier
    non-string one."""
    if not isinstance(obj, dict):
        return None, None
    nested = [v for v in obj.values() if isinstance(v, dict)]
    for want in ((str,), (object,)) if text_first else ((object,),):
        for k in keys:
            if obj.get(k) is not None and isinstance(obj[k], want):
                return k, obj[k]
        for v in nested:
            for k in keys:
                if v.get(k) is not None and isinstance(v[k], want):
                    return None, v[k]
    return None, None


def _stamp(value: Any) -> Any:
    """A timestamp as read_steps parses it: strings as given, epoch seconds as ISO (UTC)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:  # an integer beyond a float's range makes isfinite raise too
            if math.isfinite(value):
                return datetime.fromtimestamp(value, UTC).replace(tzinfo=None).isoformat()
        except (OverflowError, OSError, ValueError):
            return value
    return value


def _shot(value: Any, files: set[str]) -> Any:
    if isinstance(value, str) and value not in files:
        base = value.replace("\\", "/").rpartition("/")[2]
        if base in files:
            return base
    return value


def trace_record(obj: dict, step: int, files: set[str]) -> dict:
    """A traj.jsonl-shaped record of one step object (keys read_steps turns into columns);
    the object's other keys, and a list action as given, stay for `extra`."""
    rec = dict(obj)
    key, action = _find(obj, _ACTION_KEYS)
    if key is not None:
        del rec[key]
    if isinstance(action, list):
        rec["action_list"] = action
        if all(isinstance(a, str) for a in action):
            action = "\n".join(action)
        elif len(action) == 1:
            action = action[0]
    taken: dict[str, Any] = {"step_num": step, "action": action}
    if obj.get("step_num") is not None and obj.get("step_num") != step:
        rec["trace_step_num"] = rec.pop("step_num")
    for keys, name, fix in (
        (_RESPONSE_KEYS, "response", None),
        (_SHOT_KEYS, "screenshot_file", lambda v: _shot(v, files)),
        (_TS_KEYS, "action_timestamp", _stamp),
    ):
        key, value = _find(obj, keys, text_first=True)
        if value is not None:
            if key is not None:
                rec.pop(key, None)
            taken[name] = fix(value) if fix else value
    if not any(k in rec for k in _USAGE_KEYS):
        _, usage = _find(obj, _USAGE_KEYS)
        if isinstance(usage, dict):
            taken["usage"] = usage
    rec.pop("step_num", None)
    return {**rec, **taken}


def _load_trace(source: Source, path: str, q: QuarantineRows) -> tuple[dict | None, str | None]:
    """The step object of a trace file, or None after quarantining it."""
    loaded = load_json_file(source, path, q, "step file", _FILE_TODO, encoding="utf-8-sig")
    if loaded is None:
        return None, None
    obj, text = loaded
    if not isinstance(obj, dict):
        q.add(path, None, "not_an_object", f"step file holds a JSON {type(obj).__name__}, not "
              "an object", _FILE_TODO, text[:200])  # fmt: skip
        return None, None
    if "\\u" in text:
        obj = scrub_surrogates(obj)
    return obj, text


def _gaps(numbers: list[int]) -> list[int]:
    present = set(numbers)
    if not present:
        return []
    return [n for n in range(min(present), max(present) + 1) if n not in present]


def read_trace_episode(
    source: Source,
    run: RunFolder,
    task: TaskFolder,
    *,
    run_id: str,
    benchmark: str,
    reported: dict | None = None,
) -> EpisodeCalls:
    """One task folder of step traces; `reported` carries its results.csv row (key "csv")."""
    q = QuarantineRows(source.uri, run_id, benchmark)
    row: CsvResult | None = (reported or {}).get("csv")
    domain = row.domain if row is not None and row.domain else task.domain
    folder = replace(task, domain=domain)
    task_id = canonical_task_id(domain, task.task_id)
    files = set(task.files)
    traces = trace_files(task.files)
    pattern = traj_pattern(task.path)
    records: list[bytes] = []
    positions: list[int] = []
    instruction = row.instruction if row is not None else None
    for pos, (n, name) in enumerate(traces, 1):
        obj, _ = _load_trace(source, f"{task.path}/{name}", q)
        if obj is None:
            continue
        if instruction is None:
            _, found = _find(obj, _INSTRUCTION_KEYS)
            instruction = found if isinstance(found, str) else None
        records.append(dumps_json(trace_record(obj, n, files)).encode("utf-8", "surrogatepass"))
        positions.append(pos)
    n_bad = q.count()
    calls: list[tuple[Any, int | None, int]] = []
    steps, _ = read_steps(records, path=pattern, task=folder, run_id=run_id,
                          benchmark=benchmark, task_id=task_id, q=q, calls=calls)  # fmt: skip
    for s in steps:
        s["line_no"] = positions[s["line_no"] - 1]
    calls = [(c, step_num, positions[line - 1]) for c, step_num, line in calls]
    missing = _gaps([n for n, _ in traces])
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        what = f"no step file for step(s) {shown} between {traces[0][0]} and {traces[-1][0]}"
        todo = (
            "nothing read was lost: steps keep the numbers of their files; check the archive "
            "if a file went missing"
        )
        q.add(task.path, None, "missing_step_files", what, todo, shown)
    summary = summarise(steps, n_bad)
    last_error = summary.pop("last_error")
    episode = {
        "run_id": run_id,
        "benchmark": benchmark,
        "domain": domain,
        "task_id": task_id,
        "source_task_id": task.task_id,
        "task_path": task.path,
        "instruction": instruction,
        "traj_file": pattern if traces else None,
        "n_lines": len(traces),
        **summary,
        "result_raw": row.result_raw if row is not None else None,
        "result_status": row.result_status if row is not None else "missing",
        "score": row.score if row is not None else None,
        "reported_score": (reported or {}).get("reported_score"),
        "reported_status": (reported or {}).get("reported_status"),
        "err_message": (reported or {}).get("err_message") or last_error,
        "metric_scores_json": None,
    }
    keys = {"run_id": run_id, "benchmark": benchmark, "domain": domain, "task_id": task_id}
    llm = episode_calls(steps, calls, None, traj_file=pattern, usage_file="", keys=keys)
    return EpisodeCalls(EpisodeRead(episode, steps, q.rows), llm)


# ---- re-counting for `deskscore check` ------------------------------------------------------


def recount_problems(
    source: Source,
    run: RunFolder,
    episodes: Sequence[Mapping[str, Any]],
    quarantine: Sequence[Mapping[str, Any]],
) -> list[str]:
    """What the warehouse lost of a run of this form, re-counted from its source: every step
    file is counted in its episode's n_lines, and every data line of results.csv is a task's
    result or a quarantine row with its line."""
    problems = []
    held = {e["traj_file"]: e["n_lines"] for e in episodes if e["traj_file"]}
    for task in run.tasks:
        n = len(trace_files(task.files))
        pattern = traj_pattern(task.path)
        if n and held.get(pattern) != n:
            problems.append(
                f"{source.uri}!{pattern}: {n} step file(s) in the source, "
                f"{held.get(pattern, 0)} in the warehouse; re-ingest the run"
            )
    for folder in _csv_paths(run):
        path = _at(folder, RESULTS_CSV)
        if not source.exists(path):
            continue
        try:
            records = csv_records(read_document(source, path))
        except SourceError:
            continue
        if records is None:
            continue
        while records and not any(c.strip() for c in records[0][1]):
            records.pop(0)
        if not records:
            continue
        if csv_columns(records[0][1], {k.lower() for k in _tasks_in(run, folder)}).header:
            header_line, lines = records[0][0], len(records) - 1
        else:  # every record is data; blank lines before the first are not
            header_line, lines = records[0][0] - 1, len(records)
        prefix = folder + "/" if folder else ""
        results = sum(
            1
            for e in episodes
            if e["result_status"] != "missing"
            and e["task_path"].startswith(prefix)
            and "/" not in e["task_path"][len(prefix) :]
        )
        unused = sum(
            r.get("n_lines") or 1  # a row may stand for several consecutive lines
            for r in quarantine
            if r["location"] == path
            and r["line_no"] is not None
            and r["reason"] in UNUSED_ROW_REASONS
            and r["line_no"] > header_line
        )
        if results + unused != lines:
            problems.append(f"{source.uri}!{path}: {lines} data line(s) in the source, but "
                            f"{results} task result(s) + {unused} quarantined; re-ingest the "
                            "run")  # fmt: skip
    return problems


__all__ = [
    "DOMAIN_COLUMNS",
    "HEADERLESS",
    "RESULTS_CSV",
    "SCORE_COLUMNS",
    "TASK_COLUMNS",
    "TRACE_GLOB",
    "UNKNOWN_DOMAIN",
    "UNUSED_ROW_REASONS",
    "CsvColumns",
    "CsvResult",
    "csv_columns",
    "csv_records",
    "find_trace_runs",
    "holds_traces",
    "index_domain",
    "parse_score",
    "read_results_csv",
    "read_trace_episode",
    "read_trace_run_meta",
    "recount_problems",
    "trace_files",
    "trace_number",
    "trace_record",
]

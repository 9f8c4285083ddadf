"""inspect_ai evaluation logs (`.eval`) of OSWorld runs, read through inspect_ai's own reader.

inspect_evals ships an OSWorld task (a react agent with inspect_ai's `computer` tool). Its log
is one zip per evaluation: `header.json` (the eval spec: task, model, epochs, config),
`samples/<id>_epoch_<n>.json` (one per task and epoch), summaries and a journal. Recent
inspect_ai versions compress the members with zstd (zip method 93), which Python's zipfile
lists but cannot read, so the log is read with `inspect_ai.log` (the `inspect` extra,
`pip install 'deskscore[inspect]'`); it is imported only when a log is read (it takes seconds).
Without it, a log gives one quarantine row of its source naming the extra, and ingest goes on.

How a log becomes rows:

- runs: one per log file and epoch; epochs are trials (`runs.trial` = the epoch), and the
  epochs of one log share a run_group (`collectors.trials`). The sample list comes from the
  zip's member names, which zipfile can list, so listing reads no sample;
- episodes: one per sample. The task id is the sample id (OSWorld's uuid). Samples carry no
  domain (metadata holds the snapshot and source only), so the domain is looked up in the
  OSWorld-Human task index bundled with deskscore; a task it does not hold gets the domain
  `unknown` and a quarantine row saying so. The instruction is the sample's input; the
  reward is `scores.osworld_scorer.value` (the first score when that scorer is absent); an
  errored sample has no result (result_status 'missing', err_message = the error);
  total_time and working_time are kept;
- steps: one per tool call of an assistant message, in order (`line_no` = the call's place in
  the sample, `step_num` = the assistant turn): `computer` calls are parsed as computer-use
  actions (inspect_ai's computer tool takes Anthropic's action set), `submit` answers as DONE
  or FAIL, other tools as `bash` or `other`. The tool's result text and error, and the call
  id, are kept in `extra`; the tool event's timestamp and working time give `ts` and
  `action_s`. A sample's "trajectory lines" are its tool calls, every one a step row;
- llm_calls: one per model event (tokens as inspect_ai's ModelUsage, working time as latency,
  the turn it produced as step_num); a sample logged without events gives its `model_usage`
  totals instead, one row per model.

inspect_ai needs a local file: a log in a local folder (or given itself) is read in place;
any other (in a zip, in an fsspec folder) is copied to a temporary file once per process.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import io
import os
import re
import tempfile
import zipfile
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from deskscore.collectors.actions import SPECIAL_KINDS, parse_action
from deskscore.collectors.files import open_regular
from deskscore.collectors.json_text import json_writer
from deskscore.collectors.layout import RunFolder, TaskFolder
from deskscore.collectors.osworld import EpisodeCalls, EpisodeRead, parse_result, summarise
from deskscore.collectors.usage import Call, call_rows, parse_usage

if TYPE_CHECKING:
    from deskscore.collectors.formats import Found, Listing
    from deskscore.collectors.run_meta import RunMeta
    from deskscore.collectors.source import Source

FORMAT = "inspect"
"""What `runs.format` stores for these runs."""
SUFFIX = ".eval"
INSTALL = "pip install 'deskscore[inspect]'"
"""How to get the reader (the `inspect` extra installs inspect_ai)."""
UNKNOWN_DOMAIN = "unknown"
"""The domain of a sample whose task is not in the bundled OSWorld-Human task index."""
SCORER = "osworld_scorer"
"""inspect_evals' OSWorld scorer: its value is the reward."""
COMPUTER = "computer"
SUBMIT = "submit"

_SAMPLE = re.compile(r"samples/(.+)_epoch_([0-9]+)\.json")
_ROOT_MARKERS = ("header.json",)
_EXCLUDE = {"store", "attachments"}
"""Sample fields never read (screenshots sit in attachments)."""
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
"""inspect_ai's letter grades as its value_to_float reads them (correct, incorrect, partial,
no answer)."""
_KEEP_COPIES = 2


def available() -> bool:
    """Whether inspect_ai is installed (looked up, not imported)."""
    return importlib.util.find_spec("inspect_ai") is not None


# ---- discovery ------------------------------------------------------------------------------


def find_logs(listing: Listing) -> Iterator[Found]:
    """Every `.eval` file of the listing, as a run of its own (its tasks are only known from
    inside it, see `expand_log`); and the source itself when it is a log opened as a zip (its
    members: header.json, samples/...)."""
    from deskscore.collectors.formats import Found

    for folder, names in listing.items():
        for name in names:
            if name.endswith(SUFFIX):
                path = f"{folder}/{name}" if folder else name
                yield Found(path, TaskFolder(path, "", "", (name,)))
    root = listing.get("", ())
    if any(m in root for m in _ROOT_MARKERS) and "samples" in listing:
        yield Found("", TaskFolder("", "", "", root))


@cache
def task_domains() -> dict[str, str]:
    """OSWorld task id -> domain, from every bundled OSWorld-Human version (old thunderbird
    ids included)."""
    from deskscore.collectors.human import load_bundled
    from deskscore.scorers.config import HUMAN_VERSIONS

    out: dict[str, str] = {}
    for version in HUMAN_VERSIONS:
        for row in load_bundled(version):
            out.setdefault(row["task_id"], row["domain"])
            if row.get("alias_task_id"):
                out.setdefault(row["alias_task_id"], row["domain"])
    return out


def _problem(source: Source, log: str, reason: str, what: str) -> dict[str, Any]:
    where = f"{source.uri}!{log}" if log else source.uri
    return {"location": log, "reason": reason, "message": f"{where}: {what}", "excerpt": log}


def _member_names(source: Source, log: str) -> list[str]:
    """The log's member names, from the zip's central directory (no member is read)."""
    if not log:
        return source.files()
    if source.kind == "dir":
        with zipfile.ZipFile(os.path.join(source.uri, log)) as z:
            return z.namelist()
    with zipfile.ZipFile(io.BytesIO(source.read_bytes(log))) as z:
        return z.namelist()


def expand_log(source: Source, run: RunFolder) -> tuple[list[RunFolder], list[dict]]:
    """One run per epoch of the log, each holding that epoch's samples as task folders."""
    log = run.run_path
    if not available():
        what = (
            f"an inspect_ai log; reading it needs inspect_ai, which is not installed: {INSTALL}, "
            "then ingest this source again with --force"
        )
        return [], [_problem(source, log, "missing_extra", what)]
    try:
        names = _member_names(source, log)
    except Exception as e:  # not a zip, truncated, unreadable
        what = f"not a readable inspect_ai log ({type(e).__name__}: {e}); it was skipped"
        return [], [_problem(source, log, "unreadable_log", what)]
    epochs: dict[int, list[TaskFolder]] = {}
    domains = task_domains()
    prefix = f"{log}/" if log else ""
    for name in names:
        m = _SAMPLE.fullmatch(name)
        if m:
            sample_id, epoch = m.group(1), int(m.group(2))
            domain = domains.get(sample_id, UNKNOWN_DOMAIN)
            task = TaskFolder(prefix + name, domain, sample_id, ())
            epochs.setdefault(epoch, []).append(task)
    if not epochs:
        what = "an inspect_ai log without samples (none finished, or logged without samples)"
        return [], [_problem(source, log, "empty_log", what)]
    runs = [
        RunFolder(
            log,
            FORMAT,
            tuple(sorted(tasks, key=lambda t: (t.domain, t.task_id, t.path))),
            str(epoch),
            log,
        )
        for epoch, tasks in sorted(epochs.items())
    ]
    return runs, []


# ---- a local copy for inspect_ai ------------------------------------------------------------

_copies: OrderedDict[tuple[str, str], tuple[str, str]] = OrderedDict()
_hashes: dict[tuple[str, int, int], str] = {}


def _remove_copies() -> None:
    for path, _ in _copies.values():
        with contextlib.suppress(OSError):
            os.unlink(path)
    _copies.clear()


atexit.register(_remove_copies)


def _sha1_file(path: str) -> str:
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns)
    if key not in _hashes:
        h = hashlib.sha1()
        with open_regular(path) as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _hashes[key] = h.hexdigest()
    return _hashes[key]


def local_log(source: Source, log: str) -> str:
    """A local path of the log inspect_ai can open; the bytes it holds count in the run's
    content digest (see `archives.DigestingSource.note`)."""
    note = getattr(source, "note", None)
    if not log and source.kind == "zip" and os.path.isfile(source.uri):
        path = source.uri
    elif log and source.kind == "dir":
        path = os.path.join(source.uri, log)
    else:
        key = (source.uri, log)
        if key in _copies:
            _copies.move_to_end(key)
            path, sha1 = _copies[key]
            if note is not None:
                note(log, sha1)
            return path
        data = source.read_bytes(log)  # counted by the digesting source
        fd, path = tempfile.mkstemp(suffix=SUFFIX, prefix="deskscore-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        _copies[key] = (path, hashlib.sha1(data).hexdigest())
        while len(_copies) > _KEEP_COPIES:
            _, (old, _) = _copies.popitem(last=False)
            with contextlib.suppress(OSError):
                os.unlink(old)
        return path
    if note is not None:
        note(log, _sha1_file(path))
    return path


# ---- one sample to rows ---------------------------------------------------------------------


def _text(content: Any) -> str:
    """The text of a message's content (a string, or a list of parts of which text counts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        )
    return ""


_dumps = json_writer(sort_keys=True, default=str)
_compact = json_writer(sort_keys=True, separators=(",", ":"), default=str)
"""A step's `extra`, in the compact form every reader writes it."""


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        ts = datetime.fromisoformat(value)
    except ValueError:
        return None
    return ts.astimezone(UTC) if ts.tzinfo else ts.replace(tzinfo=UTC)


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _instruction(sample: Mapping[str, Any]) -> str | None:
    given = sample.get("input")
    if isinstance(given, str):
        return given
    if isinstance(given, list):
        for m in given:
            if isinstance(m, dict) and m.get("role") == "user":
                return _text(m.get("content")) or None
    return None


def _reward(sample: Mapping[str, Any]) -> tuple[str | None, float | None, str]:
    """(result_raw, score, result_status) from the sample's scores (see the module doc)."""
    if sample.get("error"):
        return None, None, "missing"
    scores = sample.get("scores") or {}
    if not isinstance(scores, dict) or not scores:
        return None, None, "missing"
    chosen = scores.get(SCORER, next(iter(scores.values())))
    value = chosen.get("value") if isinstance(chosen, dict) else None
    if isinstance(value, bool):
        return str(value), float(value), "ok"
    if isinstance(value, int | float):
        return parse_result(repr(value))
    if isinstance(value, str):
        if value.strip() in _LETTERS:
            return value, _LETTERS[value.strip()], "ok"
        return parse_result(value)
    if value is None:
        return None, None, "missing"
    return _dumps(value), None, "unparseable"


def _submit(answer: Any) -> tuple[str | None, str, str]:
    """(action_text, action_format, action_kind) of a submit call: DONE or FAIL as OSWorld's
    inspect agent answers ('```DONE```', '```FAIL <reason>```')."""
    text = answer if isinstance(answer, str) else None
    word = (text or "").strip().strip("`").strip().split(maxsplit=1)
    head = word[0].upper() if word else ""
    if head in ("DONE", "FAIL"):
        return text, "special", SPECIAL_KINDS[head]
    return text, "dict", "other"


def _step_fields(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function")
    args = call.get("arguments")
    if function == COMPUTER and isinstance(args, dict):
        act = parse_action({"name": COMPUTER, "input": args})
        return {
            "action_text": act["action_text"],
            "action_format": act["action_format"],
            "action_kind": act["action_kind"] or "other",
            "x": act["x"],
            "y": act["y"],
            "text": act["text"],
        }
    if function == SUBMIT:
        answer = args.get("answer") if isinstance(args, dict) else None
        text, fmt, kind = _submit(answer)
        return {"action_text": text, "action_format": fmt, "action_kind": kind,
                "x": None, "y": None, "text": None}  # fmt: skip
    kind = "bash" if function == "bash" else "other"
    typed = args.get("cmd", args.get("command")) if isinstance(args, dict) else None
    return {
        "action_text": _dumps({"function": function, "arguments": args}),
        "action_format": "dict",
        "action_kind": kind,
        "x": None,
        "y": None,
        "text": typed if isinstance(typed, str) else None,
    }


def _tool_results(messages: list[Any]) -> dict[str, tuple[str, Any]]:
    out = {}
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "tool" and m.get("tool_call_id"):
            error = m.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            out[m["tool_call_id"]] = (_text(m.get("content")), message)
    return out


def _events(sample: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
    events = sample.get("events")
    if not isinstance(events, list):
        return []
    return [e for e in events if isinstance(e, dict) and e.get("event") == kind]


def sample_steps(
    sample: Mapping[str, Any], *, run_id: str, benchmark: str, domain: str, task_id: str
) -> tuple[list[dict[str, Any]], dict[str, list[int]]]:
    """STEPS rows of one sample (one per tool call, in order) and the turns of the assistant
    messages by message id (in order: a replayed message may repeat an id)."""
    messages = sample.get("messages")
    messages = messages if isinstance(messages, list) else []
    results = _tool_results(messages)
    tool_events = {e.get("id"): e for e in _events(sample, "tool")}
    rows: list[dict[str, Any]] = []
    turns: dict[str, list[int]] = {}
    turn = 0
    for m in messages:
        if not isinstance(m, dict) or m.get("role") != "assistant":
            continue
        turn += 1
        if isinstance(m.get("id"), str):
            turns.setdefault(m["id"], []).append(turn)
        response = _text(m.get("content")) or None
        for call in m.get("tool_calls") or ():
            if not isinstance(call, dict):
                continue
            call_id = call.get("id")
            result, error = results.get(call_id, (None, None))
            event = tool_events.get(call_id) or {}
            stamp = event.get("timestamp")
            extra = {"tool": call.get("function"), "tool_call_id": call_id, "result": result}
            if error:
                extra["error"] = error
            if call.get("parse_error"):
                extra["parse_error"] = call["parse_error"]
            rows.append(
                {
                    "run_id": run_id, "benchmark": benchmark, "domain": domain,
                    "task_id": task_id, "step_idx": len(rows), "line_no": len(rows) + 1,
                    "step_num": turn, **_step_fields(call), "response": response,
                    "screenshot_file": None, "screenshot_path": None,
                    "action_timestamp": stamp if isinstance(stamp, str) else None,
                    "ts": _time(stamp), "dt_s": None, "screenshot_s": None,
                    "action_s": _seconds(event.get("working_time")),
                    "reward": None, "done": None, "info_json": None, "phase": None,
                    "extra": _compact(extra),
                }
            )  # fmt: skip
    prev = None
    for row in rows:
        ts = row["ts"]
        row["dt_s"] = (ts - prev).total_seconds() if ts is not None and prev is not None else None
        prev = ts
    return rows, turns


def _usage(obj: Any) -> Any:
    """inspect_ai's ModelUsage read as such, even when its cache fields were left out."""
    if not isinstance(obj, dict):
        return None
    return parse_usage({"input_tokens_cache_read": None, "input_tokens_cache_write": None, **obj})


def sample_calls(sample: Mapping[str, Any], turns: Mapping[str, list[int]]) -> list[Call]:
    """The sample's model calls: one per model event, else its model_usage totals. A call's
    turn is that of the assistant message it produced (matched by message id, in order)."""
    calls = []
    left = {k: list(v) for k, v in turns.items()}
    for e in _events(sample, "model"):
        output = e.get("output") if isinstance(e.get("output"), dict) else {}
        usage = output.get("usage")
        choices = output.get("choices") or [{}]
        message = choices[0].get("message") if isinstance(choices[0], dict) else None
        ids = left.get(message.get("id")) if isinstance(message, dict) else None
        turn = ids.pop(0) if ids else None
        model = e.get("model") if isinstance(e.get("model"), str) else None
        calls.append(
            Call(
                "planning",
                None,
                model,
                _usage(usage),
                _seconds(e.get("working_time")),
                _time(e.get("timestamp")),
                "inspect_ai",
                _dumps(usage) if usage is not None else None,
                turn,
            )
        )
    if calls:
        return calls
    totals = sample.get("model_usage")
    if isinstance(totals, dict):
        for model, usage in totals.items():
            calls.append(Call("planning", None, model, _usage(usage), None, None, "inspect_ai",
                              _dumps(usage)))  # fmt: skip
    return calls


def _quarantine(source: str, run_id: str, benchmark: str, location: str, reason: str,
                what: str) -> dict[str, Any]:  # fmt: skip
    return {
        "run_id": run_id, "benchmark": benchmark, "source": source, "location": location,
        "line_no": None, "reason": reason, "message": f"{source}!{location}: {what}",
        "excerpt": location[:200],
    }  # fmt: skip


def sample_episode(
    sample: Mapping[str, Any], task: TaskFolder, *, source: str, run_id: str, benchmark: str
) -> EpisodeCalls:
    """One sample (inspect_ai's EvalSample as JSON: `model_dump(mode='json')`) to its episode,
    steps, quarantine and llm_calls rows."""
    steps, turns = sample_steps(
        sample, run_id=run_id, benchmark=benchmark, domain=task.domain, task_id=task.task_id
    )
    quarantine = []
    if task.domain == UNKNOWN_DOMAIN:
        quarantine.append(_quarantine(source, run_id, benchmark, task.path, "unknown_task",
                          f"task {task.task_id} is not in OSWorld-Human's task index bundled "
                          f"with deskscore, so its domain is unknown: it is stored under "
                          f"'{UNKNOWN_DOMAIN}' and matches no human data"))  # fmt: skip
    raw, score, status = _reward(sample)
    summary = summarise(steps, 0)
    summary.pop("last_error")
    error = sample.get("error")
    err = error.get("message") if isinstance(error, dict) else (error or None)
    if err:
        summary["ended_by"] = "error"
    episode = {
        "run_id": run_id,
        "benchmark": benchmark,
        "domain": task.domain,
        "task_id": task.task_id,
        "source_task_id": task.task_id,
        "task_path": task.path,
        "instruction": _instruction(sample),
        "traj_file": task.path,
        "n_lines": len(steps),
        **summary,
        "result_raw": raw,
        "result_status": status,
        "score": score,
        "reported_score": None,
        "reported_status": None,
        "err_message": err if isinstance(err, str) else None,
        "metric_scores_json": None,
        "total_time_s": _seconds(sample.get("total_time")),
        "working_time_s": _seconds(sample.get("working_time")),
    }
    first_step_idx: dict[int, int] = {}
    for s in steps:
        first_step_idx.setdefault(s["step_num"], s["step_idx"])
    keys = {"run_id": run_id, "benchmark": benchmark, "domain": task.domain,
            "task_id": task.task_id}  # fmt: skip
    calls = call_rows(sample_calls(sample, turns), first_step_idx=first_step_idx,
                      source_file=task.path, **keys)  # fmt: skip
    for i, row in enumerate(calls):
        row["call_idx"] = i
    return EpisodeCalls(EpisodeRead(episode, steps, quarantine), calls)


def _unreadable(
    task: TaskFolder, why: str, *, source: str, run_id: str, benchmark: str
) -> EpisodeCalls:
    """The episode of a sample that could not be read: no steps, no result, and why."""
    read = sample_episode({}, task, source=source, run_id=run_id, benchmark=benchmark)
    row = _quarantine(source, run_id, benchmark, task.path, "unreadable_file",
                      f"the sample could not be read ({why}); the episode has no steps and "
                      "no result")  # fmt: skip
    return EpisodeCalls(read.read._replace(quarantine=[*read.read.quarantine, row]), [])


def _samples(path: str, run: RunFolder) -> Iterator[tuple[TaskFolder, dict | str]]:
    """Each task of the run with its sample as JSON, or why it could not be read."""
    from inspect_ai.log import read_eval_log_sample

    epoch = int(run.trial or 1)
    for task in run.tasks:
        try:
            sample = read_eval_log_sample(path, id=task.task_id, epoch=epoch,
                                          exclude_fields=_EXCLUDE)  # fmt: skip
        except Exception as e:  # a broken member: that episode says so, the others are read
            yield task, f"{type(e).__name__}: {e}"
            continue
        yield task, sample.model_dump(mode="json", exclude=_EXCLUDE)


def read_log(
    source: Source,
    run: RunFolder,
    *,
    run_id: str,
    benchmark: str,
    reported: Mapping[tuple[str, str], dict] | None = None,
) -> list[EpisodeCalls]:
    """Every episode of one epoch of a log (`reported` is unused: logs hold their scores)."""
    keys = {"source": source.uri, "run_id": run_id, "benchmark": benchmark}
    try:
        path = local_log(source, run.run_path)
    except Exception as e:
        why = f"the log could not be opened ({type(e).__name__}: {e})"
        return [_unreadable(task, why, **keys) for task in run.tasks]
    out = []
    for task, sample in _samples(path, run):
        if isinstance(sample, str):
            out.append(_unreadable(task, sample, **keys))
        else:
            out.append(sample_episode(sample, task, **keys))
    return out


def read_log_episode(
    source: Source,
    run: RunFolder,
    task: TaskFolder,
    *,
    run_id: str,
    benchmark: str,
    reported: dict | None = None,
) -> EpisodeCalls:
    """One sample of the log (what a per-task reader is asked for)."""
    one = RunFolder(run.run_path, run.format, (task,), run.trial, run.group_path)
    return read_log(source, one, run_id=run_id, benchmark=benchmark)[0]


def read_log_meta(source: Source, run: RunFolder, *, run_id: str, benchmark: str) -> RunMeta:
    """The runs row: the common facts of any run, with the model and the eval spec from the
    log's header (args_json holds task, task_args, model, epochs, limits, ids and status)."""
    from deskscore.collectors.run_meta import RunMeta, read_run_meta

    common = read_run_meta(source, run, run_id=run_id, benchmark=benchmark)
    row = dict(common.run)
    row.update(action_space=None, observation_type=None, max_steps=None, args_json=None,
               summary_source=None)  # fmt: skip
    quarantine = []
    try:
        from inspect_ai.log import read_eval_log

        header = read_eval_log(local_log(source, run.run_path), header_only=True)
        spec = header.eval.model_dump(mode="json")
    except Exception as e:
        quarantine.append(_quarantine(source.uri, run_id, benchmark, run.run_path,
                          "unreadable_file", f"the log's header could not be read "
                          f"({type(e).__name__}: {e}); the run has no model"))  # fmt: skip
    else:
        config = spec.get("config") or {}
        facts = {
            "task": spec.get("task"),
            "task_args": spec.get("task_args"),
            "model": spec.get("model"),
            "created": spec.get("created"),
            "eval_id": spec.get("eval_id"),
            "run_id": spec.get("run_id"),
            "epochs": config.get("epochs"),
            "message_limit": config.get("message_limit"),
            "token_limit": config.get("token_limit"),
            "time_limit": config.get("time_limit"),
            "status": header.status,
        }
        model = spec.get("model") if isinstance(spec.get("model"), str) else None
        row.update(model=model, agent=model or row["agent"], args_json=_dumps(facts))
    return RunMeta(row, {}, quarantine)


def count_log_lines(source: Source, run: RunFolder) -> dict[str, int]:
    """`check`'s re-count: each sample's tool calls (its trajectory lines), read again."""
    path = local_log(source, run.run_path)
    out = {}
    for task, sample in _samples(path, run):
        if not isinstance(sample, str):
            steps, _ = sample_steps(sample, run_id="", benchmark="", domain="", task_id="")
            out[task.path] = len(steps)
    return out


__all__ = [
    "FORMAT",
    "INSTALL",
    "SCORER",
    "SUFFIX",
    "UNKNOWN_DOMAIN",
    "available",
    "count_log_lines",
    "expand_log",
    "find_logs",
    "local_log",
    "read_log",
    "read_log_episode",
    "read_log_meta",
    "sample_calls",
    "sample_episode",
    "sample_steps",
    "task_domains",
]

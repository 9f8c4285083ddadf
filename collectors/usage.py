"""Model-call usage as runners archive it (tokens, latency, stage), read into llm_calls rows.

Where the numbers come from, and what each shape means:

- gpt54 / Operator runners (DeskCraft `lib_run_single.py`): every traj.jsonl line carries
  `model_usage = {model_time, prompt_tokens, completion_tokens}` of the turn's one Responses API
  call (prompt_tokens is the response's `input_tokens`, cached ones included; `model_time` is
  seconds). The turn's lines repeat it, so it counts once per turn. Some of these runners
  write 0 and 0 when their server exposes no counts: both zero is read as "not reported".
  The line's `messages` are the response's output items and carry no usage of their own;
  an item that does embed a `usage` object is read as a call.
- OpenAI Chat Completions usage: prompt_tokens (cached included),
  prompt_tokens_details.cached_tokens, completion_tokens (reasoning included),
  completion_tokens_details.reasoning_tokens.
- OpenAI Responses usage: input_tokens (cached included), input_tokens_details.cached_tokens,
  output_tokens (reasoning included), output_tokens_details.reasoning_tokens.
- Anthropic usage: input_tokens (uncached only), cache_read_input_tokens,
  cache_creation_input_tokens, output_tokens (thinking included).
- inspect_ai ModelUsage: input_tokens (uncached only), input_tokens_cache_read,
  input_tokens_cache_write, output_tokens, reasoning_tokens, total_tokens; a sample's
  `model_usage` maps model name to one of these.
- Gemini usage_metadata: prompt_token_count (cached included), cached_content_token_count,
  candidates_token_count (thoughts NOT included), thoughts_token_count.
- Agent S1/S2 agent info: num_input_tokens_<module>, num_output_tokens_<module>: the runner's
  own estimates (tiktoken plus a fixed count per image), read as archived.
- `token_usage.json` in a task folder (Agent S3 style; no public runner's exact layout could
  be confirmed, so the documented variants are accepted): a list of call entries, or an
  object holding such a list under calls/records/entries/history/steps, or an object keyed
  by stage or model whose values are entries, lists of entries or usage totals. An entry
  names its step (step, step_num, turn), stage (stage, module, agent, role, component, name),
  model, a usage object (usage, token_usage, or its own flat fields), a latency (latency_s,
  latency, duration, elapsed, model_time, call_duration, time, or *_ms in milliseconds) and a
  start (started_at, start_time, timestamp: ISO-8601 or epoch seconds).

Everything is normalised to one convention: prompt_tokens counts every input token, cache reads
and writes included; cached_prompt_tokens and cache_write_tokens are parts of it. A field a
format lacks stays None. Only the standard library is imported: this runs on the ingest path.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any, NamedTuple

import orjson

from deskscore.collectors.json_text import parse_error, scrub_surrogates
from deskscore.collectors.numbers import finite_float
from deskscore.collectors.timestamps import parse_action_timestamp
from deskscore.schemas.tables import MAX_INT64

STAGES = ("planning", "reflection", "judging", "grounding", "retrieval", "other")

_STAGE_WORDS = (
    ("reflect", "reflection"),
    ("judg", "judging"),
    ("evaluat", "judging"),
    ("verif", "judging"),
    ("critic", "judging"),
    ("ground", "grounding"),
    ("retriev", "retrieval"),
    ("search", "retrieval"),
    ("knowledge", "retrieval"),
    ("rag", "retrieval"),
    ("memory", "retrieval"),
    ("plan", "planning"),
    ("generat", "planning"),
    ("worker", "planning"),
    ("executor", "planning"),
    ("manager", "planning"),
    ("policy", "planning"),
    ("actor", "planning"),
    ("dag", "planning"),
    ("main", "planning"),
)
"""Parts of a source's stage, module or agent name, first match wins: a word of 6 letters or
more anywhere in the name (ReflectionAgent), a shorter one only at the start of one of its
words (rag_retriever, dag_planner; not drag or explanation)."""

_LATENCY_S = (
    "latency_s",
    "latency",
    "duration_s",
    "duration",
    "elapsed_s",
    "elapsed",
    "model_time",
    "call_duration",
    "response_time",
    "working_time",
    "time",
)
_LATENCY_MS = ("latency_ms", "duration_ms", "elapsed_ms", "response_time_ms")
_STARTED = ("started_at", "start_time", "started", "timestamp", "time_start")
_STEP_KEYS = ("step", "step_num", "turn", "turn_num")
_STAGE_KEYS = ("stage", "module", "agent", "role", "component", "name", "call_type", "purpose")
_MODEL_KEYS = ("model", "model_name", "engine")
_LIST_KEYS = ("calls", "records", "entries", "history", "usage_log", "log", "steps")
_TOTAL_KEYS = ("total", "totals", "summary", "overall", "all", "sum", "total_cost", "cost")

SCREENSHOT_KEYS = ("screenshot_s", "screenshot_time", "screenshot_duration")
"""Traj record keys read as the seconds a screenshot took (no public runner confirmed)."""
ACTION_KEYS = ("action_s", "action_time", "action_duration", "execution_time", "exec_time")
"""Traj record keys read as the seconds executing the action took (no public runner confirmed)."""

_TIMING_KEYS = frozenset(SCREENSHOT_KEYS + ACTION_KEYS)
"""Every key `record_timings` reads: a record holding none of them has no timings."""

USAGE_FILE = "token_usage.json"


class Usage(NamedTuple):
    """Token counts of one call under the prompt-includes-cache convention."""

    prompt_tokens: int | None
    cached_prompt_tokens: int | None
    cache_write_tokens: int | None
    completion_tokens: int | None
    reasoning_tokens: int | None
    reasoning_in_completion: bool | None
    format: str


class Call(NamedTuple):
    """One model call found in an archive, before it is placed in its episode."""

    stage: str
    stage_raw: str | None
    model: str | None
    usage: Usage | None
    latency_s: float | None
    started_at: datetime | None
    usage_format: str
    usage_json: str | None
    step_num: int | None = None


class UsageProblem(NamedTuple):
    """Something in a usage file that could not become a call (it goes to quarantine)."""

    reason: str
    what: str
    excerpt: str


def _dumps(obj: Any) -> str:
    """Canonical JSON text (sorted keys, compact) of a usage object, as kept in `raw`."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS, default=str).decode()
    except (TypeError, orjson.JSONEncodeError):  # e.g. integers beyond 64 bits
        return json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str,
                          separators=(",", ":"))  # fmt: skip


_MAX_COUNT = MAX_INT64
"""The largest count a warehouse column (int64) holds; a larger one is not a count."""


def count(value: Any) -> int | None:
    """A token count: a non-negative integer (or integral float) an int64 holds; anything
    else None (a larger integer made the run's columns fail to build, stopping the ingest)."""
    if type(value) is int:
        return value if 0 <= value <= _MAX_COUNT else None
    if type(value) is float and math.isfinite(value) and value >= 0 and value.is_integer():
        return int(value) if value <= _MAX_COUNT else None
    return None


_MAX_STEP = 2**31 - 1
"""The largest step number a warehouse column (int32) holds."""


def step_number(value: Any) -> int | None:
    """A step number: a count an int32 holds; anything else None (a larger one made the
    run's columns fail to build, stopping the ingest)."""
    n = count(value)
    return n if n is not None and n <= _MAX_STEP else None


def seconds(value: Any) -> float | None:
    """A duration in seconds: a finite non-negative number; anything else None."""
    v = finite_float(value)
    return v if v is not None and v >= 0 else None


def _get(d: dict, *keys: str) -> Any:
    for k in keys:
        if k in d and d[k] is not None:
            return d[k]
    return None


def _sub(d: dict, key: str, field: str) -> Any:
    inner = d.get(key)
    return inner.get(field) if isinstance(inner, dict) else None


def _add(*values: int | None) -> int | None:
    """Sum of the counts that are known; None when none is, or when the sum is beyond what a
    count may be (counts that each fit an int64 may not together)."""
    known = [v for v in values if v is not None]
    return count(sum(known)) if known else None


def parse_usage(obj: Any) -> Usage | None:
    """Recognise one provider usage object (see the module doc); None when it is not one."""
    if not isinstance(obj, dict):
        return None
    keys = obj.keys()
    if "prompt_token_count" in keys or "candidates_token_count" in keys:
        return _gemini(obj, "prompt_token_count", "cached_content_token_count",
                       "candidates_token_count", "thoughts_token_count")  # fmt: skip
    if "promptTokenCount" in keys or "candidatesTokenCount" in keys:
        return _gemini(obj, "promptTokenCount", "cachedContentTokenCount",
                       "candidatesTokenCount", "thoughtsTokenCount")  # fmt: skip
    if "input_tokens_cache_read" in keys or "input_tokens_cache_write" in keys:
        base, read = count(obj.get("input_tokens")), count(obj.get("input_tokens_cache_read"))
        write = count(obj.get("input_tokens_cache_write"))
        return Usage(
            _add(base, read, write) if base is not None else None,
            read, write, count(obj.get("output_tokens")), count(obj.get("reasoning_tokens")),
            True, "inspect_ai",
        )  # fmt: skip
    if "cache_read_input_tokens" in keys or "cache_creation_input_tokens" in keys:
        base = count(obj.get("input_tokens"))
        read = count(obj.get("cache_read_input_tokens"))
        write = count(obj.get("cache_creation_input_tokens"))
        return Usage(
            _add(base, read, write) if base is not None else None,
            read, write, count(obj.get("output_tokens")), None, True, "anthropic",
        )  # fmt: skip
    if "prompt_tokens" in keys or "completion_tokens" in keys:
        return Usage(
            count(obj.get("prompt_tokens")),
            count(_sub(obj, "prompt_tokens_details", "cached_tokens")),
            None,
            count(obj.get("completion_tokens")),
            count(_sub(obj, "completion_tokens_details", "reasoning_tokens")),
            True,
            "openai.chat",
        )
    if "input_tokens" in keys or "output_tokens" in keys:
        if "total_tokens" in keys or "input_tokens_details" in keys:
            return Usage(
                count(obj.get("input_tokens")),
                count(_sub(obj, "input_tokens_details", "cached_tokens")),
                None,
                count(obj.get("output_tokens")),
                count(_sub(obj, "output_tokens_details", "reasoning_tokens")),
                True,
                "openai.responses",
            )
        # Anthropic without cache fields: input_tokens is then the whole prompt too
        return Usage(count(obj.get("input_tokens")), None, None, count(obj.get("output_tokens")),
                     None, True, "anthropic")  # fmt: skip
    return None


def _gemini(obj: dict, prompt: str, cached: str, out: str, thoughts: str) -> Usage:
    return Usage(
        count(obj.get(prompt)), count(obj.get(cached)), None, count(obj.get(out)),
        count(obj.get(thoughts)), False, "gemini",
    )  # fmt: skip


def normalise_stage(raw: Any) -> str:
    """A source's stage, module or agent name as one of STAGES ('other' when none fits)."""
    if not isinstance(raw, str):
        return "other"
    return _stage_of(raw)


@functools.lru_cache(maxsize=4096)
def _stage_of(raw: str) -> str:
    """normalise_stage for a string (a run names a handful of stages tens of thousands of
    times, so each name is worked out once)."""
    low = raw.lower()
    if low in STAGES:
        return low
    words = [w for w in re.split(r"[^a-z0-9]+", low) if w]
    for word, stage in _STAGE_WORDS:
        if word in low if len(word) >= 6 else any(w.startswith(word) for w in words):
            return stage
    return "other"


def _known_stage(raw: Any) -> bool:
    return normalise_stage(raw) != "other" or (isinstance(raw, str) and raw.lower() == "other")


def latency_of(d: dict) -> float | None:
    """Seconds from the first latency key present (milliseconds keys divided by 1000)."""
    for k in _LATENCY_S:
        if k in d:
            v = seconds(d[k])
            if v is not None:
                return v
    for k in _LATENCY_MS:
        if k in d:
            v = seconds(d[k])
            if v is not None:
                return v / 1000.0
    return None


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 string, a runner stamp (%Y%m%d@%H%M%S) or epoch seconds (or ms) as a naive
    UTC datetime; anything else None."""
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        return parse_action_timestamp(text)
    real = finite_float(value)
    if real is not None and real > 0:
        secs = real / 1000.0 if real > 1e11 else real
        try:
            return datetime.fromtimestamp(secs, UTC).replace(tzinfo=None)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def _started(d: dict) -> datetime | None:
    for k in _STARTED:
        if k in d:
            t = parse_time(d[k])
            if t is not None:
                return t
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


# --------------------------------------------------------------------------- traj records


def _gpt54(mu: dict, model: str | None) -> Call:
    prompt, completion = count(mu.get("prompt_tokens")), count(mu.get("completion_tokens"))
    if prompt == 0 and completion == 0:  # a server that exposes no counts writes 0 and 0
        prompt = completion = None
    usage = Usage(prompt, None, None, completion, None, None, "gpt54.model_usage")
    return Call("planning", None, model, usage, seconds(mu.get("model_time")), None,
                "gpt54.model_usage", _dumps(mu))  # fmt: skip


def _embedded(
    obj: dict, usage: Usage, model: str | None, rec: dict, stage_raw: str | None = None
) -> Call:
    """The call of usage object `obj` (read as `usage`) embedded in record or message `rec`."""
    stage = normalise_stage(stage_raw) if stage_raw else "planning"
    return Call(stage, stage_raw, model, usage, latency_of(rec), _started(rec), usage.format,
                _dumps(obj))  # fmt: skip


_USAGE_OBJECTS = ("usage", "token_usage")
"""Record keys that may hold a usage object itself."""
_RESPONSE_OBJECTS = ("response", "raw_response")
"""Record keys that may hold a provider response with its `usage`."""
_AGENT_S_COUNT = "num_input_tokens_"
"""Prefix of Agent S's per-module prompt counts (num_input_tokens_<module>)."""
_OBJECT_SOURCES = ("model_usage", *_USAGE_OBJECTS, *_RESPONSE_OBJECTS)
"""Every record key `record_calls` reads an object from."""
_AGENT_S_MARK = "\0" + _AGENT_S_COUNT
"""The Agent S prefix at the start of a key, in a record's keys joined with NULs."""


def record_calls(rec: dict) -> list[Call]:
    """The model calls one traj.jsonl record carries (before its keys are split into columns).

    At most one source per record is read, in this order, so one call is never counted twice:
    gpt54 `model_usage`; inspect-style `model_usage` (model -> usage); an embedded `usage` or
    `token_usage` object; a `response`/`raw_response` object holding `usage`; usage objects
    inside `messages`; Agent S info counts (num_input_tokens_<module>).
    """
    return [] if _carries_no_calls(rec) else _source_calls(rec)


def _source_calls(rec: dict) -> list[Call]:
    """`record_calls` without its shortcut: every source read in turn."""
    model = _str(rec.get("model"))
    mu = rec.get("model_usage")
    if isinstance(mu, dict) and mu:
        if any(k in mu for k in ("model_time", "prompt_tokens", "completion_tokens")):
            return [_gpt54(mu, model)]
        calls = [_embedded(v, u, name, rec) for name, v in mu.items() if (u := parse_usage(v))]
        if calls:
            return calls
    for key in _USAGE_OBJECTS:
        obj = rec.get(key)
        usage = parse_usage(obj)
        if usage is not None:
            return [_embedded(obj, usage, model, rec, _str(_get(rec, *_STAGE_KEYS)))]
    for key in _RESPONSE_OBJECTS:
        obj = rec.get(key)
        if isinstance(obj, dict):
            usage = parse_usage(obj.get("usage"))
            if usage is not None:
                return [_embedded(obj["usage"], usage, _str(obj.get("model")) or model, rec)]
    messages = rec.get("messages")
    if isinstance(messages, list):
        calls = [
            _embedded(m["usage"], u, _str(m.get("model")) or model, m)
            for m in messages
            if isinstance(m, dict) and (u := parse_usage(m.get("usage")))
        ]
        if calls:
            return calls
    return _agent_s_info(rec, model)


def _carries_no_calls(rec: dict) -> bool:
    """True when none of `record_calls`' sources can be in `rec`: no object under their keys,
    no `messages` list, no Agent S count. Most OSWorld records carry none (their `response`
    is text), and this check costs a fifth of reading through every source."""
    get = rec.get
    for key in _OBJECT_SOURCES:
        if isinstance(get(key), dict):
            return False
    if isinstance(get("messages"), list):
        return False
    # a key starting with the Agent S prefix, found in one string search rather than a call
    # per key (a key holding a NUL may match falsely: the full reading then finds no call)
    return _AGENT_S_MARK not in "\0" + "\0".join(rec)


def _agent_s_info(rec: dict, model: str | None) -> list[Call]:
    modules = [k[len(_AGENT_S_COUNT) :] for k in rec if k.startswith(_AGENT_S_COUNT)]
    calls = []
    for module in modules:
        prompt = count(rec.get(f"{_AGENT_S_COUNT}{module}"))
        completion = count(rec.get(f"num_output_tokens_{module}"))
        if not prompt and not completion:
            continue  # Agent S writes 0 and 0 for a module that made no call
        usage = Usage(prompt, None, None, completion, None, None, "agent_s.info")
        raw = {k: rec[k] for k in rec if k.endswith(f"_tokens_{module}")}
        calls.append(Call(normalise_stage(module), module, model, usage, None, None,
                          "agent_s.info", _dumps(raw)))  # fmt: skip
    return calls


def call_key(call: Call) -> tuple[Any, ...]:
    """What makes two records' calls the same call (a turn's lines repeat its usage)."""
    return (call.usage_format, call.model, call.stage_raw, call.usage_json, call.latency_s)


def record_timings(rec: dict) -> tuple[float | None, float | None]:
    """(screenshot seconds, action seconds) a record carries under the accepted keys; the keys
    found are removed from `rec` (they become columns), the others stay for `extra`."""
    if rec.keys().isdisjoint(_TIMING_KEYS):  # most records: one set operation, no loop
        return None, None
    out: list[float | None] = []
    for keys in (SCREENSHOT_KEYS, ACTION_KEYS):
        value = None
        for k in keys:
            if k in rec:
                v = seconds(rec[k])
                if v is not None:
                    del rec[k]
                    value = v
                    break
        out.append(value)
    return out[0], out[1]


# --------------------------------------------------------------------------- token_usage.json


def _entry_call(entry: dict, stage_hint: str | None, model_hint: str | None) -> Call | None:
    stage_raw = _str(_get(entry, *_STAGE_KEYS)) or stage_hint
    model = _str(_get(entry, *_MODEL_KEYS)) or model_hint
    obj: Any = None
    usage = None
    for key in ("usage", "token_usage", "usage_metadata", "tokens"):
        usage = parse_usage(entry.get(key))
        if usage is not None:
            obj = entry[key]
            break
    if usage is None:
        usage = parse_usage(entry)
        if usage is not None:
            obj = {k: v for k, v in entry.items() if isinstance(v, int | float | dict)}
    latency = latency_of(entry)
    if usage is None and latency is None:
        return None
    step = None
    for k in _STEP_KEYS:
        if k in entry and step_number(entry[k]) is not None:
            step = step_number(entry[k])
            break
    fmt = usage.format if usage is not None else "flat"
    return Call(normalise_stage(stage_raw), stage_raw, model, usage, latency, _started(entry),
                fmt, _dumps(obj if obj is not None else entry), step)  # fmt: skip


def _entries(data: Any) -> list[tuple[Any, str | None, str | None]]:
    """(entry, stage hint, model hint) triples of a token_usage.json document."""
    if isinstance(data, list):
        return [(e, None, None) for e in data]
    if not isinstance(data, dict):
        return [(data, None, None)]
    for key in _LIST_KEYS:
        if isinstance(data.get(key), list):
            return [(e, None, None) for e in data[key]]
    if parse_usage(data) is not None or latency_of(data) is not None:
        return [(data, None, None)]
    out: list[tuple[Any, str | None, str | None]] = []
    for name, value in data.items():
        if str(name).lower() in _TOTAL_KEYS or not isinstance(value, dict | list):
            continue  # totals and scalar metadata: the calls hold the numbers
        stage, model = (name, None) if _known_stage(name) else (None, name)
        items = value if isinstance(value, list) else [value]
        out.extend((e, stage, model) for e in items)
    return out


def _load(data: bytes) -> Any:
    """JSON with orjson when it can (several times faster on the tens of thousands of usage
    entries of a run), else the standard parser (a BOM, NaN, or a precise error message)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:  # lone surrogates, which orjson refuses, are replaced
        return scrub_surrogates(json.loads(data.decode("utf-8-sig")))


def file_calls(data: bytes) -> tuple[list[Call], list[UsageProblem]]:
    """The calls of a token_usage.json file, and what in it could not be read."""
    doc, problems = _document(data)
    return ([], problems) if problems else _entry_calls(doc)


def file_call_columns(data: bytes) -> tuple[CallColumns | list[Call], list[UsageProblem]]:
    """`file_calls`, as columns when the file is in the common form (`_entry_columns`): the
    same calls, read without a Call per entry; otherwise as `file_calls` gives them."""
    doc, problems = _document(data)
    if problems:
        return [], problems
    entries = _listed(doc)
    columns = _entry_columns(entries) if entries else None
    return (columns, []) if columns is not None else _entry_calls(doc)


def _document(data: bytes) -> tuple[Any, list[UsageProblem]]:
    try:
        return _load(data), []
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        text = data[:200].decode("utf-8", "backslashreplace")
        why = f"{USAGE_FILE} is not valid JSON ({parse_error(e)})"
        return None, [UsageProblem("invalid_json", why, text)]


def _entry_calls(doc: Any) -> tuple[list[Call], list[UsageProblem]]:
    calls: list[Call] = []
    problems: list[UsageProblem] = []
    for i, (entry, stage, model) in enumerate(_entries(doc)):
        call = _entry_call(entry, stage, model) if isinstance(entry, dict) else None
        if call is None:
            problems.append(
                UsageProblem(
                    "unrecognised_usage",
                    f"entry {i} of {USAGE_FILE} holds no token counts or latency this reader knows",
                    _dumps(entry)[:200],
                )
            )
            continue
        calls.append(call)
    return calls, problems


class CallColumns(NamedTuple):
    """Calls held as one list per Call and Usage field (what `call_columns` takes apart from
    Call tuples), for a file whose tens of thousands of entries are read a column at a time.
    Only made for at least one call."""

    stage: list[str]
    stage_raw: list[str | None]
    model: list[str | None]
    latency_s: list[float | None]
    started_at: list[datetime | None]
    usage_format: list[str]
    usage_json: list[str]
    step_num: list[int | None]
    prompt_tokens: list[int | None]
    cached_prompt_tokens: list[int | None]
    cache_write_tokens: list[int | None]
    completion_tokens: list[int | None]
    reasoning_tokens: list[int | None]
    reasoning_in_completion: list[bool | None]


class _NotCommon(Exception):
    """An entry list `_entry_columns` does not read (`_entry_call` reads it, entry by entry)."""


_USAGE_KEYS = ("usage", "token_usage", "usage_metadata", "tokens")
"""Entry keys that may hold the entry's usage object, in the order `_entry_call` tries them."""
_NOT_CHAT = frozenset(
    ("prompt_token_count", "candidates_token_count", "promptTokenCount", "candidatesTokenCount",
     "input_tokens_cache_read", "input_tokens_cache_write", "cache_read_input_tokens",
     "cache_creation_input_tokens")
)  # fmt: skip
"""Keys that make `parse_usage` read an object as another provider's before OpenAI Chat's."""


def _listed(doc: Any) -> list | None:
    """The entries of a document that lists them (`_entries` gives them no stage or model
    hint), else None."""
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict):
        for key in _LIST_KEYS:
            if isinstance(doc.get(key), list):
                return doc[key]
    return None


def _entry_columns(entries: list) -> CallColumns | None:
    """The calls of `entries` as columns, when every entry is a dict with the same keys whose
    usage object is OpenAI Chat usage (how Agent S-style runners write token_usage.json);
    None for any other list. Each column holds exactly what `_entry_call` gives entry by entry:
    its value comes from the first of the keys `_entry_call` tries that the entries hold, with
    the same conversion, and a list where that key would not decide every entry is declined.
    Whole columns are checked at once (a column of non-negative ints is already its counts),
    so most values are never looked at one by one in Python."""
    if set(map(type, entries)) != {dict}:
        return None
    shapes = set(map(tuple, entries))
    if len(shapes) != 1:
        return None
    keys = set(shapes.pop())
    try:
        usages = _column(entries, keys, _USAGE_KEYS, list)
        if usages is None or set(map(type, usages)) != {dict}:
            return None
        for shape in set(map(frozenset, usages)):
            if shape & _NOT_CHAT or not {"prompt_tokens", "completion_tokens"} & shape:
                return None
        stage_raw = _column(entries, keys, _STAGE_KEYS, _each(_str))
        model = _column(entries, keys, _MODEL_KEYS, _each(_str))
        latency = _column(entries, keys, _LATENCY_S + _LATENCY_MS, _each(seconds))
        if latency is not None and not keys & set(_LATENCY_S):  # milliseconds
            latency = [v / 1000.0 if v is not None else None for v in latency]
        started = _column(entries, keys, _STARTED, _each(parse_time))
        step = _column(entries, keys, _STEP_KEYS, _steps)
    except _NotCommon:
        return None
    n = len(entries)
    stages = {raw: normalise_stage(raw) for raw in set(stage_raw or [None])}
    get = dict.get
    return CallColumns(
        stage=[stages[raw] for raw in stage_raw] if stage_raw else [stages[None]] * n,
        stage_raw=stage_raw or [None] * n,
        model=model or [None] * n,
        latency_s=latency or [None] * n,
        started_at=started or [None] * n,
        usage_format=["openai.chat"] * n,
        usage_json=list(map(_dumps, usages)),
        step_num=step or [None] * n,
        prompt_tokens=_counts([get(u, "prompt_tokens") for u in usages]),
        cached_prompt_tokens=_counts([_sub(u, "prompt_tokens_details", "cached_tokens") for u in usages]),
        cache_write_tokens=[None] * n,
        completion_tokens=_counts([get(u, "completion_tokens") for u in usages]),
        reasoning_tokens=_counts([_sub(u, "completion_tokens_details", "reasoning_tokens") for u in usages]),
        reasoning_in_completion=[True] * n,
    )  # fmt: skip


def _column(
    entries: list, keys: set, options: tuple[str, ...], convert: Callable[[list], list]
) -> list | None:
    """`convert` (a column in, a column out) of the values of the first of `options` the
    entries hold (None when they hold none). `_entry_call` moves on to the next option for a
    value that converts to None: where another option is held, such a value declines the
    list."""
    held = [k for k in options if k in keys]
    if not held:
        return None
    out = convert(list(map(itemgetter(held[0]), entries)))
    if len(held) > 1 and None in out:
        raise _NotCommon
    return out


def _each(convert: Callable[[Any], Any]) -> Callable[[list], list]:
    """A column conversion applying `convert` value by value."""
    return lambda values: list(map(convert, values))


def _whole(values: list, top: int, one: Callable[[Any], int | None]) -> list[int | None]:
    """`one` of each value: a list of ints from 0 to `top` is its own result, checked whole
    (in C) rather than value by value."""
    if values and set(map(type, values)) == {int} and 0 <= min(values) <= max(values) <= top:
        return values
    return list(map(one, values))


def _counts(values: list) -> list[int | None]:
    """`count` of each value."""
    return _whole(values, _MAX_COUNT, count)


def _steps(values: list) -> list[int | None]:
    """`step_number` of each value."""
    return _whole(values, _MAX_STEP, step_number)


# --------------------------------------------------------------------------- rows


_NO_USAGE = Usage(None, None, None, None, None, None, "")


def call_columns(
    calls: list[Call] | CallColumns,
    *,
    run_id: str,
    benchmark: str,
    domain: str,
    task_id: str,
    first_step_idx: dict[int, int],
    source_file: str,
    line_nos: list[int | None] | None = None,
) -> dict[str, list[Any]]:
    """llm_calls columns (call_idx unset: the episode numbers them) for one source file's
    calls, taken from the calls in a few passes in C (`zip`), not a dict per call: a run
    has tens of thousands of calls (see `schemas.validate.ColumnRows`); calls read as
    columns already (`CallColumns`) are taken as they are.

    `first_step_idx` maps a turn (step_num) to the step_idx of its first step row.
    """
    n = len(calls.stage) if isinstance(calls, CallColumns) else len(calls)
    if not n:
        return {name: [] for name in _CALL_COLUMNS}
    if isinstance(calls, CallColumns):
        (stage, stage_raw, model, latency, started, fmt, usage_json, step,
         prompt, cached, write, completion, reasoning, in_completion) = calls  # fmt: skip
    else:
        stage, stage_raw, model, usage, latency, started, fmt, usage_json, step = zip(
            *calls, strict=True
        )
        prompt, cached, write, completion, reasoning, in_completion, _ = zip(
            *[u or _NO_USAGE for u in usage], strict=True
        )
    get = first_step_idx.get
    return {
        "run_id": [run_id] * n, "benchmark": [benchmark] * n, "domain": [domain] * n,
        "task_id": [task_id] * n,
        "step_num": list(step),
        "step_idx": [get(s) if s is not None else None for s in step],
        "stage": list(stage), "stage_raw": list(stage_raw), "model": list(model),
        "prompt_tokens": list(prompt),
        "cached_prompt_tokens": list(cached),
        "cache_write_tokens": list(write),
        "completion_tokens": list(completion),
        "reasoning_tokens": list(reasoning),
        "reasoning_in_completion": [
            b if r is not None else None for b, r in zip(in_completion, reasoning, strict=True)
        ],
        "latency_s": list(latency), "started_at": list(started),
        "usage_format": list(fmt), "source_file": [source_file] * n,
        "line_no": list(line_nos) if line_nos is not None else [None] * n,
        "usage_json": list(usage_json),
    }  # fmt: skip


_CALL_COLUMNS = (
    "run_id", "benchmark", "domain", "task_id", "step_num", "step_idx", "stage", "stage_raw",
    "model", "prompt_tokens", "cached_prompt_tokens", "cache_write_tokens",
    "completion_tokens", "reasoning_tokens", "reasoning_in_completion", "latency_s",
    "started_at", "usage_format", "source_file", "line_no", "usage_json",
)  # fmt: skip


def call_rows(calls: list[Call], **where: Any) -> list[dict[str, Any]]:
    """`call_columns` (the same keywords) as one dict per call, for readers that make a few
    calls at a time."""
    from deskscore.schemas.validate import ColumnRows

    return list(ColumnRows(call_columns(calls, **where)))


__all__ = [
    "ACTION_KEYS",
    "SCREENSHOT_KEYS",
    "STAGES",
    "USAGE_FILE",
    "Call",
    "CallColumns",
    "Usage",
    "UsageProblem",
    "call_columns",
    "call_key",
    "call_rows",
    "count",
    "file_call_columns",
    "file_calls",
    "latency_of",
    "normalise_stage",
    "parse_time",
    "parse_usage",
    "record_calls",
    "record_timings",
    "seconds",
]

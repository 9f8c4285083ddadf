"""Model-call usage and step timing, read from every shape runners archive them in."""

from __future__ import annotations

import itertools
import json
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deskscore.collectors.layout import discover
from deskscore.collectors.osworld import EpisodeCalls, read_episode, read_episode_calls
from deskscore.collectors.source import open_source
from deskscore.collectors.synthetic import load_profiles, write_run
from deskscore.collectors.usage import (
    CallColumns,
    call_columns,
    file_call_columns,
    file_calls,
    normalise_stage,
    parse_usage,
    record_calls,
)
from deskscore.schemas import conform_rows
from deskscore.schemas.validate import conform_columns

TASK = "0a1b2c3d-1111-4222-8333-444455556666"


def line(step: int, stamp: str | None, action: str = "pyautogui.click(1, 2)", **kw: object) -> str:
    record: dict[str, object] = {"step_num": step, "action": action, "reward": 0, "done": False,
                                 "info": {}, "screenshot_file": f"step_{step}.png"}  # fmt: skip
    if stamp is not None:
        record["action_timestamp"] = stamp
    record.update(kw)
    return json.dumps(record)


def read_task(
    tmp_path: Path, lines: list[str], extra: dict[str, str] | None = None
) -> EpisodeCalls:
    """Write one OSWorld task folder and read it fully (episode, steps, quarantine, calls)."""
    folder = tmp_path / "run" / "chrome" / TASK
    folder.mkdir(parents=True)
    (folder / "traj.jsonl").write_text("".join(x + "\n" for x in lines))
    (folder / "result.txt").write_text("1\n")
    for name, text in (extra or {}).items():
        (folder / name).write_text(text)
    src = open_source(str(tmp_path / "run"))
    [run] = discover(src.files(), None)
    [task] = run.tasks
    out = read_episode_calls(src, run, task, run_id="r", benchmark="osworld")
    conform_rows("llm_calls", out.llm_calls)
    conform_rows("steps", out.read.steps)
    conform_rows("quarantine", out.read.quarantine)
    light = read_episode(src, run, task, run_id="r", benchmark="osworld", steps=False)
    assert light.episode == out.read.episode and light.quarantine == out.read.quarantine
    return out


# --------------------------------------------------------------------------- usage objects


def test_openai_chat_usage_counts_cached_and_reasoning_tokens_inside_the_totals() -> None:
    u = parse_usage(
        {
            "prompt_tokens": 5000,
            "completion_tokens": 900,
            "total_tokens": 5900,
            "prompt_tokens_details": {"cached_tokens": 4096},
            "completion_tokens_details": {"reasoning_tokens": 600},
        }
    )
    assert u is not None
    assert (u.prompt_tokens, u.cached_prompt_tokens, u.cache_write_tokens) == (5000, 4096, None)
    assert (u.completion_tokens, u.reasoning_tokens, u.reasoning_in_completion) == (900, 600, True)
    assert u.format == "openai.chat"


def test_openai_responses_usage_is_read_with_its_own_field_names() -> None:
    u = parse_usage(
        {
            "input_tokens": 3000,
            "output_tokens": 200,
            "total_tokens": 3200,
            "input_tokens_details": {"cached_tokens": 2048},
            "output_tokens_details": {"reasoning_tokens": 150},
        }
    )
    assert u is not None and u.format == "openai.responses"
    assert (u.prompt_tokens, u.cached_prompt_tokens, u.completion_tokens, u.reasoning_tokens) == (
        3000, 2048, 200, 150,
    )  # fmt: skip


def test_anthropic_input_tokens_exclude_the_cache_so_the_prompt_adds_them_back() -> None:
    u = parse_usage(
        {
            "input_tokens": 12,
            "cache_read_input_tokens": 40000,
            "cache_creation_input_tokens": 1800,
            "output_tokens": 310,
        }
    )
    assert u is not None and u.format == "anthropic"
    assert (u.prompt_tokens, u.cached_prompt_tokens, u.cache_write_tokens) == (41812, 40000, 1800)
    assert u.completion_tokens == 310


def test_inspect_ai_model_usage_excludes_cache_tokens_from_input_tokens() -> None:
    u = parse_usage(
        {
            "input_tokens": 100,
            "output_tokens": 50,
            "total_tokens": 1350,
            "input_tokens_cache_read": 1000,
            "input_tokens_cache_write": 200,
            "reasoning_tokens": 20,
            "total_cost": None,
        }
    )
    assert u is not None and u.format == "inspect_ai"
    assert (u.prompt_tokens, u.cached_prompt_tokens, u.cache_write_tokens) == (1300, 1000, 200)
    assert (u.reasoning_tokens, u.reasoning_in_completion) == (20, True)


def test_gemini_reports_thoughts_apart_from_the_candidates() -> None:
    u = parse_usage(
        {
            "prompt_token_count": 8000,
            "cached_content_token_count": 6000,
            "candidates_token_count": 120,
            "thoughts_token_count": 900,
            "total_token_count": 9020,
        }
    )
    assert u is not None and u.format == "gemini"
    assert (u.prompt_tokens, u.cached_prompt_tokens, u.completion_tokens) == (8000, 6000, 120)
    assert (u.reasoning_tokens, u.reasoning_in_completion) == (900, False)


@pytest.mark.parametrize(
    "obj", [None, "usage", [], {}, {"tokens": 5}, {"prompt_tokens": -3, "completion_tokens": "x"}]
)
def test_what_is_not_a_usage_object_or_not_a_count_is_not_invented(obj: object) -> None:
    u = parse_usage(obj)
    assert u is None or (u.prompt_tokens is None and u.completion_tokens is None)


def test_stage_names_of_the_sources_map_to_the_stages() -> None:
    cases = {
        "generator": "planning", "worker": "planning", "Manager": "planning",
        "reflection_agent": "reflection", "judge": "judging", "evaluator": "judging",
        "grounding": "grounding", "web_search": "retrieval", "narrator": "other", None: "other",
        "ReflectionAgent": "reflection", "rag_retriever": "retrieval", "dag_planner": "planning",
        "drag_helper": "other", "explanation": "other", "code_agent": "other",
    }  # fmt: skip
    assert {k: normalise_stage(k) for k in cases} == cases


# --------------------------------------------------------------------------- traj records


def test_gpt54_model_usage_repeated_on_a_turns_lines_is_one_call(tmp_path: Path) -> None:
    mu1 = {"model_time": 6.25, "prompt_tokens": 3100, "completion_tokens": 240}
    mu2 = {"model_time": 7.5, "prompt_tokens": 4900, "completion_tokens": 180}
    msgs = [{"type": "reasoning", "id": "rs_1", "summary": []}]
    out = read_task(
        tmp_path,
        [
            line(1, "20250601@100006", state_correct=True, model_usage=mu1, messages=msgs),
            line(1, "20250601@100008", state_correct=True, model_usage=mu1, messages=msgs),
            line(2, "20250601@100017", state_correct=True, model_usage=mu2, messages=msgs),
        ],
    )
    calls = out.llm_calls
    assert [(c["step_num"], c["step_idx"], c["line_no"]) for c in calls] == [(1, 0, 1), (2, 2, 3)]
    assert [(c["prompt_tokens"], c["completion_tokens"], c["latency_s"]) for c in calls] == [
        (3100, 240, 6.25), (4900, 180, 7.5),
    ]  # fmt: skip
    assert {c["stage"] for c in calls} == {"planning"}
    assert {c["usage_format"] for c in calls} == {"gpt54.model_usage"}
    assert all(c["model"] is None and c["cached_prompt_tokens"] is None for c in calls)
    assert [c["call_idx"] for c in calls] == [0, 1]
    # the record keeps model_usage and messages verbatim in extra
    assert json.loads(out.read.steps[0]["extra"])["model_usage"] == mu1


def test_a_runner_that_exposes_no_counts_keeps_its_latency_and_no_tokens(tmp_path: Path) -> None:
    mu = {"model_time": 3.0, "prompt_tokens": 0, "completion_tokens": 0}
    [call] = read_task(tmp_path, [line(1, "20250601@100003", model_usage=mu)]).llm_calls
    assert (call["prompt_tokens"], call["completion_tokens"], call["latency_s"]) == (
        None,
        None,
        3.0,
    )


def test_embedded_api_usage_objects_are_read_wherever_the_record_holds_them(
    tmp_path: Path,
) -> None:
    anthropic = {"input_tokens": 5, "cache_read_input_tokens": 900, "output_tokens": 40}
    chat = {"prompt_tokens": 700, "completion_tokens": 30}
    inspect = {"claude-sonnet-4-5": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                                     "input_tokens_cache_read": 100}}  # fmt: skip
    out = read_task(
        tmp_path,
        [
            line(1, "20250601@100000", usage=anthropic, model="claude-sonnet-4-5-20250929"),
            line(1, "20250601@100001", usage=anthropic, model="claude-sonnet-4-5-20250929"),
            line(2, "20250601@100005", response={"model": "gpt-4o", "usage": chat}),
            line(3, "20250601@100009", messages=[{"role": "assistant", "usage": chat}, "x"]),
            line(4, "20250601@100012", model_usage=inspect),
            line(5, "20250601@100015", num_input_tokens_plan=800, num_output_tokens_plan=90,
                 num_input_tokens_evaluator=0, num_output_tokens_evaluator=0),
        ],
    )  # fmt: skip
    got = [
        (c["step_num"], c["usage_format"], c["model"], c["prompt_tokens"], c["stage"])
        for c in out.llm_calls
    ]
    assert got == [
        (1, "anthropic", "claude-sonnet-4-5-20250929", 905, "planning"),
        (2, "openai.chat", "gpt-4o", 700, "planning"),
        (3, "openai.chat", None, 700, "planning"),
        (4, "inspect_ai", "claude-sonnet-4-5", 110, "planning"),
        (5, "agent_s.info", None, 800, "planning"),
    ]


def test_a_record_without_usage_gives_no_call() -> None:
    assert record_calls({"action": "WAIT", "response": "waiting", "info": {}}) == []


_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_keys = st.sampled_from(
    ["usage", "model_usage", "messages", "model", "prompt_tokens", "completion_tokens",
     "input_tokens", "output_tokens", "cache_read_input_tokens", "model_time", "latency_s",
     "latency_ms", "started_at", "step", "module", "calls", "total", "num_input_tokens_plan",
     "prompt_tokens_details", "cached_tokens", "thoughts_token_count", "x"]
)  # fmt: skip
_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_keys, _values, max_size=6))
def test_no_record_makes_the_usage_reader_raise(rec: dict) -> None:
    for call in record_calls(rec):
        u = call.usage
        counts = () if u is None else (u.prompt_tokens, u.completion_tokens, u.cached_prompt_tokens)
        assert all(v is None or (type(v) is int and v >= 0) for v in counts)
        assert call.latency_s is None or call.latency_s >= 0


_record_keys = _keys | st.sampled_from(
    ["token_usage", "response", "raw_response", "num_input_tokens_grounding",
     "num_output_tokens_grounding", "action", "reward", "info"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_record_keys, _values, max_size=8))
def test_the_no_call_shortcut_never_hides_a_call(rec: dict) -> None:
    """A record the shortcut skips holds no call when every source is read."""
    from deskscore.collectors.usage import _carries_no_calls, _source_calls

    if _carries_no_calls(rec):
        assert _source_calls(dict(rec)) == []
    else:
        assert record_calls(dict(rec)) == _source_calls(dict(rec))


def test_the_no_call_shortcut_skips_plain_osworld_records() -> None:
    from deskscore.collectors.usage import _carries_no_calls

    plain = {"step_num": 1, "action": "pyautogui.click(1, 2)", "response": "I click.",
             "reward": 0, "done": False, "info": {}, "screenshot_file": "s.png"}  # fmt: skip
    assert _carries_no_calls(plain)
    for key, value in [("usage", {}), ("response", {"usage": {}}), ("messages", []),
                       ("num_input_tokens_plan", 3)]:  # fmt: skip
        assert not _carries_no_calls({**plain, key: value})


@settings(max_examples=200, deadline=None)
@given(_values)
def test_no_token_usage_file_makes_the_reader_raise(doc: object) -> None:
    try:
        data = json.dumps(doc).encode()
    except ValueError:
        return
    calls, problems = file_calls(data)
    assert all(p.reason in ("invalid_json", "unrecognised_usage") for p in problems)
    assert all(c.usage is not None or c.latency_s is not None for c in calls)


# --------------------------------------------------------------------------- token_usage.json


S3_CALLS = [
    {"step": 1, "module": "generator", "model": "gpt-5-2025-08-07",
     "started_at": "2025-06-01T10:00:00.000", "latency_s": 5.5,
     "usage": {"prompt_tokens": 5300, "completion_tokens": 800,
               "prompt_tokens_details": {"cached_tokens": 0},
               "completion_tokens_details": {"reasoning_tokens": 480}}},
    {"step": 1, "module": "grounding", "model": "gpt-5-mini-2025-08-07", "latency_s": 0.4,
     "usage": {"prompt_tokens": 1520, "completion_tokens": 20}},
    {"step": 2, "module": "reflection", "model": "gpt-5-2025-08-07", "latency_ms": 2500,
     "usage": {"prompt_tokens": 3500, "completion_tokens": 300,
               "prompt_tokens_details": {"cached_tokens": 2304}}},
]  # fmt: skip


def test_agent_s3_token_usage_json_gives_one_call_per_entry_and_skips_the_totals(
    tmp_path: Path,
) -> None:
    doc = {"calls": S3_CALLS, "total": {"prompt_tokens": 10320, "completion_tokens": 1120}}
    mu = {"model_time": 9.0, "prompt_tokens": 1, "completion_tokens": 1}
    out = read_task(
        tmp_path,
        [line(1, "20250601@100006", model_usage=mu), line(2, "20250601@100012", model_usage=mu)],
        {"token_usage.json": json.dumps(doc)},
    )
    calls = out.llm_calls
    assert [(c["step_num"], c["step_idx"], c["stage"], c["stage_raw"]) for c in calls] == [
        (1, 0, "planning", "generator"), (1, 0, "grounding", "grounding"),
        (2, 1, "reflection", "reflection"),
    ]  # fmt: skip
    assert [c["latency_s"] for c in calls] == [5.5, 0.4, 2.5]
    assert calls[0]["started_at"] == datetime(2025, 6, 1, 10, 0, 0)
    assert [c["cached_prompt_tokens"] for c in calls] == [0, None, 2304]
    assert calls[0]["reasoning_tokens"] == 480 and calls[0]["reasoning_in_completion"] is True
    # the file is the episode's record: the traj's model_usage is not counted a second time
    assert {c["source_file"] for c in calls} == {f"chrome/{TASK}/token_usage.json"}
    assert sum(c["prompt_tokens"] for c in calls) == doc["total"]["prompt_tokens"]


def _one_dict_per_call(calls: list, first_step_idx: dict, **keys: object) -> list[dict]:
    """The llm_calls rows as a dict per call, field by field from each Call: the rule the
    columns must keep."""
    rows = []
    for c in calls:
        u = c.usage
        rows.append({
            **keys, "step_num": c.step_num,
            "step_idx": first_step_idx.get(c.step_num) if c.step_num is not None else None,
            "stage": c.stage, "stage_raw": c.stage_raw, "model": c.model,
            "prompt_tokens": u.prompt_tokens if u else None,
            "cached_prompt_tokens": u.cached_prompt_tokens if u else None,
            "cache_write_tokens": u.cache_write_tokens if u else None,
            "completion_tokens": u.completion_tokens if u else None,
            "reasoning_tokens": u.reasoning_tokens if u else None,
            "reasoning_in_completion": (
                u.reasoning_in_completion if u and u.reasoning_tokens is not None else None
            ),
            "latency_s": c.latency_s, "started_at": c.started_at,
            "usage_format": c.usage_format, "line_no": None, "usage_json": c.usage_json,
        })  # fmt: skip
    return rows


def test_a_files_calls_become_columns_holding_what_a_dict_per_call_holds() -> None:
    entries = [*S3_CALLS, {"module": "executor", "latency_s": 1.5},  # latency, no usage
               {"step": 3, "usage": {"input_tokens": 7, "output_tokens": 2}},
               {"step": 9, "model": "m", "usage": {"prompt_tokens": 4, "completion_tokens": 1,
                "completion_tokens_details": {"reasoning_tokens": None}}}]  # fmt: skip
    calls, problems = file_calls(json.dumps({"calls": entries}).encode())
    assert not problems and len(calls) == len(entries)
    keys = {"run_id": "r", "benchmark": "osworld", "domain": "chrome", "task_id": TASK,
            "source_file": "f"}  # fmt: skip
    first = {1: 0, 2: 3}
    columns = call_columns(calls, first_step_idx=first, **keys)
    columns["call_idx"] = list(range(len(calls)))
    rows = [{**r, "call_idx": i} for i, r in enumerate(_one_dict_per_call(calls, first, **keys))]
    assert (
        conform_columns("llm_calls", columns).to_pylist()
        == conform_rows("llm_calls", rows).to_pylist()
    )
    assert columns["step_idx"] == [0, 0, 3, None, None, None]
    assert columns["reasoning_in_completion"] == [True, None, None, None, None, None]
    assert call_columns([], first_step_idx={}, **keys)["usage_json"] == []


def test_an_episodes_calls_come_as_columns_until_read_as_rows(tmp_path: Path) -> None:
    """A task folder's calls reach ingest as columns (no dict per call); read as a list they
    are the numbered rows they always were, whether from the usage file or the traj."""
    doc = {"calls": S3_CALLS}
    out = read_task(tmp_path / "file", [line(1, "20250601@100006")],
                    {"token_usage.json": json.dumps(doc)})  # fmt: skip
    mu = {"model_time": 9.0, "prompt_tokens": 5, "completion_tokens": 1}
    traj = read_task(tmp_path / "traj", [line(1, "20250601@100006", model_usage=mu),
                                         line(2, "20250601@100012", model_usage=mu)])  # fmt: skip
    for folder, got, n, source in ((tmp_path / "file", out, 3, "token_usage.json"),
                                   (tmp_path / "traj", traj, 2, "traj.jsonl")):  # fmt: skip
        src = open_source(str(folder / "run"))
        [run] = discover(src.files(), None)
        fresh = read_episode_calls(src, run, run.tasks[0], run_id="r", benchmark="osworld")
        assert fresh.llm_calls.columns is not None
        assert conform_columns("llm_calls", fresh.llm_calls.columns).equals(
            conform_rows("llm_calls", list(got.llm_calls))
        )
        assert [c["call_idx"] for c in got.llm_calls] == list(range(n))
        assert {c["source_file"] for c in got.llm_calls} == {f"chrome/{TASK}/{source}"}
    assert [c["line_no"] for c in traj.llm_calls] == [1, 2]


_WHERE = {"run_id": "r", "benchmark": "osworld", "domain": "chrome", "task_id": TASK,
          "source_file": "f", "first_step_idx": {1: 0, 2: 3}}  # fmt: skip


def _typed(calls: object) -> dict[str, list[tuple[str, object]]]:
    """llm_calls columns of `calls` with each value's type beside it (1 == 1.0 == True)."""
    columns = call_columns(calls, **_WHERE)  # type: ignore[arg-type]
    return {k: [(type(v).__name__, v) for v in col] for k, col in columns.items()}


def test_a_usage_file_in_the_common_form_is_read_as_columns_holding_its_calls() -> None:
    entries = [
        {"step": i // 2 + 1, "module": ("generator", "grounding")[i % 2], "model": "gpt-5",
         "started_at": f"2025-06-01T10:00:{i:02d}.250", "latency_s": 0.5 + i,
         "usage": {"prompt_tokens": 900 + i, "completion_tokens": 40,
                   "prompt_tokens_details": {"cached_tokens": 512 * (i % 2)},
                   "completion_tokens_details": {"reasoning_tokens": i}}}
        for i in range(6)
    ]  # fmt: skip
    data = json.dumps({"calls": entries}).encode()
    columns, problems = file_call_columns(data)
    calls, _ = file_calls(data)
    assert isinstance(columns, CallColumns) and not problems and len(calls) == 6
    assert _typed(columns) == _typed(calls)
    assert columns.stage[:2] == ["planning", "grounding"] and columns.step_num[:3] == [1, 1, 2]
    # entries whose keys differ, or a second latency key a None would fall through to, are
    # read entry by entry: the same calls
    for odd in ({**entries[0], "note": 1}, {**entries[0], "latency_s": None, "latency_ms": 7}):
        got, _ = file_call_columns(json.dumps({"calls": [*entries, odd]}).encode())
        assert isinstance(got, list)
        assert _typed(got) == _typed(file_calls(json.dumps({"calls": [*entries, odd]}).encode())[0])


_ODD_COUNTS = (0, 5, -1, 2.0, 2.5, None, True, "3", 2**63 - 1, 2**63, 1e19)
_USAGES = st.one_of(
    st.fixed_dictionaries(
        {"prompt_tokens": st.sampled_from(_ODD_COUNTS),
         "completion_tokens": st.sampled_from(_ODD_COUNTS)},
        optional={"prompt_tokens_details": st.one_of(
                      st.fixed_dictionaries({"cached_tokens": st.sampled_from(_ODD_COUNTS)}),
                      st.sampled_from([None, 3, {}])),
                  "completion_tokens_details": st.fixed_dictionaries(
                      {"reasoning_tokens": st.sampled_from(_ODD_COUNTS)}),
                  "total_tokens": st.sampled_from(_ODD_COUNTS)},
    ),
    st.sampled_from([{"input_tokens": 3, "output_tokens": 1}, {"completion_tokens": 2},
                     {"cache_read_input_tokens": 1, "prompt_tokens": 3},
                     {"prompt_token_count": 4}, {}, None, "x", 7]),
)  # fmt: skip
_VALUES = {
    "stage": st.sampled_from(["planner", "reflection_agent", "", None, 5, "Grounding"]),
    "module": st.sampled_from(["generator", "worker", None, ""]),
    "agent": st.sampled_from(["judge", None]),
    "model": st.sampled_from(["gpt-5", "", None, 4]),
    "model_name": st.sampled_from(["claude", None]),
    "usage": _USAGES,
    "token_usage": _USAGES,
    "latency_s": st.sampled_from([1.5, 0, 3, -1, None, "2", float("inf"), 10**400]),
    "latency": st.sampled_from([2.5, None, -2]),
    "latency_ms": st.sampled_from([1500, 0.5, None, -3]),
    "duration_ms": st.sampled_from([20, None]),
    "started_at": st.sampled_from(
        ["2025-07-08T14:23:20.013", "2025-07-08T14:23:20Z", " 2025-07-08T14:23:20 ",
         "20250708@142320", "2025-07-08T14:23:20+02:00", "bad", "20250708", 1751984600,
         1751984600123, -5, None]),
    "timestamp": st.sampled_from(["2025-07-08 14:23:21", None, 0]),
    "step": st.sampled_from([1, 2, 0, -1, 2.0, 2.5, None, "3", True]),
    "turn": st.sampled_from([4, None]),
}  # fmt: skip


@st.composite
def _usage_documents(draw: st.DrawFn) -> object:
    keys = draw(st.lists(st.sampled_from(sorted(_VALUES)), min_size=1, unique=True))
    if "usage" not in keys and draw(st.booleans()):
        keys.append("usage")  # the common form (the columns) more often
    common = draw(st.booleans())  # one value per key for all entries, as runners write them
    fixed = {k: draw(_VALUES[k]) for k in keys}
    entries: list[object] = []
    for _ in range(draw(st.integers(1, 6))):
        entry = dict(fixed) if common else {k: draw(_VALUES[k]) for k in keys}
        if draw(st.integers(0, 9)) == 0:
            entry = dict(reversed(entry.items()))  # the same keys in another order
        entries.append(entry if draw(st.integers(0, 19)) else "not an entry")
    return draw(st.sampled_from([{"calls": entries}, entries, {"records": entries, "total": 1}]))


@settings(max_examples=400, deadline=None)
@given(_usage_documents())
def test_a_usage_file_gives_the_same_calls_read_as_columns_or_entry_by_entry(doc: object) -> None:
    data = json.dumps(doc).encode()
    columns, problems = file_call_columns(data)
    calls, expected = file_calls(data)
    assert problems == expected
    assert _typed(columns) == _typed(calls)


def test_token_usage_keyed_by_stage_or_by_model_is_read_too() -> None:
    by_stage = {"planner": [S3_CALLS[0]["usage"]], "reflection": {"prompt_tokens": 10,
                "completion_tokens": 2}, "total_cost": 1.5}  # fmt: skip
    calls, problems = file_calls(json.dumps(by_stage).encode())
    assert not problems
    assert [(c.stage, c.model, c.usage.prompt_tokens) for c in calls] == [  # type: ignore[union-attr]
        ("planning", None, 5300), ("reflection", None, 10),
    ]  # fmt: skip
    by_model = {"gpt-4o": {"prompt_tokens": 900, "completion_tokens": 40}}
    [call], problems = file_calls(json.dumps(by_model).encode())
    assert not problems and (call.model, call.stage, call.step_num) == ("gpt-4o", "other", None)


def test_a_broken_token_usage_file_is_quarantined_and_the_rest_still_read(tmp_path: Path) -> None:
    doc = [S3_CALLS[0], "not an entry", {"step": 2, "note": "no numbers"}]
    out = read_task(tmp_path, [line(1, "20250601@100006")], {"token_usage.json": json.dumps(doc)})
    assert len(out.llm_calls) == 1
    bad = [q for q in out.read.quarantine if q["location"].endswith("token_usage.json")]
    assert [q["reason"] for q in bad] == ["unrecognised_usage", "unrecognised_usage"]
    assert "entry 1 of token_usage.json" in bad[0]["message"]
    assert bad[0]["message"].startswith(f"{open_source(str(tmp_path / 'run')).uri}!chrome/{TASK}")


def test_a_token_usage_file_that_is_not_json_is_one_quarantine_row(tmp_path: Path) -> None:
    out = read_task(tmp_path, [line(1, "20250601@100006")], {"token_usage.json": '{"calls": ['})
    assert out.llm_calls == []
    [bad] = out.read.quarantine
    assert (bad["reason"], bad["location"]) == ("invalid_json", f"chrome/{TASK}/token_usage.json")
    assert "fix it and re-ingest" in bad["message"]


# --------------------------------------------------------------------------- step timing


def test_dt_s_is_the_gap_to_the_previous_timestamp_and_null_without_one(tmp_path: Path) -> None:
    steps = read_task(
        tmp_path,
        [
            line(1, "20250601@100000"),
            line(1, "20250601@100002500000"),
            line(2, "20250601@100011"),
            line(3, None),
            line(4, "20250601@100030"),
            line(5, "not a time"),
        ],
    ).read.steps
    assert [s["dt_s"] for s in steps] == [None, 2.5, 8.5, None, None, None]


def test_recorded_screenshot_and_action_durations_fill_their_columns(tmp_path: Path) -> None:
    steps = read_task(
        tmp_path,
        [
            line(1, "20250601@100000", screenshot_time=0.8, execution_time=1.25),
            line(2, "20250601@100005", screenshot_s="slow", action_s=-1),
        ],
    ).read.steps
    assert [(s["screenshot_s"], s["action_s"]) for s in steps] == [(0.8, 1.25), (None, None)]
    assert "screenshot_time" not in (steps[0]["extra"] or "")
    assert json.loads(steps[1]["extra"]) == {"screenshot_s": "slow", "action_s": -1}


def test_dt_s_of_the_real_claude_runs_is_the_difference_of_their_timestamps(
    sec_eval_dir: Path,
) -> None:
    src = open_source(str(sec_eval_dir))
    [run] = discover(src.files(), "{domain}/{task_id}")
    checked = 0
    for task in run.tasks:
        steps = read_episode(src, run, task, run_id="sec", benchmark="osworld-sec-eval").steps
        records = [
            json.loads(x)
            for x in (sec_eval_dir / task.path / "traj.jsonl").read_text().splitlines()
            if x.strip()
        ]
        stamps = [
            datetime.strptime(r["action_timestamp"], "%Y%m%d@%H%M%S")
            if "action_timestamp" in r
            else None
            for r in records
        ]
        expected = [None] + [
            (b - a).total_seconds() if a is not None and b is not None else None
            for a, b in itertools.pairwise(stamps)
        ]
        assert [s["dt_s"] for s in steps] == expected, task.path
        checked += sum(1 for e in expected if e is not None)
    assert checked > 200


# --------------------------------------------------------------------------- the generator


def test_generated_runners_write_usage_in_their_real_shapes(tmp_path: Path) -> None:
    profiles = {p.name: p for p in load_profiles()}
    tasks = [{"domain": "chrome", "task_id": TASK, "single_steps": 6, "infeasible": False}]
    formats = {}
    for name in ("atlas-swift", "atlas-deliberate", "claw-cu", "loopy-7b"):
        root = write_run(tmp_path / name, profiles[name], tasks, seed=3)
        src = open_source(str(root))
        [run] = discover(src.files(), None)
        reads = [read_episode_calls(src, run, t, run_id=name, benchmark="b") for t in run.tasks]
        calls = [c for r in reads for c in r.llm_calls]
        conform_rows("llm_calls", calls)
        formats[name] = {(c["usage_format"], c["stage"]) for c in calls}
        turns = {s["step_num"] for r in reads for s in r.read.steps if s["step_num"]}
        if profiles[name].usage in ("gpt54", "anthropic"):  # one call per turn
            assert sorted(c["step_num"] for c in calls) == sorted(turns), name
    assert formats["atlas-swift"] == {("gpt54.model_usage", "planning")}
    assert formats["claw-cu"] == {("anthropic", "planning")}
    assert {s for _, s in formats["atlas-deliberate"]} <= {"planning", "reflection", "grounding"}
    assert ("openai.chat", "planning") in formats["atlas-deliberate"]
    assert formats["loopy-7b"] == set()


def test_a_generated_prompt_carries_the_history_so_it_grows_by_a_fixed_step(
    tmp_path: Path,
) -> None:
    profile = next(p for p in load_profiles() if p.usage == "gpt54")
    tasks = [{"domain": "os", "task_id": TASK, "single_steps": 30, "infeasible": False}]
    root = write_run(tmp_path, profile, tasks, seed=1)
    src = open_source(str(root))
    [run] = discover(src.files(), None)
    [task] = run.tasks
    calls = read_episode_calls(src, run, task, run_id="r", benchmark="b").llm_calls
    assert len(calls) > 10
    for c in calls:  # 2600 base tokens, the history, and up to 120 of jitter
        extra = c["prompt_tokens"] - 2600 - profile.history_tokens * (c["step_num"] - 1)
        assert 0 <= extra <= 120

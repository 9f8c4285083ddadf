"""UI-TARS submission folders (`<task>/data.json` + `<task>/meta.json`) to episode and step rows.

The format is only known through OSWorld-Human's reader: data.json is a list of steps whose
length is t_agent, the score is `data[-1]["inner_step"][0]["score"]`, and meta.json holds the
instruction as `query` (tasks are keyed by instruction text, not id). Everything else in a step
is unknown, so each element is kept whole in `extra` and the action is looked for under the
usual key names, at the top level or in its `inner_step` entries.
"""

from __future__ import annotations

import json
from typing import Any

from deskscore.collectors.actions import action_rows, parse_action
from deskscore.collectors.json_text import scrub_surrogates
from deskscore.collectors.layout import RunFolder, TaskFolder
from deskscore.collectors.osworld import (
    EpisodeRead,
    QuarantineRows,
    as_int32,
    dumps_compact,
    dumps_json,
    parse_result,
    summarise,
)
from deskscore.collectors.source import Source, SourceError, read_document
from deskscore.collectors.timestamps import parse_action_timestamp

_ACTION_KEYS = ("action", "actions", "action_text", "code", "command", "prediction", "pyautogui")
_SHOT_KEYS = ("screenshot_file", "screenshot", "image", "screenshot_path")
_TS_KEYS = ("action_timestamp", "timestamp", "time")
_TODO = "fix the file and re-ingest"


def _find(element: Any, keys: tuple[str, ...]) -> Any:
    """First value under one of `keys`, in the element itself, then in its inner_step entries."""
    if not isinstance(element, dict):
        return None
    for k in keys:
        if element.get(k) is not None:
            return element[k]
    inner = element.get("inner_step")
    if isinstance(inner, list):
        for sub in inner:
            if isinstance(sub, dict):
                for k in keys:
                    if sub.get(k) is not None:
                        return sub[k]
    return None


def _load(source: Source, path: str, q: QuarantineRows) -> tuple[bool, Any]:
    try:
        data = read_document(source, path)
    except SourceError as e:
        q.add(path, None, e.reason, e.message, "repair the archive and re-ingest", path)
        return False, None
    try:
        text = data.decode("utf-8")
        obj = json.loads(text)
        return True, scrub_surrogates(obj) if "\\u" in text else obj
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        q.add(path, None, "invalid_json", f"not valid UTF-8 JSON ({e})", _TODO,
              data[:200].decode("utf-8", "backslashreplace"))  # fmt: skip
        return False, None


def _result(data: list, path: str, q: QuarantineRows) -> tuple[str | None, float | None, str]:
    """The score OSWorld-Human reads: data[-1]["inner_step"][0]["score"]."""
    if not data:
        q.add(path, None, "empty_result", "data.json is an empty list, it holds no score",
              "the episode keeps result_status 'empty'", "[]")  # fmt: skip
        return None, None, "empty"
    try:
        value = data[-1]["inner_step"][0]["score"]
    except (KeyError, IndexError, TypeError):
        q.add(path, None, "unparseable_result", 'no data[-1]["inner_step"][0]["score"] in '
              "data.json", "the episode keeps result_status 'unparseable'",
              dumps_json(data[-1])[:200])  # fmt: skip
        return None, None, "unparseable"
    if isinstance(value, bool):
        return str(value), float(value), "ok"
    raw = value if isinstance(value, str) else dumps_json(value)
    if isinstance(value, int | float | str):
        raw, score, status = parse_result(raw)
        if status == "ok":
            return raw, score, status
    q.add(path, None, "unparseable_result", f"score {raw!r} is not a finite number",
          "the episode keeps result_status 'unparseable'", raw)  # fmt: skip
    return raw, None, "unparseable"


def _step_row(
    element: Any, idx: int, *, task: TaskFolder, files: set[str], base: dict, actions: list[dict]
) -> dict:
    """One element's STEPS row; its STEP_ACTIONS rows are appended to `actions`."""
    act = parse_action(_find(element, _ACTION_KEYS))
    el = element if isinstance(element, dict) else {}
    step_num = el.get("step_num", el.get("step"))
    response = _find(element, ("response",))
    if response is None:
        response = act.get("response")
    elif not isinstance(response, str):
        response = dumps_compact(response)
    shot = _find(element, _SHOT_KEYS)
    shot = shot if isinstance(shot, str) else None
    stamp = _find(element, _TS_KEYS)
    stamp = stamp if isinstance(stamp, str) else None
    phase = el.get("phase")
    row = {
        **base,
        "step_idx": idx,
        "line_no": idx + 1,
        "step_num": as_int32(step_num),
        "action_text": act.get("action_text"),
        "action_format": "dict",
        "action_kind": act.get("action_kind") or "other",
        "x": act.get("x"),
        "y": act.get("y"),
        "text": act.get("text"),
        "response": response,
        "screenshot_file": shot,
        "screenshot_path": f"{task.path}/{shot}" if shot in files else None,
        "action_timestamp": stamp,
        "ts": parse_action_timestamp(stamp) if stamp else None,
        "reward": None,
        "done": None,
        "info_json": None,
        "phase": as_int32(phase),
        "extra": dumps_compact(element),
    }
    actions.extend(action_rows(row, act["actions"]))
    return row


def read_uitars_episode(
    source: Source, run: RunFolder, task: TaskFolder, *, run_id: str, benchmark: str
) -> EpisodeRead:
    """One UI-TARS task folder; every element of data.json becomes one step row."""
    q = QuarantineRows(source.uri, run_id, benchmark)
    data_path = f"{task.path}/data.json"
    meta_path = f"{task.path}/meta.json"
    steps: list[dict] = []
    actions: list[dict] = []
    result_raw, score, status = None, None, "missing"
    traj_file = None
    if "data.json" in task.files:
        traj_file = data_path
        ok, data = _load(source, data_path, q)
        if ok and not isinstance(data, list):
            q.add(data_path, None, "unexpected_shape",
                  f"data.json holds a {type(data).__name__}, not a list of steps", _TODO,
                  dumps_json(data)[:200])  # fmt: skip
            ok = False
        if ok:
            base = {"run_id": run_id, "benchmark": benchmark, "domain": task.domain,
                    "task_id": task.task_id}  # fmt: skip
            files = set(task.files)
            steps = [
                _step_row(el, i, task=task, files=files, base=base, actions=actions)
                for i, el in enumerate(data)
            ]
            result_raw, score, status = _result(data, data_path, q)
        else:
            status = "unparseable"
    instruction = None
    if "meta.json" in task.files:
        ok, meta = _load(source, meta_path, q)
        if ok:
            if isinstance(meta, dict) and isinstance(meta.get("query"), str):
                instruction = meta["query"]
            else:
                q.add(meta_path, None, "unexpected_shape", 'meta.json has no "query" string',
                      _TODO, dumps_json(meta)[:200])  # fmt: skip
    summary = summarise(steps, 0)
    last_error = summary.pop("last_error")
    episode = {
        "run_id": run_id,
        "benchmark": benchmark,
        "domain": task.domain,
        "task_id": task.task_id,
        "source_task_id": task.task_id,
        "task_path": task.path,
        "instruction": instruction,
        "traj_file": traj_file,
        "n_lines": len(steps),
        **summary,
        "result_raw": result_raw,
        "result_status": status,
        "score": score,
        "reported_score": None,
        "reported_status": None,
        "err_message": last_error,
    }
    return EpisodeRead(episode, steps, q.rows, actions)

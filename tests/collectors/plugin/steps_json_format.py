"""A made-up trajectory format, defined outside deskscore as a plugin would define it.

Task folders `<run>/<domain>/<task_id>/` hold `steps.json` (a JSON list of actions, one step
each) and `score.txt` (the task's score). The tests register it in-process, and declare it as
an entry point (`steps_json = steps_json_format:FORMAT`) to reach worker processes.
"""

from __future__ import annotations

import json

from deskscore.collectors.actions import parse_action
from deskscore.collectors.formats import EpisodeCalls, EpisodeRead, Format, Found, each_folder
from deskscore.collectors.layout import RunFolder, TaskFolder
from deskscore.collectors.osworld import QuarantineRows, parse_result, summarise
from deskscore.collectors.source import Source, SourceError

NAME = "steps_json"
STEPS, SCORE = "steps.json", "score.txt"


def _task_folder(path: str, names: tuple[str, ...]) -> Found | None:
    parent, _, task_id = path.rpartition("/")
    if STEPS not in names or SCORE not in names or not parent:
        return None
    run_path, _, domain = parent.rpartition("/")
    return Found(run_path, TaskFolder(path, domain, task_id, names))


def _step(action: object, idx: int, keys: dict[str, str]) -> dict:
    act = parse_action(action)
    return {
        **keys,
        "step_idx": idx,
        "line_no": idx + 1,
        "step_num": idx + 1,
        "action_text": act["action_text"],
        "action_format": act["action_format"] or "none",
        "action_kind": act["action_kind"] or "other",
        "x": act["x"],
        "y": act["y"],
        "text": act["text"],
        "ts": None,
    }


def read_episode(
    source: Source,
    run: RunFolder,
    task: TaskFolder,
    *,
    run_id: str,
    benchmark: str,
    reported: dict | None = None,
) -> EpisodeCalls:
    q = QuarantineRows(source.uri, run_id, benchmark)
    keys = {"run_id": run_id, "benchmark": benchmark, "domain": task.domain,
            "task_id": task.task_id}  # fmt: skip
    steps_path, score_path = f"{task.path}/{STEPS}", f"{task.path}/{SCORE}"
    try:
        actions = json.loads(source.read_bytes(steps_path))
    except (SourceError, ValueError) as e:
        q.add(steps_path, None, "invalid_json", str(e), "fix the file", "")
        actions = []
    steps = [_step(a, i, keys) for i, a in enumerate(actions)]
    raw, score, status = parse_result(source.read_bytes(score_path).decode("utf-8", "replace"))
    summary = summarise(steps, 0)
    summary.pop("last_error")
    episode = {
        **keys,
        "source_task_id": task.task_id,
        "task_path": task.path,
        "traj_file": steps_path,
        "n_lines": len(steps),
        **summary,
        "result_raw": raw,
        "result_status": status,
        "score": score,
    }
    return EpisodeCalls(EpisodeRead(episode, steps, q.rows), [])


FORMAT = Format(name=NAME, read_episode=read_episode, find=each_folder(_task_folder))

"""Run-level facts: args.json, the runner's own summaries, and what the folder names tell.

Runners write args.json beside the domains or at <result_dir>, and summaries at
<result_dir>/summary/results.json (newer) or all_result.json (a Python repr), so each is looked
for at the run root first and then in the folders above it, nearest first, within the source.
An args.json above the run root is only taken when the model it names matches the run's path.
"""

from __future__ import annotations

import ast
import bisect
import hashlib
import json
import math
from typing import Any, NamedTuple

from deskscore.collectors import limits
from deskscore.collectors.json_text import parse_error, scrub_surrogates
from deskscore.collectors.layout import RunFolder
from deskscore.collectors.numbers import finite_float
from deskscore.collectors.source import Source, SourceError, read_document

ACTION_SPACES = ("pyautogui", "computer_13", "claude_computer_use", "autoglm_computer_use")
_INT32_MAX = 2**31 - 1


class RunMeta(NamedTuple):
    """The RUNS row, reported results keyed (domain, task_id as in the folder), quarantine."""

    run: dict
    reported: dict[tuple[str, str], dict]
    quarantine: list[dict]


def _ancestors(run_path: str) -> list[str]:
    """The run root, then each folder above it up to the source root ('')."""
    out = [run_path]
    p = run_path
    while p:
        p = p.rpartition("/")[0]
        out.append(p)
    return out


def _at(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def levels_meta(run_path: str) -> tuple[str | None, str | None, str | None]:
    """(action_space, observation_type, model) from `<action_space>/<obs>/<model...>` levels.

    The levels are found from the first one that names a known action space, so a zip prefix
    or a <result_dir> level above them does not matter; a missing model level gives None.
    """
    levels = run_path.split("/") if run_path else []
    for i, lv in enumerate(levels):
        if lv in ACTION_SPACES and len(levels) - i >= 2:
            model = "/".join(levels[i + 2 :]) or None
            return lv, levels[i + 1], model
    return None, None, None


def _score(v: Any) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int | float):
        return finite_float(v)
    if isinstance(v, str):
        try:
            f = float(v.strip())
        except ValueError:
            return {"True": 1.0, "False": 0.0}.get(v.strip())
        return f if math.isfinite(f) else None
    return None


class _Q:
    def __init__(self, uri: str, run_id: str, benchmark: str) -> None:
        self.uri, self.run_id, self.benchmark = uri, run_id, benchmark
        self.rows: list[dict] = []

    def add(self, location: str, reason: str, what: str, excerpt: str = "") -> None:
        self.rows.append(
            {
                "run_id": self.run_id,
                "benchmark": self.benchmark,
                "source": self.uri,
                "location": location,
                "line_no": None,
                "reason": reason,
                "message": f"{self.uri}!{location}: {what}",
                "excerpt": excerpt[:200],
            }
        )


def _read_text(source: Source, path: str, q: _Q) -> str | None:
    try:
        data = read_document(source, path)
    except SourceError as e:
        q.add(path, e.reason, f"{e.message}; the file was skipped", path)
        return None
    return data.decode("utf-8", "replace")


def _args_fit(args: dict, run_path: str) -> bool:
    """An args.json above the run root may belong to another run of the same result_dir: use it
    only when the model it names is the one in the run's path (or it names none)."""
    model = args.get("model")
    return not isinstance(model, str) or not model or f"/{model}/" in f"/{run_path}/"


def _parsed(text: str) -> Any:
    """The JSON value of `text`, lone surrogates (legal escapes, no UTF-8) replaced."""
    value = json.loads(text)
    return scrub_surrogates(value) if "\\u" in text else value


def _read_args(source: Source, run_path: str, q: _Q) -> tuple[dict | None, str | None]:
    """The nearest args.json at or above the run root that describes this run."""
    for folder in _ancestors(run_path):
        path = _at(folder, "args.json")
        if not source.exists(path):
            continue
        text = _read_text(source, path, q)
        if text is None:
            continue
        try:
            args = _parsed(text)
        except (ValueError, RecursionError) as e:
            q.add(path, "invalid_json", f"args.json is not valid JSON ({parse_error(e)}); run "
                  "facts come from the folder names instead; fix the file and re-ingest",
                  text)  # fmt: skip
            continue
        if not isinstance(args, dict):
            q.add(path, "not_an_object", "args.json does not hold a JSON object; run facts come "
                  "from the folder names instead", text)  # fmt: skip
            continue
        if folder == run_path or _args_fit(args, run_path):
            return args, text
    return None, None


def _entry(domain: Any, task_id: Any, score: Any, status: Any, err: Any) -> tuple | None:
    if not isinstance(domain, str) or not isinstance(task_id, str):
        return None
    return (domain, task_id), {
        "reported_score": _score(score),
        "reported_status": status if isinstance(status, str) else None,
        "err_message": err if isinstance(err, str) and err else None,
    }


def _item_entry(item: dict) -> tuple | None:
    """The entry of a summary item as runners write it: a dict naming its task."""
    return _entry(
        item.get("application", item.get("domain")),
        item.get("task_id"),
        item.get("score"),
        item.get("status"),
        item.get("err_message"),
    )


def _read_results_json(source: Source, path: str, q: _Q) -> dict | None:
    text = _read_text(source, path, q)
    if text is None:
        return None
    try:
        data = _parsed(text)
    except (ValueError, RecursionError) as e:
        q.add(path, "invalid_json", f"summary is not valid JSON ({parse_error(e)}); reported "
              "scores are left empty; fix the file and re-ingest", text)  # fmt: skip
        return None
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        data = data["results"]
    if not isinstance(data, list):
        q.add(path, "unexpected_shape", "summary is not a list of task results; reported "
              "scores are left empty", text)  # fmt: skip
        return None
    out: dict = {}
    bad = 0
    for item in data:
        e = None
        if isinstance(item, dict):
            e = _item_entry(item)
        if e is None:
            bad += 1
            continue
        out[e[0]] = e[1]
    if bad:
        q.add(path, "unexpected_shape", f"{bad} of {len(data)} summary items lack an "
              "application and task_id; they were skipped", text)  # fmt: skip
    return out


def literal_tokens(text: str, cap: int) -> int:
    """Tokens of `text` as Python's tokenizer reads them, counted up to `cap` + 1 at most, in
    constant memory: `ast.literal_eval` builds the whole syntax tree (about 500 bytes a token)
    before it refuses anything, so the count bounds that before the tree is built. Text the
    tokenizer stops on is counted up to there: `literal_eval` then says what is wrong."""
    import io
    import tokenize

    n = 0
    try:
        for _ in tokenize.generate_tokens(io.StringIO(text).readline):
            n += 1
            if n > cap:
                break
    except (tokenize.TokenError, SyntaxError):
        pass
    return n


def _read_all_result(source: Source, path: str, q: _Q) -> dict | None:
    text = _read_text(source, path, q)
    if text is None:
        return None
    cap = limits.LITERAL_TOKENS.value()
    if len(text) > cap and literal_tokens(text, cap) > cap:  # no more tokens than characters
        what = limits.LITERAL_TOKENS.exceeded(f"all_result.json holds more than {cap} tokens")
        q.add(path, "too_large", f"{what}; reported scores are left empty", text)
        return None
    try:
        data = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
        q.add(path, "invalid_literal", f"all_result.json is not a Python literal "
              f"({parse_error(e)}); reported scores are left empty", text)  # fmt: skip
        return None
    out: dict = {}
    if isinstance(data, dict) and all(isinstance(v, dict) for v in data.values()):
        for domain, tasks in data.items():
            for task_id, score in tasks.items():
                e = _entry(domain, task_id, score, None, None)
                if e is not None:
                    out[e[0]] = e[1]
        return out
    if isinstance(data, list) and data and all(isinstance(v, dict) for v in data):
        for item in data:
            e = _item_entry(item)
            if e is not None:
                out[e[0]] = e[1]
        if out:
            return out
    q.add(path, "unexpected_shape", f"all_result.json holds a {type(data).__name__} that names "
          "no (domain, task) pairs (e.g. a bare list of scores); it cannot be matched to tasks",
          text)  # fmt: skip
    return None


def _fingerprint(source: Source, files: list[str], run_path: str) -> str:
    """sha1 over (path, size) of the files under the run root (`files` is sorted)."""
    prefix = run_path + "/" if run_path else ""
    h = hashlib.sha1()
    for i in range(bisect.bisect_left(files, prefix), len(files)):
        f = files[i]
        if not f.startswith(prefix):
            break
        try:
            size = source.size(f)
        except SourceError:
            size = -1
        h.update(f"{f}\x00{size}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _read_summary(source: Source, run_path: str, q: _Q) -> tuple[dict | None, str | None]:
    """The nearest readable runner summary: summary/results.json first, all_result.json else."""
    for name, reader in (
        ("summary/results.json", _read_results_json),
        ("all_result.json", _read_all_result),
    ):
        for folder in _ancestors(run_path):
            path = _at(folder, name)
            if source.exists(path):
                reported = reader(source, path, q)
                if reported is not None:
                    return reported, name
    return None, None


def read_run_meta(source: Source, run: RunFolder, *, run_id: str, benchmark: str) -> RunMeta:
    """RUNS row, the runner's reported per-task results, and quarantine for bad meta files."""
    q = _Q(source.uri, run_id, benchmark)
    args, args_text = _read_args(source, run.run_path, q)

    reported, summary_source = _read_summary(source, run.run_path, q)

    # a trial level above the domains is not part of the model's name: read the group's root
    space, obs, model = levels_meta(run.run_path if run.group_path is None else run.group_path)
    if args:
        space = args.get("action_space") if isinstance(args.get("action_space"), str) else space
        obs = args.get("observation_type") if isinstance(args.get("observation_type"), str) else obs
        model = args.get("model") if isinstance(args.get("model"), str) and args["model"] else model
    max_steps = args.get("max_steps") if args else None
    if not (type(max_steps) is int and 0 <= max_steps <= _INT32_MAX):
        max_steps = None

    row = {
        "run_id": run_id,
        "benchmark": benchmark,
        "source": source.uri,
        "run_path": run.run_path,
        "format": run.format,
        "action_space": space,
        "observation_type": obs,
        "model": model,
        "agent": model or run.run_path or source.name,
        "max_steps": max_steps,
        "args_json": args_text if args is not None else None,
        "n_task_folders": len(run.tasks),
        "summary_source": summary_source,
        "fingerprint": _fingerprint(source, source.files(), run.run_path),
    }
    return RunMeta(row, reported or {}, q.rows)

"""Evaluating a collected episode against the real final state of its desktop.

A task's `evaluator` is OSWorld's: `{func, result, expected, options, conj, postconfig}`, with
`func`, `result`, `expected`, `options` single or lists of the same length. This module runs
the subset whose state it can read through the controller:

- getters (`result` / `expected` types): `vm_command_line` (a command's stdout),
  `vm_command_error` (its stderr), `vm_file` (a file's text; None when absent), `rule`
  (the `rules` object itself);
- metrics, with OSWorld's names and meanings: `exact_match`, `check_include_exclude`,
  `match_in_list`, `is_in_list`, `literal_match`, `fuzzy_match`, `compare_text_file` (on the
  two texts: OSWorld passes local copies of the files), and `infeasible`;
- the desktop applications' files and settings (office_metrics: spreadsheets, documents,
  slides, images, Chromium, VLC, Thunderbird), with their getters. For those metrics
  (`office_metrics.PATH_METRICS`) `vm_file` hands over a local copy's path, as OSWorld's does.

Scores combine as OSWorld's `DesktopEnv.evaluate` does: postconfig first; `infeasible`
scores 1 exactly when the last action is FAIL; otherwise a final FAIL scores 0; several
metrics combine by `conj` ("and", the default: 0 if any is 0, else the mean; "or": 1 if any
is 1, else the max). A task whose evaluator uses anything else is `unevaluated`, with the
names it lacks, so it can be judged later; nothing is guessed.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from deskscore.collectors.live import office_metrics
from deskscore.collectors.live.client import Controller, ControllerError


class Evaluation(NamedTuple):
    """What the evaluator said about the final state."""

    status: str
    """ok (score holds the verdict), unevaluated (no implemented evaluator), or error (the
    state could not be read)."""
    score: float | None
    details: dict[str, Any]
    """{"conj": "and"|"or"|None, "metrics": [{"func", "score"}, ...]} plus, when not ok, a
    "reason"."""


class Unsupported(Exception):
    """The evaluator names a getter or metric this module does not implement."""


# --------------------------------------------------------------------------- metrics


def exact_match(result: Any, rules: Mapping[str, Any], **_: Any) -> float:
    return float(result == rules["expected"])


def check_include_exclude(result: Any, rules: Mapping[str, Any], **_: Any) -> float:
    if result is None:
        return 0.0
    include = rules.get("include", []) or []
    exclude = rules.get("exclude", []) or []
    return float(all(r in result for r in include) and all(r not in result for r in exclude))


def match_in_list(result: Any, rules: Mapping[str, Any], **_: Any) -> float:
    return float(result in rules["expected"])


def is_in_list(result: Any, rules: Mapping[str, Any], **_: Any) -> float:
    return float(result is not None and rules["expected"] in result)


def literal_match(result: Any, expected: Any, **options: Any) -> float:
    kind = options.get("type", "str")
    fold = bool(options.get("ignore_case", False))
    if kind == "str":
        a, b = str(result), str(expected)
        return float(a.lower() == b.lower() if fold else a == b)
    if kind == "list":
        if not isinstance(result, list | tuple) or not isinstance(expected, list | tuple):
            return 0.0
        if len(result) != len(expected):
            return 0.0
        a = [str(s).lower() if fold else str(s) for s in result]
        b = [str(s).lower() if fold else str(s) for s in expected]
        return float(a == b)
    raise Unsupported(f"literal_match type {kind!r}")


def fuzzy_match(result: Any, rules: Mapping[str, Any], **_: Any) -> float:
    from rapidfuzz import fuzz

    if result is None:
        return 0.0
    return fuzz.ratio(str(result), str(rules["expected"])) / 100.0


def compare_text_file(result: Any, expected: Any, **options: Any) -> float:
    """OSWorld's compare_text_file on the files' texts: equal (optionally ignoring blanks,
    case) -> 1, else 0; a missing file -> 0."""
    if result is None or expected is None:
        return 0.0
    a, b = str(result), str(expected)
    if options.get("ignore_blanks", False):
        a, b = "".join(a.split()), "".join(b.split())
    if options.get("ignore_case", False):
        a, b = a.lower(), b.lower()
    return float(a == b)


METRICS: dict[str, Callable[..., float]] = {
    "exact_match": exact_match,
    "check_include_exclude": check_include_exclude,
    "match_in_list": match_in_list,
    "is_in_list": is_in_list,
    "literal_match": literal_match,
    "fuzzy_match": fuzzy_match,
    "compare_text_file": compare_text_file,
    **office_metrics.METRICS,
}


# --------------------------------------------------------------------------- getters


def _text(data: bytes | None) -> str | None:
    return data.decode("utf-8", "replace") if data is not None else None


BUILTIN_GETTERS = ("rule", "vm_command_line", "vm_command_error", "vm_file")


def get_state(
    controller: Controller,
    config: Mapping[str, Any],
    *,
    workdir: str | None = None,
    as_path: bool = False,
) -> Any:
    """The value a `result` / `expected` config names, read from the desktop now.

    With `as_path` (the metric reads files) `vm_file` copies the file into `workdir` and
    gives its local path (None when absent) instead of its text."""
    kind = config.get("type")
    if kind in office_metrics.GETTERS:
        if workdir is None:
            raise Unsupported(f"getter {kind!r} needs a scratch folder")
        return office_metrics.GETTERS[kind](controller, config, workdir=workdir, as_path=as_path)
    if kind == "rule":
        return config.get("rules")
    if kind in ("vm_command_line", "vm_command_error"):
        out = controller.execute(config["command"], shell=bool(config.get("shell", False)))
        return out.get("output" if kind == "vm_command_line" else "error")
    if kind == "vm_file":
        path = config["path"]

        def read(p: str) -> Any:
            data = controller.file(p)
            if not as_path or data is None:
                return _text(data)
            if workdir is None:
                raise Unsupported("vm_file as a local copy needs a scratch folder")
            fd, local = tempfile.mkstemp(dir=workdir, suffix="-" + os.path.basename(p))
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            return local

        return [read(p) for p in path] if isinstance(path, list) else read(path)
    raise Unsupported(f"getter {kind!r}")


# --------------------------------------------------------------------------- evaluation


def _as_list(value: Any, n: int) -> list[Any]:
    if isinstance(value, list):
        return value
    return [value] * n if n > 1 else [value]


def missing_parts(evaluator: Mapping[str, Any] | None) -> list[str]:
    """Names of the getters and metrics `evaluator` uses that are not implemented here
    (empty: it can be evaluated)."""
    if not isinstance(evaluator, Mapping) or not evaluator.get("func"):
        return ["(no evaluator)"]
    funcs = evaluator["func"] if isinstance(evaluator["func"], list) else [evaluator["func"]]
    if funcs == ["infeasible"]:
        return []
    missing = [f"metric {f}" for f in funcs if f not in METRICS]
    for key in ("result", "expected"):
        for cfg in _as_list(evaluator.get(key), len(funcs)):
            if cfg is None:
                continue
            kind = cfg.get("type") if isinstance(cfg, Mapping) else None
            if kind not in BUILTIN_GETTERS and kind not in office_metrics.GETTERS:
                missing.append(f"getter {kind}")
    return sorted(set(missing))


def evaluate(
    controller: Controller,
    evaluator: Mapping[str, Any] | None,
    *,
    last_action: str | None,
    base_dir: str | None = None,
) -> Evaluation:
    """Score the desktop's current state with the task's evaluator (see the module doc).

    `last_action` is the special of the episode's last executed action (FAIL, DONE, ...)."""
    missing = missing_parts(evaluator)
    if missing:
        return Evaluation(
            "unevaluated",
            None,
            {"conj": None, "metrics": [], "reason": "not implemented: " + ", ".join(missing)},
        )
    assert evaluator is not None
    funcs = evaluator["func"] if isinstance(evaluator["func"], list) else [evaluator["func"]]
    conj = evaluator.get("conj") or "and"
    try:
        postconfig = evaluator.get("postconfig") or []
        if postconfig:
            controller.run_setup(postconfig, base_dir=base_dir)
        if funcs == ["infeasible"]:
            score = 1.0 if last_action == "FAIL" else 0.0
            return Evaluation(
                "ok", score, {"conj": None, "metrics": [{"func": "infeasible", "score": score}]}
            )
        if last_action == "FAIL":
            return Evaluation(
                "ok",
                0.0,
                {
                    "conj": conj if len(funcs) > 1 else None,
                    "metrics": [],
                    "reason": "the last action is FAIL",
                },
            )
        n = len(funcs)
        results = _as_list(evaluator.get("result"), n)
        expecteds = _as_list(evaluator.get("expected"), n)
        options = _as_list(evaluator.get("options") or {}, n)
        metrics: list[dict[str, Any]] = []
        with tempfile.TemporaryDirectory(prefix="deskscore-eval-") as workdir:
            for func, res_cfg, exp_cfg, opts in zip(
                funcs, results, expecteds, options, strict=False
            ):
                as_path = func in office_metrics.PATH_METRICS
                kw = {"workdir": workdir, "as_path": as_path}
                result = get_state(controller, res_cfg, **kw) if res_cfg else None
                expected = get_state(controller, exp_cfg, **kw) if exp_cfg else None
                if exp_cfg is not None:
                    value = METRICS[func](result, expected, **(opts or {}))
                else:
                    value = METRICS[func](result, **(opts or {}))
                metrics.append({"func": func, "score": float(value)})
                if conj == "and" and value == 0:
                    break
                if conj == "or" and value == 1:
                    break
    except Unsupported as e:
        return Evaluation(
            "unevaluated", None, {"conj": None, "metrics": [], "reason": f"not implemented: {e}"}
        )
    except ModuleNotFoundError as e:
        # The file metrics' libraries come with an extra; the verdict can be made later.
        reason = f"needs the desktops extra (pip install 'deskscore[desktops]'): {e}"
        return Evaluation("unevaluated", None, {"conj": None, "metrics": [], "reason": reason})
    except (ControllerError, KeyError, TypeError, ValueError) as e:
        return Evaluation(
            "error",
            None,
            {"conj": None, "metrics": [], "reason": f"the final state could not be read: {e}"},
        )
    scores = [m["score"] for m in metrics]
    if n == 1:
        score = scores[0]
    elif conj == "or":
        score = 1.0 if any(s == 1 for s in scores) else max(scores)
    else:
        score = 0.0 if any(s == 0 for s in scores) else sum(scores) / len(scores)
    return Evaluation("ok", score, {"conj": conj if n > 1 else None, "metrics": metrics})


__all__ = [
    "METRICS",
    "Evaluation",
    "evaluate",
    "get_state",
    "missing_parts",
]

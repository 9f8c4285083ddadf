"""Verdicts an archive allows: the archived score, and the evaluator's rules recomputed offline.

OSWorld's `DesktopEnv.evaluate` (DeskCraft keeps it) decides a score in this order:
1. `func == "infeasible"`: 1 exactly when the last executed action is FAIL, else 0;
2. otherwise a last executed action FAIL scores 0, whatever the desktop shows;
3. otherwise the metrics run; with several, `conj: "and"` (the default) gives 0 when any
   metric is 0, else their mean, and `conj: "or"` gives 1 when any is 1, else their max.

Rules 1 and 2 need only the trajectory, so they are recomputed for every episode they apply
to. Rule 3 needs the per-metric scores, which runners rarely keep: it is recomputed when an
`eval_details.json` archived them (`episodes.metric_scores_json`). A recomputed score that
differs from result.txt is a disagreement: reported (agrees_with_archived false), never
corrected, since either the runner or the archive may be wrong.

"Last executed action is FAIL" is read from the parsed action (a FAIL string, a
`{"action_type": "FAIL"}` dict, a Claude FAIL command: `action_kind == "fail"`) or from the
environment's answer to it (`info.fail` true); CALL_USER questions and runner error lines
are not executed actions. Everything here is pure and total.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

ARCHIVED = "archived"
RECOMPUTED = "recomputed"
RESULT_TXT = "result_txt"
INFEASIBLE = "infeasible"
FINAL_FAIL = "final_fail"
CONJ_AND = "conj"
CONJ_OR = "or"
"""Rule names of the verdicts table: the conj rule is 'conj' for and, 'or' for or."""

NOT_EXECUTED = frozenset({"error", "call_user"})
"""Step kinds that are not environment actions."""

EPISODE_INPUTS = (
    "benchmark",
    "run_id",
    "domain",
    "task_id",
    "score",
    "result_status",
    "result_raw",
    "metric_scores_json",
)
"""The columns of an episodes row that `episode_verdicts` reads: the verdict stage reads only
these (a test holds the rules to it)."""

_TOLERANCE = 1e-9


def info_says_fail(info: Any) -> bool:
    """Whether a step's info (a dict, or its JSON text) carries `"fail": true`."""
    if isinstance(info, str):
        try:
            info = json.loads(info)
        except (ValueError, RecursionError):
            return False
    return isinstance(info, Mapping) and info.get("fail") is True


def last_action_is_fail(steps: Iterable[Mapping[str, Any]]) -> bool | None:
    """Whether the last executed action of an episode's step rows (in order) is FAIL; None
    when the episode executed nothing."""
    last = None
    for s in steps:
        if s.get("action_kind") not in NOT_EXECUTED:
            last = s
    if last is None:
        return None
    return last.get("action_kind") == "fail" or info_says_fail(last.get("info_json"))


def infeasible_score(last_is_fail: bool | None) -> float:
    """Rule 1: an infeasible task scores 1 exactly when the agent's last action was FAIL."""
    return 1.0 if last_is_fail else 0.0


def final_fail_score(last_is_fail: bool | None) -> float | None:
    """Rule 2: a feasible task whose last action is FAIL scores 0; otherwise the rule says
    nothing (None) and the metrics decide."""
    return 0.0 if last_is_fail else None


def conj_score(scores: Sequence[float], conj: str | None = "and") -> float | None:
    """Rule 3: per-metric scores combined as the evaluator does; None without scores or
    with a non-finite one."""
    values = [float(s) for s in scores]
    if not values or not all(math.isfinite(v) for v in values):
        return None
    if conj == "or":
        return 1.0 if any(v == 1.0 for v in values) else max(values)
    return 0.0 if any(v == 0.0 for v in values) else sum(values) / len(values)


def parse_metric_scores(text: str | None) -> tuple[str | None, list[float]] | None:
    """(conj, scores) from `episodes.metric_scores_json`; None when absent or malformed."""
    if not text:
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, Mapping) or not isinstance(obj.get("metrics"), list):
        return None
    scores = []
    for m in obj["metrics"]:
        s = m.get("score") if isinstance(m, Mapping) else m
        if isinstance(s, bool) or not isinstance(s, int | float):
            return None
        scores.append(float(s))
    conj = obj.get("conj")
    return (conj if conj in ("and", "or") else None), scores


def archived_score(episode: Mapping[str, Any]) -> float | None:
    """result.txt's score when it parsed to a finite number, else None."""
    score = episode.get("score")
    if episode.get("result_status") not in ("ok", None):
        return None
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        return None
    return float(score)


def is_pass(score: float | None) -> bool | None:
    """Strict success: exactly 1 (partial credit is not a pass)."""
    return None if score is None else score == 1.0


def agrees(score: float | None, archived: float | None) -> bool | None:
    """Whether a recomputed score is the archived one; None when either is missing."""
    if score is None or archived is None:
        return None
    return abs(score - archived) <= _TOLERANCE


def episode_verdicts(
    episode: Mapping[str, Any],
    *,
    last_is_fail: bool | None,
    infeasible: bool | None,
    task_conj: str | None = None,
) -> list[dict[str, Any]]:
    """The verdicts rows of one episode: the archived one (when result.txt exists) and each
    rule the archive lets us recompute. `infeasible` None means the task is unknown: only
    the final-FAIL rule, which holds for every feasible task, is then not applied either,
    since an unknown task may be infeasible."""
    keys = {k: episode.get(k) for k in ("benchmark", "run_id", "domain", "task_id")}
    archived = archived_score(episode)
    rows: list[dict[str, Any]] = []
    status = episode.get("result_status")
    if status not in ("missing", None) or archived is not None:
        rows.append(
            {
                **keys,
                "source": ARCHIVED,
                "rule": RESULT_TXT,
                "score": archived,
                "passed": is_pass(archived),
                "agrees_with_archived": None,
                "details": json.dumps(
                    {"result_status": status, "result_raw": episode.get("result_raw")},
                    sort_keys=True,
                ),
            }
        )

    def recomputed(rule: str, score: float, details: dict[str, Any]) -> None:
        rows.append(
            {
                **keys,
                "source": RECOMPUTED,
                "rule": rule,
                "score": score,
                "passed": is_pass(score),
                "agrees_with_archived": agrees(score, archived),
                "details": json.dumps(details, sort_keys=True),
            }
        )

    if infeasible:
        recomputed(
            INFEASIBLE, infeasible_score(last_is_fail), {"last_action_fail": bool(last_is_fail)}
        )
        return rows
    if infeasible is None:
        return rows
    ff = final_fail_score(last_is_fail)
    if ff is not None:
        recomputed(FINAL_FAIL, ff, {"last_action_fail": True})
        return rows
    metrics = parse_metric_scores(episode.get("metric_scores_json"))
    if metrics is not None:
        conj = metrics[0] or task_conj or "and"
        score = conj_score(metrics[1], conj)
        if score is not None:
            recomputed(CONJ_OR if conj == "or" else CONJ_AND, score,
                       {"conj": conj, "metric_scores": metrics[1]})  # fmt: skip
    return rows

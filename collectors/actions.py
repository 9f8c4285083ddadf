"""Parsing one archived agent action into its sub-actions and the step's kind, position, text.

OSWorld runners log an action per trajectory line in one of several shapes: a pyautogui code
string, a special word (WAIT, DONE, FAIL, CALL_USER), or a dict from the Claude computer-use
agent, the OpenAI Operator / GPT-5.4 agents, or the `computer_13` action space. Loop
detection and the step tables need the same few facts from each, so `parse_action` reduces
every shape to one flat dict, plus the step's sub-actions (the `step_actions` rows): every
call of a code string, in order (`deskscore.collectors.action_code`, which also states the
rule that gives a step of several calls its one kind), or the one dict action or word. It is
total: no JSON value makes it raise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from deskscore.collectors.action_code import (
    CodeRead,
    SubAction,
    code_memo_clear,
    read_code,
    read_point,
)
from deskscore.collectors.json_text import json_writer
from deskscore.schemas.validate import ColumnRows

CodeReader = Callable[[str], CodeRead]
"""How code strings are read: `read_code`, or an uncached reading to compare or time it."""

KINDS: tuple[str, ...] = (
    "click", "double_click", "right_click", "triple_click", "move", "drag", "mouse_down",
    "mouse_up", "type", "hotkey", "press", "key_down", "key_up", "scroll", "wait", "done",
    "fail", "bash", "screenshot", "call_user", "multi", "error", "other",
)  # fmt: skip
"""Every value `action_kind` can take (the steps table documents the same list)."""

ACTION_KINDS: tuple[str, ...] = tuple(k for k in KINDS if k not in ("multi", "error"))
"""Every value a sub-action's kind can take (step_actions.kind): `multi` only describes a
step, and a runner error line holds no action."""

FORMATS: tuple[str, ...] = ("code", "special", "claude", "operator", "computer_13", "dict", "none")
"""Every value `action_format` can take."""

KEYS: tuple[str, ...] = (
    "action_text",
    "action_format",
    "action_kind",
    "x",
    "y",
    "text",
    "response",
    "actions",
)
"""The keys of every dict `parse_action` returns."""

SPECIAL_KINDS = {"WAIT": "wait", "DONE": "done", "FAIL": "fail", "CALL_USER": "call_user"}
"""Special action words, exactly as OSWorld spells them (upper case)."""


def _result(
    text: str | None,
    fmt: str,
    kind: str,
    x: float | None = None,
    y: float | None = None,
    typed: str | None = None,
    response: str | None = None,
    actions: tuple[SubAction, ...] | None = None,
    func: str | None = None,
    keys: Sequence[str] | None = None,
) -> dict:
    """The flat dict; a structured action without `actions` is one sub-action of its own."""
    if actions is None:
        actions = (
            SubAction(kind, func, x, y, typed, tuple(keys) if keys else None, parser="dict"),
        )
    return {
        "action_text": text,
        "action_format": fmt,
        "action_kind": kind,
        "x": x,
        "y": y,
        "text": typed,
        "response": response,
        "actions": actions,
    }


_compact_json = json_writer(separators=(",", ":"), default=str)


def _dumps(value: Any) -> str:
    """Compact JSON text of any value; never raises (falls back to repr, then the type name)."""
    try:
        return _compact_json(value)
    except Exception:
        try:
            return repr(value)
        except Exception:
            return f"<{type(value).__name__}>"


def _as_text(value: Any) -> str | None:
    """A string stays itself, None stays None, anything else becomes its JSON text."""
    if value is None or isinstance(value, str):
        return value
    return _dumps(value)


def _coord(value: Any) -> float | None:
    """A finite float from a number or numeric string; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float, str)):
        try:
            f = float(value)
        except (ValueError, OverflowError):
            return None
        return f if math.isfinite(f) else None
    return None


def _pair(value: Any) -> tuple[float | None, float | None]:
    """(x, y) from a [x, y] list or an {x, y} dict; (None, None) when either is unusable."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        x, y = _coord(value[0]), _coord(value[1])
    elif isinstance(value, dict):
        x, y = _coord(value.get("x")), _coord(value.get("y"))
    else:
        return None, None
    return (x, y) if x is not None and y is not None else (None, None)


def _join_keys(keys: list[str]) -> str | None:
    return "+".join(keys) if keys else None


def _word(action: str, kind: str, fmt: str = "special", response: str | None = None) -> dict:
    sub = SubAction(kind, None, call_text=action.strip(), parser="word")
    return _result(action, fmt, kind, response=response, actions=(sub,))


def _parse_string(action: str, read: CodeReader) -> dict:
    special = SPECIAL_KINDS.get(action.strip())
    if special is not None:
        return _word(action, special)
    code = read(action)
    return _result(action, "code", code.kind, code.x, code.y, code.text, actions=code.actions)


_CLAUDE_KINDS = {
    "left_click": "click",
    "click": "click",
    "middle_click": "click",
    "left_press": "click",
    "right_click": "right_click",
    "double_click": "double_click",
    "triple_click": "triple_click",
    "mouse_move": "move",
    "left_click_drag": "drag",
    "left_mouse_down": "mouse_down",
    "left_mouse_up": "mouse_up",
    "key": "hotkey",
    "hold_key": "key_down",
    "type": "type",
    "scroll": "scroll",
    "wait": "wait",
    "screenshot": "screenshot",
    "cursor_position": "other",
    "done": "done",
    "fail": "fail",
    "call_user": "call_user",
}


def _parse_claude(action: dict, read: CodeReader) -> dict:
    inp = action.get("input")
    command = action.get("command")
    response = _as_text(action.get("raw_response"))
    text = command if isinstance(command, str) else (_dumps(inp) if inp is not None else None)
    kind = None
    cx = cy = None
    typed = None
    if isinstance(command, str):
        word = command.strip()
        kind = SPECIAL_KINDS.get(word)
        if kind is None:
            code = read(command)
            kind, cx, cy, typed = code.kind, code.x, code.y, code.text
    func = action.get("name") if isinstance(action.get("name"), str) else None
    if isinstance(inp, dict):
        name = inp.get("action")
        if isinstance(name, str):
            func = name
            mapped = _CLAUDE_KINDS.get(name.strip().lower().replace(" ", "_"))
            if mapped is not None:
                kind = mapped
        elif action.get("name") == "bash" and isinstance(inp.get("command"), str):
            kind = "bash"
            typed = inp["command"]
        if isinstance(inp.get("text"), str):
            typed = inp["text"]
        if cx is None:
            cx, cy = _pair(inp.get("coordinate"))
    if kind is None:
        at = action.get("action_type")
        kind = SPECIAL_KINDS.get(at, "other") if isinstance(at, str) else "other"
    return _result(text, "claude", kind, cx, cy, typed, response, func=func)


_OPERATOR_KINDS = {
    "click": "click",
    "double_click": "double_click",
    "triple_click": "triple_click",
    "scroll": "scroll",
    "type": "type",
    "keypress": "hotkey",
    "key": "hotkey",
    "move": "move",
    "drag": "drag",
    "wait": "wait",
    "screenshot": "screenshot",
}


def _parse_operator(action: dict, read: CodeReader) -> dict:
    inner = action.get("action")
    response = _as_text(action.get("raw_response"))
    if isinstance(inner, str):
        r = _parse_string(inner, read)
        r["action_format"] = "operator"
        r["response"] = response
        return r
    if not isinstance(inner, dict):
        return _result(_as_text(inner), "operator", "other", response=response)
    typ = inner.get("type")
    keys = inner.get("keys")
    keys = keys if isinstance(keys, list) and all(isinstance(k, str) for k in keys) else None
    kind = _OPERATOR_KINDS.get(typ, "other") if isinstance(typ, str) else "other"
    if kind == "click" and inner.get("button") == "right":
        kind = "right_click"
    x, y = _pair(inner)
    if x is None and kind == "drag":
        path = inner.get("path")
        if isinstance(path, list) and path:
            x, y = _pair(path[0])
    typed = inner.get("text")
    if not isinstance(typed, str):
        typed = _join_keys(keys) if keys is not None else None
    func = typ if isinstance(typ, str) else None
    return _result(_dumps(inner), "operator", kind, x, y, typed, response, func=func, keys=keys)


_C13_KINDS = {
    "CLICK": "click",
    "MOVE_TO": "move",
    "TYPING": "type",
    "HOTKEY": "hotkey",
    "PRESS": "press",
    "KEY_DOWN": "key_down",
    "KEY_UP": "key_up",
    "SCROLL": "scroll",
    "DRAG_TO": "drag",
    "MOUSE_DOWN": "mouse_down",
    "MOUSE_UP": "mouse_up",
    "RIGHT_CLICK": "right_click",
    "DOUBLE_CLICK": "double_click",
    "WAIT": "wait",
    "FAIL": "fail",
    "DONE": "done",
}


def _parse_computer_13(action: dict, kind: str, func: str) -> dict:
    params = action.get("parameters")
    if not isinstance(params, dict):
        params = action
    if kind == "click":
        button, clicks = params.get("button"), params.get("num_clicks")
        if button == "right":
            kind = "right_click"
        elif clicks in (2, 3) and not isinstance(clicks, bool):
            kind = "double_click" if clicks == 2 else "triple_click"
    x, y = _pair(params)
    typed = keys = None
    if kind == "type":
        typed = params.get("text")
    elif kind == "hotkey":
        keys = params.get("keys")
        if isinstance(keys, list) and all(isinstance(k, str) for k in keys):
            typed = _join_keys(keys)
        elif isinstance(keys, str):
            typed, keys = keys, [keys]
        else:
            keys = None
    elif kind in ("press", "key_down", "key_up"):
        typed = params.get("key")
        keys = [typed] if isinstance(typed, str) else None
    typed = typed if isinstance(typed, str) else None
    response = _as_text(action.get("raw_response"))
    return _result(_dumps(action), "computer_13", kind, x, y, typed, response, func=func, keys=keys)


def _parse_dict(action: dict, read: CodeReader) -> dict:
    at = action.get("action_type")
    if isinstance(at, str):
        up = at.strip().upper()
        if up in SPECIAL_KINDS and not (set(action) - {"action_type", "raw_response"}):
            return _word(at, SPECIAL_KINDS[up], response=_as_text(action.get("raw_response")))
    if isinstance(action.get("input"), dict) or at == "tool_use" or "command" in action:
        return _parse_claude(action, read)
    if "action_space" in action or "call_id" in action or "pending_checks" in action:
        return _parse_operator(action, read)
    if isinstance(at, str):
        kind = _C13_KINDS.get(at.strip().upper())
        if kind is not None:
            return _parse_computer_13(action, kind, at)
    func = at if isinstance(at, str) else None
    response = _as_text(action.get("raw_response"))
    return _result(_dumps(action), "dict", "other", response=response, func=func)


def parse_action(action: object) -> dict:
    """Keys: action_text (str|None), action_format, action_kind, x (float|None), y (float|None),
    text (str|None), response (str|None), actions (the step's SubActions, in order: one per
    call of a code string, the one dict action or word; none for no action). Total: never
    raises, for any JSON value.

    A string action's result is remembered (a run repeats its hotkeys, presses, scrolls and
    words many times), but for a click at new coordinates, read from its shape (`read_point`)
    and never remembered: one entry per step would push out what a run repeats. Each call
    gets a dict of its own, whose values are all immutable."""
    if type(action) is str:
        code = read_point(action)  # no special word is a pyautogui call: as _parse_string
        if code is not None:
            return _result(action, "code", code.kind, code.x, code.y, code.text,
                           actions=code.actions)  # fmt: skip
        return dict(_parse_text(action))
    return parse_action_uncached(action)


@lru_cache(maxsize=4096)
def _parse_text(action: str) -> dict:
    """The remembered result, never handed out itself (callers may change their dict)."""
    return parse_action_uncached(action)


def clear_action_memo() -> None:
    """Forget every remembered reading (`parse_action`'s and `read_code`'s): a cold start."""
    _parse_text.cache_clear()
    code_memo_clear()


def parse_action_uncached(action: object, read: CodeReader = read_code) -> dict:
    """`parse_action` without its memo, reading code strings with `read`."""
    try:
        if isinstance(action, str):
            return _parse_string(action, read)
        if isinstance(action, dict):
            return _parse_dict(action, read)
        if action is None:
            return _result(None, "none", "other", actions=())
        return _result(_dumps(action), "dict", "other")
    except Exception:  # a shape no branch foresaw: keep the text, never lose the line
        return _result(_dumps(action), "dict", "other")


STEP_KEYS: tuple[str, ...] = ("run_id", "benchmark", "domain", "task_id", "step_idx")
"""The step row's keys every step_actions row repeats."""


def action_rows(step: Mapping[str, Any], actions: Iterable[SubAction]) -> list[dict]:
    """The step_actions rows of one step row's sub-actions (`parse_action(...)["actions"]`)."""
    keys = {k: step[k] for k in STEP_KEYS}
    rows = []
    for i, a in enumerate(actions):
        row = {**keys, "action_idx": i, **a._asdict()}
        row["keys"] = list(a.keys) if a.keys is not None else None
        rows.append(row)
    return rows


def action_columns(
    keys: Mapping[str, Any], step_idx: list[int], action_idx: list[int], subs: list[SubAction]
) -> ColumnRows:
    """`action_rows` of many steps at once, as columns: `subs[i]` is sub-action `action_idx[i]`
    of step `step_idx[i]`, and `keys` the run_id, benchmark, domain and task_id they share.
    The sub-actions are tuples, so their fields are transposed in one C pass, with no dict
    per row."""
    n = len(subs)
    fields = (
        dict(zip(SubAction._fields, map(list, zip(*subs, strict=True)), strict=True))
        if subs
        else {f: [] for f in SubAction._fields}
    )
    fields["keys"] = [list(k) if k is not None else None for k in fields["keys"]]
    shared = {k: [keys[k]] * n for k in STEP_KEYS if k != "step_idx"}
    return ColumnRows({**shared, "step_idx": step_idx, "action_idx": action_idx, **fields})


def derived_action_rows(steps: Iterable[Mapping[str, Any]]) -> list[dict]:
    """step_actions rows for step rows a reader built without their sub-actions (a plugin
    format that only fills `steps`): a code string or special word is read again from
    action_text; any other step is one sub-action of the step's own kind, position and text.
    Runner error lines and steps without an action have none."""
    rows: list[dict] = []
    for s in steps:
        fmt, kind, text = s.get("action_format"), s.get("action_kind"), s.get("action_text")
        if kind == "error" or fmt == "none":
            continue
        if fmt in ("code", "special") and isinstance(text, str):
            acts = parse_action(text)["actions"]
        else:
            acts = (SubAction(kind or "other", None, s.get("x"), s.get("y"), s.get("text"),
                              parser="dict"),)  # fmt: skip
        rows.extend(action_rows(s, acts))
    return rows

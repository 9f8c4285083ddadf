"""Parsing one archived agent action into a kind, a pointer position and typed text.

OSWorld runners log an action per trajectory line in one of several shapes: a pyautogui code
string, a special word (WAIT, DONE, FAIL, CALL_USER), or a dict from the Claude computer-use
agent, the OpenAI Operator / GPT-5.4 agents, or the `computer_13` action space. Loop
detection and the step tables need the same few facts from each, so `parse_action` reduces
every shape to one flat dict. It is called once per trajectory line, so it is a regex scan
(no `ast` parse of the code) and it is total: no JSON value makes it raise.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

KINDS: tuple[str, ...] = (
    "click", "double_click", "right_click", "triple_click", "move", "drag", "mouse_down",
    "mouse_up", "type", "hotkey", "press", "key_down", "key_up", "scroll", "wait", "done",
    "fail", "bash", "screenshot", "call_user", "error", "other",
)  # fmt: skip
"""Every value `action_kind` can take (the steps table documents the same list)."""

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
)
"""The keys of every dict `parse_action` returns."""

SPECIAL_KINDS = {"WAIT": "wait", "DONE": "done", "FAIL": "fail", "CALL_USER": "call_user"}
"""Special action words, exactly as OSWorld spells them (upper case)."""

# pyautogui function -> (kind, where its coordinates sit: "xy" first two args, "scroll" args
# two and three, None no absolute coordinates).
_FUNCS: dict[str, tuple[str, str | None]] = {
    "click": ("click", "xy"),
    "leftClick": ("click", "xy"),
    "middleClick": ("click", "xy"),
    "doubleClick": ("double_click", "xy"),
    "rightClick": ("right_click", "xy"),
    "tripleClick": ("triple_click", "xy"),
    "moveTo": ("move", "xy"),
    "moveRel": ("move", None),
    "move": ("move", None),
    "dragTo": ("drag", "xy"),
    "dragRel": ("drag", None),
    "drag": ("drag", None),
    "mouseDown": ("mouse_down", "xy"),
    "mouseUp": ("mouse_up", "xy"),
    "write": ("type", None),
    "typewrite": ("type", None),
    "hotkey": ("hotkey", None),
    "press": ("press", None),
    "keyDown": ("key_down", None),
    "keyUp": ("key_up", None),
    "scroll": ("scroll", "scroll"),
    "hscroll": ("scroll", "scroll"),
    "vscroll": ("scroll", "scroll"),
    "sleep": ("wait", None),
    "screenshot": ("screenshot", None),
}

# A kind decides only if no call of a lower tier is in the script: a leading moveTo or held
# modifier key is preparation for the click or drag that follows (Operator logs
# "moveTo(x, y)\nclick(button='left')"), and a sleep is only a pause.
_TEXT_KINDS = frozenset(("type", "hotkey", "press", "key_down", "key_up"))
_TIER = {"move": 1, "key_down": 1, "key_up": 1, "wait": 2, "screenshot": 2}

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_SQ = r"'(?:[^'\\]|\\.)*+'"
_DQ = r'"(?:[^"\\]|\\.)*+"'
_STR = (
    r"[rRuUbBfF]{0,2}(?:"
    r'"""(?:[^"\\]|\\.|"(?!""))*+"""'
    r"|'''(?:[^'\\]|\\.|'(?!''))*+'''"
    r'|"(?:[^"\\\n]|\\.)*+"'
    r"|'(?:[^'\\\n]|\\.)*+')"
)
_CALL = re.compile(r"\bpyautogui\s*\.\s*(\w+)\s*\(|\btime\s*\.\s*sleep\s*\(")
# The argument text of a call: up to its closing parenthesis, one level of nesting, quotes
# respected (a triple-quoted literal splits into quoted pieces, which this still accepts).
_ARGS = re.compile(
    r"(?:[^()'\"]++|" + _SQ + "|" + _DQ + r"|\((?:[^()'\"]|" + _SQ + "|" + _DQ + r")*+\))*+",
    re.S,
)
_XY = re.compile(rf"\s*\(?\s*(?:x\s*=\s*)?({_NUM})\s*,\s*(?:y\s*=\s*)?({_NUM})")
_SCROLL_XY = re.compile(
    rf"\s*(?:clicks\s*=\s*)?{_NUM}\s*,\s*(?:x\s*=\s*)?({_NUM})\s*,\s*(?:y\s*=\s*)?({_NUM})"
)
_KW_X = re.compile(rf"(?:^|[\s,(])x\s*=\s*({_NUM})")
_KW_Y = re.compile(rf"(?:^|[\s,(])y\s*=\s*({_NUM})")
_BUTTON = re.compile(r"""\bbutton\s*=\s*['"](\w+)['"]""")
_CLICKS = re.compile(r"\bclicks\s*=\s*(\d+)")
_STRLIT = re.compile(_STR, re.S)
_FIRST_STR = re.compile(rf"\s*(?:message\s*=\s*)?\[?\s*({_STR})", re.S)


def _result(
    text: str | None,
    fmt: str,
    kind: str,
    x: float | None = None,
    y: float | None = None,
    typed: str | None = None,
    response: str | None = None,
) -> dict:
    return {
        "action_text": text,
        "action_format": fmt,
        "action_kind": kind,
        "x": x,
        "y": y,
        "text": typed,
        "response": response,
    }


def _dumps(value: Any) -> str:
    """Compact JSON text of any value; never raises (falls back to repr, then the type name)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
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


def _literal(token: str) -> str:
    """The value of a Python string literal token, decoded cheaply (escapes only when present)."""
    i = 0
    while token[i] not in "'\"":
        i += 1
    prefix, body = token[:i].lower(), token[i:]
    q = 3 if body[:3] in ('"""', "'''") and len(body) >= 6 else 1
    inner = body[q:-q]
    if "\\" not in inner or "r" in prefix:
        return inner
    try:
        return inner.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except Exception:
        return inner


def _strings(args: str) -> list[str]:
    return [_literal(m.group()) for m in _STRLIT.finditer(args)]


def _join_keys(keys: list[str]) -> str | None:
    return "+".join(keys) if keys else None


def _args(code: str, pos: int) -> str:
    m = _ARGS.match(code, pos)
    return m.group() if m else ""


def _code_xy(
    code: str, pos: int, where: str, args: str | None
) -> tuple[float | None, float | None]:
    m = (_XY if where == "xy" else _SCROLL_XY).match(code, pos)
    if m:
        x, y = _coord(m.group(1)), _coord(m.group(2))
    else:
        if args is None:
            args = _args(code, pos)
        mx, my = _KW_X.search(args), _KW_Y.search(args)
        if not (mx and my):
            return None, None
        x, y = _coord(mx.group(1)), _coord(my.group(1))
    return (x, y) if x is not None and y is not None else (None, None)


def _click_kind(args: str) -> str:
    """click(button='right') is a right click; clicks=2 or 3 a double or triple click."""
    b = _BUTTON.search(args)
    if b and b.group(1) == "right":
        return "right_click"
    c = _CLICKS.search(args)
    if c and c.group(1) == "2":
        return "double_click"
    if c and c.group(1) == "3":
        return "triple_click"
    return "click"


def _call_text(kind: str, args: str) -> str | None:
    if kind == "type":
        m = _FIRST_STR.match(args)
        if not m:
            return None
        if "[" in args[: m.start(1)]:
            items = _strings(args)
            if all(len(i) == 1 for i in items):
                return "".join(items)
            return _join_keys(items)
        return _literal(m.group(1))
    if kind in ("hotkey", "press", "key_down", "key_up"):
        return _join_keys(_strings(args))
    return None


def parse_code(code: str) -> tuple[str, float | None, float | None, str | None]:
    """(kind, x, y, text) of a pyautogui script.

    The kind is the first call of the lowest tier (a click, type, drag, ... over a moveTo,
    keyDown or keyUp, over a sleep); a script of only keyDown/keyUp calls is a hotkey (several
    keys) or a press (one). x/y come from the first call that carries numeric absolute
    coordinates; text from the deciding call (typed text, keys joined with '+').
    """
    stripped = code.lstrip()
    if stripped.startswith("BASH "):
        return "bash", None, None, stripped[5:]
    kind = None
    tier = 3
    text = None
    x = y = None
    downs: list[str] = []
    only_keys = True
    has_up = False
    for m in _CALL.finditer(code):
        fn = m.group(1)
        if fn is None:
            k, where = "wait", None
        else:
            spec = _FUNCS.get(fn)
            if spec is None:
                continue
            k, where = spec
        is_key = k == "key_down" or k == "key_up"
        if not is_key:
            only_keys = False
        t = _TIER.get(k, 0)
        if not (t < tier or (where and x is None) or (is_key and only_keys)):
            continue
        pos = m.end()
        args = None
        if fn == "click" or (is_key and only_keys) or (t < tier and k in _TEXT_KINDS):
            args = _args(code, pos)
            if fn == "click":
                k = _click_kind(args)
        if is_key and only_keys:
            if k == "key_down":
                downs.extend(_strings(args))
            else:
                has_up = True
        if t < tier:
            kind, tier = k, t
            text = _call_text(k, args) if args is not None else None
        if where and x is None:
            x, y = _code_xy(code, pos, where, args)
        if tier == 0 and x is not None:
            break
    if kind is None:
        return "other", x, y, None
    if only_keys and has_up and downs:
        return ("hotkey" if len(downs) > 1 else "press"), x, y, "+".join(downs)
    return kind, x, y, text


def _parse_string(action: str) -> dict:
    word = action.strip()
    special = SPECIAL_KINDS.get(word)
    if special is not None:
        return _result(action, "special", special)
    kind, x, y, text = parse_code(action)
    return _result(action, "code", kind, x, y, text)


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


def _parse_claude(action: dict) -> dict:
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
            kind, cx, cy, typed = parse_code(command)
    if isinstance(inp, dict):
        name = inp.get("action")
        if isinstance(name, str):
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
    return _result(text, "claude", kind, cx, cy, typed, response)


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


def _parse_operator(action: dict) -> dict:
    inner = action.get("action")
    response = _as_text(action.get("raw_response"))
    if isinstance(inner, str):
        r = _parse_string(inner)
        r["action_format"] = "operator"
        r["response"] = response
        return r
    if not isinstance(inner, dict):
        return _result(_as_text(inner), "operator", "other", response=response)
    typ = inner.get("type")
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
        keys = inner.get("keys")
        typed = None
        if isinstance(keys, list) and all(isinstance(k, str) for k in keys):
            typed = _join_keys(keys)
    return _result(_dumps(inner), "operator", kind, x, y, typed, response)


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


def _parse_computer_13(action: dict, kind: str) -> dict:
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
    typed = None
    if kind == "type":
        typed = params.get("text")
    elif kind == "hotkey":
        keys = params.get("keys")
        if isinstance(keys, list) and all(isinstance(k, str) for k in keys):
            typed = _join_keys(keys)
        elif isinstance(keys, str):
            typed = keys
    elif kind in ("press", "key_down", "key_up"):
        typed = params.get("key")
    typed = typed if isinstance(typed, str) else None
    return _result(
        _dumps(action), "computer_13", kind, x, y, typed, _as_text(action.get("raw_response"))
    )


def _parse_dict(action: dict) -> dict:
    at = action.get("action_type")
    if isinstance(at, str):
        up = at.strip().upper()
        if up in SPECIAL_KINDS and not (set(action) - {"action_type", "raw_response"}):
            return _result(
                at, "special", SPECIAL_KINDS[up], response=_as_text(action.get("raw_response"))
            )
    if isinstance(action.get("input"), dict) or at == "tool_use" or "command" in action:
        return _parse_claude(action)
    if "action_space" in action or "call_id" in action or "pending_checks" in action:
        return _parse_operator(action)
    if isinstance(at, str):
        kind = _C13_KINDS.get(at.strip().upper())
        if kind is not None:
            return _parse_computer_13(action, kind)
    return _result(_dumps(action), "dict", "other", response=_as_text(action.get("raw_response")))


def parse_action(action: object) -> dict:
    """Keys: action_text (str|None), action_format, action_kind, x (float|None), y (float|None),
    text (str|None), response (str|None). Total: never raises, for any JSON value."""
    try:
        if isinstance(action, str):
            return _parse_string(action)
        if isinstance(action, dict):
            return _parse_dict(action)
        if action is None:
            return _result(None, "none", "other")
        return _result(_dumps(action), "dict", "other")
    except Exception:  # a shape no branch foresaw: keep the text, never lose the line
        return _result(_dumps(action), "dict", "other")

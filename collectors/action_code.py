"""pyautogui code to its calls, in order, and the one kind, position and text of the step.

OSWorld's pyautogui action space logs each action as the Python code the runner executed:
one call, several calls chained with ';' or on lines of a script (with imports, comments,
pauses, a shell command run through `subprocess`). The code is read with Python's own `ast`,
so every call is seen whatever its quoting (triple-quoted, escaped, implicitly concatenated
strings), spacing or argument style (positional, keyword, an (x, y) tuple), and whichever
name pyautogui goes by (`import pyautogui as pg`, `from pyautogui import click`). Argument
values are read with `ast.literal_eval` semantics, never executed: a variable, an f-string
with a placeholder or arithmetic leaves the value null. Only code `ast` cannot parse (a line
cut off mid-string, prose) goes to a regex scan of `pyautogui.X(...)` and `time.sleep(...)`
calls, which finds what it can and never raises. Code in the plain form most actions take
(`pyautogui.click(512, 384)`, `import pyautogui; pyautogui.press('enter')`: calls with number
and simple string arguments) skips the compiler: `simple_code` reads it into the nodes `ast`
would give, and the same functions read those.

The calls of a step (sub-actions) are the calls that are not arguments of another call
(`click(*locateCenterOnScreen('ok.png'))` is one click), in source order. Each gets a kind
from KINDS: pyautogui's functions map to click, type, hotkey, ...; `time.sleep` and
`pyautogui.sleep` to wait; `subprocess.run/call/check_call/check_output/Popen/getoutput/
getstatusoutput`, `os.system` and `os.popen` to bash (the command, a string or a list joined
as a shell line, is the text); any other call to other.

The step's kind (STEP RULE), the one the `steps` table stores:

- calls fall in tiers: actions (every kind not named below), then moves, held keys and
  releases (move, key_down, key_up, mouse_up: they prepare or complete the action around
  them, as in Operator's "moveTo(x, y); click()" or "keyDown('shift'); click(); keyUp(...)"),
  then pauses (wait, screenshot), then other calls;
- the *effective* calls are those of the first tier the step has any call of;
- the step's kind is `multi` when its effective calls are actions of more than one kind
  ("hotkey('win'); write('vlc'); press('enter')"), else the kind of its first effective call;
  except that a step of only key_down/key_up calls (at least one of each) is the hotkey
  (several keys held) or press (one key) it spells; a step without calls is other.
  So a trailing (or leading) sleep never decides a kind unless the step only sleeps.
- x/y are those of the first call with literal coordinates (a moveTo before a bare click
  gives the click its place); text is the first effective call's text (the held keys joined
  with '+' for a keyDown/keyUp hotkey).

For a step of one call this is what the earlier one-call reading gave; steps of several
actions of different kinds are `multi` where they used to take the first one's kind.
"""

from __future__ import annotations

import ast
import re
import shlex
import textwrap
import warnings
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from deskscore.collectors.json_text import scrub_surrogates
from deskscore.collectors.numbers import finite_float
from deskscore.collectors.simple_code import simple_calls, statement_pattern

PARSERS: tuple[str, ...] = ("ast", "regex", "word", "dict")
"""How a sub-action was read: Python code by `ast`, code `ast` cannot parse by the regex scan,
a special word (WAIT, DONE, ..., a 'BASH ' command line), or a structured (dict) action."""


class SubAction(NamedTuple):
    """One call of a step (or a step's one dict action or special word); the step_actions row
    without the step's keys."""

    kind: str
    func: str | None = None
    x: float | None = None
    y: float | None = None
    text: str | None = None
    keys: tuple[str, ...] | None = None
    button: str | None = None
    clicks: int | None = None
    amount: float | None = None
    seconds: float | None = None
    call_text: str | None = None
    parser: str = "ast"
    effective: bool = True


class CodeRead(NamedTuple):
    """A code string read: the step's kind, x, y, text (STEP RULE) and its calls in order."""

    kind: str
    x: float | None
    y: float | None
    text: str | None
    actions: tuple[SubAction, ...]


# pyautogui function -> (kind, its parameters in order: how positional arguments bind).
_PYAUTOGUI: dict[str, tuple[str, tuple[str, ...]]] = {
    "click": ("click", ("x", "y", "clicks", "interval", "button")),
    "leftClick": ("click", ("x", "y", "interval")),
    "middleClick": ("click", ("x", "y")),
    "doubleClick": ("double_click", ("x", "y", "interval", "button")),
    "rightClick": ("right_click", ("x", "y", "interval")),
    "tripleClick": ("triple_click", ("x", "y", "interval", "button")),
    "moveTo": ("move", ("x", "y")),
    "moveRel": ("move", ()),
    "move": ("move", ()),
    "dragTo": ("drag", ("x", "y", "duration", "tween", "button")),
    "dragRel": ("drag", ()),
    "drag": ("drag", ()),
    "mouseDown": ("mouse_down", ("x", "y", "button")),
    "mouseUp": ("mouse_up", ("x", "y", "button")),
    "write": ("type", ("message", "interval")),
    "typewrite": ("type", ("message", "interval")),
    "hotkey": ("hotkey", ()),
    "press": ("press", ("keys", "presses", "interval")),
    "keyDown": ("key_down", ("key",)),
    "keyUp": ("key_up", ("key",)),
    "scroll": ("scroll", ("clicks", "x", "y")),
    "hscroll": ("scroll", ("clicks", "x", "y")),
    "vscroll": ("scroll", ("clicks", "x", "y")),
    "sleep": ("wait", ("seconds",)),
    "screenshot": ("screenshot", ()),
}
_CLICKS = {"click": 1, "leftClick": 1, "middleClick": 1, "rightClick": 1,
           "doubleClick": 2, "tripleClick": 3}  # fmt: skip
_BUTTONS = {"leftClick": "left", "middleClick": "middle", "rightClick": "right"}
_SHELL = {
    "subprocess": ("run", "call", "check_call", "check_output", "Popen", "getoutput",
                   "getstatusoutput"),
    "os": ("system", "popen"),
}  # fmt: skip
_SHELL_CALLS = frozenset(f"{m}.{f}" for m, fs in _SHELL.items() for f in fs)
_EXPORTS = {"pyautogui": tuple(_PYAUTOGUI), "time": ("sleep",), **_SHELL}
"""What `from M import *` brings in, of the modules whose calls have kinds."""
_MODULES = {m: m for m in _EXPORTS}
"""Module names usable without an import: runners prepend `import pyautogui` (and time)."""

_KEY_KINDS = frozenset(("hotkey", "press", "key_down", "key_up"))
_TIER = {"move": 1, "key_down": 1, "key_up": 1, "mouse_up": 1, "wait": 2, "screenshot": 2,
         "other": 3}  # fmt: skip
_UNKNOWN = object()


# --------------------------------------------------------------------------- values


def _quietly(parse: Any, source: str) -> Any:
    """`parse(source)` with Python's warnings about the source (an invalid escape such as
    'C:\\dir' warns) silenced: where warnings are errors they would make it a SyntaxError, so
    the same code would parse differently under different warning filters."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return parse(source)


def _value(node: ast.AST | None) -> Any:
    """The literal value of an argument (ast.literal_eval semantics), or _UNKNOWN.

    An f-string made only of literal parts is that string; with a placeholder it is unknown."""
    if node is None:
        return _UNKNOWN
    if type(node) is ast.Constant:  # literal_eval's own first case, without its set-up
        value = node.value
        return _storable(value) if type(value) is str else value
    if isinstance(node, ast.JoinedStr):
        if all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in node.values):
            return _storable("".join(v.value for v in node.values))  # type: ignore[attr-defined]
        return _UNKNOWN
    try:
        return scrub_surrogates(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN


def _storable(text: str) -> str:
    """`text` with any lone surrogate replaced: code may write one as an escape
    (`typewrite("a\\ud800")`), which no column can store (UTF-8 has none)."""
    return text if text.isascii() else scrub_surrogates(text)


def _count(value: Any) -> int | None:
    return value if type(value) is int and -(2**31) <= value < 2**31 else None


def _strings(value: Any) -> list[str] | None:
    """A string as one item, a list or tuple of strings as its items; else None."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _keys_text(keys: Sequence[str] | None) -> str | None:
    return "+".join(keys) if keys else None


def _shell_line(value: Any) -> str | None:
    """A command as one shell line: a string as is, an argument list quoted and joined."""
    if isinstance(value, str):
        return value
    items = _strings(value)
    return shlex.join(items) if items else None


# --------------------------------------------------------------------------- ast reading


def _names(imports: Sequence[ast.AST]) -> dict[str, str]:
    """Local name -> the dotted name it stands for, from the script's imports."""
    names = dict(_MODULES)
    for node in imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    root = alias.name.partition(".")[0]
                    names[root] = root
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name == "*":
                    for fn in _EXPORTS.get(node.module, ()):
                        names[fn] = f"{node.module}.{fn}"
                else:
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(func: ast.AST, names: dict[str, str]) -> str | None:
    """`pg.click` -> 'pyautogui.click' (through the script's imports); None when the callee
    is not a name or attribute chain (a subscript, a call's result)."""
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    parts.append(names.get(func.id, func.id))
    return ".".join(reversed(parts))


def _scan(tree: ast.AST) -> tuple[list[ast.AST], list[ast.Call]]:
    """(the imports, the calls that are not inside another call in source order), in one walk."""
    imports: list[ast.AST] = []
    calls: list[ast.Call] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            calls.append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(node)
        else:
            stack.extend(ast.iter_child_nodes(node))
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    return imports, calls


def _segment(lines: list[bytes], node: ast.expr) -> str | None:
    """The node's source text (as ast.get_source_segment, whose cost grows with the whole
    script for each call). `lines` are the script's UTF-8 lines: offsets count bytes."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    end = node.end_col_offset
    if end is None or last >= len(lines):
        return None
    if first == last:
        raw = lines[first][node.col_offset : end]
    else:
        raw = b"".join(
            [lines[first][node.col_offset :], *lines[first + 1 : last], lines[last][:end]]
        )
    return raw.decode("utf-8", "replace")


def _bind(call: ast.Call, params: tuple[str, ...]) -> dict[str, ast.AST]:
    """Argument nodes by parameter name; positional ones up to the first *args."""
    bound: dict[str, ast.AST] = {}
    for name, arg in zip(params, call.args, strict=False):
        if isinstance(arg, ast.Starred):
            break
        bound[name] = arg
    for kw in call.keywords:
        if kw.arg is not None:
            bound[kw.arg] = kw.value
    return bound


def _xy(bound: dict[str, ast.AST]) -> tuple[float | None, float | None]:
    """Literal (x, y): x= and y=, or an (x, y) pair given as x."""
    x = _value(bound.get("x"))
    if "y" not in bound and isinstance(x, (tuple, list)) and len(x) == 2:
        x, y = x
    else:
        y = _value(bound.get("y"))
    fx, fy = finite_float(x), finite_float(y)
    return (fx, fy) if fx is not None and fy is not None else (None, None)


def _pyautogui_call(fn: str, call: ast.Call, call_text: str | None) -> SubAction:
    kind, params = _PYAUTOGUI[fn]
    bound = _bind(call, params)
    x, y = _xy(bound) if "x" in params else (None, None)
    text = keys = button = clicks = amount = seconds = None
    if "button" in bound:
        b = _value(bound["button"])
        button = b if isinstance(b, str) else None
    else:
        button = _BUTTONS.get(fn)
    if fn in _CLICKS:
        clicks = _count(_value(bound["clicks"])) if "clicks" in bound else _CLICKS[fn]
        if fn == "click":
            if button == "right":
                kind = "right_click"
            elif clicks == 2:
                kind = "double_click"
            elif clicks == 3:
                kind = "triple_click"
    elif kind == "type":
        message = _value(bound.get("message"))
        if isinstance(message, str):
            text = message
        else:
            items = _strings(message)
            if items:
                keys = tuple(items)
                text = "".join(items) if all(len(i) == 1 for i in items) else "+".join(items)
    elif kind in _KEY_KINDS:
        if fn == "hotkey":
            found: list[str] | None = []
            for arg in call.args:
                items = None if isinstance(arg, ast.Starred) else _strings(_value(arg))
                if items is None:
                    found = None
                    break
                found.extend(items)  # type: ignore[union-attr]
        else:
            node = bound.get("keys", bound.get("key"))
            found = _strings(_value(node))
        keys = tuple(found) if found else None
        text = _keys_text(found)
    elif kind == "scroll":
        amount = finite_float(_value(bound.get("clicks")))
    elif kind == "wait":
        seconds = finite_float(_value(bound.get("seconds")))
    return SubAction(kind, f"pyautogui.{fn}", x, y, text, keys, button, clicks, amount, seconds,
                     call_text)  # fmt: skip


def _read_call(call: ast.Call, func: str | None, call_text: str | None) -> SubAction:
    """The call's sub-action, given its callee's dotted name (`_dotted`) and source text."""
    module, _, fn = (func or "").rpartition(".")
    if module == "pyautogui" and fn in _PYAUTOGUI:
        return _pyautogui_call(fn, call, call_text)
    if func == "time.sleep":
        first = call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else None
        return SubAction("wait", func, seconds=finite_float(_value(first)), call_text=call_text)
    if func in _SHELL_CALLS:
        bound = _bind(call, ("args",))
        node = bound.get("args", bound.get("command", bound.get("cmd")))
        return SubAction("bash", func, text=_shell_line(_value(node)), call_text=call_text)
    return SubAction("other", func, call_text=call_text)


def _ast_calls(code: str) -> tuple[SubAction, ...] | None:
    """The script's calls, or None when `ast` cannot parse it."""
    source = textwrap.dedent(code) if code[:1].isspace() else code
    try:
        tree = _quietly(ast.parse, source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    imports, calls = _scan(tree)
    names = _names(imports)
    lines = source.encode("utf-8", "surrogatepass").splitlines(keepends=True)
    return tuple(_read_call(c, _dotted(c.func, names), _segment(lines, c)) for c in calls)


_SIMPLE = statement_pattern(_PYAUTOGUI)


def _simple_calls(code: str) -> tuple[SubAction, ...] | None:
    """The calls of code in the plain form `simple_code` reads without compiling it (the same
    sub-actions `_ast_calls` gives it); None for any other code."""
    found = simple_calls(code, _SIMPLE)
    if found is None:
        return None
    return tuple(_read_call(node, func, text) for func, node, text in found)


# --------------------------------------------------------------------------- regex fallback

# No two parts of a pattern may take the same characters (digits, spaces) by turns: a
# long run of them would be tried in every split, and reading it take quadratic time.
# (Possessive quantifiers would say so more briefly, but Python 3.11.2 matches some wrong.)
_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_SQ = r"'(?:[^'\\]|\\.)*'"
_DQ = r'"(?:[^"\\]|\\.)*"'
_STR = (
    r"[rRuUbBfF]{0,2}(?:"
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|'(?:[^'\\\n]|\\.)*')"
)
_CALL = re.compile(r"\bpyautogui\s*\.\s*(\w+)\s*\(|\btime\s*\.\s*sleep\s*\(")
# The argument text of a call: up to its closing parenthesis, one level of nesting, quotes
# respected (a triple-quoted literal splits into quoted pieces, which this still accepts).
# Every alternative starts on a different character, so no input makes it backtrack far.
_ARGS = re.compile(
    r"(?:[^()'\"]+|" + _SQ + "|" + _DQ + r"|\((?:[^()'\"]|" + _SQ + "|" + _DQ + r")*\))*",
    re.S,
)
_XY = re.compile(rf"\s*(?:\(\s*)?(?:x\s*=\s*)?({_NUM})\s*,\s*(?:y\s*=\s*)?({_NUM})")
_SCROLL_XY = re.compile(
    rf"\s*(?:clicks\s*=\s*)?{_NUM}\s*,\s*(?:x\s*=\s*)?({_NUM})\s*,\s*(?:y\s*=\s*)?({_NUM})"
)
_KW_X = re.compile(rf"(?:^|[\s,(])x\s*=\s*({_NUM})")
_KW_Y = re.compile(rf"(?:^|[\s,(])y\s*=\s*({_NUM})")
_BUTTON = re.compile(r"""\bbutton\s*=\s*['"](\w+)['"]""")
_CLICKS_KW = re.compile(r"\bclicks\s*=\s*(\d+)")
_STRLIT = re.compile(_STR, re.S)
_FIRST_STR = re.compile(rf"\s*(?:message\s*=\s*)?(?:\[\s*)?({_STR})", re.S)


def _literal(token: str) -> str:
    """The value of a string literal token the regex found (`ast` first, then a plain decode
    for a token `ast` refuses, such as one whose escapes are invalid)."""
    try:
        value = _quietly(ast.literal_eval, token)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        value = None
    if isinstance(value, str):
        return _storable(value)
    i = 0
    while token[i] not in "'\"":
        i += 1
    body = token[i:]
    q = 3 if body[:3] in ('"""', "'''") and len(body) >= 6 else 1
    return body[q:-q]


def _regex_strings(args: str) -> list[str]:
    return [_literal(m.group()) for m in _STRLIT.finditer(args)]


def _regex_xy(args: str, scroll: bool) -> tuple[float | None, float | None]:
    m = (_SCROLL_XY if scroll else _XY).match(args)
    if m:
        x, y = m.group(1), m.group(2)
    else:
        mx, my = _KW_X.search(args), _KW_Y.search(args)
        if not (mx and my):
            return None, None
        x, y = mx.group(1), my.group(1)
    fx, fy = finite_float(_float(x)), finite_float(_float(y))
    return (fx, fy) if fx is not None and fy is not None else (None, None)


def _float(token: str) -> float | None:
    try:
        return float(token)
    except (ValueError, OverflowError):
        return None


def _regex_call(fn: str | None, args: str, call_text: str) -> SubAction:
    if fn is None:
        return SubAction("wait", "time.sleep", call_text=call_text, parser="regex")
    spec = _PYAUTOGUI.get(fn)
    if spec is None:
        return SubAction("other", f"pyautogui.{fn}", call_text=call_text, parser="regex")
    kind, params = spec
    x, y = _regex_xy(args, kind == "scroll") if "x" in params else (None, None)
    text = keys = None
    if fn == "click":
        b, c = _BUTTON.search(args), _CLICKS_KW.search(args)
        if b and b.group(1) == "right":
            kind = "right_click"
        elif c and c.group(1) in ("2", "3"):
            kind = "double_click" if c.group(1) == "2" else "triple_click"
    elif kind == "type":
        m = _FIRST_STR.match(args)
        if m and "[" in args[: m.start(1)]:
            items = _regex_strings(args)
            keys = tuple(items)
            text = "".join(items) if all(len(i) == 1 for i in items) else _keys_text(items)
        elif m:
            text = _literal(m.group(1))
    elif kind in _KEY_KINDS:
        items = _regex_strings(args)
        keys = tuple(items) or None
        text = _keys_text(items)
    return SubAction(kind, f"pyautogui.{fn}", x, y, text, keys, call_text=call_text,
                     parser="regex")  # fmt: skip


def _regex_calls(code: str) -> tuple[SubAction, ...]:
    """The `pyautogui.X(...)` and `time.sleep(...)` calls a scan finds in code `ast` refuses."""
    calls = []
    for m in _CALL.finditer(code):
        args_match = _ARGS.match(code, m.end())
        args = args_match.group() if args_match else ""
        end = m.end() + len(args)
        end += code[end : end + 1] == ")"
        calls.append(_regex_call(m.group(1), args, code[m.start() : end]))
    return tuple(calls)


# --------------------------------------------------------------------------- the step


def _marked(call: SubAction, effective: bool) -> SubAction:
    """The call with `effective` set (itself when it already is: most calls are effective)."""
    return call if call.effective is effective else call._replace(effective=effective)


def decide(calls: Sequence[SubAction]) -> CodeRead:
    """The step's kind, x, y and text from its calls (STEP RULE in the module doc), and the
    calls with `effective` set."""
    if len(calls) == 1:  # what the rule gives one call (never a key chord), directly
        call = _marked(calls[0], True)
        if call.x is not None and call.y is not None:
            return CodeRead(call.kind, call.x, call.y, call.text, (call,))
        return CodeRead(call.kind, None, None, call.text, (call,))
    return _decide(calls)


def _decide(calls: Sequence[SubAction]) -> CodeRead:
    """The STEP RULE for any number of calls."""
    if not calls:
        return CodeRead("other", None, None, None, ())
    tiers = [_TIER.get(c.kind, 0) for c in calls]
    tier = min(tiers)
    ranked = [c for c, t in zip(calls, tiers, strict=True) if t < 3]
    downs = [k for c in ranked if c.kind == "key_down" for k in c.keys or ()]
    key_chord = (
        tier == 1
        and all(c.kind in ("key_down", "key_up") for c in ranked)
        and any(c.kind == "key_up" for c in ranked)
        and bool(downs)
    )
    if key_chord:
        marked = tuple(_marked(c, c.kind in ("key_down", "key_up")) for c in calls)
        kind, text = ("hotkey" if len(downs) > 1 else "press"), "+".join(downs)
    else:
        marked = tuple(_marked(c, t == tier) for c, t in zip(calls, tiers, strict=True))
        first = next(c for c in marked if c.effective)
        kinds = {c.kind for c in marked if c.effective}
        kind = "multi" if tier == 0 and len(kinds) > 1 else first.kind
        text = first.text
    x = y = None
    for c in calls:
        if c.x is not None and c.y is not None:
            x, y = c.x, c.y
            break
    return CodeRead(kind, x, y, text, marked)


def read_code_uncached(code: str, *, simple: bool = True) -> CodeRead:
    """`read_code` without its cache. `simple=False` compiles every code string, plain or
    not: the reading the plain-form shortcut is tested and benchmarked against."""
    stripped = code.lstrip()
    if stripped.startswith("BASH "):
        sub = SubAction("bash", None, text=stripped[5:], call_text=code, parser="word")
        return CodeRead("bash", None, None, stripped[5:], (sub,))
    calls = _simple_calls(code) if simple else None
    if calls is None:
        calls = _ast_calls(code)
    if calls is None:
        calls = _regex_calls(code)
    return decide(calls)


def read_code(code: str) -> CodeRead:
    """Read a pyautogui code string (or a 'BASH <command>' line): its calls and the step's
    kind, x, y, text. Pure, and quick for what runs repeat: a click at new coordinates is
    read from its shape (`read_point`), outside the memo, where one entry per step would push
    out the actions a run repeats many times; those are remembered (`_read_remembered`);
    most of the others are plain calls read without compiling them (`simple_code`)."""
    point = read_point(code)
    return point if point is not None else _read_remembered(code)


@lru_cache(maxsize=4096)
def _read_remembered(code: str) -> CodeRead:
    return read_code_uncached(code)


def read_point(code: str) -> CodeRead | None:
    """`read_code_uncached(code)` for one pyautogui call at integer coordinates whose shape
    carries them as its point (`_point_shape`), read from that shape; None for any other
    code."""
    m = _POINT_CALL.fullmatch(code)
    if m is None:
        return None
    shape = _point_shape(m[1], m[3], m[5])
    if shape is None:
        return None
    call, before, between, after = shape
    x, y = float(m[2]), float(m[4])
    text = f"{before}{m[2]}{between}{m[4]}{after}"
    # the shape's call with this point and text (`_replace` without its keyword machinery)
    read = SubAction._make((*call[:2], x, y, *call[4:10], text, *call[11:]))
    return CodeRead(call.kind, x, y, None, (read,))


def code_memo_clear() -> None:
    """Forget the shapes and code strings `read_code` has read (a cold start)."""
    _point_shape.cache_clear()
    _read_remembered.cache_clear()


_POINT_CALL = re.compile(
    r"((?:import pyautogui(?:; |\n))?pyautogui\.[A-Za-z]+\((?:x=)?)"
    r"(0|[1-9][0-9]{0,5})(, (?:y=)?)(0|[1-9][0-9]{0,5})(\))"
)
"""One pyautogui call at integer coordinates, alone or after a runner's `import pyautogui`:
what most steps are, step after step the same code but for its two numbers."""
_PROBE = ("123457", "234568")
"""The numbers a shape is read at: unlike each other and any other part of the code."""


@lru_cache(maxsize=256)
def _point_shape(head: str, mid: str, tail: str) -> tuple[SubAction, str, str, str] | None:
    """How `read_code_uncached` reads `{head}X{mid}Y{tail}` for any integers X and Y: its one
    call read at the probe numbers, and its call text around them; None when that reading
    does not just carry the two numbers as the point (a function whose first arguments are
    no point, a form only the regex fallback reads)."""
    px, py = _PROBE
    read = read_code_uncached(f"{head}{px}{mid}{py}{tail}")
    if len(read.actions) != 1:
        return None
    [call] = read.actions
    before, found_x, rest = (call.call_text or "").partition(px)
    between, found_y, after = rest.partition(py)
    point = (float(px), float(py))
    carried = (
        found_x and found_y and py not in after
        and (read.x, read.y) == (call.x, call.y) == point
        and (read.kind, read.text) == (call.kind, call.text)
        and call.text is None and call.keys is None
        and call.parser == "ast" and call.effective
    )  # fmt: skip
    return (call, before, between, after) if carried else None

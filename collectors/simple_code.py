"""The common, plain form of pyautogui action code, read without compiling it.

Most archived code actions are one or a few plain calls: `pyautogui.click(512, 384)`,
`import pyautogui; pyautogui.press('enter')`, `pyautogui.write('data.csv', interval=0.03)`,
lines of such calls with `time.sleep(0.5)` between them. Reading those through `ast.parse`
costs most of a trajectory's read time, and half of a run's action strings are unique
(their coordinates differ), so a cache does not help them. This module reads exactly that
form by a strict grammar and returns the calls as the `ast` nodes `action_code` reads
(argument values as `ast.Constant`), so every fact about a call still comes from the one
`action_code` reading; any other code (a comment, an escape, a non-ASCII letter, a nested
call, a tab, a variable, ...) is declined (None) and goes through `ast` as before.

The grammar: statements `import pyautogui`, `import time`, `pyautogui.<F>(<args>)` (F a
pyautogui function `action_code` knows) or `time.sleep(<args>)`, separated by `;` or
newlines, no indentation, spaces only around arguments, `;` and at line ends. An argument is
an optional keyword (x, y, clicks, button, interval, duration, message, keys, key, presses,
seconds) and `=`, then a decimal number (optional minus, no leading zero, at most 15 digits
each side of an optional point) or a quoted string of printable ASCII without backslash or
its own quote; keywords follow positional arguments and do not repeat. Every such string is
valid Python whose `ast` gives exactly these calls, values, order and source segments: the
number and string tokens are those whose Python value is `int(token)`, `float(token)` or the
text between the quotes. The tests check the identity on archived, generated and random code.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from functools import lru_cache

_NUMBER = r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?"
_STRING = r"""'[ -&(-\[\]-~]*+'|"[ !#-\[\]-~]*+\""""
_KEYWORDS = ("x", "y", "clicks", "button", "interval", "duration", "message", "keys", "key",
             "presses", "seconds")  # fmt: skip
_ARG = rf"(?:({'|'.join(_KEYWORDS)}) *+= *+)?({_NUMBER}|{_STRING})"


def statement_pattern(functions: Iterable[str]) -> re.Pattern[str]:
    """One statement of the grammar at a position: group 1 the callee (None for an import),
    group 2 the argument text. Longer names first, so no name stops at a prefix of another."""
    names = "|".join(sorted(functions, key=len, reverse=True))
    call = rf"(pyautogui\.(?:{names})|time\.sleep)\(( *+(?:{_ARG}(?: *+, *+{_ARG})*+)? *+)\)"
    return re.compile(rf"{call}|import (?:pyautogui|time)(?![\w.])")


_ARGUMENT = re.compile(_ARG)
_SEPARATOR = re.compile(r" *+(?:; *+|\n++)")
_END = re.compile(r" *+\n*+")


def _constant(token: str) -> ast.Constant:
    if token[0] in "'\"":
        return ast.Constant(token[1:-1])
    return ast.Constant(float(token) if "." in token else int(token))


def _call(callee: str, args_text: str) -> ast.Call | None:
    """The call's node; None when a keyword repeats or precedes a positional argument
    (Python refuses both)."""
    args: list[ast.expr] = []
    keywords: list[ast.keyword] = []
    seen: set[str] = set()
    for m in _ARGUMENT.finditer(args_text):
        keyword, token = m.group(1), m.group(2)
        if keyword is None:
            if keywords:
                return None
            args.append(_constant(token))
        elif keyword in seen:
            return None
        else:
            seen.add(keyword)
            keywords.append(ast.keyword(keyword, _constant(token)))
    return ast.Call(_callee(callee), args, keywords)


@lru_cache(maxsize=64)
def _callee(dotted: str) -> ast.Attribute:
    """The callee's node, one per name (nodes are only read, never changed)."""
    module, _, attr = dotted.partition(".")
    return ast.Attribute(ast.Name(module), attr)


def simple_calls(code: str, statement: re.Pattern[str]) -> list[tuple[str, ast.Call, str]] | None:
    """(dotted callee, call node, call source text) of each call in order, when the whole of
    `code` is in the grammar (`statement` from `statement_pattern`); else None."""
    calls: list[tuple[str, ast.Call, str]] = []
    pos, end = 0, len(code)
    while True:
        m = statement.match(code, pos)
        if m is None:
            return None
        callee = m.group(1)
        if callee is not None:
            node = _call(callee, m.group(2))
            if node is None:
                return None
            calls.append((callee, node, m.group()))
        pos = m.end()
        sep = _SEPARATOR.match(code, pos)
        if sep is None or sep.end() == end:
            break
        pos = sep.end()
    tail = _END.match(code, pos)
    return calls if tail is not None and tail.end() == end else None

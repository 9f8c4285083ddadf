"""The plain-form shortcut (`simple_code`) and the action memo change no parse result.

Every action string of three corpora is parsed twice and the full results compared, values
and their reprs (so 0.0 against -0.0, or 1 against 1.0, would show): the way ingest parses
now (`parse_action`: memo, then the plain-form reading where the code allows it) against
the reading that compiles every code string and remembers nothing. The corpora: the archived
runs in the reference data, the actions of generated runs of every demo agent, and seeded
random code built to sit on both sides of the plain form's edges.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Iterable
from functools import partial
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deskscore.collectors.action_code import (
    SubAction,
    _decide,
    _simple_calls,
    decide,
    read_code_uncached,
)
from deskscore.collectors.actions import KINDS, parse_action, parse_action_uncached
from deskscore.collectors.human import load_bundled
from deskscore.collectors.synthetic import load_profiles, write_run

COMPILED = partial(read_code_uncached, simple=False)
"""The reading before the shortcut: every code string through `ast` (or the regex scan)."""


def _strings(action: object) -> Iterable[str]:
    """The code strings an action holds: itself, a Claude `command`, an Operator `action`."""
    if isinstance(action, str):
        yield action
    elif isinstance(action, dict):
        for key in ("command", "action"):
            if isinstance(action.get(key), str):
                yield action[key]


def _compare(actions: Iterable[object]) -> Counter:
    """Assert that each action parses the same both ways; count what was compared."""
    seen: Counter = Counter()
    for action in actions:
        got, want = parse_action(action), parse_action_uncached(action, read=COMPILED)
        assert got == want and repr(got) == repr(want), action
        seen["actions"] += 1
        for code in _strings(action):
            plain = _simple_calls(code)
            if plain is not None:
                seen["plain"] += 1
                seen["plain calls"] += len(plain)
            seen["code strings"] += 1
    return seen


def _traj_actions(root: Path) -> list[object]:
    actions = []
    for traj in sorted(root.rglob("traj.jsonl")):
        for line in traj.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and "action" in record:
                actions.append(record["action"])
    return actions


def test_archived_actions_parse_the_same_with_the_shortcut_and_the_memo(reference_data):
    actions = _traj_actions(reference_data)
    seen = _compare(actions + actions)  # the second pass is answered by the memo
    assert seen["actions"] == 2 * len(actions) > 0
    assert seen["plain"] > 0


@pytest.fixture(scope="module")
def generated_actions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[object]]:
    """The actions of one generated run of every demo agent over 120 bundled tasks."""
    tasks = list(load_bundled("verified"))[::3]
    root = tmp_path_factory.mktemp("runs")
    return {
        p.name: _traj_actions(write_run(root / p.name, p, tasks, seed=5, screenshots="none"))
        for p in load_profiles()
    }


def test_generated_runs_parse_the_same_and_mostly_without_compiling(generated_actions):
    total: Counter = Counter()
    for actions in generated_actions.values():
        total += _compare(actions)
    assert total["actions"] == sum(map(len, generated_actions.values()))
    # the shortcut is what makes parsing fast: most generated code strings must take it
    assert total["plain"] > 0.8 * total["code strings"] > 0


# --------------------------------------------------------------------------- random code
# Each piece is plain or, with the code's own odds, one of the shapes the plain form must
# decline (or may accept only if Python reads it the same): Python syntax of every kind, near
# misses of the grammar, code Python refuses.

_FUNCS = ("click", "doubleClick", "rightClick", "moveTo", "dragTo", "mouseDown", "mouseUp",
          "write", "typewrite", "press", "hotkey", "keyDown", "keyUp", "scroll", "hscroll",
          "vscroll", "sleep", "screenshot", "tripleClick", "leftClick", "middleClick",
          "moveRel", "move", "drag", "dragRel")  # fmt: skip
_ODD_FUNCS = ("locateOnScreen", "clickk", "Click", "click.x", "write_", "if")
_KEYWORDS = ("x", "y", "clicks", "button", "interval", "duration", "message", "keys", "key",
             "presses", "seconds")  # fmt: skip
_ODD_KEYWORDS = ("tween", "if", "X", "_x", "None", "logScreenshot", "é")
_TEXTS = ("enter", "ctrl", "a)b", "(", "x, y", "#not a comment", "it's", 'say "hi"', "right",
          "https://example.com/?q=1&r=(2)", "", " ", "=SUM(B2:B9)", "~/a b.txt", "{x}")  # fmt: skip
_ODD_TEXTS = ("tab\there", "line\nbreak", "back\\slash", "café", "你好", "\x00", "\ud800",
              "\x7f", "\u2028", "\r")  # fmt: skip
_ODD_NUMBERS = ("00", "007", "1_000", "1e3", "1.", ".5", "0x1F", "1j", "1.5e-3", "+5", "--5",
                "- 5", "9" * 16, "1." + "1" * 16, "1e400", "0.0", "-0.0", "-0")  # fmt: skip
_ODD_VALUES = ("None", "True", "['ctrl', 'c']", "(10, 20)", "x", "1 + 2", "*pos", "**kw",
               "pyautogui.position()", "[]", "{'a': 1}", "(1)", "-(1)")  # fmt: skip
_ODD_SPACES = ("\t", "\n", " \n ", "\\\n", "\x0c", "\r")
_SEPARATORS = ("; ", ";", " ; ", "\n", "\n\n", "  ;  ", " \n")
_ODD_SEPARATORS = ("\r\n", "\n  ", ";\n", "  \n  ", ";;", "\n\t", ", ", "")
_ODD_STATEMENTS = ("x = 5", "# a comment", "pass", "subprocess.run(['ls', '-l'])",
                   "print('done')", "if True: pyautogui.click(1, 2)", "", "import pyautogui, time",
                   "import pyautogui as pg", "from pyautogui import click", "import timeit",
                   "import pyautogui.x", "pg.click(1, 2)", "pyautogui .click(1, 2)",
                   "pyautogui.click (1, 2)", "time.sleep", "pyautogui.click(1, 2)(3)")  # fmt: skip


class _Code:
    """Random code whose pieces are odd with probability `odd`."""

    def __init__(self, rng: random.Random, odd: float) -> None:
        self.rng, self.odd = rng, odd

    def pick(self, plain: tuple[str, ...], odd: tuple[str, ...]) -> str:
        return self.rng.choice(odd if self.rng.random() < self.odd else plain)

    def number(self) -> str:
        rng = self.rng
        if rng.random() < self.odd:
            return rng.choice(_ODD_NUMBERS)
        sign = "-" if rng.random() < 0.3 else ""
        if rng.random() < 0.6:
            return sign + str(rng.randint(0, 10 ** rng.randint(1, 15) - 1))
        return sign + f"{rng.uniform(0, 10 ** rng.randint(0, 15)):.{rng.randint(1, 15)}f}"

    def string(self) -> str:
        rng = self.rng
        text = self.pick(_TEXTS, _ODD_TEXTS)
        quote = rng.choice(("'", '"'))
        if rng.random() < self.odd:
            return rng.choice((f'"""{text}"""', f"f'{text}'", f"r'{text}'", f"b'{text}'",
                               f"'{text}' 'more'", f"'{text}", f"u'{text}'"))  # fmt: skip
        if quote in text:
            quote = "'" if quote == '"' else '"'
        return f"{quote}{text}{quote}" if quote not in text else repr(text)

    def value(self) -> str:
        if self.rng.random() < self.odd:
            return self.rng.choice(_ODD_VALUES)
        return self.number() if self.rng.random() < 0.6 else self.string()

    def space(self) -> str:
        return self.pick(("", "", " ", "  "), _ODD_SPACES)

    def args(self) -> str:
        rng, parts, named = self.rng, [], False
        for _ in range(rng.choice((0, 1, 2, 2, 2, 3, 4))):
            if named or rng.random() < 0.3:
                name = self.pick(_KEYWORDS, _ODD_KEYWORDS)
                parts.append(f"{name}{self.space()}={self.space()}{self.value()}")
                named = rng.random() > self.odd  # an odd code may put a positional after
            else:
                parts.append(self.value())
        text = "".join(f"{self.space()},{self.space()}{p}" for p in parts)[1:].lstrip(",")
        trailing = "," if parts and rng.random() < self.odd else ""
        return f"{self.space()}{text}{trailing}{self.space()}"

    def statement(self) -> str:
        rng = self.rng
        if rng.random() < self.odd:
            return rng.choice(_ODD_STATEMENTS)
        pick = rng.random()
        if pick < 0.75:
            return f"pyautogui.{self.pick(_FUNCS, _ODD_FUNCS)}({self.args()})"
        if pick < 0.9:
            return f"time.sleep({self.args()})"
        return rng.choice(("import pyautogui", "import time"))

    def code(self) -> str:
        rng = self.rng
        code = self.statement()
        for _ in range(rng.choice((0, 0, 0, 1, 1, 2, 3, 5))):
            code += self.pick(_SEPARATORS, _ODD_SEPARATORS) + self.statement()
        code += self.pick(("", "", "", " ", "\n", "\n\n"), (" # why", ";", "  \n  ", "\\", ")"))
        if rng.random() < self.odd:
            code = rng.choice((" ", "\n", "\t", "# x\n")) + code
        if rng.random() < self.odd:
            code = code[: rng.randint(0, len(code))]
        return code


def test_random_code_parses_the_same_on_both_sides_of_the_plain_form():
    rng = random.Random(20240611)
    codes = [_Code(rng, rng.choice((0.0, 0.0, 0.02, 0.1, 0.3))).code() for _ in range(20_000)]
    seen = _compare(codes)
    assert seen["actions"] == len(codes)
    # the generator must reach both sides, with the variety the plain form admits
    plain = [c for c in codes if _simple_calls(c) is not None]
    assert 0.2 * len(codes) < len(plain) < 0.8 * len(codes)
    for feature in ("=", "-", ".", ";", "\n", '"', "'", "(", "time.sleep", "import", "  "):
        assert sum(feature in c for c in plain) > 100, feature
    assert sum(len(_simple_calls(c) or ()) > 1 for c in plain) > 1000


# --------------------------------------------------------------------------- one call

_COORD = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False))
_TEXT = st.one_of(st.none(), st.text(max_size=5))


@given(
    st.lists(
        st.builds(
            SubAction,
            kind=st.sampled_from(KINDS),
            x=_COORD,
            y=_COORD,
            text=_TEXT,
            keys=st.one_of(st.none(), st.tuples(st.text(max_size=3))),
            effective=st.booleans(),
        ),
        min_size=1,
        max_size=1,
    )
)
def test_one_call_steps_are_decided_as_the_step_rule_decides_them(calls):
    assert repr(decide(calls)) == repr(_decide(calls))


def test_each_caller_gets_a_dict_of_its_own():
    code = "import pyautogui; pyautogui.click(3, 4)"
    first = parse_action(code)
    first["action_format"], first["x"] = "operator", None
    again = parse_action(code)
    assert again is not first
    assert (again["action_format"], again["x"]) == ("code", 3.0)
    assert again == parse_action_uncached(code, read=COMPILED)


# --------------------------------------------------------------------------- long inputs

_N = 200_000
_LONG = [
    "pyautogui.click(" + " " * _N + "x",
    "pyautogui.click(1" + " " * _N + "x",
    "pyautogui.click(x=" + " " * _N + "x",
    "pyautogui.write('" + "a" * _N,
    "pyautogui.click()" + " " * _N + ";" + " " * _N + "x",
    "pyautogui.press(" + "'a', " * (_N // 5) + "x",
]


@pytest.mark.parametrize("code", _LONG, ids=range(len(_LONG)))
def test_the_plain_form_is_declined_in_time_linear_in_the_code(code):
    """Spaces the grammar could split two ways (before an argument or before ')') would make
    a backtracking match quadratic: ~200k spaces, minutes. Every repeat is possessive."""
    started = time.perf_counter()
    assert _simple_calls(code) is None
    assert time.perf_counter() - started < 0.5

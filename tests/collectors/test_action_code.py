"""Sub-actions: every call of a step, in order, read by Python's ast; the step's kind by its rule."""

from __future__ import annotations

import ast
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deskscore.collectors import action_code
from deskscore.collectors.action_code import (
    PARSERS,
    SubAction,
    decide,
    read_code,
    read_code_uncached,
)
from deskscore.collectors.actions import (
    ACTION_KINDS,
    action_rows,
    derived_action_rows,
    parse_action,
)
from deskscore.schemas import conform_rows


def calls(action: object) -> list[tuple]:
    """(func, kind, x, y, text) of each sub-action."""
    return [(a.func, a.kind, a.x, a.y, a.text) for a in parse_action(action)["actions"]]


def step(action: object) -> tuple:
    got = parse_action(action)
    return got["action_kind"], got["x"], got["y"], got["text"]


# --------------------------------------------------------------------------- the cases


def test_a_chained_step_keeps_every_call_in_order_and_is_multi() -> None:
    code = "pyautogui.hotkey('win'); pyautogui.write('VLC media player'); pyautogui.press('enter')"
    assert calls(code) == [
        ("pyautogui.hotkey", "hotkey", None, None, "win"),
        ("pyautogui.write", "type", None, None, "VLC media player"),
        ("pyautogui.press", "press", None, None, "enter"),
    ]
    assert step(code) == ("multi", None, None, "win")
    assert [a.keys for a in parse_action(code)["actions"]] == [("win",), None, ("enter",)]


def test_a_script_that_runs_a_command_then_sleeps_is_bash_not_wait() -> None:
    code = (
        "import subprocess\nimport time\n"
        "subprocess.run(['wmctrl', '-ic', '0x04200003'], check=False)\n"
        "time.sleep(1)\n"
    )
    acts = parse_action(code)["actions"]
    assert [(a.func, a.kind, a.text, a.seconds, a.effective) for a in acts] == [
        ("subprocess.run", "bash", "wmctrl -ic 0x04200003", None, True),
        ("time.sleep", "wait", None, 1.0, False),
    ]
    assert step(code) == ("bash", None, None, "wmctrl -ic 0x04200003")


@pytest.mark.parametrize(
    ("code", "text"),
    [
        ('pyautogui.typewrite("""line one\nline "two" it\'s""", interval=0.01)',
         'line one\nline "two" it\'s'),
        ("pyautogui.write('''a 'quoted' word''')", "a 'quoted' word"),
        ("pyautogui.write('tab\\there\\nnew line \\u00e9 \\x41 \\\\ end')",
         "tab\there\nnew line é A \\ end"),
        ('pyautogui.write("it\'s \\"fine\\"")', 'it\'s "fine"'),
        ("pyautogui.write(r'C:\\new\\table')", "C:\\new\\table"),
        ("pyautogui.write('C:\\dir')", "C:\\dir"),  # an invalid escape stays, as in Python
        ("pyautogui.write('con' 'cat' \"enated\")", "concatenated"),
        ("pyautogui.write(f'no placeholder')", "no placeholder"),
    ],
)  # fmt: skip
def test_string_literals_are_read_as_python_reads_them(code: str, text: str) -> None:
    assert step(code) == ("type", None, None, text)


@pytest.mark.parametrize(
    "code",
    [
        'pyautogui.typewrite("a\\ud800b")',  # a constant
        'pyautogui.typewrite(f"a\\ud800b")',  # an f-string of literal parts
        'pyautogui.typewrite("a\\ud800b"); pyautogui.click(',  # cut off: the regex scan
    ],
)
def test_a_lone_surrogate_written_as_an_escape_is_replaced_not_kept(code: str) -> None:
    """Valid JSON and valid Python, but no UTF-8: kept, it stopped the whole run at write."""
    [(_, kind, _, _, text), *_] = calls(code)
    assert (kind, text) == ("type", "a\ufffdb")
    assert text.encode("utf-8")


def test_a_cut_off_script_still_gives_its_complete_calls_by_the_regex_scan() -> None:
    code = 'pyautogui.typewrite("""a "b" c""")\npyautogui.click(10, 20)\npyautogui.write("unfini'
    acts = parse_action(code)["actions"]
    assert {a.parser for a in acts} == {"regex"}
    assert [(a.kind, a.x, a.y, a.text) for a in acts[:2]] == [
        ("type", None, None, 'a "b" c'),
        ("click", 10.0, 20.0, None),
    ]
    assert parse_action(code)["action_kind"] == "multi"


@pytest.mark.parametrize(
    "code",
    [
        "import pyautogui as pg\npg.click(x=100, y=200)",
        "from pyautogui import click\nclick(100, 200)",
        "from pyautogui import click as c\nc((100, 200))",
        "from pyautogui import *\nclick(y=200, x=100)",
        "import pyautogui\npyautogui.click([100, 200])",
        "pyautogui.click(100, y=200)",
    ],
)
def test_pyautogui_is_recognised_under_any_name_and_argument_style(code: str) -> None:
    [act] = parse_action(code)["actions"]
    assert (act.func, act.kind, act.x, act.y, act.clicks) == (
        "pyautogui.click", "click", 100.0, 200.0, 1)  # fmt: skip


def test_a_bare_name_is_pyautogui_only_when_imported_from_it() -> None:
    assert calls("click(1, 2)") == [("click", "other", None, None, None)]
    assert step("click(1, 2)")[0] == "other"


@pytest.mark.parametrize(
    ("code", "kind", "button", "clicks"),
    [
        ("pyautogui.click(1, 2, 2)", "double_click", None, 2),
        ("pyautogui.click(1, 2, clicks=3)", "triple_click", None, 3),
        ("pyautogui.click(1, 2, 1, 0.0, 'right')", "right_click", "right", 1),
        ("pyautogui.click(button='middle')", "click", "middle", 1),
        ("pyautogui.rightClick(1, 2)", "right_click", "right", 1),
        ("pyautogui.doubleClick(1, 2)", "double_click", None, 2),
        ("pyautogui.click(clicks=n)", "click", None, None),
    ],
)
def test_click_calls_give_their_button_and_clicks(code, kind, button, clicks) -> None:
    [act] = parse_action(code)["actions"]
    assert (act.kind, act.button, act.clicks) == (kind, button, clicks)


@pytest.mark.parametrize(
    "code",
    [
        "pyautogui.click(x, y)",
        "pyautogui.click(x + 10, 200)",
        "pyautogui.click(*pos)",
        "pyautogui.click(pyautogui.locateCenterOnScreen('ok.png'))",
        "pyautogui.click('100', '200')",
        "pyautogui.click(True, 2)",
        "pyautogui.moveTo(1e999, 5)",
        "pyautogui.write(f'{name}.txt')",
        "pyautogui.write(text)",
        "pyautogui.write('a' + 'b')",
        "pyautogui.hotkey('ctrl', key)",
        "pyautogui.hotkey(*keys)",
        "subprocess.run(cmd)",
        "time.sleep(delay)",
    ],
)
def test_computed_arguments_give_nulls_never_an_error(code: str) -> None:
    [act] = parse_action(code)["actions"]
    assert act.parser == "ast"
    assert (act.x, act.y, act.text, act.keys, act.seconds) == (None,) * 5


def test_nested_calls_are_arguments_not_actions_of_their_own() -> None:
    code = "x, y = pyautogui.locateCenterOnScreen('ok.png')\npyautogui.click(x, y)\nprint(str(1))"
    assert [a.func for a in parse_action(code)["actions"]] == [
        "pyautogui.locateCenterOnScreen", "pyautogui.click", "print"]  # fmt: skip
    assert step(code) == ("click", None, None, None)


@pytest.mark.parametrize(
    ("code", "text"),
    [
        ("os.system('ls -la ~')", "ls -la ~"),
        ("import os\nos.popen(cmd='xdotool key F5')", "xdotool key F5"),
        ("subprocess.Popen(['bash', '-c', 'echo hi'])", "bash -c 'echo hi'"),
        ("from subprocess import check_output as co\nco(args=['date'])", "date"),
    ],
)
def test_shell_calls_are_bash_with_their_command_line(code: str, text: str) -> None:
    [act] = [a for a in parse_action(code)["actions"] if a.kind == "bash"]
    assert act.text == text and step(code) == ("bash", None, None, text)


# --------------------------------------------------------------------------- the step rule


@pytest.mark.parametrize(
    ("code", "kind", "x", "y", "text"),
    [
        # preparation (move, held key, release) and pauses never decide beside an action
        ("pyautogui.moveTo(10, 20)\npyautogui.click()", "click", 10, 20, None),
        ("pyautogui.keyDown('shift'); pyautogui.click(5, 6); pyautogui.keyUp('shift')",
         "click", 5, 6, None),
        ("time.sleep(2); pyautogui.press('enter'); time.sleep(1)", "press", None, None, "enter"),
        ("pyautogui.mouseDown(1, 1)\npyautogui.moveTo(9, 9)\npyautogui.mouseUp()",
         "mouse_down", 1, 1, None),
        # several actions of one kind keep it; of different kinds are multi
        ("pyautogui.click(1, 2); pyautogui.click(3, 4)", "click", 1, 2, None),
        ("pyautogui.scroll(-5); pyautogui.scroll(-5, 10, 20)", "scroll", 10, 20, None),
        ("pyautogui.typewrite('Dota 2'); pyautogui.press('enter')", "multi", None, None, "Dota 2"),
        ("pyautogui.click(1, 2); pyautogui.write('x')", "multi", 1, 2, None),
        # without an action: held keys spell a chord; then moves; then pauses; then the rest
        ("pyautogui.keyDown('ctrl'); pyautogui.keyDown('c'); pyautogui.keyUp('c'); "
         "pyautogui.keyUp('ctrl')", "hotkey", None, None, "ctrl+c"),
        ("pyautogui.keyDown('esc'); time.sleep(0.1); pyautogui.keyUp('esc')",
         "key_down", None, None, "esc"),
        ("pyautogui.moveTo(3, 4); time.sleep(1)", "move", 3, 4, None),
        ("time.sleep(1); pyautogui.screenshot(); print('x')", "wait", None, None, None),
        ("print('hello')", "other", None, None, None),
        ("import pyautogui", "other", None, None, None),
    ],
)  # fmt: skip
def test_the_step_kind_follows_its_effective_calls(code, kind, x, y, text) -> None:
    assert step(code) == (kind, x, y, text)


def test_effective_marks_the_calls_the_kind_follows_from() -> None:
    code = "pyautogui.moveTo(1, 2); pyautogui.click(); pyautogui.write('a'); time.sleep(1)"
    assert [(a.kind, a.effective) for a in parse_action(code)["actions"]] == [
        ("move", False), ("click", True), ("type", True), ("wait", False)]  # fmt: skip


def test_decide_on_no_calls_is_other_with_no_sub_actions() -> None:
    assert decide([]) == read_code("") == read_code("# only a comment")
    assert read_code("").kind == "other" and read_code("").actions == ()


# --------------------------------------------------------------------------- real archives

# Action strings as real public runs logged them (OSWorld results of gpt-4o, gpt-4o-mini and
# qwen3-vl runners): multi-line scripts with imports, comments and pauses; ';'-chained
# one-liners with double quotes.
REAL = [
    ("import pyautogui\nimport time\n\n# Click on LibreOffice Calc icon\n"
     "pyautogui.click(x=35, y=405)\ntime.sleep(3)",
     ("click", 35, 405, None), ["click", "wait"]),
    ("import pyautogui\nimport time\n\n# Click on the \"Data\" menu\npyautogui.click(x=667, y=85)\n"
     "time.sleep(1)\n\n# Move to and click on \"Pivot Table\" option\n"
     "pyautogui.moveTo(x=667, y=150)\npyautogui.click()\ntime.sleep(1)",
     ("click", 667, 85, None), ["click", "wait", "move", "click", "wait"]),
    ("import pyautogui\nimport time\n\n# Click on the \"データ\" (Data) menu\n"
     "pyautogui.click(850, 160)  # Adjusted coordinates for the \"データ\" menu\ntime.sleep(1)",
     ("click", 850, 160, None), ["click", "wait"]),
    ('pyautogui.hotkey("ctrl","l"); pyautogui.typewrite("natural products database"); '
     'pyautogui.press("enter")',
     ("multi", None, None, "ctrl+l"), ["hotkey", "type", "press"]),
    ('pyautogui.typewrite("Dota 2"); pyautogui.press("enter")',
     ("multi", None, None, "Dota 2"), ["type", "press"]),
    ("pyautogui.typewrite('=D3*24*F3')", ("type", None, None, "=D3*24*F3"), ["type"]),
    ("pyautogui.scroll(-800)", ("scroll", None, None, None), ["scroll"]),
    ("import pyautogui; pyautogui.click()", ("click", None, None, None), ["click"]),
    ("WAIT", ("wait", None, None, None), ["wait"]),
]  # fmt: skip


@pytest.mark.parametrize(("action", "expected", "kinds"), REAL)
def test_real_archived_actions_parse_to_their_calls(action, expected, kinds) -> None:
    assert step(action) == expected
    assert [a.kind for a in parse_action(action)["actions"]] == kinds


def test_a_scroll_call_keeps_its_amount() -> None:
    [act] = parse_action("pyautogui.scroll(-800)")["actions"]
    assert act.amount == -800.0


# --------------------------------------------------------------------------- dict actions


def test_each_dict_action_is_one_sub_action_of_its_parsed_kind() -> None:
    claude = {"name": "computer", "input": {"action": "left_click", "coordinate": [10, 20]},
              "action_type": "tool_use", "command": "pyautogui.click(15, 30)\n"}  # fmt: skip
    c13 = {"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "s"]}}
    operator = {"action_space": "pyautogui", "action": {"type": "keypress", "keys": ["A", "B"]}}
    got = [parse_action(a)["actions"] for a in (claude, c13, operator)]
    assert [[(a.func, a.kind, a.x, a.y, a.text, a.keys, a.parser) for a in g] for g in got] == [
        [("left_click", "click", 15.0, 30.0, None, None, "dict")],
        [("HOTKEY", "hotkey", None, None, "ctrl+s", ("ctrl", "s"), "dict")],
        [("keypress", "hotkey", None, None, "A+B", ("A", "B"), "dict")],
    ]


def test_an_operator_code_action_is_read_call_by_call() -> None:
    action = {"action_space": "pyautogui", "call_id": "c",
              "action": "import pyautogui\npyautogui.moveTo(5, 6)\npyautogui.click(button='right')"}  # fmt: skip
    got = parse_action(action)
    assert (got["action_format"], got["action_kind"], got["x"], got["y"]) == (
        "operator", "right_click", 5.0, 6.0)  # fmt: skip
    assert [a.kind for a in got["actions"]] == ["move", "right_click"]


def test_words_are_one_sub_action_and_no_action_is_none() -> None:
    assert [(a.kind, a.parser, a.call_text) for a in parse_action(" DONE\n")["actions"]] == [
        ("done", "word", "DONE")]  # fmt: skip
    assert [(a.kind, a.text) for a in parse_action("BASH ls ~")["actions"]] == [("bash", "ls ~")]
    assert parse_action(None)["actions"] == ()


# --------------------------------------------------------------------------- rows


def test_rows_of_a_step_repeat_its_keys_and_conform_to_the_table() -> None:
    keys = {"run_id": "r", "benchmark": "osworld", "domain": "chrome", "task_id": "t",
            "step_idx": 3}  # fmt: skip
    rows = action_rows(
        keys, parse_action("pyautogui.hotkey('ctrl', 'l'); time.sleep(1)")["actions"]
    )
    conform_rows("step_actions", rows)
    assert [(r["step_idx"], r["action_idx"], r["kind"], r["keys"]) for r in rows] == [
        (3, 0, "hotkey", ["ctrl", "l"]), (3, 1, "wait", None)]  # fmt: skip


def test_step_rows_without_sub_actions_get_them_from_their_own_columns() -> None:
    base = {"run_id": "r", "benchmark": "b", "domain": "d", "task_id": "t"}
    steps = [
        {**base, "step_idx": 0, "action_format": "code", "action_kind": "multi",
         "action_text": "pyautogui.click(1, 2); pyautogui.write('a')", "x": 1.0, "y": 2.0,
         "text": None},
        {**base, "step_idx": 1, "action_format": "computer_13", "action_kind": "type",
         "action_text": '{"action_type":"TYPING"}', "x": None, "y": None, "text": "hi"},
        {**base, "step_idx": 2, "action_format": "none", "action_kind": "error",
         "action_text": "VM crashed", "x": None, "y": None, "text": None},
        {**base, "step_idx": 3, "action_format": "special", "action_kind": "done",
         "action_text": "DONE", "x": None, "y": None, "text": None},
    ]  # fmt: skip
    rows = derived_action_rows(steps)
    conform_rows("step_actions", rows)
    assert [(r["step_idx"], r["kind"], r["text"], r["parser"]) for r in rows] == [
        (0, "click", None, "ast"), (0, "type", "a", "ast"), (1, "type", "hi", "dict"),
        (3, "done", None, "word")]  # fmt: skip


# --------------------------------------------------------------------------- properties


def _well_formed(acts: tuple[SubAction, ...]) -> None:
    for a in acts:
        assert a.kind in ACTION_KINDS and a.parser in PARSERS
        for v in (a.x, a.y, a.amount, a.seconds):
            assert v is None or (type(v) is float and math.isfinite(v))
        assert a.text is None or isinstance(a.text, str)
        assert a.keys is None or all(isinstance(k, str) for k in a.keys)
        assert a.clicks is None or type(a.clicks) is int


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_parses_to_well_formed_sub_actions(text: str) -> None:
    got = parse_action(text)
    _well_formed(got["actions"])
    json.dumps([a._asdict() for a in got["actions"]])


_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r"),
               max_size=12)  # fmt: skip
_ARG = st.one_of(
    st.integers(-3000, 3000).map(repr),
    st.floats(-1e4, 1e4, allow_nan=False).map(repr),
    _TEXT.map(repr),
    _TEXT.map(lambda t: '"""' + t.replace("\\", "\\\\").replace('"', '\\"') + '"""'),
    st.sampled_from(["x", "y", "n + 1", "f'{v}'", "(1, 2)", "['a', 'b']", "None", "True"]),
)
_KWARG = st.tuples(
    st.sampled_from(["x", "y", "button", "clicks", "interval", "duration", "message", "keys"]),
    _ARG,
).map(lambda kv: f"{kv[0]}={kv[1]}")
_FUNC = st.sampled_from(
    ["click", "doubleClick", "rightClick", "tripleClick", "moveTo", "dragTo", "mouseDown",
     "mouseUp", "write", "typewrite", "hotkey", "press", "keyDown", "keyUp", "scroll",
     "hscroll", "sleep", "screenshot", "position", "size", "moveRel", "alert"]
)  # fmt: skip
_CALL = st.tuples(
    st.sampled_from(["pyautogui.", "pg."]),
    _FUNC,
    st.lists(_ARG, max_size=3),
    st.lists(_KWARG, max_size=2, unique_by=lambda s: s.split("=")[0]),
).map(lambda c: (c[1], f"{c[0]}{c[1]}({', '.join(c[2] + c[3])})"))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_CALL, min_size=1, max_size=6),
    st.lists(st.sampled_from(["; ", "\n", "\ntime.sleep(0.5)\n", "  # note\n"]), min_size=6,
             max_size=6),
    st.booleans(),
)  # fmt: skip
def test_no_call_python_sees_is_dropped(generated, separators, with_import) -> None:
    code = "import pyautogui as pg\n" if with_import else "import pyautogui, time\n"
    for (_, text), sep in zip(generated, separators, strict=False):
        code += text + sep
    seen = [
        node
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name)
    ]
    seen.sort(key=lambda n: (n.lineno, n.col_offset))
    got = parse_action(code)["actions"]
    _well_formed(got)
    assert [a.call_text for a in got] == [ast.get_source_segment(code, n) for n in seen]
    module = {"time": "time", "pyautogui": "pyautogui", "pg": "pyautogui" if with_import else "pg"}
    assert [a.func for a in got] == [f"{module[n.func.value.id]}.{n.func.attr}" for n in seen]


# --------------------------------------------------------------------------- regex scan cost

_NUM_BEFORE = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_BEFORE = {
    "_XY": rf"\s*\(?\s*(?:x\s*=\s*)?({_NUM_BEFORE})\s*,\s*(?:y\s*=\s*)?({_NUM_BEFORE})",
    "_SCROLL_XY": rf"\s*(?:clicks\s*=\s*)?{_NUM_BEFORE}\s*,\s*(?:x\s*=\s*)?({_NUM_BEFORE})"
    rf"\s*,\s*(?:y\s*=\s*)?({_NUM_BEFORE})",
    "_KW_X": rf"(?:^|[\s,(])x\s*=\s*({_NUM_BEFORE})",
    "_KW_Y": rf"(?:^|[\s,(])y\s*=\s*({_NUM_BEFORE})",
    "_FIRST_STR": r"\s*(?:message\s*=\s*)?\[?\s*(" + "{STR})",
}
"""The scan's patterns as they were when a run of digits or spaces took quadratic time."""


def _matches(pattern, text: str) -> list:
    first = pattern.match(text)
    found = [(m.span(), m.groups()) for m in pattern.finditer(text)]
    return [first and (first.span(), first.groups()), found]


@settings(max_examples=500)
@given(st.text(alphabet="0123456789.eE+-, \n(x=y'\"[]amesgclikbuton", max_size=30))
def test_the_scan_patterns_match_what_they_matched_when_they_took_quadratic_time(text):
    """Rewritten so that no two parts take the same characters by turns; what they match,
    where, and the groups they capture are the same."""
    import re

    from deskscore.collectors import action_code

    for name, before in _BEFORE.items():
        now = getattr(action_code, name)
        was = re.compile(before.replace("{STR}", action_code._STR), now.flags)
        for probe in (text, "pyautogui.click(" + text):
            assert _matches(now, probe) == _matches(was, probe), name


def test_long_unparseable_actions_are_read_in_time_linear_in_their_length() -> None:
    """Code `ast` refuses goes to the regex scan; runs of digits or spaces there made its
    number and spacing patterns backtrack quadratically (a 50 KB action held an ingest for a
    minute, 1 MB for hours). A megabyte of each shape is read here in a child process given
    a minute, where each takes well under a second."""
    import subprocess
    import sys

    shapes = [
        "'pyautogui.click(' + '1' * n + 'e'",
        "'pyautogui.click(' + ' ' * n + 'z'",
        "'pyautogui.scroll(' + '1' * n + ',' + '2' * n + 'e'",
        "'pyautogui.click(x=' + '1' * n + ', y=' + '2' * n + 'e'",
        "'pyautogui.click(button=' + ' ' * n + 'x'",
        "'pyautogui.typewrite(' + ' ' * n + '[' + ' ' * n + 'z'",
        "'pyautogui.click(1e' + '1' * n + 'e'",
        "'pyautogui.click(' + '1.' * (n // 2)",
    ]
    script = (
        "from deskscore.collectors.actions import parse_action_uncached\n"
        "n = 1_000_000\n"
        + "".join(f"assert parse_action_uncached({s})['action_format'] == 'code'\n"
                  for s in shapes)
    )  # fmt: skip
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


# --------------------------------------------------------------------------- coordinate shapes

_FUNCS = [*action_code._PYAUTOGUI, "notAFunction", "click_"]
_HEADS = ["", "import pyautogui\n", "import pyautogui; "]
_FORMS = ["({x}, {y})", "(x={x}, y={y})", "(x={x}, {y})", "({x}, y={y})"]


@pytest.mark.parametrize("form", _FORMS)
@pytest.mark.parametrize("head", _HEADS)
def test_a_call_read_from_its_shape_is_what_reading_it_whole_gives(head: str, form: str) -> None:
    """Every pyautogui function (and names it lacks) at any integers, among them 0, the
    numbers shapes are read at and six-digit ones: the shortcut reads what the parser reads."""
    action_code.code_memo_clear()
    for func in _FUNCS:
        for x, y in [(795, 263), (0, 0), (123457, 234568), (234568, 123457), (999999, 1), (7, 7)]:
            code = f"{head}pyautogui.{func}{form.format(x=x, y=y)}"
            assert action_code.read_code(code) == read_code_uncached(code), code


def test_clicks_at_new_coordinates_are_read_without_parsing_them_again(monkeypatch) -> None:
    action_code.code_memo_clear()
    for code in ("pyautogui.click(1, 2)", "pyautogui.scroll(1, 2)"):  # their shapes, once
        action_code.read_code(code)
    parsed: list[str] = []
    whole = action_code.read_code_uncached
    monkeypatch.setattr(action_code, "read_code_uncached", lambda c: parsed.append(c) or whole(c))
    read = action_code.read_code
    assert read("pyautogui.click(640, 480)").x == 640.0
    assert read("pyautogui.scroll(3, 4)").actions[0].amount == 3.0  # no point: read whole
    assert read("pyautogui.click(-5, 480)").x == -5.0  # not the shape: read whole
    assert parsed == ["pyautogui.scroll(3, 4)", "pyautogui.click(-5, 480)"]

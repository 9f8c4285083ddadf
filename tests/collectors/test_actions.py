"""parse_action: every archived action shape reduces to kind, position, text; nothing raises."""

from __future__ import annotations

import ast
import json
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deskscore.collectors.actions import FORMATS, KEYS, KINDS, parse_action
from deskscore.schemas.tables import STEPS

CLAUDE_KEY = {
    "name": "computer",
    "input": {"action": "key", "text": "ctrl+c"},
    "id": "toolu_1",
    "action_type": "tool_use",
    "command": "pyautogui.keyDown('ctrl')\npyautogui.keyDown('c')\n"
    "pyautogui.keyUp('c')\npyautogui.keyUp('ctrl')\n",
    "raw_response": "Copying the cell",
}

# (action, format, kind, x, y, text, response)
CASES = [
    # pyautogui code strings
    ("import pyautogui; pyautogui.click(100, 200)", "code", "click", 100, 200, None, None),
    ("pyautogui.click(x=1, y=2.5, button='right')", "code", "right_click", 1, 2.5, None, None),
    ("pyautogui.click(y=7, x=3)", "code", "click", 3, 7, None, None),
    ("pyautogui.click((5, 6))", "code", "click", 5, 6, None, None),
    ("pyautogui.click(clicks=2, x=3, y=4)", "code", "double_click", 3, 4, None, None),
    ("pyautogui.doubleClick(10, 20)", "code", "double_click", 10, 20, None, None),
    ("pyautogui.rightClick(10, 20)", "code", "right_click", 10, 20, None, None),
    ("pyautogui.tripleClick(10.5, 20)", "code", "triple_click", 10.5, 20, None, None),
    ("pyautogui.moveTo(546, 524)", "code", "move", 546, 524, None, None),
    ("pyautogui.moveTo(1, 2)\npyautogui.dragTo(30, 40, duration=0.5)", "code", "drag", 1, 2, None, None),
    ("pyautogui.mouseDown(5, 5)\ntime.sleep(1)\npyautogui.mouseUp(5, 5)", "code", "mouse_down", 5, 5, None, None),
    ("pyautogui.mouseUp()", "code", "mouse_up", None, None, None, None),
    ("import pyautogui\npyautogui.moveTo(10, 20)\npyautogui.click(button='left')", "code", "click", 10, 20, None, None),
    ("pyautogui.moveTo(10, 20)\npyautogui.click(button='right')", "code", "right_click", 10, 20, None, None),
    ("pyautogui.keyDown('shift')\npyautogui.click(100, 200)\npyautogui.keyUp('shift')", "code", "click", 100, 200, None, None),
    ("pyautogui.typewrite('hello (world)', interval=0.1)", "code", "type", None, None, "hello (world)", None),
    ("pyautogui.write(\"it's\")", "code", "type", None, None, "it's", None),
    ('pyautogui.typewrite("""line one\nline "two" it\'s""", interval=0.01)', "code", "type", None, None, 'line one\nline "two" it\'s', None),
    ("pyautogui.write('caf\\u00e9\\n')", "code", "type", None, None, "café\n", None),
    ("pyautogui.typewrite(['a', 'b'])", "code", "type", None, None, "ab", None),
    ("pyautogui.write(text)", "code", "type", None, None, None, None),
    ("pyautogui.hotkey('ctrl', 'c')", "code", "hotkey", None, None, "ctrl+c", None),
    ("pyautogui.hotkey(['ctrl', 'shift', 't'])", "code", "hotkey", None, None, "ctrl+shift+t", None),
    ("pyautogui.press('enter')", "code", "press", None, None, "enter", None),
    ("pyautogui.keyDown('alt')", "code", "key_down", None, None, "alt", None),
    ("pyautogui.keyUp('alt')", "code", "key_up", None, None, "alt", None),
    (CLAUDE_KEY["command"], "code", "hotkey", None, None, "ctrl+c", None),
    ("pyautogui.keyDown('esc')\npyautogui.keyUp('esc')", "code", "press", None, None, "esc", None),
    ("pyautogui.scroll(-5)", "code", "scroll", None, None, None, None),
    ("pyautogui.scroll(-5, 300, 400)", "code", "scroll", 300, 400, None, None),
    ("pyautogui.hscroll(3, x=10, y=20)", "code", "scroll", 10, 20, None, None),
    ("time.sleep(2)", "code", "wait", None, None, None, None),
    ("pyautogui.sleep(0.5)\n", "code", "wait", None, None, None, None),
    ("pyautogui.write('a)b'); pyautogui.click(7, 8)", "code", "multi", 7, 8, "a)b", None),
    ("pyautogui.doubleClick(1e999, 5)", "code", "double_click", None, None, None, None),
    ("pyautogui.click(x, y)", "code", "click", None, None, None, None),
    ("import subprocess; subprocess.run(['ls'])", "code", "bash", None, None, "ls", None),
    ("", "code", "other", None, None, None, None),
    ("BASH chmod +x run.sh && ./run.sh", "code", "bash", None, None, "chmod +x run.sh && ./run.sh", None),
    # special words, exactly upper case as OSWorld spells them
    ("WAIT", "special", "wait", None, None, None, None),
    ("DONE", "special", "done", None, None, None, None),
    (" FAIL\n", "special", "fail", None, None, None, None),
    ("CALL_USER", "special", "call_user", None, None, None, None),
    ("done", "code", "other", None, None, None, None),
    ({"action_type": "DONE"}, "special", "done", None, None, None, None),
    ({"action_type": "FAIL", "raw_response": "It cannot be done"}, "special", "fail", None, None, None, "It cannot be done"),
    # Claude computer use: kind from input.action, position from the executed command
    (
        {"name": "computer", "input": {"action": "left_click", "coordinate": [10, 20]}, "id": "t",
         "action_type": "tool_use", "command": "pyautogui.click(15, 30)\n", "raw_response": "Clicking"},
        "claude", "click", 15, 30, None, "Clicking",
    ),
    (
        {"name": "computer", "input": {"action": "left_click", "coordinate": [10, 20]}, "id": "t",
         "action_type": "tool_use"},
        "claude", "click", 10, 20, None, None,
    ),
    (CLAUDE_KEY, "claude", "hotkey", None, None, "ctrl+c", "Copying the cell"),
    (
        {"name": "computer", "input": {"action": "type", "text": "hello"}, "action_type": "tool_use",
         "command": 'pyautogui.typewrite("""hello""", interval=0.01)\n'},
        "claude", "type", None, None, "hello", None,
    ),
    (
        {"name": "computer", "input": {"action": "mouse_move", "coordinate": [1, 2]}, "action_type": "tool_use",
         "command": "pyautogui.moveTo(3, 4, duration=0.5)\n"},
        "claude", "move", 3, 4, None, None,
    ),
    (
        {"name": "computer", "input": {"action": "left_click_drag", "coordinate": [9, 9]}, "action_type": "tool_use",
         "command": "pyautogui.dragTo(9, 9, duration=0.5)\n"},
        "claude", "drag", 9, 9, None, None,
    ),
    (
        {"name": "computer", "input": {"action": "screenshot"}, "action_type": "tool_use",
         "command": "pyautogui.sleep(0.1)\n"},
        "claude", "screenshot", None, None, None, None,
    ),
    (
        {"name": "computer", "input": {"action": "done"}, "action_type": "tool_use", "command": "DONE"},
        "claude", "done", None, None, None, None,
    ),
    (
        {"name": "bash", "input": {"command": "ls ~/Desktop"}, "action_type": "tool_use"},
        "claude", "bash", None, None, "ls ~/Desktop", None,
    ),
    (
        {"name": "computer", "input": {"action": "left_click", "coordinate": [float("nan"), 2]},
         "action_type": "tool_use"},
        "claude", "click", None, None, None, None,
    ),
    # Operator / GPT-5.4: pyautogui code in "action", or the raw action dict
    (
        {"action_space": "pyautogui", "action": "import pyautogui\npyautogui.moveTo(5, 6)\n"
         "pyautogui.click(button='right')", "pending_checks": [], "call_id": "call_1"},
        "operator", "right_click", 5, 6, None, None,
    ),
    (
        {"action_space": "pyautogui", "action": "import pyautogui\npyautogui.hotkey('ctrl', 'a')",
         "pending_checks": [], "call_id": "c"},
        "operator", "hotkey", None, None, "ctrl+a", None,
    ),
    ({"action_space": "pyautogui", "action": "DONE", "call_id": "c"}, "operator", "done", None, None, None, None),
    (
        {"action_space": "pyautogui", "action": {"type": "keypress", "keys": ["CTRL", "A"]}, "call_id": "c"},
        "operator", "hotkey", None, None, "CTRL+A", None,
    ),
    (
        {"action_space": "pyautogui", "action": {"type": "click", "button": "right", "x": 3, "y": 4}},
        "operator", "right_click", 3, 4, None, None,
    ),
    (
        {"action_space": "pyautogui", "action": {"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 5, "y": 6}]}},
        "operator", "drag", 1, 2, None, None,
    ),
    (
        {"action_space": "pyautogui", "action": {"type": "type", "text": "abc"}},
        "operator", "type", None, None, "abc", None,
    ),
    # computer_13, parameters nested or flattened
    (
        {"action_type": "CLICK", "parameters": {"button": "left", "x": 3, "y": 4, "num_clicks": 2}},
        "computer_13", "double_click", 3, 4, None, None,
    ),
    ({"action_type": "CLICK", "parameters": {"button": "right"}}, "computer_13", "right_click", None, None, None, None),
    ({"action_type": "MOVE_TO", "x": 7, "y": 8}, "computer_13", "move", 7, 8, None, None),
    ({"action_type": "TYPING", "parameters": {"text": "hi"}}, "computer_13", "type", None, None, "hi", None),
    ({"action_type": "HOTKEY", "keys": ["ctrl", "s"]}, "computer_13", "hotkey", None, None, "ctrl+s", None),
    ({"action_type": "PRESS", "parameters": {"key": "enter"}}, "computer_13", "press", None, None, "enter", None),
    ({"action_type": "KEY_DOWN", "key": "shift"}, "computer_13", "key_down", None, None, "shift", None),
    ({"action_type": "SCROLL", "parameters": {"dx": 0, "dy": -3}}, "computer_13", "scroll", None, None, None, None),
    ({"action_type": "DRAG_TO", "x": "12", "y": 13}, "computer_13", "drag", 12, 13, None, None),
    ({"action_type": "RIGHT_CLICK", "x": True, "y": 1}, "computer_13", "right_click", None, None, None, None),
    ({"action_type": "WAIT", "parameters": {}}, "computer_13", "wait", None, None, None, None),
    # anything else
    ({"foo": 1}, "dict", "other", None, None, None, None),
    ({"action_type": "teleport"}, "dict", "other", None, None, None, None),
    (None, "none", "other", None, None, None, None),
    ([1, 2], "dict", "other", None, None, None, None),
    (3.5, "dict", "other", None, None, None, None),
    (True, "dict", "other", None, None, None, None),
]  # fmt: skip


@pytest.mark.parametrize(("action", "fmt", "kind", "x", "y", "text", "response"), CASES)
def test_each_archived_action_shape_parses_to_its_kind_position_and_text(
    action, fmt, kind, x, y, text, response
):
    got = parse_action(action)
    assert got["action_format"] == fmt
    assert got["action_kind"] == kind
    assert (got["x"], got["y"]) == (x, y)
    assert got["text"] == text
    assert got["response"] == response


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("pyautogui.click(1, 2)", "pyautogui.click(1, 2)"),
        ("DONE", "DONE"),
        ({"action_type": "FAIL"}, "FAIL"),
        (CLAUDE_KEY, CLAUDE_KEY["command"]),
        ({"action_space": "pyautogui", "action": "pyautogui.press('a')"}, "pyautogui.press('a')"),
        (None, None),
    ],
)
def test_action_text_is_the_code_or_word_that_was_executed(action, expected):
    assert parse_action(action)["action_text"] == expected


@pytest.mark.parametrize(
    "action",
    [{"action_type": "CLICK", "x": 1, "y": 2}, {"foo": [1, {"b": None}]}, [1, "a"], 2.5],
)
def test_structured_actions_keep_their_json_as_action_text(action):
    assert json.loads(parse_action(action)["action_text"]) == action


def test_kind_vocabulary_is_the_one_the_steps_table_documents():
    doc = next(f.doc for f in STEPS.fields if f.name == "action_kind")
    documented = re.match(r"The step's kind: ([a-z_, ]+)\. ", doc).group(1).split(", ")
    assert tuple(documented) == KINDS


def test_format_vocabulary_is_the_one_the_steps_table_documents():
    doc = next(f.doc for f in STEPS.fields if f.name == "action_format")
    documented = re.sub(r"^.*: |\.$", "", doc).split(", ")
    assert tuple(documented) == FORMATS


def _assert_well_formed(result: dict) -> None:
    assert tuple(result) == KEYS
    assert result["action_kind"] in KINDS
    assert result["action_format"] in FORMATS
    for key in ("x", "y"):
        value = result[key]
        assert value is None or (type(value) is float and math.isfinite(value))
    for key in ("action_text", "text", "response"):
        assert result[key] is None or isinstance(result[key], str)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(
        st.sampled_from(
            ["action_type", "input", "command", "action", "action_space", "call_id",
             "parameters", "coordinate", "x", "y", "text", "keys", "key", "type", "button",
             "num_clicks", "path", "raw_response", "name", "pending_checks"]
        ) | st.text(max_size=5),
        children,
        max_size=6,
    ),
    max_leaves=20,
)  # fmt: skip

code_fragments = st.lists(
    st.one_of(
        st.sampled_from(
            ["pyautogui.click(", "pyautogui.moveTo(", "pyautogui.write(", "pyautogui.hotkey(",
             "pyautogui.keyDown(", "pyautogui.keyUp(", "pyautogui.scroll(", "time.sleep(",
             "x=", "y=", "button='right'", "clicks=2", ", ", ")", "(", "'", '"', '"""', "\\",
             "\n", "; ", "[", "]", "1e999", "-3", "4.5", "BASH ", "DONE", "WAIT"]
        ),
        st.text(max_size=6),
        st.integers(-5000, 5000).map(str),
    ),
    max_size=20,
).map("".join)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_any_json_value_parses_without_raising(value):
    _assert_well_formed(parse_action(value))


@settings(max_examples=400, deadline=None)
@given(code_fragments)
def test_any_code_like_string_parses_without_raising(code):
    _assert_well_formed(parse_action(code))


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(
        [("click", "click"), ("doubleClick", "double_click"), ("rightClick", "right_click"),
         ("tripleClick", "triple_click"), ("moveTo", "move"), ("dragTo", "drag"),
         ("mouseDown", "mouse_down"), ("mouseUp", "mouse_up")]
    ),
    st.integers(-10_000, 10_000) | st.floats(-1e6, 1e6, allow_nan=False),
    st.integers(-10_000, 10_000) | st.floats(-1e6, 1e6, allow_nan=False),
    st.booleans(),
)  # fmt: skip
def test_pointer_calls_give_their_coordinates(call, x, y, keywords):
    fn, kind = call
    args = f"x={x!r}, y={y!r}" if keywords else f"{x!r}, {y!r}"
    got = parse_action(f"import pyautogui; pyautogui.{fn}({args}, duration=0.5)")
    assert got["action_kind"] == kind
    assert (got["x"], got["y"]) == (float(x), float(y))


@settings(max_examples=300, deadline=None)
@given(st.text(), st.sampled_from(["write", "typewrite"]))
def test_typed_text_round_trips_through_any_python_string_literal(text, fn):
    got = parse_action(f"pyautogui.{fn}({text!r}, interval=0.02)")
    assert got["action_kind"] == "type"
    assert got["text"] == text


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8),
        min_size=1,
        max_size=4,
    )
)
def test_hotkey_text_is_its_keys_joined_with_plus(keys):
    code = "pyautogui.hotkey(" + ", ".join(repr(k) for k in keys) + ")"
    assert parse_action(code)["text"] == "+".join(keys)


def _ast_calls(code: str) -> list[tuple[str, list]]:
    """Independent reading of a script: (function, literal positional args) per pyautogui call."""
    calls = []
    for node in ast.walk(ast.parse(code)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "pyautogui"
        ):
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            calls.append((node.func.attr, args))
    return calls


def test_real_claude_runs_parse_like_python_reads_them(sec_eval_dir):
    """Every action in real archived runs parses; positions and text agree with Python's own parse."""
    seen = 0
    for traj in sorted(sec_eval_dir.rglob("traj.jsonl")):
        for line in traj.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            action = json.loads(line).get("action")
            got = parse_action(action)
            _assert_well_formed(got)
            seen += 1
            if not isinstance(action, str):
                continue
            if action.strip() in ("WAIT", "DONE", "FAIL"):
                assert got["action_format"] == "special"
                continue
            if action.startswith("BASH "):
                assert (got["action_kind"], got["text"]) == ("bash", action[5:])
                continue
            calls = _ast_calls(action)
            assert calls, action
            fn, args = calls[0]
            if fn in ("moveTo", "click") and len(args) >= 2:
                assert (got["x"], got["y"]) == (float(args[0]), float(args[1]))
            if fn in ("write", "typewrite", "press"):
                assert got["text"] == args[0]
    assert seen > 0


_point_calls = st.builds(
    "{}pyautogui.{}({}{}, {}{})".format,
    st.sampled_from(["", "import pyautogui\n", "import pyautogui; "]),
    st.sampled_from(["click", "doubleClick", "moveTo", "dragTo", "scroll", "hotkey", "nope"]),
    st.sampled_from(["", "x="]),
    st.integers(0, 999_999),
    st.sampled_from(["", "y="]),
    st.integers(0, 999_999),
)


@settings(max_examples=300, deadline=None)
@given(_point_calls | code_fragments)
def test_a_string_action_reads_as_its_whole_reading_does(action):
    """Clicks read from their shape and strings remembered give what reading the string
    from scratch gives."""
    from deskscore.collectors.action_code import read_code_uncached
    from deskscore.collectors.actions import parse_action_uncached

    assert parse_action(action) == parse_action_uncached(action, read_code_uncached)


def test_clicks_at_new_coordinates_fill_no_memo():
    """One entry per step would push out the actions a run repeats."""
    from deskscore.collectors import action_code, actions

    parse_action("pyautogui.click(1, 2)")  # its shape, once
    before = (actions._parse_text.cache_info().currsize,
              action_code._read_remembered.cache_info().currsize)  # fmt: skip
    for i in range(50):
        assert parse_action(f"pyautogui.click({i}, {i + 7})")["x"] == float(i)
    after = (actions._parse_text.cache_info().currsize,
             action_code._read_remembered.cache_info().currsize)  # fmt: skip
    assert after == before

"""Rendering an action in a profile's action space, as that space's runners log it.

pyautogui runs log code strings; claude_computer_use runs log the Messages API tool_use dict
(with the pyautogui `command` the runner executed); computer_13 runs log action dicts.
"""

from __future__ import annotations

import random
from typing import Any

from deskscore.collectors.synthetic.planning import Act
from deskscore.collectors.synthetic.profiles import AgentProfile
from deskscore.collectors.synthetic.texts import texts

_TOOL_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _code(act: Act) -> str:
    """The pyautogui code an action stands for (also Claude's `command`)."""
    if act.op == "click":
        return f"pyautogui.click({act.x}, {act.y})"
    if act.op == "double_click":
        return f"pyautogui.doubleClick({act.x}, {act.y})"
    if act.op == "right_click":
        return f"pyautogui.rightClick({act.x}, {act.y})"
    if act.op == "move":
        return f"pyautogui.moveTo({act.x}, {act.y})"
    if act.op == "write":
        return f"pyautogui.write({act.text!r}, interval=0.03)"
    if act.op == "press":
        return f"pyautogui.press({act.keys[0]!r})"
    if act.op == "hotkey":
        return "pyautogui.hotkey(" + ", ".join(repr(k) for k in act.keys) + ")"
    if act.op == "scroll":
        return f"pyautogui.scroll({act.amount})"
    return act.op.upper()  # WAIT, DONE, FAIL


def _claude_action(act: Act, response: str, rng: random.Random) -> dict[str, Any]:
    """The tool_use dict Claude's computer tool returns (DONE and FAIL as the runner logs them)."""
    if act.op in ("done", "fail"):
        return {"action_type": act.op.upper()}
    if act.op in ("write",):
        inp: dict[str, Any] = {"action": "type", "text": act.text}
    elif act.op in ("press", "hotkey"):
        xdo = texts().xdo_keys
        inp = {"action": "key", "text": "+".join(xdo.get(k, k) for k in act.keys)}
    elif act.op == "scroll":
        inp = {
            "action": "scroll",
            "coordinate": [act.x, act.y],
            "scroll_direction": "down" if act.amount < 0 else "up",
            "scroll_amount": abs(act.amount),
        }
    else:
        name = {
            "click": "left_click",
            "double_click": "double_click",
            "right_click": "right_click",
            "move": "mouse_move",
        }[act.op]
        inp = {"action": name, "coordinate": [act.x, act.y]}
    tool_id = "toolu_01" + "".join(rng.choice(_TOOL_ID_ALPHABET) for _ in range(22))
    return {
        "name": "computer",
        "input": inp,
        "id": tool_id,
        "action_type": "tool_use",
        "command": "import pyautogui; " + _code(act),
        "raw_response": response,
    }


def _c13_action(act: Act) -> dict[str, Any]:
    """The action dict of OSWorld's computer_13 space."""
    simple = {
        "click": "CLICK",
        "double_click": "DOUBLE_CLICK",
        "right_click": "RIGHT_CLICK",
        "move": "MOVE_TO",
    }
    if act.op in simple:
        return {"action_type": simple[act.op], "parameters": {"x": act.x, "y": act.y}}
    if act.op == "write":
        return {"action_type": "TYPING", "parameters": {"text": act.text}}
    if act.op == "press":
        return {"action_type": "PRESS", "parameters": {"key": act.keys[0]}}
    if act.op == "hotkey":
        return {"action_type": "HOTKEY", "parameters": {"keys": list(act.keys)}}
    if act.op == "scroll":
        return {"action_type": "SCROLL", "parameters": {"dx": 0, "dy": act.amount}}
    return {"action_type": act.op.upper()}


def render_action(
    profile: AgentProfile, act: Act, response: str, rng: random.Random, style: int
) -> Any:
    """The `action` value of a traj line. `style` 1 prefixes pyautogui code with its import,
    as some runners log it; Claude tool ids draw from `rng`."""
    if profile.action_space == "claude_computer_use":
        return _claude_action(act, response, rng)
    if profile.action_space == "computer_13":
        return _c13_action(act)
    code = _code(act)
    if act.op in ("wait", "done", "fail") or style == 0:
        return code
    return "import pyautogui\n" + code

"""Synthetic OSWorld result archives: realistic, deterministic fixtures for the demo and tests.

`deskscore demo`, tests and benchmarks need archives on a machine without any real run. This
module writes them in exactly the layout real runners write (REFERENCE.md section 1): per task
`traj.jsonl`, `result.txt`, `runtime.log`, `step_<N>_<ts>.png`; per run `args.json`,
`all_result.json` (a Python repr) and `summary/results.json`; published-style zips with a
prefix folder and `__MACOSX/` entries.

Agents are described by `AgentProfile` (datasets/demo_agents.json). Each episode is planned
first (`plan_run`, pure: outcome, turns, loop, error) and only then rendered to files, so the
manifest of what was generated comes from the same plan the files were written from.
Everything is derived from the seed: the same seed gives byte-identical output.

Only the standard library is imported at module level; Pillow is imported when screenshots are
drawn, and the human task index only when a demo is written without an explicit task list.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import random
import shutil
import struct
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from deskscore.scorers.domains import OSWORLD_DOMAINS

ACTION_SPACES = ("pyautogui", "claude_computer_use", "computer_13")
USAGE_STYLES = ("none", "gpt54", "agent_s3", "anthropic")
SCREENSHOT_MODES = ("none", "tiny", "realistic", "pool")
SCREEN = (1920, 1080)
"""Coordinates in actions are in the VM's screen space, as OSWorld's default 1920x1080."""

ABSENT_RATE = 0.01
"""Share of tasks that get no folder at all in a run (a runner that skipped them)."""
INTERRUPTED_RATE = 0.005
"""Share of episodes cut off by a killed runner: a partial traj.jsonl and no result.txt."""

_ZIP_DATE = (2025, 7, 1, 12, 0, 0)
_APPLEDOUBLE = bytes.fromhex("0005160700020000") + b"Mac OS X        " + b"\x00\x00"


# --------------------------------------------------------------------------- profiles


@dataclass(frozen=True)
class AgentProfile:
    """How one synthetic agent behaves; the numbers drive every episode it plays."""

    name: str
    model: str
    """Model name as a runner writes it; may contain '/', which adds folder levels."""
    action_space: str
    """pyautogui (code strings), claude_computer_use (tool_use dicts) or computer_13 (dicts)."""
    observation_type: str
    skill: float
    """Probability of success on a task a human does in <= 8 single actions."""
    efficiency: float
    """Agent actions per human single action on successes (1.4-2.7 typical)."""
    max_steps: int
    """The runner's budget of model turns (15, 50 or 100)."""
    loop_rate: float
    """Probability that a failing episode repeats one action and response 3-10 times."""
    error_rate: float
    """Probability of an {"Error": ...} line; most such episodes have no result.txt."""
    partial_rate: float
    """Probability that a failure on a multi-metric task scores a fraction such as 0.5."""
    actions_per_turn: float
    """Mean actions per model turn; above 1 several lines share a step_num (Claude style)."""
    timestamp_micros: bool
    """Timestamps as %Y%m%d@%H%M%S%f instead of %Y%m%d@%H%M%S."""
    usage: str = "none"
    """How the runner archives model usage: none; gpt54 (model_usage on every traj line, as
    DeskCraft's gpt54 runner); agent_s3 (a token_usage.json of planning, reflection and
    grounding calls); anthropic (the Messages API usage object on every traj line)."""
    history_tokens: int = 0
    """Prompt tokens each turn adds to every later call's prompt (0: no history carried)."""


def _profiles_path() -> Any:
    return resources.files("deskscore.datasets").joinpath("demo_agents.json")


def _read_settings(path: str | Path | None) -> dict[str, Any]:
    text = Path(path).read_text() if path is not None else _profiles_path().read_text()
    data = json.loads(text)
    return {"profiles": data} if isinstance(data, list) else data


def task_slice(version: str = "verified", per_domain: int = 3) -> list[dict]:
    """The first `per_domain` tasks of every domain of the bundled human figures: a small,
    realistic task list (thunderbird included) for fixtures and quick runs."""
    from deskscore.collectors.human import load_bundled

    seen: dict[str, int] = {}
    out = []
    for row in load_bundled(version):
        if seen.get(row["domain"], 0) < per_domain:
            seen[row["domain"]] = seen.get(row["domain"], 0) + 1
            out.append(row)
    return out


def load_profiles(path: str | Path | None = None) -> list[AgentProfile]:
    """Agent profiles from a JSON file (datasets/demo_agents.json by default).

    Raises ValueError naming the profile and the field when the file is malformed: these are
    settings written by hand, and a typo must not silently change what is generated.
    """
    data = _read_settings(path)
    names = {f.name: f.type for f in fields(AgentProfile)}
    required = {f.name for f in fields(AgentProfile) if f.default is MISSING}
    out: list[AgentProfile] = []
    where = path or "datasets/demo_agents.json"
    for i, raw in enumerate(data.get("profiles", [])):
        label = f"{where}: profile {i} ({raw.get('name', '?')})"
        unknown = sorted(set(raw) - set(names))
        missing = sorted(required - set(raw))
        if unknown or missing:
            raise ValueError(f"{label}: unknown fields {unknown}, missing fields {missing}")
        profile = AgentProfile(**raw)
        if profile.action_space not in ACTION_SPACES:
            raise ValueError(f"{label}: action_space must be one of {ACTION_SPACES}")
        if profile.usage not in USAGE_STYLES or profile.history_tokens < 0:
            raise ValueError(f"{label}: usage must be one of {USAGE_STYLES}, history_tokens >= 0")
        if profile.max_steps < 1 or profile.efficiency <= 0 or profile.actions_per_turn < 1:
            raise ValueError(f"{label}: max_steps >= 1, efficiency > 0, actions_per_turn >= 1")
        for rate in ("skill", "loop_rate", "error_rate", "partial_rate"):
            if not 0.0 <= getattr(profile, rate) <= 1.0:
                raise ValueError(f"{label}: {rate} must be within [0, 1]")
        out.append(profile)
    if len({p.name for p in out}) != len(out):
        raise ValueError(f"{where}: profile names must be unique")
    return out


# --------------------------------------------------------------------------- plans


@dataclass(frozen=True)
class Act:
    """One abstract desktop action, rendered later into the profile's action format."""

    op: str  # click double_click right_click move write press hotkey scroll wait done fail
    x: int = 0
    y: int = 0
    text: str = ""
    keys: tuple[str, ...] = ()
    amount: int = 0


@dataclass(frozen=True)
class Turn:
    """One model turn: a response and the actions it produced (they share a step_num)."""

    response: str
    acts: tuple[Act, ...]
    states: tuple[int, ...]
    """Screen state after each action: equal states give identical screenshots."""
    loop: bool = False
    """Part of a loop: the same action and response as the turns around it."""


@dataclass(frozen=True)
class EpisodePlan:
    """Everything about one task folder, decided before anything is written."""

    domain: str
    task_id: str
    human_steps: int
    infeasible: bool
    outcome: str
    """success, infeasible_fail (FAIL on an infeasible task), budget (ran out of turns),
    wrong_done, give_up (FAIL on a feasible task), error, interrupted or absent."""
    turns: tuple[Turn, ...]
    result: str | None
    """Text of result.txt without its newline, None when the file is not written."""
    error: str | None

    @property
    def loop_len(self) -> int:
        """Repeats of the looped action left in the episode (0 without a loop)."""
        return sum(1 for t in self.turns if t.loop)

    @property
    def n_actions(self) -> int:
        return sum(len(t.acts) for t in self.turns)

    @property
    def n_lines(self) -> int:
        """Lines of traj.jsonl: one per executed action, plus the Error line if any."""
        return self.n_actions + (1 if self.error is not None else 0)

    @property
    def score(self) -> float | None:
        return _result_value(self.result)


def _result_value(text: str | None) -> float | None:
    """The number a result.txt text stands for (True is 1.0, as OSWorld's scripts read it)."""
    if text is None:
        return None
    return {"True": 1.0, "False": 0.0}[text] if text in ("True", "False") else float(text)


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _stable_unit(*parts: object) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32


def _task_fields(task: Mapping[str, Any]) -> tuple[str, str, int, bool]:
    """(domain, task_id, single steps, infeasible) from a human index row, leniently typed."""
    raw_inf = task.get("infeasible", False)
    infeasible = (
        raw_inf.strip().lower() in ("1", "true", "yes")
        if isinstance(raw_inf, str)
        else bool(raw_inf)
    )
    try:
        steps = int(float(task.get("single_steps") or 1))
    except (TypeError, ValueError):
        steps = 1
    return str(task["domain"]), str(task["task_id"]), max(1, steps), infeasible


def result_kind(domain: str, task_id: str, infeasible: bool) -> str:
    """How a task's evaluator prints its score: float (1.0), int (1) or bool (True).

    OSWorld writes f"{result}\\n"; metrics return floats mostly, some ints or bools, and the
    infeasible check returns ints. Fixed per task, so every agent shows the same text for it.
    """
    if infeasible:
        return "int"
    u = _stable_unit("result-kind", domain, task_id)
    return "bool" if u < 0.08 else "int" if u < 0.20 else "float"


def success_probability(skill: float, human_steps: int) -> float:
    """Success chance: `skill` up to 8 human actions, falling as 1/sqrt(steps) beyond."""
    return skill * min(1.0, math.sqrt(8.0 / max(1, human_steps)))


_PARTIALS = ("0.5", "0.5", "0.5", "0.3333333333333333", "0.6666666666666666", "0.25", "0.75")

_TARGETS = {
    "chrome": (
        "the address bar",
        "the Settings menu",
        "the three-dot menu",
        "the Bookmarks bar",
        "the search box",
        "the 'Clear data' button",
        "the Extensions icon",
        "a new tab",
    ),
    "gimp": (
        "the Image menu",
        "the Layers panel",
        "the Export As dialog",
        "the Colors menu",
        "the canvas",
        "the 'Flip Horizontally' entry",
        "the Filters menu",
        "the OK button",
    ),
    "libreoffice_calc": (
        "cell A1",
        "the column B header",
        "the Data menu",
        "the formula bar",
        "the Sort dialog",
        "the Format Cells entry",
        "the sheet tab",
        "cell D2",
    ),
    "libreoffice_impress": (
        "the slide pane",
        "the title placeholder",
        "the Slide menu",
        "the Properties sidebar",
        "the Layout panel",
        "slide 2",
        "the text box",
        "the Format menu",
    ),
    "libreoffice_writer": (
        "the first paragraph",
        "the Format menu",
        "the Styles list",
        "the Insert menu",
        "the page body",
        "the Bold button",
        "the Paragraph dialog",
        "the Save button",
    ),
    "multi_apps": (
        "the file manager window",
        "the terminal",
        "the spreadsheet",
        "the browser tab",
        "the Downloads folder",
        "the email draft",
        "the document window",
        "the Files icon in the dock",
    ),
    "os": (
        "the terminal window",
        "the Settings app",
        "the Activities button",
        "the dock",
        "the Displays panel",
        "the file manager",
        "the power menu",
        "the Desktop folder",
    ),
    "thunderbird": (
        "the Write button",
        "the Inbox folder",
        "the message list",
        "the To field",
        "the Subject field",
        "the Account Settings entry",
        "the Filters menu",
        "the Send button",
    ),
    "vlc": (
        "the Media menu",
        "the playlist",
        "the Tools menu",
        "the Preferences dialog",
        "the volume slider",
        "the Video menu",
        "the play button",
        "the Open File dialog",
    ),
    "vs_code": (
        "the Explorer view",
        "the editor tab",
        "the Command Palette",
        "the Settings tab",
        "the Extensions view",
        "the status bar",
        "the integrated terminal",
        "the search field",
    ),
}
_TEXTS = {
    "chrome": (
        "https://www.google.com",
        "chrome://settings/privacy",
        "best hiking trails",
        "flights to Seattle",
        "https://github.com/xlang-ai/OSWorld",
    ),
    "gimp": ("edited_image.png", "~/Desktop/export.jpg", "50", "1024"),
    "libreoffice_calc": (
        "=SUM(B2:B20)",
        "=AVERAGE(C2:C31)",
        "Total",
        "=VLOOKUP(A2;Sheet2.A:B;2;0)",
        "Revenue",
    ),
    "libreoffice_impress": ("Quarterly Review", "Agenda", "Thank you", "24"),
    "libreoffice_writer": ("Introduction", "Times New Roman", "1.5", "Summary of findings"),
    "multi_apps": ("report.xlsx", "~/Documents/notes.txt", "Weekly update", "data.csv"),
    "os": (
        "ls -la ~/Desktop",
        "sudo apt install -y htop",
        "chmod 644 notes.txt",
        "cd ~/Documents && mkdir backup",
        "gsettings set org.gnome.desktop.interface text-scaling-factor 1.25",
    ),
    "thunderbird": (
        "team@example.com",
        "Meeting notes",
        "anonym-x2024@outlook.com",
        "Invoice March",
    ),
    "vlc": ("~/Videos/clip.mp4", "1.5", "snapshot", "100"),
    "vs_code": (
        "Preferences: Open Settings (JSON)",
        "editor.wordWrap",
        "main.py",
        "print('hello')",
        "python.linting.enabled",
    ),
}
_HOTKEYS = {
    "chrome": (("ctrl", "l"), ("ctrl", "t"), ("ctrl", "shift", "delete"), ("ctrl", "d")),
    "gimp": (("ctrl", "shift", "e"), ("ctrl", "o"), ("ctrl", "z"), ("ctrl", "a")),
    "libreoffice_calc": (("ctrl", "s"), ("ctrl", "c"), ("ctrl", "v"), ("ctrl", "home")),
    "libreoffice_impress": (("ctrl", "s"), ("ctrl", "m"), ("ctrl", "b"), ("ctrl", "a")),
    "libreoffice_writer": (("ctrl", "s"), ("ctrl", "b"), ("ctrl", "e"), ("ctrl", "a")),
    "multi_apps": (("ctrl", "s"), ("alt", "tab"), ("ctrl", "c"), ("ctrl", "v")),
    "os": (("ctrl", "alt", "t"), ("ctrl", "c"), ("super",), ("ctrl", "shift", "v")),
    "thunderbird": (("ctrl", "n"), ("ctrl", "enter"), ("ctrl", "shift", "a"), ("ctrl", "k")),
    "vlc": (("ctrl", "o"), ("ctrl", "p"), ("ctrl", "q"), ("ctrl", "l")),
    "vs_code": (("ctrl", "shift", "p"), ("ctrl", "s"), ("ctrl", ","), ("ctrl", "shift", "x")),
}
_KEYS = ("enter", "enter", "enter", "tab", "esc", "down", "backspace", "space")
_OPENERS = (
    "The window shows {t}.",
    "I can see {t} on the screen.",
    "The previous action worked and {t} is visible.",
    "Looking at the screenshot, {t} is available.",
    "The application has loaded; {t} is in view.",
)
_INTENTS = {
    "click": "I will click on {t}.",
    "double_click": "I will double-click {t} to open it.",
    "right_click": "I will right-click {t} to open its context menu.",
    "move": "I will move the mouse over {t}.",
    "write": "I will type the required text into {t}.",
    "press": "I will press a key to confirm.",
    "hotkey": "I will use a keyboard shortcut.",
    "scroll": "I will scroll to find {t}.",
    "wait": "The page is still loading, so I will wait.",
    "done": "The task has been completed successfully.",
    "fail": "This task cannot be completed: the requested feature does not exist.",
}
_ERRORS = (
    "Time limit exceeded.",
    "{d}/{i} - HTTPConnectionPool(host='localhost', port=5000): Max retries exceeded with url: "
    "/screenshot (Caused by NewConnectionError('Failed to establish a new connection'))",
    "{d}/{i} - 'NoneType' object is not subscriptable",
    "{d}/{i} - Failed to get screenshot after 3 retries",
    "{d}/{i} - Error code: 529 - {{'type': 'error', 'error': {{'type': 'overloaded_error'}}}}",
)


def _random_act(rng: random.Random, domain: str, allow_wait: bool) -> Act:
    op = rng.choices(
        (
            "click",
            "double_click",
            "right_click",
            "move",
            "write",
            "press",
            "hotkey",
            "scroll",
            "wait",
        ),
        (40, 5, 3, 5, 15, 10, 12, 7, 3 if allow_wait else 0),
    )[0]
    x, y = rng.randint(40, SCREEN[0] - 40), rng.randint(60, SCREEN[1] - 40)
    if op == "write":
        return Act(op, text=rng.choice(_TEXTS[domain]))
    if op == "press":
        return Act(op, keys=(rng.choice(_KEYS),))
    if op == "hotkey":
        return Act(op, keys=rng.choice(_HOTKEYS[domain]))
    if op == "scroll":
        return Act(op, x=x, y=y, amount=rng.choice((-5, -3, -3, 3, 5)))
    if op == "wait":
        return Act(op)
    return Act(op, x=x, y=y)


def _response(rng: random.Random, domain: str, act: Act) -> str:
    """Planner text for a turn; specific enough that unrelated turns rarely read the same."""
    target = rng.choice(_TARGETS[domain])
    seen = rng.choice(_TARGETS[domain])
    intent = _INTENTS[act.op].format(t=target)
    if act.op == "write":
        intent = f"I will type {act.text!r} into the focused field."
    elif act.op in ("press", "hotkey"):
        intent = f"I will press {'+'.join(act.keys)} next."
    return f"{rng.choice(_OPENERS).format(t=seen)} {intent}"


def _jitter(act: Act, rng: random.Random) -> Act:
    """A loop repeat: the same action, coordinates moved by a few pixels at most."""
    if (
        act.op not in ("click", "double_click", "right_click", "move", "scroll")
        or rng.random() < 0.5
    ):
        return act
    return Act(
        act.op,
        act.x + rng.randint(-3, 3),
        act.y + rng.randint(-3, 3),
        act.text,
        act.keys,
        act.amount,
    )


def _turn_sizes(rng: random.Random, n_actions: int, apt: float) -> list[int]:
    """Split n actions into model turns of mean size `apt` (1 everywhere when apt == 1)."""
    sizes: list[int] = []
    left = n_actions
    while left > 0:
        k = 1 if apt <= 1.0 else min(5, 1 + int(rng.expovariate(1.0 / (apt - 1.0 + 1e-9)) + 0.5))
        k = min(k, left)
        sizes.append(k)
        left -= k
    return sizes


def _plan_episode(profile: AgentProfile, task: Mapping[str, Any], seed: int) -> EpisodePlan:
    domain, task_id, h, infeasible = _task_fields(task)
    rng = _rng(seed, profile.name, domain, task_id)
    budget = profile.max_steps
    eff = profile.efficiency
    allow_wait = profile.action_space != "claude_computer_use"

    # 1. what happens, and how many actions the agent takes before its ending
    ending: str | None  # "done", "fail" or None (ran out of turns)
    looping = False
    if infeasible and rng.random() < min(0.95, 0.25 + 0.7 * profile.skill):
        outcome, ending = "infeasible_fail", "fail"
        body = max(0, round(eff * h * rng.uniform(1.0, 4.0)) - 1)
    elif not infeasible and rng.random() < success_probability(profile.skill, h):
        outcome, ending = "success", "done"
        body = max(1, round(eff * h * math.exp(rng.gauss(0.0, 0.25))) - 1)
    else:
        looping = rng.random() < profile.loop_rate
        p_budget = 0.45 + (0.35 if looping else 0.0)
        u = rng.random()
        if u < p_budget:
            outcome, ending = "budget", None
        elif u < p_budget + (1 - p_budget) * 0.7:
            outcome, ending = "wrong_done", "done"
        else:
            outcome, ending = "give_up", "fail"
        body = max(1, round(eff * h * rng.uniform(1.1, 2.5)))

    # 2. group the body into turns; the ending (DONE/FAIL) is a turn of its own
    sizes = _turn_sizes(rng, body, profile.actions_per_turn)
    room = budget - (1 if ending else 0)
    if outcome == "budget":
        while len(sizes) < budget:
            sizes += _turn_sizes(rng, 1, profile.actions_per_turn)
        sizes = sizes[:budget]
    elif len(sizes) > room:
        sizes, ending, outcome = sizes[:budget], None, "budget"  # ran out before finishing

    # 3. a loop: one action repeated 3-10 times, one per turn, identical response and screen
    loop = range(0)
    if looping and len(sizes) >= 4:
        want = rng.randint(3, 10)
        if outcome != "budget" and len(sizes) < want + 2:
            sizes += [1] * max(0, min(want + 2, room) - len(sizes))
        want = min(want, len(sizes) - 1)
        if want >= 3:
            to_end = outcome == "budget" and rng.random() < 0.35  # the step limit ends it
            start = len(sizes) - want if to_end else rng.randint(1, len(sizes) - want)
            loop = range(start, start + want)
            sizes[start : start + want] = [1] * want

    # 4. the turns themselves
    turns: list[Turn] = []
    state = 0
    loop_act: Act | None = None
    loop_resp = ""
    for t, size in enumerate(sizes):
        if t in loop:
            if loop_act is None:
                loop_act = _random_act(rng, domain, allow_wait=False)
                if loop_act.op == "write":
                    loop_act = Act("click", loop_act.x or 960, loop_act.y or 540)
                loop_resp = _response(rng, domain, loop_act)
                state += 1
                turns.append(Turn(loop_resp, (loop_act,), (state,), True))
            else:
                turns.append(Turn(loop_resp, (_jitter(loop_act, rng),), (state,), True))
            continue
        acts = tuple(_random_act(rng, domain, allow_wait) for _ in range(size))
        states = []
        for act in acts:
            state += act.op != "wait"
            states.append(state)
        turns.append(Turn(_response(rng, domain, acts[0]), acts, tuple(states)))
    if ending:
        act = Act(ending)
        turns.append(Turn(_response(rng, domain, act), (act,), (state,)))

    # 5. the score as result.txt prints it
    result: str | None
    if outcome in ("success", "infeasible_fail"):
        result = "1" if infeasible else _format_result(1, result_kind(domain, task_id, infeasible))
    elif outcome == "give_up" or infeasible:
        result = "0"  # DesktopEnv returns the int 0 after a final FAIL and on infeasible tasks
    elif (
        result_kind(domain, task_id, infeasible) == "float" and rng.random() < profile.partial_rate
    ):
        result = rng.choice(_PARTIALS)
    else:
        result = _format_result(0, result_kind(domain, task_id, infeasible))

    # 6. runner errors: most cut the episode short and leave no result.txt
    error = None
    if rng.random() < profile.error_rate:
        error = rng.choice(_ERRORS).format(d=domain, i=task_id)
        if rng.random() < 0.8:
            turns = turns[: rng.randint(0, max(0, len(turns) - 1))]
            result = None
        outcome = "error"
    return EpisodePlan(domain, task_id, h, infeasible, outcome, tuple(turns), result, error)


def _format_result(score: int, kind: str) -> str:
    if kind == "bool":
        return "True" if score else "False"
    if kind == "float":
        return f"{float(score)}"
    return f"{score}"


def plan_run(
    profile: AgentProfile,
    tasks: Sequence[Mapping[str, Any]],
    *,
    seed: int,
    absent_rate: float = ABSENT_RATE,
    interrupted_rate: float = INTERRUPTED_RATE,
) -> list[EpisodePlan]:
    """One plan per task, sorted by (domain, task_id); pure and deterministic for a seed.

    A few tasks are left out (`absent`) and a few episodes cut by a killed runner
    (`interrupted`): round(rate * n) of each, chosen by the seed.
    """
    ordered = sorted(tasks, key=lambda t: (str(t["domain"]), str(t["task_id"])))
    plans = [_plan_episode(profile, t, seed) for t in ordered]
    pick = _rng(seed, profile.name, "absent-interrupted")
    n_absent = round(absent_rate * len(plans))
    n_cut = round(interrupted_rate * len(plans))
    chosen = pick.sample(range(len(plans)), min(len(plans), n_absent + n_cut))
    for i in chosen[:n_absent]:
        p = plans[i]
        plans[i] = EpisodePlan(
            p.domain, p.task_id, p.human_steps, p.infeasible, "absent", (), None, None
        )
    for i in chosen[n_absent:]:
        p = plans[i]
        keep = pick.randint(1, max(1, len(p.turns) - 1)) if p.turns else 0
        plans[i] = EpisodePlan(
            p.domain,
            p.task_id,
            p.human_steps,
            p.infeasible,
            "interrupted",
            p.turns[:keep],
            None,
            None,
        )
    return plans


# --------------------------------------------------------------------------- rendering


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


_XDO_KEYS = {
    "enter": "Return",
    "tab": "Tab",
    "esc": "Escape",
    "down": "Down",
    "backspace": "BackSpace",
    "space": "space",
    "super": "Super_L",
}


def _claude_action(act: Act, response: str, rng: random.Random) -> dict[str, Any]:
    if act.op in ("done", "fail"):
        return {"action_type": act.op.upper()}
    if act.op in ("write",):
        inp: dict[str, Any] = {"action": "type", "text": act.text}
    elif act.op in ("press", "hotkey"):
        inp = {"action": "key", "text": "+".join(_XDO_KEYS.get(k, k) for k in act.keys)}
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
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    tool_id = "toolu_01" + "".join(rng.choice(alphabet) for _ in range(22))
    return {
        "name": "computer",
        "input": inp,
        "id": tool_id,
        "action_type": "tool_use",
        "command": "import pyautogui; " + _code(act),
        "raw_response": response,
    }


def _c13_action(act: Act) -> dict[str, Any]:
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


def _render_action(
    profile: AgentProfile, act: Act, response: str, rng: random.Random, style: int
) -> Any:
    if profile.action_space == "claude_computer_use":
        return _claude_action(act, response, rng)
    if profile.action_space == "computer_13":
        return _c13_action(act)
    code = _code(act)
    if act.op in ("wait", "done", "fail") or style == 0:
        return code
    return "import pyautogui\n" + code


def _run_start(seed: int, profile: AgentProfile, legacy: bool) -> datetime:
    """When the run began: fixed by the seed; legacy runs predate the 2025-02-10 id change."""
    rng = _rng(seed, profile.name, "run-start")
    first = datetime(2024, 11, 4, 9, 0, 0) if legacy else datetime(2025, 6, 2, 9, 0, 0)
    return first + timedelta(days=rng.randint(0, 60), minutes=rng.randint(0, 600))


def _png(width: int, height: int, raw: bytes | bytearray) -> bytes:
    """A PNG from filtered RGB rows (each row starts with filter byte 0)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(raw), 1))
        + chunk(b"IEND", b"")
    )


class _Shots:
    """Screenshot bytes by (task, state); identical states give identical bytes.

    tiny: 64x36, drawn straight into PNG rows with zlib (tens of thousands per demo, so no
    imaging library); realistic: 1280x720 desktops drawn with Pillow, imported only then;
    pool: realistic frames of the right size drawn once, `POOL` of them, and reused, for
    archives whose screenshots only need to weigh what real ones weigh (batch benchmarks).
    """

    TINY = (64, 36)
    POOL = 64

    def __init__(self, mode: str) -> None:
        if mode not in SCREENSHOT_MODES:
            raise ValueError(f"screenshots must be one of {SCREENSHOT_MODES}, not {mode!r}")
        self.mode = mode
        self._base: dict[str, Any] = {}
        self._pool: dict[int, bytes] = {}
        if mode in ("realistic", "pool"):
            from PIL import Image, ImageDraw  # only when full-size pictures are wanted

            self._image, self._draw = Image, ImageDraw

    def png(self, domain: str, task_id: str, state: int, cursor: tuple[int, int]) -> bytes:
        if self.mode == "tiny":
            return self._tiny(domain, task_id, state, cursor)
        if self.mode == "pool":
            slot = _rng("pool", domain, task_id, state).randrange(self.POOL)
            if slot not in self._pool:
                domain_of_slot = OSWORLD_DOMAINS[slot % len(OSWORLD_DOMAINS)]
                self._pool[slot] = self._realistic(domain_of_slot, f"pool{slot}", slot, cursor)
            return self._pool[slot]
        return self._realistic(domain, task_id, state, cursor)

    def _tiny(self, domain: str, task_id: str, state: int, cursor: tuple[int, int]) -> bytes:
        w, h = self.TINY
        stride = 1 + 3 * w
        base = self._base.get(domain)
        if base is None:
            hue = OSWORLD_DOMAINS.index(domain) if domain in OSWORLD_DOMAINS else 0
            row = b"\x00" + bytes((30 + 20 * hue % 200, 40, 90 + 13 * hue % 150)) * w
            top = b"\x00" + b"\x14\x14\x14" * w
            base = self._base[domain] = bytearray(top * 3 + row * (h - 3))
        raw = bytearray(base)
        r = hashlib.sha256(f"{task_id}\x1f{state}".encode()).digest()

        def rect(x0: int, y0: int, x1: int, y1: int, rgb: bytes) -> None:
            x0, x1 = max(0, x0), min(w, x1)
            for y in range(max(0, y0), min(h, y1)):
                at = y * stride + 1 + 3 * x0
                raw[at : at + 3 * (x1 - x0)] = rgb * (x1 - x0)

        x0, y0 = 2 + r[0] % 18, 4 + r[1] % 8  # the application window moves and resizes
        rect(x0, y0, x0 + 24 + r[2] % 16, y0 + 12 + r[3] % 10, b"\xeb\xeb\xeb")
        for i in range(2 + r[4] % 4):  # content bars
            a, b = r[5 + i] % 60, 4 + r[10 + i] % 28
            rect(a, b, a + 2 + r[15 + i] % 10, b + 2, bytes(r[20 + i : 23 + i]))
        cx, cy = cursor[0] * w // SCREEN[0], cursor[1] * h // SCREEN[1]
        rect(cx, cy, cx + 2, cy + 2, b"\xff\xff\xff")
        return _png(w, h, raw)

    def _realistic(self, domain: str, task_id: str, state: int, cursor: tuple[int, int]) -> bytes:
        w, h = 1280, 720
        base = self._base.get(task_id)
        if base is None:
            self._base.clear()
            hue = OSWORLD_DOMAINS.index(domain) if domain in OSWORLD_DOMAINS else 0
            base = self._image.new("RGB", (w, h), (44, 0, 30))
            d = self._draw.Draw(base)
            d.rectangle((0, 0, w, 24), fill=(29, 29, 29))
            d.rectangle((0, 24, 56, h), fill=(40, 40, 46))
            for i in range(9):
                d.rounded_rectangle(
                    (8, 36 + 56 * i, 48, 76 + 56 * i), 6, fill=(90 + 15 * i, 70, 160 - 10 * i)
                )
            d.rectangle((72, 40, w - 16, h - 16), fill=(250, 250, 250))
            d.rectangle((72, 40, w - 16, 72), fill=(60 + 18 * hue, 90, 140 + 8 * hue))
            d.rectangle((72, 72, w - 16, 108), fill=(232, 232, 236))
            for i in range(16):
                d.rectangle((84 + 34 * i, 78, 108 + 34 * i, 102), fill=(180, 186, 196))
            if domain == "libreoffice_calc":
                for y in range(130, h - 20, 22):
                    d.line((72, y, w - 16, y), fill=(215, 215, 215))
                for x in range(130, w - 16, 96):
                    d.line((x, 108, x, h - 16), fill=(215, 215, 215))
            self._base[task_id] = base
        img = base.copy()
        d = self._draw.Draw(img)
        rng = _rng("real", task_id, state)
        for i in range(rng.randint(4, 18)):
            y = 126 + 24 * i
            if y > h - 40:
                break
            d.rectangle((100, y, 100 + rng.randint(120, 900), y + 10), fill=(70, 70, 80))
        if rng.random() < 0.3:
            x0, y0 = rng.randint(300, 700), rng.randint(180, 360)
            d.rectangle((x0, y0, x0 + 420, y0 + 240), fill=(242, 242, 242), outline=(120, 120, 120))
            d.rectangle((x0 + 300, y0 + 196, x0 + 400, y0 + 226), fill=(60, 110, 200))
        cx, cy = cursor[0] * w // SCREEN[0], cursor[1] * h // SCREEN[1]
        d.polygon(((cx, cy), (cx, cy + 18), (cx + 5, cy + 13), (cx + 12, cy + 13)), fill=(0, 0, 0))
        buf = io.BytesIO()
        img.save(buf, "PNG", compress_level=1)
        return buf.getvalue()


# --------------------------------------------------------------------------- sinks


class _DirSink:
    """Writes files under a folder (plain os calls: the demo writes tens of thousands)."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self._made: set[str] = set()

    def write(self, rel: str, data: bytes) -> None:
        path = os.path.join(self.root, rel)
        parent = os.path.dirname(path)
        if parent not in self._made:
            os.makedirs(parent, exist_ok=True)
            self._made.add(parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)

    def read(self, rel: str) -> bytes | None:
        try:
            with open(os.path.join(self.root, rel), "rb") as f:
                return f.read()
        except OSError:
            return None

    def close(self) -> None:
        pass


def _zinfo(name: str, method: int) -> zipfile.ZipInfo:
    zi = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
    zi.create_system = 3  # unix, whatever machine writes it
    zi.external_attr = (0o40755 << 16 | 0x10) if name.endswith("/") else 0o100644 << 16
    zi.compress_type = method
    return zi


class _ZipSink:
    """Writes members straight into a zip, as published archives are laid out: everything
    under `prefix/`, directory entries, and macOS `__MACOSX/._*` AppleDouble companions for the
    run-level files and the first task folder. Written aside, renamed on close."""

    _RUN_FILES = ("args.json", "all_result.json", "results.json")

    def __init__(self, zip_path: Path, prefix: str) -> None:
        self.path = Path(zip_path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(self.path.name + ".part")
        self._zf = zipfile.ZipFile(self._tmp, "w")
        self._lead = f"{prefix.strip('/')}/" if prefix.strip("/") else ""
        self._dirs: set[str] = set()
        self._companions: list[str] = []
        self._first_task: str | None = None
        self._dir(self._lead)

    def _dir(self, name: str) -> None:
        if name and name not in self._dirs:
            self._dirs.add(name)
            self._zf.writestr(_zinfo(name, zipfile.ZIP_STORED), b"")

    def write(self, rel: str, data: bytes) -> None:
        parts = rel.split("/")
        for i in range(1, len(parts)):
            self._dir(self._lead + "/".join(parts[:i]) + "/")
        head = "/".join(parts[:-1])
        if self._first_task is None and parts[-1] == "traj.jsonl":
            self._first_task = head
        if parts[-1] in self._RUN_FILES or (head and head == self._first_task):
            self._companions.append(rel)
        method = zipfile.ZIP_STORED if rel.endswith(".png") else zipfile.ZIP_DEFLATED
        self._zf.writestr(_zinfo(self._lead + rel, method), data)

    def read(self, rel: str) -> bytes | None:
        return None  # a new archive holds nothing yet

    def __enter__(self) -> _ZipSink:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        """Close the archive into place, or drop it half-written if the body raised."""
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def abort(self) -> None:
        """Drop the half-written archive (the target path is left untouched)."""
        self._zf.close()
        self._tmp.unlink(missing_ok=True)

    def close(self) -> None:
        if self._zf.fp is None:
            return
        mac = "__MACOSX/"
        self._dir(mac)
        for rel in sorted(self._companions):
            head, _, tail = rel.rpartition("/")
            folder = f"{mac}{self._lead}{head}/" if head else f"{mac}{self._lead}"
            parts = folder[len(mac) :].rstrip("/").split("/")
            for i in range(1, len(parts) + 1):
                self._dir(mac + "/".join(parts[:i]) + "/")
            self._zf.writestr(_zinfo(f"{folder}._{tail}", zipfile.ZIP_DEFLATED), _APPLEDOUBLE)
        self._zf.close()
        self._tmp.replace(self.path)


# --------------------------------------------------------------------------- runs


def _fmt_ts(micros: int, with_micros: bool) -> str:
    ts = _EPOCH + timedelta(microseconds=micros)
    return ts.strftime("%Y%m%d@%H%M%S%f" if with_micros else "%Y%m%d@%H%M%S")


_EPOCH = datetime(2000, 1, 1)
_POINTER_OPS = ("click", "double_click", "right_click", "move", "scroll")


def _write_episode(
    sink: _DirSink | _ZipSink,
    folder: str,
    profile: AgentProfile,
    plan: EpisodePlan,
    *,
    seed: int,
    start_us: int,
    shots: _Shots,
    runtime_log: bool,
) -> int:
    """Write one task folder; returns the microsecond clock when the episode ended."""
    rng = _rng(seed, profile.name, plan.domain, plan.task_id, "render")
    style = int(_stable_unit("style", profile.name) * 2)
    clock = start_us
    lines: list[str] = []
    log: list[str] = []
    cache: dict[int, bytes] = {}
    cursor = (SCREEN[0] // 2, SCREEN[1] // 2)
    usage = _UsageWriter(profile, plan, seed) if profile.usage != "none" else None
    for t, turn in enumerate(plan.turns):
        # model latency grows through an episode as the prompt carries more history
        latency_us = int(rng.uniform(3.0, 9.0) * (1.0 + 2.0 * t / max(1, profile.max_steps)) * 1e6)
        turn_keys = usage.turn(t, turn, clock, latency_us) if usage is not None else {}
        clock += latency_us
        log.append(f"RESPONSE: {turn.response}")
        for act, state in zip(turn.acts, turn.states, strict=True):
            ts = _fmt_ts(clock, profile.timestamp_micros)
            shot = f"step_{t + 1}_{ts}.png"
            if act.op in _POINTER_OPS:
                cursor = (act.x, act.y)
            info = (
                {"done": True} if act.op == "done" else {"fail": True} if act.op == "fail" else {}
            )
            line = {
                "step_num": t + 1,
                "action_timestamp": ts,
                "action": _render_action(profile, act, turn.response, rng, style),
                "response": turn.response,
                "reward": 0,
                "done": act.op in ("done", "fail"),
                "info": info,
                "screenshot_file": shot,
                **turn_keys,
            }
            lines.append(json.dumps(line))
            log.append(f"Step {t + 1}: {act.op}")
            if shots.mode != "none":
                png = cache.get(state)
                if png is None:
                    png = cache[state] = shots.png(plan.domain, plan.task_id, state, cursor)
                sink.write(f"{folder}/{shot}", png)
            clock += int(rng.uniform(1.0, 3.0) * 1e6)
    if plan.error is not None:
        lines.append(json.dumps({"Error": plan.error}))
        log.append(f"Exception: {plan.error}")
    sink.write(f"{folder}/traj.jsonl", "".join(line + "\n" for line in lines).encode())
    if usage is not None and usage.entries:
        sink.write(f"{folder}/token_usage.json", usage.file_bytes())
    if plan.result is not None:
        sink.write(f"{folder}/result.txt", f"{plan.result}\n".encode())
        log.append(f"Result: {plan.score:.2f}")
    if runtime_log:
        sink.write(f"{folder}/runtime.log", "".join(x + "\n" for x in log).encode())
    return clock


_S3_PLANNER = "gpt-5-2025-08-07"
_S3_GROUNDER = "gpt-5-mini-2025-08-07"


def _cached(previous: int | None, prompt: int) -> int:
    """OpenAI's automatic prompt cache: the shared prefix with the previous call, in 128-token
    blocks, only past 1024 tokens."""
    if not previous:
        return 0
    prefix = min(previous, prompt) // 128 * 128
    return prefix if prefix >= 1024 else 0


def _iso(micros: int) -> str:
    return (_EPOCH + timedelta(microseconds=micros)).isoformat(timespec="milliseconds")


class _UsageWriter:
    """One episode's model usage in the profile's runner shape (`AgentProfile.usage`).

    It draws from its own random stream, so an agent's actions, timestamps and results are
    the same bytes with or without usage. Prompts grow by `history_tokens` per earlier turn
    (the history they carry), so per-turn cost grows linearly and cumulative cost
    quadratically; call latencies split the turn's model time, which the timestamps include.
    """

    def __init__(self, profile: AgentProfile, plan: EpisodePlan, seed: int) -> None:
        self.p = profile
        self.rng = _rng(seed, profile.name, plan.domain, plan.task_id, "usage")
        self.entries: list[dict[str, Any]] = []
        self.previous: dict[str, int] = {}

    def turn(self, t: int, turn: Turn, start_us: int, latency_us: int) -> dict[str, Any]:
        """Keys to add to each traj line of turn `t` (0-based); file entries are collected."""
        style = self.p.usage
        if style == "gpt54":
            return self._gpt54(t, turn, latency_us)
        if style == "anthropic":
            return self._anthropic(t)
        self._agent_s3(t, turn, start_us, latency_us)
        return {}

    def _gpt54(self, t: int, turn: Turn, latency_us: int) -> dict[str, Any]:
        r = self.rng
        prompt = 2600 + self.p.history_tokens * t + r.randint(0, 120)
        ident = hashlib.sha256(f"{self.p.name}{t}{turn.response}".encode()).hexdigest()
        return {
            "state_correct": turn.acts[0].op != "fail",
            "model_usage": {
                "model_time": latency_us / 1e6,
                "prompt_tokens": prompt,
                "completion_tokens": r.randint(90, 420),
            },
            "messages": [
                {"id": f"rs_{ident[:24]}", "type": "reasoning", "summary": []},
                {
                    "id": f"cu_{ident[24:48]}",
                    "type": "computer_call",
                    "status": "completed",
                    "call_id": f"call_{ident[48:]}",
                },
            ],
        }

    def _anthropic(self, t: int) -> dict[str, Any]:
        r = self.rng
        written = (3000 if t == 0 else self.p.history_tokens) + r.randint(0, 200)
        read = self.previous.get("total", 0)
        fresh = r.randint(1, 40)
        self.previous["total"] = read + written + fresh
        return {
            "usage": {
                "input_tokens": fresh,
                "cache_creation_input_tokens": written,
                "cache_read_input_tokens": read,
                "output_tokens": r.randint(120, 480),
            }
        }

    def _agent_s3(self, t: int, turn: Turn, start_us: int, latency_us: int) -> None:
        r = self.rng
        total_ms = latency_us // 1000
        pointer = turn.acts[0].op in _POINTER_OPS
        reflect_ms = int(total_ms * r.uniform(0.30, 0.40)) if t else 0
        ground_ms = int(total_ms * r.uniform(0.04, 0.08)) if pointer else 0
        plan_ms = total_ms - reflect_ms - ground_ms
        images = 1100 * min(t + 1, 8)  # the worker keeps its last 8 screenshots
        history = self.p.history_tokens * t
        at = start_us
        if t:
            prompt = 2300 + images + history // 2 + r.randint(0, 150)
            at = self._s3_entry(t, "reflection", _S3_PLANNER, at, reflect_ms, prompt,
                                r.randint(150, 600), 0.5)  # fmt: skip
        prompt = 4200 + images + history + r.randint(0, 200)
        at = self._s3_entry(t, "generator", _S3_PLANNER, at, plan_ms, prompt,
                            r.randint(350, 1400), 0.6)  # fmt: skip
        if pointer:
            self._s3_entry(t, "grounding", _S3_GROUNDER, at, ground_ms,
                           1500 + r.randint(0, 80), r.randint(12, 30), 0.0)  # fmt: skip

    def _s3_entry(
        self, t: int, module: str, model: str, at_us: int, ms: int, prompt: int,
        completion: int, reasoning_share: float,
    ) -> int:  # fmt: skip
        # once the worker drops its oldest screenshot (after 8 turns) only the system prompt
        # before it is a shared prefix
        shared = self.previous.get(module) if t < 8 else (4200 if module == "generator" else 2300)
        cached = _cached(shared, prompt) if module != "grounding" else 0
        self.previous[module] = prompt
        self.entries.append(
            {
                "step": t + 1,
                "module": module,
                "model": model,
                "started_at": _iso(at_us),
                "latency_s": ms / 1000,
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "prompt_tokens_details": {"cached_tokens": cached},
                    "completion_tokens_details": {
                        "reasoning_tokens": int(completion * reasoning_share)
                    },
                },
            }
        )
        return at_us + ms * 1000

    def file_bytes(self) -> bytes:
        """token_usage.json: the calls, and the runner's totals (which readers must not add)."""
        total = {
            k: sum(e["usage"][k] for e in self.entries)
            for k in ("prompt_tokens", "completion_tokens", "total_tokens")
        }
        return json.dumps({"calls": self.entries, "total": total}).encode()


def _args_json(profile: AgentProfile, result_dir: str) -> str:
    args = {
        "path_to_vm": None,
        "headless": True,
        "action_space": profile.action_space,
        "observation_type": profile.observation_type,
        "screen_width": SCREEN[0],
        "screen_height": SCREEN[1],
        "sleep_after_execution": 1.0,
        "max_steps": profile.max_steps,
        "max_trajectory_length": 3,
        "test_config_base_dir": "evaluation_examples",
        "model": profile.model,
        "temperature": 1.0,
        "top_p": 0.9,
        "max_tokens": 1500,
        "stop_token": None,
        "domain": "all",
        "test_all_meta_path": "evaluation_examples/test_all.json",
        "result_dir": result_dir,
        "num_envs": 8,
        "log_level": "INFO",
        "provider_name": "docker",
    }
    return json.dumps(args, indent=4)


@dataclass(frozen=True)
class RunStats:
    """What one written run holds, counted from its plan (files on disk must agree)."""

    agent: str
    model: str
    action_space: str
    observation_type: str
    max_steps: int
    n_planned: int
    """Tasks given to the run (folders written + absent)."""
    n_tasks: int
    """Task folders written."""
    n_with_result: int
    planned_successes: int
    """Episodes whose result.txt scores exactly 1 (True counts as 1)."""
    planned_score: float
    """Sum of result.txt values (partial credit included)."""
    n_partial: int
    n_errors: int
    n_interrupted: int
    n_absent: int
    n_loops: int
    """Episodes that repeat one action and response at least 3 times."""
    n_infeasible_fail: int
    """Infeasible tasks the agent answered with FAIL (scored 1)."""
    n_lines: int
    """traj.jsonl lines over all task folders."""

    @classmethod
    def of(cls, profile: AgentProfile, plans: Sequence[EpisodePlan]) -> RunStats:
        written = [p for p in plans if p.outcome != "absent"]
        scores = [s for s in (p.score for p in written) if s is not None]
        return cls(
            agent=profile.name,
            model=profile.model,
            action_space=profile.action_space,
            observation_type=profile.observation_type,
            max_steps=profile.max_steps,
            n_planned=len(plans),
            n_tasks=len(written),
            n_with_result=len(scores),
            planned_successes=sum(1 for s in scores if s == 1.0),
            planned_score=round(sum(scores), 6),
            n_partial=sum(1 for s in scores if 0.0 < s < 1.0),
            n_errors=sum(1 for p in written if p.error is not None),
            n_interrupted=sum(1 for p in written if p.outcome == "interrupted"),
            n_absent=len(plans) - len(written),
            n_loops=sum(1 for p in written if p.loop_len >= 3),
            n_infeasible_fail=sum(
                1 for p in written if p.outcome == "infeasible_fail" and p.result is not None
            ),
            n_lines=sum(p.n_lines for p in written),
        )


def _previous_summary(data: bytes | None) -> list[dict[str, Any]]:
    """Entries other runs sharing the result_dir logged; the runner appends to them."""
    try:
        loaded = json.loads(data or b"[]")
    except ValueError:
        return []
    return loaded if isinstance(loaded, list) else []


def _write_run(
    sink: _DirSink | _ZipSink,
    profile: AgentProfile,
    tasks: Sequence[Mapping[str, Any]],
    *,
    seed: int,
    screenshots: str,
    model_level: bool,
    runtime_log: bool,
    summaries: bool,
    old_thunderbird_ids: bool,
) -> tuple[str, RunStats]:
    """Write one run through `sink`; returns the run root relative to the sink ('' = its root)."""
    plans = plan_run(profile, tasks, seed=seed)
    shots = _Shots(screenshots)
    levels = (profile.action_space, profile.observation_type, profile.model)
    run_rel = "/".join(levels) if model_level else ""
    lead = f"{run_rel}/" if run_rel else ""
    clock = int((_run_start(seed, profile, old_thunderbird_ids) - _EPOCH).total_seconds() * 1e6)
    folder_ids = {
        (str(t["domain"]), str(t["task_id"])): str(t.get("alias_task_id") or t["task_id"])
        for t in tasks
        if old_thunderbird_ids and t["domain"] == "thunderbird"
    }
    summary = _previous_summary(sink.read("summary/results.json"))
    all_result: dict[str, dict[str, float]] = {}
    pace = _rng(seed, profile.name, "pace")
    for plan in plans:
        if plan.outcome == "absent":
            continue
        clock += int(pace.uniform(60.0, 120.0) * 1e6)  # reset, then the runner's wait
        folder_id = folder_ids.get((plan.domain, plan.task_id), plan.task_id)
        clock = _write_episode(
            sink,
            f"{lead}{plan.domain}/{folder_id}",
            profile,
            plan,
            seed=seed,
            start_us=clock,
            shots=shots,
            runtime_log=runtime_log,
        )
        done_at = (_EPOCH + timedelta(microseconds=clock)).strftime("%Y-%m-%d %H:%M:%S")
        if plan.result is not None:
            all_result.setdefault(plan.domain, {})[folder_id] = plan.score or 0.0
        if plan.error is not None or plan.result is not None:
            entry: dict[str, Any] = {"application": plan.domain, "task_id": folder_id}
            entry["status"] = "error" if plan.error is not None else "success"
            entry["score"] = 0.0 if plan.error is not None else plan.score
            entry["timestamp"] = done_at
            if plan.error is not None:
                entry["err_message"] = plan.error
            summary.append(entry)
    sink.write(f"{lead}args.json", _args_json(profile, "./results").encode())
    if summaries:
        sink.write(f"{lead}all_result.json", str(all_result).encode())
        text = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
        sink.write("summary/results.json", text.encode())
    return run_rel, RunStats.of(profile, plans)


def write_run(
    root: Path,
    profile: AgentProfile,
    tasks: Sequence[Mapping[str, Any]],
    *,
    seed: int,
    screenshots: str = "none",
    model_level: bool = True,
    runtime_log: bool = True,
    summaries: bool = True,
    old_thunderbird_ids: bool = False,
) -> Path:
    """Write one agent's run of `tasks` under `root` (a runner's --result_dir).

    Layout `<root>/<action_space>/<observation_type>/<model>/<domain>/<task_id>/` with args.json
    in the model folder; `model_level=False` writes `<root>/<domain>/<task_id>/` with args.json
    at `<root>`. `summaries` adds all_result.json beside args.json and
    `<root>/summary/results.json`. `old_thunderbird_ids` names thunderbird folders by the ids
    runs used before 2025-02-10 (the rows' alias_task_id) and dates the run before then.
    `tasks` are human-index rows (domain, task_id, single_steps, infeasible; other keys are
    ignored). Returns the run root (the model folder, or `root`). Same seed, same bytes.

    Several agents may share one `root`, as with real runners: summary/results.json gets the
    new entries appended. Files an earlier write left in the same run root are not removed.
    """
    root = Path(root)
    run_rel, _ = _write_run(
        _DirSink(root),
        profile,
        tasks,
        seed=seed,
        screenshots=screenshots,
        model_level=model_level,
        runtime_log=runtime_log,
        summaries=summaries,
        old_thunderbird_ids=old_thunderbird_ids,
    )
    return root / run_rel if run_rel else root


def write_run_zip(
    zip_path: Path,
    profile: AgentProfile,
    tasks: Sequence[Mapping[str, Any]],
    *,
    seed: int,
    screenshots: str = "none",
    prefix: str = "",
) -> Path:
    """Write one agent's run of `tasks` straight into a zip, as a published run archive is
    laid out (model levels under `prefix/`, `__MACOSX/` companions); nothing touches the disk
    but the archive. Same seed, same bytes."""
    with _ZipSink(Path(zip_path), prefix) as sink:
        _write_run(
            sink,
            profile,
            tasks,
            seed=seed,
            screenshots=screenshots,
            model_level=True,
            runtime_log=True,
            summaries=True,
            old_thunderbird_ids=False,
        )
    return sink.path


def write_zip(run_root: Path, zip_path: Path, prefix: str | None = None) -> Path:
    """Pack a folder as published archives are: every path under `prefix/` (default: the
    folder's name; "" for none), directory entries, `__MACOSX/` AppleDouble members; fixed
    dates and sorted members, so the same folder always gives the same bytes."""
    run_root = Path(run_root)
    with _ZipSink(Path(zip_path), run_root.name if prefix is None else prefix) as sink:
        for path in sorted(p for p in run_root.rglob("*") if p.is_file()):
            sink.write(path.relative_to(run_root).as_posix(), path.read_bytes())
    return Path(zip_path)


# --------------------------------------------------------------------------- demo


@dataclass(frozen=True)
class DemoRun:
    """One generated run: where to ingest it from and what was planned in it."""

    source: Path
    """The folder or zip to give to ingest."""
    run_path: str
    """Run root (the folder holding the domains) inside the source, POSIX, '' for the source."""
    stats: RunStats


@dataclass(frozen=True)
class DemoArchive:
    """A generated demo: the sources to ingest and a manifest of what they hold."""

    out_dir: Path
    sources: list[Path]
    runs: list[DemoRun]
    seed: int
    human_version: str
    screenshots: str

    def manifest(self) -> dict[str, Any]:
        """JSON-ready summary, also written to `<out_dir>/demo_manifest.json`."""
        return {
            "seed": self.seed,
            "human_version": self.human_version,
            "screenshots": self.screenshots,
            "runs": [
                {
                    "source": r.source.relative_to(self.out_dir).as_posix(),
                    "run_path": r.run_path,
                    **{f.name: getattr(r.stats, f.name) for f in fields(RunStats)},
                }
                for r in self.runs
            ],
        }


MANIFEST_NAME = "demo_manifest.json"


def _bundled_tasks(version: str) -> list[dict[str, Any]]:
    from deskscore.collectors import human  # the task index; only needed without explicit tasks

    return list(human.load_bundled(version))


def _clear_previous_demo(out_dir: Path, runs_dir: Path) -> None:
    """Remove what an earlier demo wrote here; refuse to touch a runs/ folder we did not write."""
    manifest = out_dir / MANIFEST_NAME
    if not manifest.exists():
        if runs_dir.exists() and any(runs_dir.iterdir()):
            raise FileExistsError(
                f"{runs_dir} exists and is not a previous demo; choose another folder"
            )
        return
    try:
        previous = json.loads(manifest.read_text()).get("runs", [])
    except (OSError, ValueError, AttributeError):
        previous = []
    for run in previous:
        rel = Path(str(run.get("source", "")))
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            continue
        target = out_dir / rel
        if target.is_file():
            target.unlink()
    shutil.rmtree(runs_dir, ignore_errors=True)
    manifest.unlink()


def write_demo_archive(
    out_dir: Path,
    *,
    seed: int = 0,
    human_version: str = "verified",
    screenshots: str = "tiny",
    tasks: Sequence[Mapping[str, Any]] | None = None,
    profiles_path: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> DemoArchive:
    """Write every demo agent's run of the human task index into `out_dir`.

    Runs go to `<out_dir>/runs/<agent>/` (one runner result_dir each); the agent named in the
    settings' demo.zip is packed as `<out_dir>/<agent>.zip` instead, under a prefix folder with
    `__MACOSX/` entries; agents listed in demo.flat are written without the model levels, those
    in demo.old_thunderbird_ids with pre-2025-02-10 thunderbird ids.
    `tasks` overrides the bundled human index (tests use a small list). Re-running into a
    previous demo replaces it; any other non-empty `out_dir` content under runs/ is refused.
    """
    if screenshots not in SCREENSHOT_MODES:
        raise ValueError(f"screenshots must be one of {SCREENSHOT_MODES}, not {screenshots!r}")
    out_dir = Path(out_dir)
    settings = _read_settings(profiles_path).get("demo", {})
    profiles = load_profiles(profiles_path)
    task_rows = list(tasks) if tasks is not None else _bundled_tasks(human_version)
    zip_cfg = settings.get("zip") or {}
    flat = set(settings.get("flat", []))
    old_ids = set(settings.get("old_thunderbird_ids", []))

    runs_dir = out_dir / "runs"
    _clear_previous_demo(out_dir, runs_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    runs: list[DemoRun] = []
    for profile in profiles:
        if progress:
            progress(f"writing {profile.name} ({len(task_rows)} tasks)")
        options = {
            "seed": seed,
            "screenshots": screenshots,
            "model_level": profile.name not in flat,
            "runtime_log": True,
            "summaries": True,
            "old_thunderbird_ids": profile.name in old_ids,
        }
        if profile.name == zip_cfg.get("agent"):
            prefix = str(zip_cfg.get("prefix", profile.name)).strip("/")
            with _ZipSink(out_dir / f"{profile.name}.zip", prefix) as sink:
                run_rel, stats = _write_run(sink, profile, task_rows, **options)
            runs.append(DemoRun(sink.path, "/".join(x for x in (prefix, run_rel) if x), stats))
        else:
            root = runs_dir / profile.name
            run_rel, stats = _write_run(_DirSink(root), profile, task_rows, **options)
            runs.append(DemoRun(root, run_rel, stats))
    demo = DemoArchive(out_dir, [r.source for r in runs], runs, seed, human_version, screenshots)
    (out_dir / MANIFEST_NAME).write_text(json.dumps(demo.manifest(), indent=2) + "\n")
    return demo

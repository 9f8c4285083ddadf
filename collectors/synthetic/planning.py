"""Episode planning: what happens in each task folder, decided before anything is written.

A plan (outcome, turns, loop, error, result text) is pure: files are rendered from it later,
so the counts a run reports come from the same plan its files were written from.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deskscore.collectors.synthetic.profiles import SCREEN, AgentProfile
from deskscore.collectors.synthetic.seeds import rng as seeded_rng
from deskscore.collectors.synthetic.seeds import stable_unit
from deskscore.collectors.synthetic.texts import texts

ABSENT_RATE = 0.01
"""Share of tasks that get no folder at all in a run (a runner that skipped them)."""
INTERRUPTED_RATE = 0.005
"""Share of episodes cut off by a killed runner: a partial traj.jsonl and no result.txt."""
POINTER_OPS = ("click", "double_click", "right_click", "move", "scroll")
"""Ops that move the mouse pointer (and need a grounding call in agent_s3 runs)."""


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
    u = stable_unit("result-kind", domain, task_id)
    return "bool" if u < 0.08 else "int" if u < 0.20 else "float"


def success_probability(skill: float, human_steps: int) -> float:
    """Success chance: `skill` up to 8 human actions, falling as 1/sqrt(steps) beyond."""
    return skill * min(1.0, math.sqrt(8.0 / max(1, human_steps)))


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
        return Act(op, text=rng.choice(texts().texts[domain]))
    if op == "press":
        return Act(op, keys=(rng.choice(texts().keys),))
    if op == "hotkey":
        return Act(op, keys=rng.choice(texts().hotkeys[domain]))
    if op == "scroll":
        return Act(op, x=x, y=y, amount=rng.choice((-5, -3, -3, 3, 5)))
    if op == "wait":
        return Act(op)
    return Act(op, x=x, y=y)


def _response(rng: random.Random, domain: str, act: Act) -> str:
    """Planner text for a turn; specific enough that unrelated turns rarely read the same."""
    target = rng.choice(texts().targets[domain])
    seen = rng.choice(texts().targets[domain])
    intent = texts().intents[act.op].format(t=target)
    if act.op == "write":
        intent = f"I will type {act.text!r} into the focused field."
    elif act.op in ("press", "hotkey"):
        intent = f"I will press {'+'.join(act.keys)} next."
    return f"{rng.choice(texts().openers).format(t=seen)} {intent}"


def _jitter(act: Act, rng: random.Random) -> Act:
    """A loop repeat: the same action, coordinates moved by a few pixels at most."""
    if act.op not in POINTER_OPS or rng.random() < 0.5:
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
    rng = seeded_rng(seed, profile.name, domain, task_id)
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
        result = rng.choice(texts().partials)
    else:
        result = _format_result(0, result_kind(domain, task_id, infeasible))

    # 6. runner errors: most cut the episode short and leave no result.txt
    error = None
    if rng.random() < profile.error_rate:
        error = rng.choice(texts().errors).format(d=domain, i=task_id)
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
    pick = seeded_rng(seed, profile.name, "absent-interrupted")
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

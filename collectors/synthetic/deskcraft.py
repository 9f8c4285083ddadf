"""Synthetic DeskCraft result archives: deterministic runs over the real task ids.

DeskCraft runs keep OSWorld's layout with task folders named by stems
(`<run>/pyautogui/screenshot/<model>/<app>/<stem>/`) and, for interactive tasks, add `phase`
to trajectory lines, `interaction_log.json` and `task_instruction.jsonl`, as DeskCraft's
`lib_run_interactive.py` writes them. Tasks come from the bundled figures
(`datasets/deskcraft_tasks.csv`): ids, levels, modes and phase triggers are the real ones.

Each episode is planned first (`plan_episode`, pure) and only then written, so a test can
compute every expected figure (per level, per mode, ask rate, budgets, verdicts) from the
plans, independently of the readers and the SQL. The plan follows the runner's protocol:

- an `agent_done` phase ends when the agent says DONE (or FAIL); the user then gives the next
  phase's instruction (`new_instruction`), or the episode ends after the last phase;
- a `step_count:v` phase is interrupted after v environment steps (`new_instruction`);
- an `agent_asks` phase waits for the agent to ask: it emits CALL_USER (logged here as a
  trajectory line, which is not an environment step) and the user answers (`clarify`,
  phase complete); an agent that does not ask says DONE and ends the episode unfinished;
- `max_steps` bounds environment steps over all phases; CALL_USER turns do not count;
- a few agents also ask where no phase expects it: the user answers (`clarify`, phase not
  complete) and the phase goes on.

Verdict material is planned too: some episodes end with FAIL (the final-FAIL rule scores
them 0), some archive per-metric scores (`eval_details.json`) that the conj rule combines,
and a few have a result.txt that contradicts what the archive shows (`tampered`), which the
recomputed verdicts must report as disagreements. Agents and the code of their steps are data
(datasets/synthetic_deskcraft.json), read once when first needed. Only the standard library
is used.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

SETTINGS_FILE = "synthetic_deskcraft.json"
ACTION_SPACE = "pyautogui"
OBSERVATION = "screenshot"
_START = datetime(2026, 3, 2, 9, 0, 0)
_STEP_SECONDS = 7

INTERRUPTED_RATE = 0.02
"""Share of episodes a killed runner left without result.txt (they do not count as run)."""
TAMPER_RATE = 0.04
"""Share of episodes whose result.txt contradicts the rules a verdict can recompute."""
DICT_FAIL_RATE = 0.5
"""Share of final FAIL actions logged as a dict ({"action_type": "FAIL"}), not a string."""
METRICS_RATE = 0.5
"""Share of multi-metric tasks whose runner archived per-metric scores."""


@dataclass(frozen=True)
class DeskAgent:
    """How one synthetic agent plays DeskCraft."""

    name: str
    skill: float
    """Probability of solving an L1 task."""
    decay: float
    """Success probability is multiplied by this per level above L1."""
    ask_rate: float
    """Probability of asking (CALL_USER) in a phase that waits for a question."""
    stray_ask_rate: float
    """Probability of asking in a phase that does not expect it."""
    steps: int
    """Typical environment steps of an agent_done phase of an L1 task (more per level)."""
    max_steps: int
    """The run's step budget: environment steps over all phases."""
    partial_rate: float
    """Probability that a failed (not FAIL-ended) episode still earns 0.5."""
    fail_rate: float
    """Probability that a failing agent ends with FAIL rather than DONE."""


@cache
def _settings() -> dict[str, Any]:
    """The generator's settings document (datasets/synthetic_deskcraft.json), read once."""
    raw = resources.files("deskscore.datasets").joinpath(SETTINGS_FILE).read_text("utf-8")
    return json.loads(raw)


@cache
def load_agents() -> tuple[DeskAgent, ...]:
    """The bundled agents, in the settings' order (which is the order runs are written in).

    Raises ValueError naming the agent and the fields when an entry does not match DeskAgent:
    the settings are written by hand, and a typo must not silently change what is generated.
    """
    names = {f.name for f in fields(DeskAgent)}
    out = []
    for i, raw in enumerate(_settings()["agents"]):
        if set(raw) != names:
            raise ValueError(
                f"{SETTINGS_FILE}: agent {i} ({raw.get('name', '?')}): unknown fields "
                f"{sorted(set(raw) - names)}, missing fields {sorted(names - set(raw))}"
            )
        out.append(DeskAgent(**raw))
    return tuple(out)


def _step_actions() -> list[str]:
    """pyautogui code templates of an environment step ({x}, {y}: a screen point)."""
    return _settings()["step_actions"]


def __getattr__(name: str) -> Any:
    """`AGENTS`, read from the settings when first asked for."""
    if name == "AGENTS":
        return load_agents()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class Turn:
    """One agent turn: an environment step (`action`) or a CALL_USER question."""

    turn: int
    phase: int | None
    kind: str  # step | done | fail | fail_dict | ask
    user: dict[str, Any] | None = None
    """The user's reply logged after this turn (interaction_log entry), if any."""


@dataclass
class EpisodePlan:
    """Everything about one episode that the files will show, decided before writing."""

    agent: str
    app: str
    task_id: str
    split: str
    level_stem: str | None
    level_difficulty: str | None
    mode: str | None
    triggers: tuple[str, ...]
    n_evaluators: int
    conj: str
    turns: list[Turn] = field(default_factory=list)
    score: float | None = None
    """The archived score (result.txt); None when the runner was killed before writing it."""
    metrics: tuple[float, ...] | None = None
    tampered: bool = False
    hit_budget: bool = False

    @property
    def n_env_steps(self) -> int:
        """Environment steps: every turn but CALL_USER questions."""
        return sum(1 for t in self.turns if t.kind != "ask")

    @property
    def final_action(self) -> str | None:
        steps = [t.kind for t in self.turns if t.kind != "ask"]
        return steps[-1] if steps else None

    @property
    def ends_with_fail(self) -> bool:
        return self.final_action in ("fail", "fail_dict")

    @property
    def asks_expected(self) -> bool:
        return "agent_asks" in self.triggers

    @property
    def asked_when_expected(self) -> bool:
        """Whether the agent asked during an agent_asks phase."""
        return any(
            t.kind == "ask" and t.phase is not None and self.triggers[t.phase - 1] == "agent_asks"
            for t in self.turns
        )

    @property
    def n_asks(self) -> int:
        return sum(1 for t in self.turns if t.kind == "ask")

    @property
    def conj_score(self) -> float | None:
        """What the evaluator's conj gives over the archived per-metric scores."""
        if self.metrics is None:
            return None
        if self.conj == "or":
            return 1.0 if any(m == 1 for m in self.metrics) else max(self.metrics)
        return 0.0 if any(m == 0 for m in self.metrics) else sum(self.metrics) / len(self.metrics)


def _rng(*parts: object) -> random.Random:
    return random.Random("|".join(str(p) for p in parts))


def _level_index(task: Mapping[str, Any]) -> int:
    level = task.get("level_stem") or task.get("level_difficulty") or "L2"
    return {"L1": 0, "L2": 1, "L3": 2}.get(level, 1)


def plan_episode(agent: DeskAgent, task: Mapping[str, Any], seed: int = 0) -> EpisodePlan:
    """Plan one episode of `agent` on `task` (a bundled figures row); pure and deterministic."""
    rng = _rng(seed, agent.name, task["domain"], task["task_id"])
    li = _level_index(task)
    interactive = task.get("split") == "interactive"
    triggers = tuple(task.get("triggers") or ()) if interactive else ("agent_done",)
    plan = EpisodePlan(
        agent=agent.name,
        app=task["domain"],
        task_id=task["task_id"],
        split=task.get("split") or "standard",
        level_stem=task.get("level_stem"),
        level_difficulty=task.get("level_difficulty"),
        mode=task.get("mode"),
        triggers=tuple(task.get("triggers") or ()),
        n_evaluators=int(task.get("n_evaluators") or 1),
        conj=task.get("conj") or "and",
    )
    wants_success = rng.random() < agent.skill * agent.decay**li
    turn = 0
    env_steps = 0
    finished = True  # every phase completed

    def add(kind: str, phase: int | None) -> Turn | None:
        nonlocal turn, env_steps
        if kind != "ask":
            if env_steps >= agent.max_steps:
                plan.hit_budget = True
                return None
            env_steps += 1
        turn += 1
        t = Turn(turn, phase, kind)
        plan.turns.append(t)
        return t

    last = len(triggers)
    for i, trig in enumerate(triggers, 1):
        phase = i if interactive else None
        if trig == "agent_asks":
            if rng.random() < agent.ask_rate:
                for _ in range(rng.randint(0, 2)):
                    if add("step", phase) is None:
                        break
                if plan.hit_budget:
                    break
                ask = add("ask", phase)
                assert ask is not None
                ask.user = {"type": "clarify", "phase": i, "phase_complete": True}
                continue
            for _ in range(rng.randint(1, 3)):
                if add("step", phase) is None:
                    break
            if not plan.hit_budget:
                add("done", phase)  # DONE without asking: the runner ends the episode here
            finished = False
            break
        if trig.startswith("step_count:"):
            target = max(1, int(float(trig.split(":", 1)[1])))
            t = None
            for _ in range(target):
                t = add("step", phase)
                if t is None:
                    break
            if t is None:
                break
            t.user = {"type": "new_instruction", "phase": i + 1, "phase_complete": True}
            continue
        # agent_done (and any other trigger the runner treats alike)
        n = max(1, round(rng.gauss(agent.steps * (1 + 0.6 * li), 2)))
        stray = interactive and n > 1 and rng.random() < agent.stray_ask_rate
        stray_at = rng.randint(1, n - 1) if stray else None
        for k in range(n):
            if k == stray_at and env_steps < agent.max_steps:
                ask = add("ask", phase)
                assert ask is not None
                ask.user = {"type": "clarify", "phase": i, "phase_complete": False}
            if add("step", phase) is None:
                break
        if plan.hit_budget:
            break
        if i < last:
            t = add("done", phase)
            if t is None:
                break
            t.user = {"type": "new_instruction", "phase": i + 1, "phase_complete": True}
            continue
        if wants_success:
            add("done", phase)
        elif rng.random() < agent.fail_rate:
            add("fail_dict" if rng.random() < DICT_FAIL_RATE else "fail", phase)
        else:
            add("done", phase)
    if plan.hit_budget:
        finished = False
    success = wants_success and finished and not plan.ends_with_fail
    if success:
        score = 1.0
    elif not plan.ends_with_fail and rng.random() < agent.partial_rate:
        score = 0.5
    else:
        score = 0.0
    if plan.n_evaluators >= 2 and rng.random() < METRICS_RATE:
        n = plan.n_evaluators
        if score == 1.0:
            plan.metrics = (1.0,) * n
        elif score == 0.5:
            plan.metrics = (0.5,) * n
        else:
            plan.metrics = (1.0,) * (n - 1) + (0.0,)
        if plan.conj == "or":  # an or-task fails only when no metric is 1
            plan.metrics = (score,) * n
    if rng.random() < TAMPER_RATE and (plan.ends_with_fail or plan.metrics is not None):
        plan.tampered = True
        score = 0.0 if score == 1.0 else 1.0
    plan.score = None if rng.random() < INTERRUPTED_RATE else score
    return plan


def plan_run(
    agent: DeskAgent, tasks: Sequence[Mapping[str, Any]], seed: int = 0
) -> list[EpisodePlan]:
    return [
        plan_episode(agent, t, seed)
        for t in sorted(tasks, key=lambda t: (t["domain"], t["task_id"]))
    ]


# --------------------------------------------------------------------------- writing


def _ts(turn: int, micros: bool = True) -> str:
    t = _START + timedelta(seconds=_STEP_SECONDS * turn)
    return t.strftime("%Y%m%d@%H%M%S%f" if micros else "%Y%m%d@%H%M%S")


def _action(kind: str, rng: random.Random) -> tuple[Any, dict, bool]:
    """(action as logged, info, done) of one turn."""
    if kind == "done":
        return "DONE", {"done": True}, True
    if kind == "fail":
        return "FAIL", {"fail": True}, True
    if kind == "fail_dict":
        return {"action_type": "FAIL"}, {"fail": True}, True
    if kind == "ask":
        return "CALL_USER", {}, False
    x, y = rng.randint(20, 1900), rng.randint(20, 1060)
    return rng.choice(_step_actions()).format(x=x, y=y), {}, False


def _phase_text(plan: EpisodePlan, phase: int) -> str:
    return f"Phase {phase} of {plan.task_id}: the user's request."


def write_episode(task_dir: Path, plan: EpisodePlan, seed: int = 0) -> None:
    """Write one task folder from its plan, as DeskCraft's runners do."""
    task_dir.mkdir(parents=True, exist_ok=True)
    rng = _rng("files", seed, plan.agent, plan.task_id)
    interactive = plan.split == "interactive"
    lines = []
    log: list[dict[str, Any]] = []
    if interactive:
        log.append({"step": 0, "phase": 1, "type": "initial_instruction",
                    "user_message": _phase_text(plan, 1), "timestamp": _ts(0, False)})  # fmt: skip
    for t in plan.turns:
        action, info, done = _action(t.kind, rng)
        stamp = _ts(t.turn)
        rec: dict[str, Any] = {
            "step_num": t.turn,
            "action_timestamp": stamp,
            "action": action,
            "response": (
                f"[CALL_USER] Which option do you want for {plan.app}?"
                if t.kind == "ask"
                else f"Turn {t.turn}: working on {plan.app}."
            ),
            "reward": 0,
            "done": done,
            "info": info,
            "screenshot_file": f"step_{t.turn}_{stamp}.png",
        }
        if interactive:
            rec["phase"] = t.phase
        lines.append(json.dumps(rec))
        if t.user is not None:
            entry = {
                "step": t.turn,
                "phase": t.user["phase"],
                "type": t.user["type"],
                "user_message": (
                    f"Answer to the question in phase {t.user['phase']}."
                    if t.user["type"] == "clarify"
                    else _phase_text(plan, t.user["phase"])
                ),
                "phase_complete": t.user["phase_complete"],
                "timestamp": _ts(t.turn, False),
            }
            log.append(entry)
    (task_dir / "traj.jsonl").write_text("".join(line + "\n" for line in lines))
    (task_dir / "runtime.log").write_text(f"[synthetic] {plan.agent} {plan.task_id}\n")
    if plan.score is not None:
        (task_dir / "result.txt").write_text(f"{plan.score}\n")
    if interactive:
        (task_dir / "interaction_log.json").write_text(json.dumps(log, indent=2))
        (task_dir / "task_instruction.jsonl").write_text(
            json.dumps(
                {
                    "instruction": _phase_text(plan, 1),
                    "interactive": True,
                    "phases": len(plan.triggers),
                }
            )
            + "\n"
        )
    if plan.metrics is not None:
        metrics = [{"func": f"metric_{i}", "score": m} for i, m in enumerate(plan.metrics)]
        (task_dir / "eval_details.json").write_text(
            json.dumps({"conj": plan.conj, "metrics": metrics})
        )


def run_root(result_dir: Path, agent: DeskAgent) -> Path:
    """Where a run's app folders sit: <result_dir>/<action_space>/<observation>/<model>."""
    return result_dir / ACTION_SPACE / OBSERVATION / agent.name


def write_run(
    result_dir: Path, agent: DeskAgent, tasks: Sequence[Mapping[str, Any]], seed: int = 0
) -> list[EpisodePlan]:
    """Write one agent's run of `tasks` under `result_dir`; returns the plans it wrote."""
    root = run_root(Path(result_dir), agent)
    root.mkdir(parents=True, exist_ok=True)
    args = {"action_space": ACTION_SPACE, "observation_type": OBSERVATION,
            "model": agent.name, "max_steps": agent.max_steps, "domain": "all",
            "result_dir": str(result_dir.name)}  # fmt: skip
    (root / "args.json").write_text(json.dumps(args, indent=2))
    plans = plan_run(agent, tasks, seed)
    for plan in plans:
        write_episode(root / plan.app / plan.task_id, plan, seed)
    return plans


def task_slice(per_group: int = 2) -> list[dict[str, Any]]:
    """A small, fixed slice of the real tasks: the first `per_group` stems of every (app,
    split, level) group (stem level for standard tasks, difficulty for interactive ones),
    plus every task with an agent_asks phase (so asking is always exercised)."""
    from deskscore.collectors.deskcraft_tasks import load_bundled_tasks

    rows = load_bundled_tasks()
    taken: dict[tuple[str, str, str | None], int] = {}
    out = []
    for r in rows:
        key = (r["domain"], r["split"], r["level_stem"] or r["level_difficulty"])
        if taken.get(key, 0) < per_group or "agent_asks" in (r["triggers"] or ()):
            taken[key] = taken.get(key, 0) + 1
            out.append(r)
    return out


def write_archive(
    out_dir: Path,
    tasks: Sequence[Mapping[str, Any]] | None = None,
    agents: Sequence[DeskAgent] | None = None,
    seed: int = 0,
) -> dict[str, list[EpisodePlan]]:
    """One result dir per agent under `out_dir` (`<out_dir>/<agent>/...`); agent -> plans.
    Without `tasks`, every DeskCraft task of the bundled figures is played; without `agents`,
    every bundled agent plays."""
    if agents is None:
        agents = load_agents()
    if tasks is None:
        from deskscore.collectors.deskcraft_tasks import load_bundled_tasks

        tasks = load_bundled_tasks()
    return {a.name: write_run(Path(out_dir) / a.name, a, tasks, seed) for a in agents}


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m deskscore.collectors.synthetic.deskcraft OUT [SEED]`: every DeskCraft task
    played by each bundled agent, one result dir per agent under OUT."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if not 1 <= len(args) <= 2:
        print(
            "usage: python -m deskscore.collectors.synthetic.deskcraft OUT [SEED]", file=sys.stderr
        )
        return 2
    plans = write_archive(Path(args[0]), seed=int(args[1]) if len(args) > 1 else 0)
    for agent, ps in plans.items():
        print(f"{agent}: {len(ps)} episodes under {Path(args[0]) / agent}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

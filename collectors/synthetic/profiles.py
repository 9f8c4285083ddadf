"""Agent profiles: the settings (datasets/demo_agents.json) that shape every generated run."""

from __future__ import annotations

import json
from dataclasses import MISSING, dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any

ACTION_SPACES = ("pyautogui", "claude_computer_use", "computer_13")
USAGE_STYLES = ("none", "gpt54", "agent_s3", "anthropic")
SCREEN = (1920, 1080)
"""Coordinates in actions are in the VM's screen space, as OSWorld's default 1920x1080."""


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


def profiles_path() -> Any:
    """The bundled settings file (a resources Traversable)."""
    return resources.files("deskscore.datasets").joinpath("demo_agents.json")


def read_settings(path: str | Path | None) -> dict[str, Any]:
    """The settings document; a bare list of profiles is accepted as {"profiles": [...]}."""
    text = Path(path).read_text() if path is not None else profiles_path().read_text()
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
    data = read_settings(path)
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

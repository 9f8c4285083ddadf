"""The report's colours: one fixed colour per agent in every figure, and colours for stages,
loop outcomes and references that no agent ever gets.

Agents get saturated colours (matplotlib's tab10 and Dark2, greys left out), then, past
those, dark colours spread around the hue circle; stages and outcomes get pale ones (Set3,
Pastel1), references (the human, a front) neutral greys. A reader matches an agent across
figures by its colour, and never mistakes a stage for an agent.
"""

from __future__ import annotations

import colorsys
from collections.abc import Iterable

AGENT_BASE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
    "#17becf", "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d",
)  # fmt: skip
"""tab10 then Dark2, without their greys: the first 16 agents' colours, in order."""

STAGE_COLOURS = {
    "planning": "#8dd3c7",
    "reflection": "#ffffb3",
    "judging": "#bebada",
    "grounding": "#fb8072",
    "retrieval": "#80b1d3",
    "other": "#fdb462",
    "screenshot": "#b3de69",
    "action": "#fccde5",
    "unattributed": "#d9d9d9",
}
"""Latency stages (Set3)."""

OUTCOME_COLOURS = {
    "n_recovered": "#ccebc5",
    "n_abandoned": "#fed9a6",
    "n_step_limit": "#decbe4",
}
"""How loop spans end (Pastel1)."""

HUMAN = "#4d4d4d"
"""The human reference (OSWorld-Human's steps)."""
FRONT = "#000000"
"""A reference line (the cost-accuracy front)."""


def _extra(k: int) -> str:
    """The colour of the agent past AGENT_BASE at offset `k`: dark, saturated, hues spread
    by the golden angle (never pale like a stage, never grey like a reference)."""
    hue = (0.07 + k * 0.618033988749895) % 1.0
    r, g, b = colorsys.hsv_to_rgb(hue, 0.85, 0.55 + 0.15 * (k % 2))
    return "#{:02x}{:02x}{:02x}".format(*(round(255 * c) for c in (r, g, b)))


def agent_colour(index: int) -> str:
    """The colour of the agent at `index` of the sorted agent list."""
    return AGENT_BASE[index] if index < len(AGENT_BASE) else _extra(index - len(AGENT_BASE))


def agent_colours(agents: Iterable[str | None]) -> dict[str, str]:
    """Each agent's colour: a function of the sorted list of agent names alone, so every
    figure of a report (built from the same runs) draws an agent in the same colour."""
    names = sorted({a for a in agents if a is not None})
    return {name: agent_colour(i) for i, name in enumerate(names)}


__all__ = [
    "AGENT_BASE",
    "FRONT",
    "HUMAN",
    "OUTCOME_COLOURS",
    "STAGE_COLOURS",
    "agent_colour",
    "agent_colours",
]

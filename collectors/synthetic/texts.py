"""The generator's text tables (datasets/synthetic_texts.json), read once when first needed.

What agents click, type and say is data, not code: the tables are edited without touching the
planner. Draws pick entries by position, so the order of every list is part of the output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

TEXTS_FILE = "synthetic_texts.json"


@dataclass(frozen=True)
class Texts:
    """The tables, as immutable tuples and mappings keyed by domain or action op."""

    targets: Mapping[str, tuple[str, ...]]
    """Per domain: on-screen things a response names."""
    texts: Mapping[str, tuple[str, ...]]
    """Per domain: what a write action types."""
    hotkeys: Mapping[str, tuple[tuple[str, ...], ...]]
    """Per domain: the key combinations a hotkey action presses."""
    keys: tuple[str, ...]
    """Keys a press action presses (repeats weight the draw)."""
    openers: tuple[str, ...]
    """First half of a response; {t} is a target."""
    intents: Mapping[str, str]
    """Second half of a response, per action op; {t} is a target."""
    errors: tuple[str, ...]
    """Runner error messages; {d} is the domain, {i} the task id."""
    partials: tuple[str, ...]
    """result.txt texts of partial credit (repeats weight the draw)."""
    xdo_keys: Mapping[str, str]
    """Key names as Claude's computer tool writes them (xdotool's), where they differ."""


def parse_texts(data: Mapping[str, Any]) -> Texts:
    """Texts from the JSON document (hotkeys written as 'ctrl+shift+e')."""
    return Texts(
        targets={k: tuple(v) for k, v in data["targets"].items()},
        texts={k: tuple(v) for k, v in data["texts"].items()},
        hotkeys={k: tuple(tuple(c.split("+")) for c in v) for k, v in data["hotkeys"].items()},
        keys=tuple(data["keys"]),
        openers=tuple(data["openers"]),
        intents=dict(data["intents"]),
        errors=tuple(data["errors"]),
        partials=tuple(data["partials"]),
        xdo_keys=dict(data["xdo_keys"]),
    )


@cache
def texts() -> Texts:
    """The bundled tables (read on first use, then kept)."""
    raw = resources.files("deskscore.datasets").joinpath(TEXTS_FILE).read_text(encoding="utf-8")
    return parse_texts(json.loads(raw))

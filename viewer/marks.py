"""Where a step's pointer actions land on its screenshot: pure functions from the parsed
actions (step_actions, in call order) to the marks the episode page draws.

A click (any button, any count) is a point; a drag is a line from where the pointer was (the
last move or press before it in the same step) to where it ends; a scroll or a move with
coordinates is a point of its own kind. Coordinates are the agent's screen space, which the
page maps onto the screenshot (`screen_size`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

POINT_KINDS = frozenset(
    {"click", "double_click", "right_click", "triple_click", "middle_click", "scroll", "move"}
)
"""Action kinds drawn as a point (collectors.actions.KINDS that carry one)."""
PRESS_KINDS = frozenset({"mouse_down", "move"})
"""Kinds that put the pointer somewhere a following drag starts from."""


class Mark(NamedTuple):
    """One drawn mark: a point (x0/y0 None) or a line from (x0, y0) to (x, y)."""

    kind: str
    x: float
    y: float
    x0: float | None = None
    y0: float | None = None


def step_marks(
    actions: Iterable[Mapping[str, Any]] | None,
    kind: str | None = None,
    x: float | None = None,
    y: float | None = None,
) -> list[Mark]:
    """The marks of one step: from its parsed calls when it has them, else from the step's own
    kind and coordinates (formats whose steps are one action)."""
    marks: list[Mark] = []
    at: tuple[float, float] | None = None
    listed = list(actions or ())
    for a in listed:
        k, ax, ay = a.get("kind"), a.get("x"), a.get("y")
        if ax is None or ay is None:
            continue
        if k == "drag":
            marks.append(Mark("drag", ax, ay, *(at if at else (None, None))))
        elif k in POINT_KINDS:
            marks.append(Mark(k, ax, ay))
        if k in PRESS_KINDS or k == "drag":
            at = (ax, ay)
    if not listed and kind and x is not None and y is not None and kind in POINT_KINDS | {"drag"}:
        marks.append(Mark(kind, x, y))
    return [m for m in marks if m.kind != "move" or len(listed) == 1]


def screen_size(
    screen_w: int | None, screen_h: int | None, shot_w: int | None, shot_h: int | None
) -> tuple[int, int] | None:
    """The coordinate space of a run's actions: the screen its configuration names, else the
    screenshot's own size; None when neither is known (the page then waits for the image)."""
    if screen_w and screen_h and screen_w > 0 and screen_h > 0:
        return screen_w, screen_h
    if shot_w and shot_h:
        return shot_w, shot_h
    return None

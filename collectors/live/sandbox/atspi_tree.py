"""The desktop's accessibility tree from AT-SPI, in the shape of OSWorld's Ubuntu trees.

OSWorld's controller walks AT-SPI (pyatspi) from the desktop down and writes one XML element
per accessible: the tag is its role ("push-button", "table-cell"), `name` its name, and
namespaced attributes its states (st:showing="true"), its object attributes (attr:...) and its
place on the screen (cp:screencoord="(x, y)", cp:size="(w, h)"); text content is the element's
text. This module writes the same, bounded: at most `max_depth` levels, `max_children` children
of one node (a spreadsheet's table has millions of cells) and `max_nodes` nodes in all, and
AT-SPI calls time out after a second, so a huge or hung application cannot stall the reply.

The controller runs it as a child process (`python3 atspi_tree.py`, the XML on stdout) and
kills it when it overruns its deadline. Standard library and pyatspi only, no deskscore
import: the image copies this file next to controller.py.
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from typing import Any

NS = {
    "st": "https://accessibility.ubuntu.example.org/ns/state",
    "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
    "cp": "https://accessibility.ubuntu.example.org/ns/component",
}
MAX_DEPTH = 40
MAX_CHILDREN = 200
MAX_NODES = 4000
MAX_TEXT = 500
"""Characters of an accessible's text kept in the tree."""


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    """`text` without the characters XML 1.0 cannot hold (applications put control
    characters in names and text)."""
    return _NOT_XML.sub("", text)


class Budget:
    """How many more nodes the tree may take."""

    def __init__(self, nodes: int) -> None:
        self.left = nodes


def _tag(role: str) -> str:
    tag = "-".join(role.lower().split()) or "unknown"
    return tag if tag[0].isalpha() else f"role-{tag}"


def _node(acc: Any, pyatspi: Any) -> ET.Element:
    """One accessible as an element, without its children."""
    try:
        role = acc.getRoleName()
    except Exception:
        role = "unknown"
    el = ET.Element(_tag(role))
    try:
        el.set("name", _clean(acc.name or ""))
    except Exception:
        el.set("name", "")
    try:
        for state in acc.getState().getStates():
            el.set(f"{{{NS['st']}}}{_tag(pyatspi.stateToString(state))}", "true")
    except Exception:
        pass
    try:
        for key, value in acc.get_attributes().items():
            if key and key[0].isalpha() and all(c.isalnum() or c in "-_." for c in key):
                el.set(f"{{{NS['attr']}}}{key}", _clean(str(value)))
    except Exception:
        pass
    try:
        comp = acc.queryComponent()
        box = comp.getExtents(pyatspi.DESKTOP_COORDS)
        el.set(f"{{{NS['cp']}}}screencoord", f"({box.x}, {box.y})")
        el.set(f"{{{NS['cp']}}}size", f"({box.width}, {box.height})")
    except Exception:
        pass
    try:
        text = acc.queryText()
        content = text.getText(0, min(text.characterCount, MAX_TEXT))
        if content:
            el.text = _clean(content)
    except Exception:
        pass
    return el


def walk(
    acc: Any,
    pyatspi: Any,
    budget: Budget,
    depth: int = 0,
    *,
    max_depth: int = MAX_DEPTH,
    max_children: int = MAX_CHILDREN,
) -> ET.Element | None:
    """`acc` and its descendants within the bounds; None once the node budget is spent."""
    if budget.left <= 0:
        return None
    budget.left -= 1
    el = _node(acc, pyatspi)
    if depth >= max_depth:
        return el
    try:
        count = acc.childCount
    except Exception:
        return el
    if count > max_children:
        el.set("deskscore-children", str(count))  # how many there were, of which the first
    for i in range(min(count, max_children)):
        try:
            child = acc.getChildAtIndex(i)
        except Exception:
            continue
        if child is None:
            continue
        sub = walk(
            child, pyatspi, budget, depth + 1, max_depth=max_depth, max_children=max_children
        )
        if sub is None:
            break
        el.append(sub)
    return el


def desktop_tree(
    *,
    max_depth: int = MAX_DEPTH,
    max_children: int = MAX_CHILDREN,
    max_nodes: int = MAX_NODES,
    timeout_ms: int = 1000,
) -> str:
    """The whole desktop's tree as XML: <desktop-frame> holding one <application> per program
    that registered with the accessibility bus."""
    import pyatspi

    try:
        from gi.repository import Atspi

        Atspi.set_timeout(timeout_ms, timeout_ms * 3)
    except Exception:
        pass
    for prefix, uri in NS.items():
        ET.register_namespace(prefix, uri)
    root = ET.Element("desktop-frame", {"name": "main"})
    budget = Budget(max_nodes)
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        try:
            app = desktop.getChildAtIndex(i)
        except Exception:
            continue
        if app is None:
            continue
        el = walk(app, pyatspi, budget, 1, max_depth=max_depth, max_children=max_children)
        if el is None:
            break
        el.tag = "application"
        root.append(el)
    return ET.tostring(root, encoding="unicode")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--max-depth", type=int, default=MAX_DEPTH)
    parser.add_argument("--max-children", type=int, default=MAX_CHILDREN)
    parser.add_argument("--max-nodes", type=int, default=MAX_NODES)
    args = parser.parse_args(argv)
    tree = desktop_tree(
        max_depth=args.max_depth, max_children=args.max_children, max_nodes=args.max_nodes
    )
    sys.stdout.write(tree)
    return 0


if __name__ == "__main__":
    sys.exit(main())

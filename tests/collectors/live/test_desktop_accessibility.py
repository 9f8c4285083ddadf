"""The desktop image's accessibility tree: AT-SPI's widgets for the applications that expose
them, bounded however large the application's tree, with the window-level entries of the
programs that expose none (xterm)."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest

from deskscore.collectors.live.client import Controller
from deskscore.collectors.live.providers import DockerProvider
from deskscore.collectors.live.sandbox.atspi_tree import MAX_CHILDREN, MAX_NODES


@pytest.fixture
def desktop_container(docker_engine: Any, desktop_image: str) -> Iterator[Controller]:
    provider = DockerProvider(desktop_image, client=docker_engine)
    controller = Controller(provider.start())
    try:
        controller.wait_ready(60)
        yield controller
    finally:
        provider.stop()


def _tree(
    controller: Controller, want: str, widget: str | None = None, timeout_s: float = 60.0
) -> ET.Element:
    """The tree once an application named `want` is on it (holding a `widget` element, when
    given: an application registers on the bus before its window is built)."""
    deadline = time.monotonic() + timeout_s
    while True:
        root = ET.fromstring(controller.accessibility() or "<none/>")
        apps = [app for app in root if app.get("name") == want]
        if apps and (widget is None or any(app.find(f".//{widget}") is not None for app in apps)):
            return root
        if time.monotonic() > deadline:
            raise AssertionError(f"no application {want!r} in {[a.get('name') for a in root]}")
        time.sleep(2)


@pytest.mark.slow
def test_calc_widgets_come_from_atspi_and_the_tree_is_bounded(
    desktop_container: Controller,
) -> None:
    desktop_container.launch(["libreoffice", "--calc"])
    desktop_container.launch(["xterm"])
    started = time.monotonic()
    root = _tree(desktop_container, "soffice", "menu-item")
    root = _tree(desktop_container, "xterm")  # both: AT-SPI's and the window list's
    assert time.monotonic() - started < 60
    nodes = list(root.iter())
    assert len(nodes) <= MAX_NODES + 50  # + the window-level entries
    tags = {n.tag for n in nodes}
    assert {"application", "frame", "menu-item"} <= tags  # widgets, not windows alone
    # The sheet's table has millions of cells: the tree says how many and keeps the first.
    cut = [n for n in nodes if n.get("deskscore-children")]
    assert cut and all(len(n) <= MAX_CHILDREN for n in cut)
    assert all(int(n.get("deskscore-children")) > MAX_CHILDREN for n in cut)
    xterm = [a for a in root if a.get("name") == "xterm"]
    assert [f.tag for f in xterm[0]] == ["frame"]  # its window, from the window list

"""The viewer in a real browser: Playwright drives the system's chromium (no browser download)
through the leaderboard, a run, its most looping episode and the compare page.

Skipped when chromium or Playwright is missing, unless DESKSCORE_REQUIRE_BROWSER=1 (then it
fails: a CI that installs chromium cannot pass by skipping). With DESKSCORE_VIEW_SHOTS=DIR
the pages are saved there as PNGs, to be looked at.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from deskscore.sql import connect

CHROMIUM = Path("/usr/bin/chromium")
REQUIRE = "DESKSCORE_REQUIRE_BROWSER"
SHOTS = "DESKSCORE_VIEW_SHOTS"


def _unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{reason} ({REQUIRE}=1: the browser test must run here)")
    pytest.skip(reason)


class Watch:
    """What the page did: console errors, uncaught exceptions, and every URL requested."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.blocked: list[str] = []


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        _unavailable(f"no chromium at {CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed")
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )  # fmt: skip
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, viewer_url: str) -> Iterator[tuple[Any, Watch]]:
    watch = Watch()
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    local = urlparse(viewer_url).netloc

    def route(r: Any) -> None:
        url = r.request.url
        if urlparse(url).netloc == local:
            r.continue_()
        else:  # anything else is recorded and never leaves the machine
            watch.blocked.append(url)
            r.abort()

    context.route("**/*", route)
    pg = context.new_page()
    pg.on("console", lambda m: watch.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: watch.errors.append(str(e)))
    pg.on("request", lambda r: watch.requests.append(r.url))
    yield pg, watch
    context.close()


def _save(pg: Any, name: str) -> None:
    folder = os.environ.get(SHOTS)
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        pg.wait_for_function(
            "() => Array.from(document.images).filter(i => { const r = i.getBoundingClientRect();"
            " return r.bottom > 0 && r.top < innerHeight; }).every(i => i.complete)"
        )
        pg.screenshot(path=str(Path(folder) / f"{name}.png"))


def _label(warehouse: Path, source_suffix: str) -> tuple[str, str]:
    con = connect(warehouse)
    run_id, label = con.execute(
        "SELECT run_id, label FROM runs JOIN run_labels USING (run_id) "
        f"WHERE source LIKE '%{source_suffix}'"
    ).fetchone()
    return run_id, label


def test_from_the_leaderboard_to_a_looping_episode_and_a_comparison(
    page: tuple[Any, Watch], viewer_url: str, viewer_warehouse: Path
) -> None:
    pg, watch = page
    zipped_id, zipped_label = _label(viewer_warehouse, ".zip")
    folder_id, folder_label = _label(viewer_warehouse, "results")

    # the leaderboard lists both runs, linked
    pg.goto(viewer_url)
    links = pg.locator("#leaderboard a.run-link")
    assert sorted(links.all_inner_texts()) == sorted([zipped_label, folder_label])
    _save(pg, "leaderboard")

    # follow the zipped (looping) run, then its most looping episode
    pg.locator("#leaderboard a.run-link", has_text=zipped_label).click()
    pg.wait_for_url(f"**/run/{zipped_id}")
    assert pg.locator("#per-domain tbody tr").count() > 0
    assert pg.locator("#tasks tbody tr").count() > 0
    _save(pg, "run")
    pg.locator("#most-looping").click()
    pg.wait_for_url("**/episode?**")
    _save(pg, "episode")

    # the loop span: listed, its steps highlighted, and a jump lands on its first step
    con = connect(viewer_warehouse)
    q = dict(p.split("=", 1) for p in urlparse(pg.url).query.split("&"))
    domain, task = (pg.evaluate(f"decodeURIComponent('{q[k]}')") for k in ("domain", "task"))
    spans = con.execute(
        "SELECT first_step, last_step FROM loop_spans WHERE run_id = ? AND domain = ? "
        "AND task_id = ? ORDER BY first_step",
        [zipped_id, domain, task],
    ).fetchall()
    assert spans
    in_spans = sum(b - a + 1 for a, b in spans)
    assert pg.locator(".step.loop").count() == in_spans
    plain = pg.locator(".step:not(.loop)").first.evaluate(
        "e => getComputedStyle(e).backgroundColor"
    )
    looped = pg.locator(".step.loop").first.evaluate("e => getComputedStyle(e).backgroundColor")
    assert looped != plain
    first, _ = spans[0]
    pg.locator("#loops a.jump").first.click()
    assert pg.url.endswith(f"#step-{first}")
    target = pg.locator(f"#step-{first}")
    assert "loop" in (target.get_attribute("class") or "")
    assert target.evaluate(
        "e => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; }"
    )

    # its screenshot is loaded, and is the zip member's bytes
    img = target.locator(".shot img")
    img.scroll_into_view_if_needed()
    pg.wait_for_function("e => e.complete && e.naturalWidth > 0", arg=img.element_handle())
    path = con.execute(
        "SELECT screenshot_path FROM screenshot_refs WHERE run_id = ? AND domain = ? "
        "AND task_id = ? AND step_idx = ?",
        [zipped_id, domain, task, first],
    ).fetchone()[0]
    source = con.execute("SELECT source FROM runs WHERE run_id = ?", [zipped_id]).fetchone()[0]
    with zipfile.ZipFile(source) as z:
        member = z.read(path)
    served = pg.request.get(viewer_url.rstrip("/") + img.get_attribute("src"))
    assert served.ok and served.headers["content-type"] == "image/png"
    assert served.body() == member

    # a click marker, drawn where the action clicked on the screenshot
    click = con.execute(
        "SELECT s.step_idx, a.x, a.y FROM step_actions AS a JOIN steps AS s USING "
        "(run_id, domain, task_id, step_idx) WHERE run_id = ? AND domain = ? AND task_id = ? "
        "AND a.kind = 'click' AND a.x IS NOT NULL ORDER BY s.step_idx LIMIT 1",
        [zipped_id, domain, task],
    ).fetchone()
    assert click is not None
    step_idx, x, y = click
    card = pg.locator(f"#step-{step_idx}")
    card.scroll_into_view_if_needed()
    marker = card.locator("svg.marks circle.marker.click")
    assert marker.count() >= 1
    shot_box, mark_box = card.locator(".shot img").bounding_box(), marker.first.bounding_box()
    centre = (mark_box["x"] + mark_box["width"] / 2, mark_box["y"] + mark_box["height"] / 2)
    expected = (
        shot_box["x"] + shot_box["width"] * x / 1920,
        shot_box["y"] + shot_box["height"] * y / 1080,
    )
    assert abs(centre[0] - expected[0]) < 3 and abs(centre[1] - expected[1]) < 3
    pg.locator(f"#step-{first}").scroll_into_view_if_needed()
    _save(pg, "episode-loop")

    # compare: both runs, on the same task, aligned by step
    pg.goto(f"{viewer_url}compare?a={zipped_id}&b={folder_id}")
    pg.locator("#common-tasks a.pair-link").first.click()
    pg.wait_for_url("**/compare?**task=**")
    heads = pg.locator("#compare th.side-head").all_inner_texts()
    assert len(heads) == 2
    assert zipped_label in heads[0] and folder_label in heads[1]
    rows = pg.locator("#compare tbody tr")
    assert rows.count() >= 1
    assert rows.first.locator("td").nth(0).locator(".step").count() == 1
    assert rows.first.locator("td").nth(1).locator(".step").count() == 1
    _save(pg, "compare")

    assert not watch.errors, watch.errors
    assert not watch.blocked, watch.blocked
    assert all(urlparse(u).hostname == "127.0.0.1" for u in watch.requests), watch.requests

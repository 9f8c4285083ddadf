"""The HTML report: generated runs with screenshots, ingested, hashed and scored, then the page
is read back as HTML and opened in a real headless browser."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from io import BytesIO
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from deskscore.collectors.synthetic import load_profiles, task_slice, write_run
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.colours import (
    FRONT,
    HUMAN,
    OUTCOME_COLOURS,
    STAGE_COLOURS,
    agent_colours,
)
from deskscore.pipelines.cli.main import main
from deskscore.pipelines.cli.report import CSP, SECTIONS, Gap, build_report, shown_steps
from deskscore.pipelines.jobs.hash import run_hash
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.jobs.score import run_score
from deskscore.pipelines.options import HashOptions, IngestOptions, ScoreOptions
from deskscore.sql import connect

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs with tiny screenshots, ingested, hashed, scored (loops and costs included)."""
    root = tmp_path_factory.mktemp("report")
    profiles = load_profiles()
    for i in range(2):
        write_run(
            root / "results", profiles[i], task_slice(per_domain=2), seed=i, screenshots="tiny"
        )
    wh = root / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(root / "results"),), engine="direct"))
    run_hash(HashOptions(str(wh)))
    run_score(ScoreOptions(str(wh), max_steps_scoring=50, engine="direct"))
    return wh


@pytest.fixture(scope="module")
def report(warehouse: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("out")
    return build_report(str(warehouse), str(out / "report.html"), png_dir=str(out / "png"))


class _Page(HTMLParser):
    """The parts of the page the tests look at: ids, images, links, table rows, CSP."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.images: list[dict[str, str]] = []
        self.urls: list[str] = []
        self.csp: str | None = None
        self.leaderboard_rows = 0
        self._in_leaderboard_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "img":
            self.images.append(a)
        self.urls.extend(a[k] for k in ("src", "href") if k in a)
        if tag == "meta" and a.get("http-equiv", "").lower() == "content-security-policy":
            self.csp = a.get("content")
        if tag == "table" and a.get("id") == "leaderboard-table":
            self._in_leaderboard_body = True
        if tag == "tr" and self._in_leaderboard_body:
            self.leaderboard_rows += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_leaderboard_body = False


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def test_step_budget_counts_the_tasks_solved_within_each_budget(warehouse: Path) -> None:
    episodes = Warehouse(warehouse).read("episodes").to_pylist()
    view = connect(warehouse).sql("SELECT run_id, budget, n_tasks, n_solved FROM step_budget")
    rows = view.fetchall()
    assert rows
    for run_id, budget, n_tasks, n_solved in rows:
        usable = [e for e in episodes if e["run_id"] == run_id and e["result_status"] == "ok"]
        assert n_tasks == len(usable)
        assert n_solved == sum(1 for e in usable if e["score"] == 1 and e["n_turns"] <= budget)
    for run_id in {r[0] for r in rows}:
        budgets = sorted(b for r, b, _, _ in rows if r == run_id)
        longest = max(e["n_turns"] for e in episodes if e["run_id"] == run_id)
        assert budgets == list(range(5, budgets[-1] + 1, 5))
        assert budgets[-1] - 5 < longest <= budgets[-1]


def test_the_page_has_every_section_and_an_inline_image_per_figure_and_thumbnail(
    report,
) -> None:
    page = _parse(report.path.read_text(encoding="utf-8"))
    assert {sid for sid, _ in SECTIONS} <= page.ids
    assert len(report.figures) == 10  # all but per-level: these runs have no levels
    assert report.n_thumbnails > 0 and report.n_episodes > 0
    assert len(page.images) == report.n_images
    assert all(img["src"].startswith("data:image/png;base64,") for img in page.images)
    assert page.csp == CSP
    assert page.leaderboard_rows == 1 + 2  # header and one row per run


def test_nothing_on_the_page_points_to_the_network(report) -> None:
    html = report.path.read_text(encoding="utf-8")
    page = _parse(html)
    assert all(u.startswith(("#", "data:")) for u in page.urls), page.urls
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert "@import" not in html and "url(" not in html


def test_png_dir_holds_each_figure_as_an_image(report) -> None:
    assert sorted(p.stem for p in report.png_files) == sorted(report.figures)
    for path in report.png_files:
        with Image.open(path) as im:
            assert im.format == "PNG" and im.width > 300
            assert len(im.convert("RGB").getcolors(maxcolors=1 << 20) or range(3)) > 2  # not blank


def test_a_run_filter_keeps_only_that_run(warehouse: Path, tmp_path: Path) -> None:
    [(run_id,)] = connect(warehouse).sql("SELECT min(run_id) FROM runs").fetchall()
    result = build_report(str(warehouse), str(tmp_path / "one.html"), run_ids=[run_id])
    page = _parse(result.path.read_text(encoding="utf-8"))
    assert page.leaderboard_rows == 1 + 1
    html = result.path.read_text(encoding="utf-8")
    assert f"run {run_id}," in html
    others = connect(warehouse).sql(
        "SELECT run_id FROM runs WHERE run_id <> $r", params={"r": run_id}
    )
    assert all(f"run {o}," not in html for (o,) in others.fetchall())


def test_archive_text_is_escaped(warehouse: Path, tmp_path: Path) -> None:
    """An action text with markup, in the most looping episode, shows as text, not as markup."""
    wh = tmp_path / "wh"
    shutil.copytree(warehouse, wh)
    [key] = (
        connect(wh)
        .sql(
            "SELECT run_id, domain, task_id FROM episode_loops "
            "ORDER BY looping_steps DESC, run_id, domain, task_id LIMIT 1"
        )
        .fetchall()
    )
    evil = '<script>alert(1)</script><img src="http://evil.example/x">'
    edited = 0
    for path in Warehouse(wh).files("steps"):
        t = pq.read_table(path)
        rows = t.to_pylist()
        for r in rows:
            if (r["run_id"], r["domain"], r["task_id"]) == key and r["step_idx"] == 0:
                r["action_text"] = evil
                edited += 1
        if edited:
            pq.write_table(pa.Table.from_pylist(rows, schema=t.schema), path)
            break
    assert edited == 1
    html = build_report(str(wh), str(tmp_path / "r.html")).path.read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert" not in html
    assert all(u.startswith(("#", "data:")) for u in _parse(html).urls)


def test_the_cli_writes_the_report_and_the_pngs(warehouse: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.html"
    assert main(["report", "--warehouse", str(warehouse), "--out", str(out),
                 "--png", str(tmp_path / "png")]) == 0  # fmt: skip
    assert out.is_file()
    assert len(list((tmp_path / "png").glob("*.png"))) == 10
    assert "wrote" in capsys.readouterr().out
    assert main(["report", "--warehouse", str(tmp_path / "none"), "--out", str(out)]) == 2


def _chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
           *args]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no chromium at /usr/bin/chromium")
def test_the_report_renders_in_headless_chromium_without_errors_or_fetches(
    report, tmp_path: Path
) -> None:
    url = report.path.resolve().as_uri()
    dom = _chromium(["--dump-dom", url], tmp_path / "p1")
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = _parse(dom.stdout)
    assert {sid for sid, _ in SECTIONS} <= page.ids
    assert sum(i["src"].startswith("data:image/png") for i in page.images) == report.n_images
    # the sort script ran without error: console messages (errors, and any fetch the CSP
    # blocked) are logged to stderr as CONSOLE lines
    assert ":CONSOLE" not in dom.stderr, dom.stderr
    fetched = re.findall(r"(?:https?|wss?|ftp)://[^\s\"')]+", dom.stderr)
    assert not fetched, fetched

    shot = tmp_path / "shot.png"
    run = _chromium([f"--screenshot={shot}", "--window-size=1400,3000", url], tmp_path / "p2")
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    assert ":CONSOLE" not in run.stderr, run.stderr
    with Image.open(BytesIO(shot.read_bytes())) as im:
        colours = im.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is None or len(colours) > 50  # charts drawn, not a blank page


def _copy_with_own_archive(warehouse: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the warehouse whose runs point at a private copy of their archive."""
    wh, archive = tmp_path / "wh", tmp_path / "results"
    shutil.copytree(warehouse, wh)
    store = Warehouse(wh)
    runs = store.read("runs").to_pylist()
    [source] = {r["source"] for r in runs}
    shutil.copytree(source, archive)
    for r in runs:
        store.write("runs", [{**r, "source": str(archive)}], _partition(r))
    return wh, archive


def _partition(row: dict) -> dict[str, str]:
    return {"benchmark": row["benchmark"], "run_id": row["run_id"]}


def test_names_with_dollar_signs_are_drawn_as_plain_text(warehouse: Path, tmp_path: Path) -> None:
    """An agent named like a broken formula does not stop the page: labels are not mathtext."""
    wh = tmp_path / "wh"
    shutil.copytree(warehouse, wh)
    store = Warehouse(wh)
    for i, r in enumerate(store.read("runs").to_pylist()):
        store.write("runs", [{**r, "agent": f"agent {i} $\\frac{{$"}], _partition(r))
    result = build_report(str(wh), str(tmp_path / "r.html"))
    assert len(result.figures) == 10
    assert "agent 0 $\\frac{$" in result.path.read_text(encoding="utf-8")


def test_control_characters_in_names_reach_neither_the_terminal_nor_the_svg_files(
    warehouse: Path, tmp_path: Path
) -> None:
    """An agent named with ESC, CR and BEL: matplotlib warned of each missing glyph with the
    character raw on stderr, and wrote it raw into SVG files, which XML then refused."""
    import warnings
    import xml.etree.ElementTree as ET

    wh = tmp_path / "wh"
    shutil.copytree(warehouse, wh)
    store = Warehouse(wh)
    for i, r in enumerate(store.read("runs").to_pylist()):
        store.write("runs", [{**r, "agent": f"agent {i} \x1b[2J\r\x07\u202e"}], _partition(r))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = build_report(str(wh), str(tmp_path / "r.html"), svg_dir=str(tmp_path / "svg"))
    said = " ".join(str(w.message) for w in caught)
    assert not any(c in said for c in "\x1b\r\x07\u202e"), said
    svgs = sorted((tmp_path / "svg").glob("*.svg"))
    assert len(svgs) == len(result.figures) == 10
    for svg in svgs:
        ET.parse(svg)  # raises on a character XML 1.0 forbids
    assert "agent 0 \\x1b[2J\\r\\x07\\u202e" in (tmp_path / "svg" / "wes_scatter.svg").read_text()


def _png_bomb(side: int) -> bytes:
    """A valid 1-bit PNG of side x side black pixels: tiny on disk, side**2 pixels decoded."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\0" * (1 + (side + 7) // 8)
    packer = zlib.compressobj(9)
    data = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()
    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data)
        + chunk(b"IEND", b"")
    )  # fmt: skip


EPS = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 16 16\nnewpath 0 0 moveto showpage\n%%EOF\n"


def test_thumbnails_refuse_bombs_and_formats_screenshots_never_have(
    warehouse: Path, tmp_path: Path, monkeypatch
) -> None:
    """Screenshots replaced by a 169-megapixel PNG bomb or an EPS file named .png give no
    thumbnail (hash's rules: pixel cap, format allow-list), and the page is still written."""
    from PIL import EpsImagePlugin

    tried: list[str] = []
    real_open = EpsImagePlugin.EpsImageFile._open

    def spy(self: object) -> None:  # the EPS plugin would hand the file to Ghostscript
        tried.append("eps")
        real_open(self)

    monkeypatch.setattr(EpsImagePlugin.EpsImageFile, "_open", spy)
    wh, archive = _copy_with_own_archive(warehouse, tmp_path)
    bomb = _png_bomb(13_000)
    shots = sorted(archive.rglob("*.png"))
    assert shots
    for i, path in enumerate(shots):
        path.write_bytes(bomb if i % 2 else EPS)
    result = build_report(str(wh), str(tmp_path / "r.html"))
    assert result.n_episodes > 0 and result.n_thumbnails == 0
    assert tried == []


def test_an_empty_warehouse_or_an_unknown_run_says_what_is_missing(
    warehouse: Path, tmp_path: Path, capsys
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "r.html"
    assert main(["report", "--warehouse", str(empty), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "holds no run" in err and "deskscore ingest" in err and "Traceback" not in err
    assert main(["report", "--warehouse", str(warehouse), "--out", str(out),
                 "--run", "no-such-run"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    [run_id, *_] = sorted(r["run_id"] for r in Warehouse(warehouse).read("runs").to_pylist())
    assert "no run no-such-run" in err and run_id in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("place", "message"),
    [
        (["--out", "{dir}"], "--out {dir}: is a folder; name the HTML file"),
        (["--out", ""], "--out is empty"),
        (["--out", "{file}/r.html"], "--out {file}/r.html (its folder {file}): is a file"),
        (["--out", "{dir}/r.html", "--png", "{file}"], "--png {file}: is a file; name a folder"),
    ],
)
def test_a_report_it_cannot_write_where_asked_says_so_without_a_traceback(
    warehouse: Path, tmp_path: Path, capsys, place: list[str], message: str
) -> None:
    (tmp_path / "afile").write_text("x")
    names = {"dir": str(tmp_path), "file": str(tmp_path / "afile")}
    argv = [a.format(**names) for a in place]
    assert main(["report", "--warehouse", str(warehouse), *argv]) == 2
    err = capsys.readouterr().err
    assert message.format(**names) in err and "Traceback" not in err
    assert (tmp_path / "afile").read_text() == "x"


# -- figures for papers: colours, formats, stale files, drill-downs ---------------------------


def test_an_agent_colour_depends_on_the_sorted_agent_list_alone() -> None:
    assert agent_colours(["b", "a", None]) == agent_colours(["a", "b", "a"])
    many = agent_colours(f"agent-{i:02d}" for i in range(40))
    assert len(set(many.values())) == 40


def _rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def test_no_agent_colour_is_near_a_stage_outcome_or_reference_colour() -> None:
    agents = agent_colours(f"agent-{i:02d}" for i in range(40)).values()
    others = [*STAGE_COLOURS.values(), *OUTCOME_COLOURS.values(), HUMAN, FRONT]
    closest = min(
        sum((p - q) ** 2 for p, q in zip(_rgb(a), _rgb(o), strict=True)) ** 0.5
        for a in agents
        for o in others
    )
    assert closest > 60, closest


SERIES_FIGURES = ("wes_scatter", "human_vs_agent_steps", "step_ratio_distribution",
                  "step_budget", "latency_by_step", "cost_by_step")  # fmt: skip


@pytest.fixture(scope="module")
def paper_figures(warehouse: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("paper")
    for fmt in ("png", "svg"):
        (out / fmt).mkdir()
        (out / fmt / f"per_level.{fmt}").write_text("from an earlier report")  # not drawn now
        (out / fmt / f"mine.{fmt}").write_text("the user's own file")
    result = build_report(
        str(warehouse),
        str(out / "r.html"),
        png_dir=str(out / "png"),
        svg_dir=str(out / "svg"),
        pdf_dir=str(out / "pdf"),
    )
    return out, result


def test_each_agent_has_the_same_colour_in_every_figure(paper_figures, warehouse: Path) -> None:
    out, result = paper_figures
    con = connect(warehouse)
    names = con.sql("SELECT agent, label FROM runs JOIN run_labels USING (run_id)").fetchall()
    colours = agent_colours(n for row in names for n in row)
    assert len(set(colours.values())) == len({*colours}) >= 2
    for name in SERIES_FIGURES:
        assert name in result.figures
        svg = (out / "svg" / f"{name}.svg").read_text().lower()
        for agent, _ in names:
            assert colours[agent] in svg, (name, agent)
    stages = (out / "svg" / "latency_stages.svg").read_text().lower()
    assert any(c in stages for c in STAGE_COLOURS.values())


def test_figures_are_written_as_png_at_300_dpi_svg_and_pdf(paper_figures) -> None:
    _, result = paper_figures
    for fmt in ("png", "svg", "pdf"):
        assert sorted(p.stem for p in result.files[fmt]) == sorted(result.figures)
    for path in result.files["png"]:
        with Image.open(path) as im:
            assert round(im.info["dpi"][0]) == 300
    assert all(p.read_bytes().startswith(b"%PDF") for p in result.files["pdf"])
    assert all(b"<svg" in p.read_bytes()[:2000] for p in result.files["svg"])


def test_stale_figures_are_removed_and_other_files_kept(paper_figures) -> None:
    out, result = paper_figures
    assert "per_level" not in result.figures
    for fmt in ("png", "svg"):
        assert not (out / fmt / f"per_level.{fmt}").exists()
        assert (out / fmt / f"mine.{fmt}").read_text() == "the user's own file"
    assert sorted(p.name for p in result.removed) == ["per_level.png", "per_level.svg"]


def test_a_late_loop_span_is_shown_whole_with_its_context() -> None:
    steps = list(range(100))
    shown = shown_steps(steps, [(79, 88)], context=3, limit=60)
    assert shown == [Gap(76), *range(76, 92), Gap(8)]
    assert shown_steps(steps, [], limit=60) == [*range(60), Gap(40)]
    both = shown_steps(steps, [(2, 4), (7, 9)], context=2, limit=60)
    assert both == [*range(0, 12), Gap(88)]
    assert shown_steps([], [], limit=60) == []


def test_every_step_a_drill_down_shows_has_its_thumbnail_and_response(report) -> None:
    html = report.path.read_text(encoding="utf-8")
    episodes = re.findall(r'<div class="episode" id="ep-\d+">(.*?)</div>', html, re.S)
    assert episodes
    for body in episodes:
        rows = re.findall(r"<tr(?: class=\"loop\")?><td>\d+</td>(.*?)</tr>", body, re.S)
        assert rows
        assert all('<img class="thumb"' in r for r in rows)
        assert any('<td class="response">' in r and '<td class="response"></td>' not in r
                   for r in rows)  # fmt: skip
        assert '<p class="instruction">' in body

"""Every command the README and docs/ show is run, on the demo archive.

A ```console block holds commands (`$ ` lines; a line ending in a backslash continues) each
followed by what it prints: the printed lines are compared with the real output, `...` on a
line of its own standing for any lines. Each page runs in a folder of its own holding a copy
of `deskscore demo`'s ./demo and the checkout's score.py, as the README's first command leaves
them; the commands of a page run in order, in one shell, so `export` carries over. A ```pycon
block is a Python session, run as a doctest in the same folder. A block of
another kind that shows a deskscore command must say why it is not run, in a
`<!-- not run: ... -->` line right above it (it needs something from outside: a cluster, a
model endpoint, a Docker engine, data of your own)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ANY = "..."
_FENCE = re.compile(r"^```(\w*)\s*$")


def blocks(text: str) -> list[tuple[str, list[str], str]]:
    """(info string, lines, the line above the opening fence) of every fenced block."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opened = _FENCE.match(lines[i])
        if not opened:
            i += 1
            continue
        above = lines[i - 1] if i else ""
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        out.append((opened.group(1), lines[i + 1 : j], above))
        i = j + 1
    return out


def commands(lines: list[str]) -> list[tuple[str, list[str]]]:
    """(command, the output shown under it) of a console block."""
    out: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        assert line.startswith("$ "), f"console block line is neither a command nor output: {line}"
        command = line[2:]
        while command.endswith("\\"):
            i += 1
            command = command[:-1] + "\n" + lines[i]
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        out.append((command, shown))
    return out


def matches(shown: list[str], real: list[str]) -> bool:
    """Whether `real` is `shown`, each `...` line standing for any lines (none included)."""
    if not shown:
        return True
    if shown[0] == ANY:
        return any(matches(shown[1:], real[k:]) for k in range(len(real) + 1))
    return bool(real) and real[0].rstrip() == shown[0].rstrip() and matches(shown[1:], real[1:])


def test_the_matcher_takes_ellipses_for_any_lines() -> None:
    assert matches(["a", ANY, "d"], ["a", "b", "c", "d"])
    assert matches(["a", ANY], ["a"])
    assert not matches(["a", ANY, "d"], ["a", "b", "c"])
    assert not matches(["x"], ["y"])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_block_is_run_or_says_why_not(page: Path) -> None:
    for info, lines, above in blocks(page.read_text()):
        if info == "console":
            assert commands(lines), f"{page.name}: an empty console block"
            continue
        if info == "pycon":
            assert any(ln.startswith(">>> ") for ln in lines), f"{page.name}: empty pycon"
            continue
        shows_a_command = any(
            re.search(r"(^|\s)(deskscore|python|pip|pytest|dask)\s", ln) for ln in lines
        )
        if shows_a_command:
            assert above.startswith("<!-- not run: "), (
                f"{page.name}: a {info or 'plain'} block shows commands without a console "
                f"block or a '<!-- not run: why -->' line above it:\n" + "\n".join(lines)
            )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`deskscore demo`, as the README's first command runs it."""
    root = tmp_path_factory.mktemp("docs_demo")
    subprocess.run(
        [sys.executable, "-m", "deskscore.pipelines.cli.main", "demo"],
        cwd=root, check=True, capture_output=True,
    )  # fmt: skip
    return root / "demo"


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_documented_command_runs_and_prints_what_the_page_shows(
    page: Path, demo: Path, tmp_path: Path
) -> None:
    found = blocks(page.read_text())
    runs = [c for info, lines, _ in found if info == "console" for c in commands(lines)]
    sessions = ["\n".join(lines) for info, lines, _ in found if info == "pycon"]
    if not runs and not sessions:
        pytest.skip(f"{page.name} shows no command to run")
    shutil.copytree(demo, tmp_path / "demo")
    (tmp_path / "score.py").symlink_to(ROOT / "score.py")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("DESKSCORE_WAREHOUSE", None)
    if sessions:  # Python sessions, as doctests, in the same folder
        (tmp_path / "session.txt").write_text("\n\n".join(sessions) + "\n")
        doctest = subprocess.run(
            [sys.executable, "-m", "doctest", "session.txt"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert doctest.returncode == 0, f"{page.name}:\n{doctest.stdout}\n{doctest.stderr}"
    marker = "@@deskscore-docs-test@@"
    script = "\n".join(
        f"echo '{marker} {i}'; {command}\necho \"{marker} status $?\""
        for i, (command, _) in enumerate(runs)
    )
    if not runs:
        return
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip
    parts = done.stdout.split(f"{marker} ")[1:]
    assert len(parts) == 2 * len(runs), done.stderr
    for i, (command, shown) in enumerate(runs):
        out = parts[2 * i].split("\n", 1)[1] if "\n" in parts[2 * i] else ""
        status = parts[2 * i + 1].split()[1]
        assert status == "0", f"{page.name}: `{command}` exited {status}\n{out}\n{done.stderr}"
        real = out.rstrip("\n").splitlines()
        assert matches(shown, real), (
            f"{page.name}: `{command}` printed\n"
            + "\n".join(real)
            + "\n\nthe page shows\n"
            + "\n".join(shown)
        )

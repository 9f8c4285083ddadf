"""score.py, the drop-in for OSWorld-Human's script, run as a subprocess on generated runs.

Figures are checked against the formulas written out here, on the real human data. When
OSWORLD_HUMAN_SCORE_PY names a copy of the original script, the whole output is also compared
with the original's, character for character.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import NamedTuple

import pytest

from deskscore.collectors.ids import thunderbird_old_to_new
from deskscore.scorers.domains import OSWORLD_DOMAINS

ROOT = Path(__file__).resolve().parents[1]
SCORE_PY = ROOT / "score.py"
PEER_ENV = "OSWORLD_HUMAN_SCORE_PY"
NEW_TO_OLD = {new: old for old, new in thunderbird_old_to_new().items()}
FIGURE_PREFIXES = (
    "Original OSWorld Result:",
    "Single Action WES+:",
    "Grouped Action WES+:",
    "WES-:",
    "Single Action WES:",
    "Grouped Action WES:",
)


class Folder(NamedTuple):
    domain: str
    name: str
    lines: list[bytes] | None  # traj.jsonl lines (with endings); None: no *.jsonl
    result: str | None  # result.txt text; None: no result.txt


# ---- human data and generated runs ---------------------------------------------------------


def human_in_listdir_order(human_dir: Path) -> list[tuple[str, str, int, int]]:
    """(domain, id, single, grouped) in the order OSWorld-Human's dict holds them."""
    out = []
    for domain in os.listdir(human_dir):
        if domain not in OSWORLD_DOMAINS or not (human_dir / domain).is_dir():
            continue
        for name in os.listdir(human_dir / domain):
            if name.endswith(".json"):
                data = json.loads((human_dir / domain / name).read_text(encoding="utf-8"))
                gt = data["human-ground-truth"]
                out.append(
                    (domain, data["id"], len(gt["single-action"]), len(gt["grouped-action"]))
                )
    return out


def _line(rng: random.Random, step: int, action: str) -> bytes:
    rec = {
        "step_num": step,
        "action_timestamp": f"20250301@1200{step % 60:02d}",
        "action": action,
        "response": "I will " + rng.choice(("click", "type", "scroll")) + " now. " * 5,
        "reward": 0,
        "done": action in ("DONE", "FAIL"),
        "info": {},
        "screenshot_file": f"step_{step}_20250301@1200{step % 60:02d}.png",
    }
    return json.dumps(rec).encode() + b"\n"


def make_run(
    rng: random.Random, human: list[tuple[str, str, int, int]], n: int, max_steps: int = 30
) -> list[Folder]:
    """n task folders over the human tasks (plus one the human data lacks): partial rewards,
    True/False, missing results, error lines, several actions per turn, old thunderbird ids."""
    tasks = rng.sample(human, n)
    tasks += [t for t in human if t[0] == "thunderbird"][:3]
    folders = []
    seen = set()
    for domain, task_id, single, grouped in tasks:
        name = task_id
        if domain == "thunderbird" and task_id in NEW_TO_OLD and rng.random() < 0.5:
            name = NEW_TO_OLD[task_id]
        if (domain, name) in seen:
            continue
        seen.add((domain, name))
        success = rng.random() < 0.4
        turns = max(
            1,
            min(
                max_steps,
                grouped - 1 if success and rng.random() < 0.2 else rng.randint(single, 3 * single),
            ),
        )
        lines = []
        for step in range(1, turns + 1):
            for _ in range(2 if rng.random() < 0.2 else 1):
                lines.append(_line(rng, step, f"pyautogui.click({rng.randint(0, 999)}, 5)"))
        lines.append(_line(rng, turns, "DONE" if success else "FAIL"))
        if rng.random() < 0.08:
            lines.append(b'{"Error": "Timeout"}\n')
        roll = rng.random()
        result = (
            None
            if roll < 0.06
            else (
                rng.choice(("1", "1.0", "True"))
                if success
                else rng.choice(("0", "0.0", "False", "0.5"))
            )
        )
        folders.append(Folder(domain, name, lines, None if result is None else result + "\n"))
    folders.append(
        Folder(
            "chrome", "0000aaaa-0000-4000-8000-000000000000", [_line(rng, 1, "DONE")] * 90, "1\n"
        )
    )
    return folders


def write_run(root: Path, folders: list[Folder]) -> Path:
    for f in folders:
        d = root / f.domain / f.name
        d.mkdir(parents=True, exist_ok=True)
        if f.lines is not None:
            (d / "traj.jsonl").write_bytes(b"".join(f.lines))
        if f.result is not None:
            (d / "result.txt").write_text(f.result, encoding="utf-8")
        (d / "step_1_20250301@120001.png").write_bytes(b"")
    return root


# ---- the formulas --------------------------------------------------------------------------


def _reward(text: str | None) -> float | None:
    """result.txt as the original reads it; None where it has no number (or stops)."""
    if text is None or not text.strip():
        return None
    first = text.splitlines()[0].strip()
    if first in ("True", "False"):
        return float(first == "True")
    try:
        return float(first)
    except ValueError:
        return None


def _steps(lines: list[bytes]) -> int:
    """Executed actions: lines that are JSON objects and not runner error lines."""
    n = 0
    for raw in lines:
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if isinstance(rec, dict) and not ("Error" in rec and "step_num" not in rec):
            n += 1
    return n


def expected_figures(folders, human, mss, *, deskscore=False) -> list[str]:
    """The six figure lines, from the formulas (sums left to right in the human order)."""

    def t_of(f):
        return _steps(f.lines) if deskscore else len(f.lines)

    def r_of(f):
        r = _reward(f.result)
        if deskscore and r is not None:
            r = min(max(r, 0.0), 1.0) if math.isfinite(r) else None
        return r

    with_traj = [f for f in folders if f.lines is not None]
    s = max([mss] + [t_of(f) for f in (folders if deskscore else with_traj) if f.lines is not None])
    found = {
        (f.domain, f.name): f for f in (folders if deskscore else with_traj) if r_of(f) is not None
    }
    keys = {(d, t) for d, t, _, _ in human}
    n = len(keys)
    total, ws, wg, wm, fails = 0, [], [], [], []
    for d, tid, single, grouped in human:
        f = found.get((d, tid))
        if f is None and d == "thunderbird" and tid in NEW_TO_OLD:
            f = found.get((d, NEW_TO_OLD[tid]))
        if f is None:
            continue
        r, t = r_of(f), (t_of(f) if f.lines is not None else 0)
        cap = (lambda x: min(x, 1.0)) if deskscore else (lambda x: x)
        ws.append(r * cap(single / t) if t else 0.0)
        wg.append(r * cap(grouped / t) if t else 0.0)
        wm.append(-((1 - r) * t / s) if t else 0.0)
        total += r
        fails.append((1 - r, t))
    den = sum(w for w, _ in fails)
    factor = 1 - (sum(w * t for w, t in fails) / den if den else 0.0) / s
    sr, ps, pg, m = total / n, sum(ws) / n, sum(wg) / n, sum(wm) / n
    return [
        f"Original OSWorld Result: {sr * 100:.2f}% (on {n} human tasks)",
        f"Single Action WES+: {ps * 100:.2f}",
        f"Grouped Action WES+: {pg * 100:.2f}",
        f"WES-: {m:.2f}",
        f"Single Action WES: {100 * ps * factor:.2f}",
        f"Grouped Action WES: {100 * pg * factor:.2f}",
    ]


# ---- running -------------------------------------------------------------------------------


def run_score(args: list[str], cwd: Path, script: Path = SCORE_PY) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def figure_lines(stdout: str) -> list[str]:
    return [ln for ln in stdout.splitlines() if ln.startswith(FIGURE_PREFIXES)]


@pytest.fixture(scope="module")
def humans(human_dirs) -> dict[str, list[tuple[str, str, int, int]]]:
    return {v: human_in_listdir_order(p) for v, p in human_dirs.items()}


@pytest.mark.parametrize("version", ["2025-06", "verified"])
@pytest.mark.parametrize("mss", [15, 50])
def test_figures_equal_the_formula_on_real_human_data(tmp_path, human_dirs, humans, version, mss):
    folders = make_run(random.Random(f"{version}{mss}"), humans["verified"], 60)
    run = write_run(tmp_path / "run", folders)
    p = run_score(
        ["--result-path", str(run), "--max-steps-scoring", str(mss)], cwd=human_dirs[version]
    )
    assert p.returncode == 0, p.stderr
    assert figure_lines(p.stdout) == expected_figures(folders, humans[version], mss)
    assert f"Found {len(humans[version])} human tasks" in p.stdout.splitlines()


def test_deskscore_rules_follow_their_formula(tmp_path, human_dirs, humans):
    folders = make_run(random.Random(3), humans["verified"], 80)
    folders.append(Folder("os", "11111111-0000-4000-8000-000000000000", None, "1\n"))
    run = write_run(tmp_path / "run", folders)
    p = run_score(
        [
            "--result-path",
            str(run),
            "--compat",
            "deskscore",
            "--human-path",
            str(human_dirs["verified"]),
        ],
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert figure_lines(p.stdout) == expected_figures(
        folders, humans["verified"], 15, deskscore=True
    )


def _crash_run(rng: random.Random, human) -> tuple[list[Folder], dict[str, tuple[str, str]]]:
    """A run holding each input the original stops on, at a task the human data has."""
    folders = make_run(rng, human, 30)
    by_key = {(f.domain, f.name): i for i, f in enumerate(folders)}
    victims = [(d, t) for d, t, _, _ in human if (d, t) in by_key][:6]
    kinds = ("empty traj", "garbled line", "blank line", "not utf8", "bad result", "empty result")
    where = {}
    for kind, (d, t) in zip(kinds, victims, strict=True):
        f = folders[by_key[(d, t)]]
        lines = list(f.lines)
        if kind == "empty traj":
            f = f._replace(lines=[], result="1\n")
        elif kind == "garbled line":
            lines[1] = lines[1][:25] + b"\n"
            f = f._replace(lines=lines)
        elif kind == "blank line":
            f = f._replace(lines=[*lines[:1], b"\n", *lines[1:]])
        elif kind == "not utf8":
            f = f._replace(lines=[*lines[:1], b'{"action": "caf\xe9"}\n', *lines[1:]])
        elif kind == "bad result":
            f = f._replace(result="abc\n")
        else:
            f = f._replace(result="")
        folders[by_key[(d, t)]] = f
        where[kind] = (d, t)
    return folders, where


def test_inputs_the_original_stops_on_give_notes_and_figures(tmp_path, human_dirs, humans):
    folders, where = _crash_run(random.Random(11), humans["verified"])
    run = write_run(tmp_path / "run", folders)
    p = run_score(["--result-path", str(run)], cwd=human_dirs["verified"])
    assert p.returncode == 0, p.stderr
    notes = [ln for ln in p.stdout.splitlines() if ln.startswith("NOTE: ")]

    def note(kind: str) -> str:
        d, t = where[kind]
        hits = [n for n in notes if f"{run}/{d}/{t}/" in n]
        assert len(hits) == 1, (kind, notes)
        return hits[0]

    assert "traj.jsonl is empty" in note("empty traj") and "WES+ 0" in note("empty traj")
    assert "traj.jsonl: line 2 is not valid JSON" in note("garbled line")
    assert "counted as a step" in note("garbled line")
    assert "traj.jsonl: line 2 is blank" in note("blank line")
    assert "traj.jsonl: line 2 is not UTF-8" in note("not utf8")
    assert "result.txt is unparseable ('abc')" in note("bad result")
    assert "as if it had no result" in note("bad result")
    assert "result.txt is empty" in note("empty result")
    assert figure_lines(p.stdout) == expected_figures(folders, humans["verified"], 15)


def test_a_zip_of_the_run_gives_the_same_figures(tmp_path, human_dirs, humans):
    folders = make_run(random.Random(5), humans["verified"], 50)
    run = write_run(tmp_path / "run", folders)
    archive = tmp_path / "run.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in sorted(run.rglob("*")):
            if path.is_file():
                z.write(
                    path, "results/pyautogui/screenshot/model-x/" + path.relative_to(run).as_posix()
                )
    figures = []
    for target in (run, archive):
        p = run_score(["--result-path", str(target)], cwd=human_dirs["verified"])
        assert p.returncode == 0, p.stderr
        figures.append(figure_lines(p.stdout))
    assert figures[0] == figures[1] == expected_figures(folders, humans["verified"], 15)


@pytest.mark.parametrize("version", ["2025-06", "verified"])
def test_bundled_counts_give_the_figures_of_the_folder(tmp_path, human_dirs, version):
    folders = make_run(random.Random(version), human_in_listdir_order(human_dirs["verified"]), 90)
    run = write_run(tmp_path / "run", folders)
    bundled = run_score(["--result-path", str(run), "--human-version", version], cwd=tmp_path)
    folder = run_score(
        ["--result-path", str(run), "--human-path", str(human_dirs[version])], cwd=tmp_path
    )
    assert bundled.returncode == 0 and folder.returncode == 0, bundled.stderr + folder.stderr
    assert figure_lines(bundled.stdout) == figure_lines(folder.stdout)
    assert len(figure_lines(bundled.stdout)) == 6


def test_no_human_tasks_is_an_error_that_says_what_to_pass(tmp_path):
    run = write_run(tmp_path / "run", [Folder("os", "x", [b"{}\n"], "1\n")])
    p = run_score(["--result-path", str(run)], cwd=tmp_path)
    assert p.returncode == 2
    assert "--human-path" in p.stderr and "--human-version" in p.stderr
    assert "Found 0 human tasks" in p.stdout


# ---- against the original ------------------------------------------------------------------


@pytest.fixture(scope="module")
def peer() -> Path:
    path = os.environ.get(PEER_ENV)
    if not path:
        pytest.skip(
            f"{PEER_ENV} is not set: point it at a copy of OSWorld-Human's score.py to "
            "compare outputs character for character"
        )
    return Path(path)


def _quirky_run(rng: random.Random, human) -> list[Folder]:
    """Inputs the original accepts, including its odd corners."""
    folders = make_run(rng, human, 70)
    i = rng.randrange(len(folders))
    f = folders[i]
    folders[i] = f._replace(lines=[ln.replace(b"\n", b"\r\n") for ln in f.lines])  # CRLF
    folders.append(Folder("gimp", "not-a-uuid", [b"[1, 2]\n", b"3\n"], " 1e0 \nignored\n"))
    folders.append(Folder("vlc", "22222222-0000-4000-8000-000000000000", [b"{}\n"], "0.25"))
    taken = {(f.domain, f.name) for f in folders}
    tb = next(
        t
        for d, t, _, _ in human
        if d == "thunderbird"
        and ("thunderbird", t) not in taken
        and ("thunderbird", NEW_TO_OLD[t]) not in taken
    )
    folders.append(Folder("thunderbird", tb, [b"{}\n"] * 3, "1\n"))  # both ids: the new wins
    folders.append(Folder("thunderbird", NEW_TO_OLD[tb], [b"{}\n"] * 9, "0\n"))
    d, t, _, _ = next(h for h in human if h[3] >= 3 and (h[0], h[1]) not in taken)
    folders.append(Folder(d, t, [b'{"action": "DONE"}\n'], "1.0\n"))  # beats the human: WARN
    return folders


def _without_second_form(stdout: str) -> str:
    return "".join(
        ln
        for ln in stdout.splitlines(keepends=True)
        if not ln.startswith(("Single Action WES:", "Grouped Action WES:"))
    )


@pytest.mark.parametrize("version", ["2025-06", "verified"])
@pytest.mark.parametrize("seed,mss", [(1, 15), (2, 50), (3, 100)])
def test_output_is_the_originals_character_for_character(
    tmp_path, human_dirs, humans, peer, version, seed, mss
):
    folders = _quirky_run(random.Random(seed), humans["verified"])
    run = write_run(tmp_path / "run", folders)
    # An extra *.jsonl and stray files: read (and counted toward S) by the original too.
    extra = run / folders[0].domain / folders[0].name / "old.jsonl"
    extra.write_bytes(b"{}\n" * 40)
    (run / "chrome" / "notes.txt").write_text("x")
    (run / "args.json").write_text("{}")
    args = ["--result-path", str(run), "--max-steps-scoring", str(mss)]
    original = run_score(args, cwd=human_dirs[version], script=peer)
    assert original.returncode == 0, original.stderr
    ours = run_score(args, cwd=human_dirs[version])
    ours_path = run_score([*args, "--human-path", str(human_dirs[version])], cwd=tmp_path)
    assert _without_second_form(ours.stdout) == original.stdout
    assert ours_path.stdout == ours.stdout
    assert "WARN: Task" in original.stdout and "not found in trajectories" in original.stdout


def test_a_nan_result_prints_nan_like_the_original(tmp_path, human_dirs, humans, peer):
    folders = make_run(random.Random(8), humans["verified"], 20)
    f = next(i for i, x in enumerate(folders) if x.result is not None and x.lines)
    folders[f] = folders[f]._replace(result="nan\n")
    run = write_run(tmp_path / "run", folders)
    args = ["--result-path", str(run)]
    original = run_score(args, cwd=human_dirs["verified"], script=peer)
    ours = run_score(args, cwd=human_dirs["verified"])
    assert original.returncode == 0
    assert _without_second_form(ours.stdout) == original.stdout
    assert "WES-: nan" in original.stdout


def test_usage_files_the_original_never_reads_change_nothing_it_prints(tmp_path, humans):
    """An invalid or 100,000-deep token_usage.json beside a trajectory: the original never
    opens it, and score.py once crashed on its quarantine row as if it were a bad line."""
    folders = make_run(random.Random(9), humans["verified"], 20)
    run = write_run(tmp_path / "run", folders)
    args = ["--result-path", str(run), "--human-version", "verified"]
    clean = {
        c: run_score([*args, "--compat", c], cwd=tmp_path) for c in ("osworld-human", "deskscore")
    }
    with_lines = [f for f in folders if f.lines]
    for f, data in zip(with_lines, (b'{"prompt_tokens": 1,', b"[" * 100_000), strict=False):
        (run / f.domain / f.name / "token_usage.json").write_bytes(data)
    for compat, before in clean.items():
        after = run_score([*args, "--compat", compat], cwd=tmp_path)
        assert after.returncode == 0, after.stderr
        assert after.stdout == before.stdout


def test_a_result_txt_of_900_mb_is_checked_a_block_at_a_time(tmp_path, human_dirs, measured):
    """What the original does with result.txt (decode it whole) is checked by decoding it a
    block at a time: a 900 MB file (sparse, nothing on disk) once took 1.8 GB to check."""
    human = human_in_listdir_order(human_dirs["verified"])
    d, t, _, _ = human[0]
    run = write_run(tmp_path / "run", [Folder(d, t, [b'{"step_num": 1}\n'], "1\n")])
    with open(run / d / t / "result.txt", "r+b") as f:
        f.truncate(900 << 20)  # "1\n" then zero bytes: valid UTF-8, as the original reads it
    cmd = [sys.executable, str(SCORE_PY), "--result-path", str(run), "--human-version", "verified"]
    code, printed, peak = measured(cmd, cwd=tmp_path, timeout=300)
    assert code == 0, printed[-2000:]
    assert "Original OSWorld Result:" in printed
    assert peak < 400 << 20, f"peak RSS {peak >> 20} MB"


def test_uitars_output_is_the_originals(human_dirs, uitars_run, peer):
    args = ["--result-path", str(uitars_run), "--uitars", "--max-steps-scoring", "30"]
    original = run_score(args, cwd=human_dirs["verified"], script=peer)
    assert original.returncode == 0, original.stderr
    ours = run_score(args, cwd=human_dirs["verified"])
    assert _without_second_form(ours.stdout) == original.stdout


def test_score_py_imports_no_heavy_library(tmp_path, human_dirs):
    run = write_run(tmp_path / "run", [Folder("os", "x", [b"{}\n"], "1\n")])
    p = subprocess.run(
        [sys.executable, "-X", "importtime", str(SCORE_PY), "--result-path", str(run)],
        cwd=human_dirs["verified"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0
    imported = {ln.rsplit("|", 1)[-1].strip().split(".")[0] for ln in p.stderr.splitlines()}
    assert "deskscore" in imported
    assert not imported & {"pyarrow", "polars", "duckdb", "apache_beam", "fsspec", "numpy"}


def _unmatched_run(root: Path) -> Path:
    """Tasks in OSWorld domain folders that no human data holds (ids it lacks), with results."""
    rng = random.Random(11)
    folders = [
        Folder(domain, f"{i:08x}-0000-4000-8000-000000000000", [_line(rng, 1, "DONE")], "1\n")
        for i, domain in enumerate(("chrome", "os", "vlc"))
    ]
    return write_run(root, folders)


def test_a_run_no_human_task_matches_prints_the_originals_zeros(tmp_path, human_dirs, peer):
    args = ["--result-path", str(_unmatched_run(tmp_path / "run"))]
    original = run_score(args, cwd=human_dirs["verified"], script=peer)
    ours = run_score(args, cwd=human_dirs["verified"])
    assert original.returncode == 0, original.stderr
    assert _without_second_form(ours.stdout) == original.stdout
    assert "Single Action WES+: 0.00" in original.stdout


def test_under_deskscore_rules_a_run_no_human_task_matches_has_no_figures(tmp_path, human_dirs):
    args = ["--result-path", str(_unmatched_run(tmp_path / "run")), "--compat", "deskscore"]
    p = run_score(args, cwd=human_dirs["verified"])
    assert p.returncode == 0, p.stderr
    assert "NOTE: no task of the run matched a human task" in p.stdout
    assert figure_lines(p.stdout) == [
        "Original OSWorld Result: n/a (on 369 human tasks)",
        "Single Action WES+: n/a",
        "Grouped Action WES+: n/a",
        "WES-: n/a",
        "Single Action WES: n/a",
        "Grouped Action WES: n/a",
    ]


def test_control_characters_in_names_are_printed_escaped(
    tmp_path, human_dirs, hostile_run, shown_escaped
):
    """Folder names, task ids and file lines carrying terminal escape sequences reach the
    terminal escaped; error messages too."""
    import shutil

    run = tmp_path / hostile_run["root"].name
    shutil.copytree(hostile_run["root"], run)
    no_result = next(run.glob(f"*/{hostile_run['task_ids'][1]}"))
    (no_result / "result.txt").unlink()
    p = run_score(["--result-path", str(run)], cwd=human_dirs["verified"])
    assert p.returncode == 0, p.stderr
    shown_escaped(p.stdout + p.stderr)
    assert "is not valid JSON" in p.stdout and "Result file not found for" in p.stdout
    missing = str(tmp_path / "none") + hostile_run["root"].name[3:]  # none + the sequences
    p = run_score(["--result-path", missing], cwd=human_dirs["verified"])
    assert p.returncode == 2
    shown_escaped(p.stdout + p.stderr)


# ---- hostile folders: runs of bad lines, FIFOs, folders that cannot be listed --------------


def test_consecutive_blank_lines_get_a_note_each_as_before_then_a_count(tmp_path, human_dirs):
    human = human_in_listdir_order(human_dirs["verified"])
    domain, task_id, _, _ = human[0]
    lines = [b"\n"] * 5 + [_line(random.Random(1), 1, "DONE")]
    run = write_run(tmp_path / "run", [Folder(domain, task_id, lines, "1\n")])
    p = run_score(["--result-path", str(run), "--human-version", "verified"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    notes = [ln for ln in p.stdout.splitlines() if ln.startswith("NOTE: ")]
    where = f"NOTE: {run}/{domain}/{task_id}/traj.jsonl:"
    assert notes[:4] == [
        *(
            f"{where} line {n} is blank; the original stops here (JSONDecodeError); counted as a "
            "step, as the original counts lines"
            for n in (1, 2, 3)
        ),
        f"{where} 2 more such lines, counted as a step, as the original counts lines",
    ]


def test_git_lfs_pointers_get_one_note_each_saying_what_they_are(tmp_path, human_dirs):
    """A clone made without `git lfs` holds pointers in place of the files: one note per file
    says so (the original stops at the pointer's first line), not a note per pointer line."""
    human = human_in_listdir_order(human_dirs["verified"])
    (d1, t1, _, _), (d2, t2, _, _) = human[0], human[1]
    pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize 120\n"
    good = [_line(random.Random(3), 1, "DONE")]
    run = write_run(tmp_path / "run", [Folder(d1, t1, good, "1\n"), Folder(d2, t2, good, "1\n")])
    (run / d1 / t1 / "traj.jsonl").write_text(pointer.format("a" * 64))
    (run / d1 / t1 / "result.txt").write_text(pointer.format("b" * 64))
    p = run_score(["--result-path", str(run), "--human-version", "verified"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    notes = [ln for ln in p.stdout.splitlines() if ln.startswith("NOTE: ")]
    where = f"NOTE: {run}/{d1}/{t1}"
    lfs = "is a Git LFS pointer, not the file (run `git lfs pull` in the clone); the original"
    assert notes == [
        f"{where}/traj.jsonl {lfs} stops here (JSONDecodeError); its lines counted as the "
        "original counts lines",
        f"{where}/result.txt {lfs} stops here (ValueError); task left out as if it had no result",
    ]


def test_a_fifo_named_traj_jsonl_is_noted_instead_of_waited_on(tmp_path, human_dirs):
    human = human_in_listdir_order(human_dirs["verified"])
    (d1, t1, _, _), (d2, t2, _, _) = human[0], human[1]
    good = [_line(random.Random(2), 1, "DONE")]
    run = write_run(tmp_path / "run", [Folder(d1, t1, None, "1\n"), Folder(d2, t2, good, "1\n")])
    fifo = run / d1 / t1 / "traj.jsonl"
    os.mkfifo(fifo)
    try:
        p = run_score(["--result-path", str(run), "--human-version", "verified"], cwd=tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail("score.py blocked on a FIFO named traj.jsonl")
    assert p.returncode == 0, p.stderr
    [note] = [ln for ln in p.stdout.splitlines() if "traj.jsonl could not be read" in ln]
    assert f"{run}/{d1}/{t1}/traj.jsonl" in note and "FIFO" in note
    assert "Found 2 trajectories." in p.stdout
    assert "is empty; the original divides by zero" not in p.stdout  # it was not read
    assert f"WARN: Task '{d1}/{t1}'" not in p.stdout


def test_a_folder_that_cannot_be_listed_is_a_one_line_error(
    tmp_path, human_dirs, monkeypatch, capsys
):
    import importlib.util

    human = human_in_listdir_order(human_dirs["verified"])
    domain, task_id, _, _ = human[0]
    run = write_run(tmp_path / "run", [Folder(domain, task_id, [b"{}\n"], "1\n")])
    locked = str(run / domain)
    listdir = os.listdir

    def refuse(path="."):
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return listdir(path)

    spec = importlib.util.spec_from_file_location("score_under_test", SCORE_PY)
    score = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(score)
    monkeypatch.setattr(os, "listdir", refuse)  # root reads any folder: the refusal is staged
    with pytest.raises(SystemExit) as stop:
        score.main(["--result-path", str(run), "--human-version", "verified"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: cannot list the folder {locked} ")
    assert "Permission denied" in err and "Traceback" not in err


@pytest.mark.parametrize("compat", ["deskscore", "osworld-human"])
def test_the_runs_line_budget_cuts_the_same_lines_whatever_order_a_folder_lists(
    tmp_path, humans, monkeypatch, capsys, compat
):
    """Past DESKSCORE_MAX_RUN_LINES the lines left are not steps; which task's lines those are
    once followed os.listdir, so the same run scored differently from one filesystem to the
    next, and differently from `deskscore score` over its ingest (which reads by path)."""
    import importlib.util

    rng = random.Random(11)
    tasks = rng.sample([h for h in humans["verified"] if h[0] == "chrome"], 4)
    steps = [_line(rng, k, "pyautogui.click(1, 2)") for k in range(1, 9)]
    run = write_run(tmp_path / "run", [Folder(d, t, [*steps, _line(rng, 9, "DONE")], "1\n")
                                       for d, t, _, _ in tasks])  # fmt: skip
    spec = importlib.util.spec_from_file_location("score_under_test", SCORE_PY)
    score = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(score)
    monkeypatch.setenv("DESKSCORE_MAX_RUN_LINES", "21")  # two tasks and a third's first 3
    listdir = os.listdir
    printed = {}
    for order in ("sorted", "reversed"):
        monkeypatch.setattr(
            os, "listdir", lambda p=".", o=order: sorted(listdir(p), reverse=o == "reversed")
        )
        args = ["--result-path", str(run), "--human-version", "verified", "--compat", compat]
        score.main(args)
        printed[order] = capsys.readouterr().out
    head = ("Original OSWorld Result:", "Single Action WES+:", "Grouped Action WES+:", "WES-:")
    figures = [[ln for ln in printed[o].splitlines() if ln.startswith(head)]
               for o in ("sorted", "reversed")]  # fmt: skip
    assert figures[0] == figures[1] and len(figures[0]) == 4
    if compat == "deskscore":  # and the same as deskscore's own scoring of the run's ingest
        from deskscore.pipelines.jobs.ingest import run_ingest
        from deskscore.pipelines.jobs.score import run_score as score_job
        from deskscore.pipelines.options import IngestOptions, ScoreOptions
        from deskscore.sql import connect

        wh = str(tmp_path / "wh")
        run_ingest(IngestOptions(wh, sources=(str(run),), engine="direct"))
        score_job(ScoreOptions(wh, human_version="verified", max_steps_scoring=15,
                               compat=compat, engine="direct"))  # fmt: skip
        [(single,)] = connect(wh).sql("SELECT wes_plus_single FROM run_scores").fetchall()
        assert f"Single Action WES+: {single * 100:.2f}" in figures[0]


def _odd_human_dir(root: Path) -> Path:
    """Human files the original keeps but can never score: keys that are not strings (never
    equal to a folder's name) and ground truths without len() (only scoring them fails)."""

    def put(rel: str, key: object, single: object, grouped: object) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        gt = {"single-action": single, "grouped-action": grouped}
        path.write_text(json.dumps({"id": key, "human-ground-truth": gt}))

    put("chrome/t1.json", "t1", ["a", "b"], ["a"])
    put("chrome/five.json", 5, ["a", "b"], ["a"])
    put("chrome/true.json", True, ["a"], ["a"])
    put("gimp/none.json", None, ["a"], ["a"])
    put("gimp/unsized.json", "q", 5, None)
    put("os/text.json", "5", ["a", "b", "c"], ["a", "b"])  # the string twin of chrome's 5
    return root


def _odd_run(root: Path) -> Path:
    steps = [b'{"step_num": 1}\n', b'{"step_num": 2}\n']
    folders = [Folder(d, t, steps, "1\n") for d, t in
               [("chrome", "t1"), ("chrome", "5"), ("chrome", "True"), ("os", "5")]]  # fmt: skip
    return write_run(root, folders)


def test_human_files_the_original_keeps_but_never_scores_give_its_output(tmp_path, peer):
    human = _odd_human_dir(tmp_path / "human")
    args = ["--result-path", str(_odd_run(tmp_path / "run")), "--max-steps-scoring", "50"]
    original = run_score(args, cwd=human, script=peer)
    assert original.returncode == 0, original.stderr
    assert _without_second_form(run_score(args, cwd=human).stdout) == original.stdout
    assert "on 6 human tasks" in original.stdout and "Skipped 4 tasks" in original.stdout


def test_a_run_holding_a_task_whose_ground_truth_has_no_len_notes_it_and_counts_it_not_found(
    tmp_path,
):
    human = _odd_human_dir(tmp_path / "human")
    run = _odd_run(tmp_path / "run")
    write_run(run, [Folder("gimp", "q", [b'{"step_num": 1}\n'], "1\n")])
    p = run_score(["--result-path", str(run), "--max-steps-scoring", "50"], cwd=human)
    assert p.returncode == 0, p.stderr
    assert "NOTE: Task 'gimp/q' has a trajectory but its human ground truth has no len()" in (
        p.stdout
    )
    assert "Task 'gimp/q' not found" not in p.stdout
    # t1 and os/5 are found and succeed; chrome/5, chrome/True, gimp/None and gimp/q are not
    assert "Skipped 4 tasks" in p.stdout
    assert "Original OSWorld Result: 33.33% (on 6 human tasks)" in p.stdout


def test_task_and_domain_folders_linked_from_elsewhere_are_read_as_the_original_reads_them(
    tmp_path, human_dirs, humans, peer
):
    folders = make_run(random.Random(12), humans["verified"], 30)
    run = write_run(tmp_path / "run", folders)
    linked = tmp_path / "elsewhere"
    f = next(x for x in folders if x.lines and x.result and x.domain != "gimp")
    (linked / "tasks").mkdir(parents=True)
    (run / f.domain / f.name).rename(linked / "tasks" / f.name)
    (run / f.domain / f.name).symlink_to(linked / "tasks" / f.name)  # one task folder
    if (run / "gimp").exists():
        (run / "gimp").rename(linked / "gimp")
    write_run(linked, [x for x in make_run(random.Random(13), humans["verified"], 60)
                       if x.domain == "gimp"])  # fmt: skip
    (run / "gimp").symlink_to(linked / "gimp")  # a whole domain folder
    args = ["--result-path", str(run), "--max-steps-scoring", "50"]
    original = run_score(args, cwd=human_dirs["verified"], script=peer)
    assert original.returncode == 0, original.stderr
    ours = run_score(args, cwd=human_dirs["verified"])
    assert _without_second_form(ours.stdout) == original.stdout
    assert "NOTE" not in ours.stdout


@pytest.mark.parametrize(
    "result",
    [b"", b"\n", b"  \r\n", b"\xe91\n", b"1\n\xe9\n", b"abc\n"],
    ids=["no-line", "blank-line", "spaces", "latin-1", "latin-1-after", "text"],
)
def test_a_note_names_the_exception_the_original_stops_with_on_result_txt(
    tmp_path, human_dirs, peer, result
):
    human = human_in_listdir_order(human_dirs["verified"])
    d, t, _, _ = human[0]
    run = write_run(tmp_path / "run", [Folder(d, t, [b'{"step_num": 1}\n'], None)])
    (run / d / t / "result.txt").write_bytes(result)
    args = ["--result-path", str(run)]
    original = run_score(args, cwd=human_dirs["verified"], script=peer)
    assert original.returncode != 0
    exception = original.stderr.strip().splitlines()[-1].split(":", 1)[0]
    [note] = [ln for ln in run_score(args, cwd=human_dirs["verified"]).stdout.splitlines()
              if "result.txt" in ln]  # fmt: skip
    assert f"the original stops here ({exception})" in note


def test_a_uitars_folder_without_a_query_is_not_counted_as_a_trajectory(tmp_path, human_dirs):
    (tmp_path / "run" / "a").mkdir(parents=True)
    (tmp_path / "run" / "a" / "data.json").write_text('[{"inner_step": [{"score": 1}]}]')
    args = ["--result-path", str(tmp_path / "run"), "--uitars"]
    p = run_score([*args, "--human-path", str(human_dirs["verified"])], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert 'has no "query" in meta.json; left out' in p.stdout
    assert "Found 0 trajectories." in p.stdout

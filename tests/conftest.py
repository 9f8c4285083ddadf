"""Shared fixtures: where the real reference data lives (beside the repository, never copied in)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from deskscore.pipelines.options import IngestOptions, ScoreOptions

DESKTOP_FIXTURES = frozenset(
    {"docker_engine", "sandbox_image", "sandbox_desktop", "host_desktop", "desktop"}
)
"""Fixtures that start a real desktop (a container or Xvfb): the tests using them are slow."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests on real desktops are `slow`: the default run leaves them (and the other tests
    marked slow: kills, concurrency, the whole demo) to `pytest -m ""`, which CI runs."""
    for item in items:
        if DESKTOP_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


_LAUNCHER = (
    "import os, resource, subprocess, sys; "
    "peak, limit, *cmd = sys.argv[1:]; "
    "limit = int(limit); "
    "limit and resource.setrlimit(resource.RLIMIT_AS, (limit, limit)); "
    "p = subprocess.Popen(cmd); "
    "_, status, usage = os.wait4(p.pid, 0); "
    "open(peak, 'w').write(str(usage.ru_maxrss)); "
    "sys.exit(os.waitstatus_to_exitcode(status))"
)
"""Runs a command as its child, under an address-space limit when one is given, and writes
the command's peak RSS to the file it is told. The limit is set here, not by a `preexec_fn`,
which would run Python between fork and exec in a copy of the test process, where the gRPC
that earlier Beam tests loaded now and then aborts the copy ("epoll_wait error: Bad file
descriptor", SIGABRT) before the command starts: 3 of 200 such children died so, and one
failed CI. And the peak is the launcher's child's: the kernel counts into a spawned process's
peak the pages of the process that spawned it (with vfork they are its own until exec), so a
command spawned by a test was charged the pytest worker's size (483-650 MB late in a full run,
for an ingest of 115 MB)."""


@pytest.fixture
def measured(tmp_path: Path) -> Callable[..., tuple[int, str, int]]:
    """`run(cmd, cwd=None, address_limit=0, timeout=600)`: the command's exit code, its output
    (stdout and stderr) and its own peak RSS in bytes (0 when it was killed), the command run
    under `_LAUNCHER` and killed, with the launcher, after `timeout` seconds."""

    def run(
        cmd: list[str], cwd: Path | None = None, address_limit: int = 0, timeout: float = 600
    ) -> tuple[int, str, int]:
        peak = tmp_path / "peak.txt"
        peak.unlink(missing_ok=True)
        launch = [sys.executable, "-c", _LAUNCHER, str(peak), str(address_limit), *cmd]
        with open(tmp_path / "out.txt", "w+") as out:
            proc = subprocess.Popen(
                launch, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
            timer = threading.Timer(timeout, os.killpg, (proc.pid, signal.SIGKILL))
            timer.start()
            try:
                proc.wait()
            finally:
                timer.cancel()
            out.seek(0)
            printed = out.read()
        kb = int(peak.read_text()) if peak.exists() else 0
        return proc.returncode, printed, kb * 1024

    return run


ROOT = Path(__file__).resolve().parents[1]
REFERENCE_DATA = ROOT.parent / "shared" / "reference-data"


@pytest.fixture(scope="session")
def reference_data() -> Path:
    """`../shared/reference-data`; tests that need it skip, loudly, on a checkout without it."""
    if not REFERENCE_DATA.is_dir():
        pytest.skip(
            f"reference data not found at {REFERENCE_DATA} (expected beside the repository)"
        )
    return REFERENCE_DATA


@pytest.fixture(scope="session")
def human_dirs(reference_data: Path) -> dict[str, Path]:
    """The two OSWorld-Human data versions, keyed by version name."""
    base = reference_data / "osworld-human"
    return {"2025-06": base / "2025-06", "verified": base / "verified"}


@pytest.fixture(scope="session")
def sec_eval_dir(reference_data: Path) -> Path:
    """Real Claude computer-use runs laid out as <scenario>/<timestamp-status>/."""
    return reference_data / "osworld-sec-eval" / "sec_eval_results"


@pytest.fixture(scope="session")
def uitars_run(human_dirs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A UI-TARS submission of 40 real tasks (verified data), named by instruction as UI-TARS
    names them: per task folder data.json (steps; the score in the last) and meta.json."""
    import json
    import os
    import random

    from deskscore.scorers.domains import OSWORLD_DOMAINS

    human_dir, rng = human_dirs["verified"], random.Random(4)
    root = tmp_path_factory.mktemp("uitars")
    instructions = []
    for domain in OSWORLD_DOMAINS:
        for name in sorted(os.listdir(human_dir / domain)):
            instructions.append(json.loads((human_dir / domain / name).read_text())["instruction"])
    for k, text in enumerate(rng.sample(instructions, 40)):
        d = root / f"task_{k:03d}"
        d.mkdir(parents=True)
        steps = [
            {"inner_step": [{"action": "click", "score": 0}]} for _ in range(rng.randint(1, 40))
        ]
        steps[-1]["inner_step"][0]["score"] = rng.choice((0, 1, 1.0, 0.0))
        (d / "data.json").write_text(json.dumps(steps))
        (d / "meta.json").write_text(json.dumps({"query": text}))
    return root


@pytest.fixture
def old_quarantine_file(tmp_path: Path) -> dict[str, str]:
    """A warehouse at tmp_path whose one quarantine file (run r1) was written before the
    `line_no` and `excerpt` columns existed; returns the row it holds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from deskscore.collectors.warehouse import Warehouse

    row = {
        "run_id": "r1",
        "benchmark": "osworld",
        "source": "s",
        "location": "f",
        "reason": "x",
        "message": "m",
    }
    target = Warehouse(tmp_path).partition_dir(
        "quarantine", {"benchmark": "osworld", "run_id": "r1"}
    )
    target.mkdir(parents=True)
    pq.write_table(pa.table({k: [v] for k, v in row.items()}), target / "data.parquet")
    return row


@pytest.fixture(scope="session")
def deskcraft_archive(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Two generated DeskCraft runs over a slice of the real tasks (interactive ones included),
    ingested and scored once for every test that needs them; `plans` is what was generated."""
    from deskscore.collectors.synthetic.deskcraft import task_slice, write_archive
    from deskscore.pipelines.jobs.ingest import run_ingest
    from deskscore.pipelines.jobs.score import run_score

    root = tmp_path_factory.mktemp("deskcraft")
    archive, warehouse = root / "archive", root / "warehouse"
    plans = write_archive(archive, task_slice())
    ingest = run_ingest(
        IngestOptions(str(warehouse), sources=(str(archive),), benchmark="deskcraft", workers=1)
    )
    score = run_score(ScoreOptions(str(warehouse), max_steps_scoring=15, workers=1))
    return {"archive": archive, "warehouse": warehouse, "plans": plans,
            "ingest": ingest, "score": score}  # fmt: skip


HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[31m\u202eevil\x9b0m"
"""Terminal escape sequences as an archive may carry them in names and text: an OSC that sets
the terminal's title (ESC ] 0;title BEL), CSI sequences (clear screen, red), a right-to-left
override, a one-character C1 CSI."""


@pytest.fixture(scope="session")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """An OSWorld run (three tasks) whose run folder, model name (args.json), task folders and
    first actions (done twice: a loop) carry `HOSTILE`, and one trajectory line that is not JSON (a quarantine
    message naming the file). Ingest it with `layout`."""
    import json

    from deskscore.collectors.synthetic import load_profiles, task_slice, write_run

    base = tmp_path_factory.mktemp("hostile")
    written = write_run(
        base / "results", load_profiles()[0], task_slice(per_domain=1)[:3], seed=1,
        screenshots="tiny",
    )  # fmt: skip
    root = base / f"run{HOSTILE}"
    written.rename(root)
    args = json.loads((root / "args.json").read_text())
    (root / "args.json").write_text(json.dumps({**args, "model": f"agent{HOSTILE}"}))
    task_ids = []
    for task in sorted(p for p in root.glob("*/*") if p.is_dir()):
        task = task.rename(task.with_name(task.name + HOSTILE))
        task_ids.append(task.name)
        traj = task / "traj.jsonl"
        rows = [json.loads(line) for line in traj.read_text().splitlines()]
        rows[0]["action"] = f"pyautogui.typewrite('{HOSTILE}')"
        # the same action and reasoning twice in a row: a loop
        rows[1].update(action=rows[0]["action"], response=rows[0]["response"])
        lines = [json.dumps(r) for r in rows]
        if len(task_ids) == 1:
            lines.append(f"not JSON {HOSTILE}")
        traj.write_text("\n".join(lines) + "\n")
    return {"root": root, "task_ids": task_ids, "layout": "{domain}/{task_id}"}


@pytest.fixture(scope="session")
def shown_escaped():
    """A check that a command's output for people holds no control character a terminal
    would obey (C0 but newline and tab, DEL, C1, bidi controls) and shows `HOSTILE`
    escaped instead."""
    import re

    raw = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

    def check(text: str, *, names_hostile: bool = True) -> None:
        found = raw.search(text)
        assert found is None, (
            f"raw {found.group()!r} in output: {text[max(0, found.start() - 80) : found.end() + 80]!r}"
        )
        if names_hostile:
            assert "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31m\\u202eevil\\x9b0m" in text, text

    return check


@pytest.fixture
def fresh_python():
    """Run Python code in a fresh interpreter (for what a process imports or keeps); returns
    its stdout, failing the test with its stderr when it exits non-zero."""
    import subprocess
    import sys

    def run(code: str) -> str:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    return run

"""The format registry: lookup, detection order, and a format added with one registration."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from deskscore.collectors import formats
from deskscore.collectors.formats import Format, FormatError, Found, each_folder
from deskscore.collectors.human import load_bundled
from deskscore.collectors.layout import TaskFolder, discover
from deskscore.collectors.source import open_source
from deskscore.collectors.synthetic.deskcraft import task_slice, write_archive
from deskscore.pipelines.options import IngestOptions, ScoreOptions

PLUGIN_DIR = Path(__file__).parent / "plugin"
UUID = "0a1b2c3d-1111-4222-8333-444455556666"
STEM = "L1_calc_sum_column"

# Member names that make one task folder of each built-in format.
MEMBERS = {
    "osworld": [f"run/chrome/{UUID}/traj.jsonl", f"run/chrome/{UUID}/result.txt"],
    "deskcraft": [f"run/calc/{STEM}/traj.jsonl", f"run/calc/{STEM}/interaction_log.json"],
    "uitars": ["run/open the file/data.json", "run/open the file/meta.json"],
}


def _listing(files: list[str]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for f in files:
        folder, _, name = f.rpartition("/")
        out.setdefault(folder, []).append(name)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def _plugin() -> ModuleType:
    """The made-up format's module, imported under the name its entry point gives."""
    name = "steps_json_format"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, PLUGIN_DIR / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


# ---- the registry ---------------------------------------------------------------------------


def test_built_in_formats_come_first_in_detection_order_and_are_found_by_name() -> None:
    built_in = [f.name for f in formats.BUILT_IN]
    assert list(formats.names()[: len(built_in)]) == built_in
    for fmt in formats.BUILT_IN:
        assert formats.get(fmt.name) is fmt


def test_an_unknown_name_is_an_error_that_names_the_known_formats() -> None:
    with pytest.raises(FormatError, match="unknown trajectory format 'nope'") as err:
        formats.get("nope")
    known = str(err.value).split("known: ", 1)[1].split(")", 1)[0]
    assert known.split(", ") == list(formats.names())


def test_how_each_built_in_format_is_scored_and_checked() -> None:
    assert formats.UITARS.human_key == formats.BY_INSTRUCTION
    assert {f.human_key for f in (formats.OSWORLD, formats.DESKCRAFT, formats.LIVE)} == {
        formats.BY_TASK_ID
    }
    assert formats.DESKCRAFT.facts_family == formats.FAMILY_DESKCRAFT
    assert formats.OSWORLD.facts_family == formats.LIVE.facts_family == formats.FAMILY_OSWORLD
    assert [f.name for f in formats.BUILT_IN if f.recount_lines] == [
        "osworld",
        "deskcraft",
        "inspect",
    ]
    assert formats.INSPECT.human_key == formats.BY_TASK_ID
    assert formats.INSPECT.facts_family == formats.FAMILY_OSWORLD
    assert [f.name for f in formats.BUILT_IN if f.recount] == ["step-traces"]


def test_deskcraft_benchmark_runs_take_deskcraft_facts_whatever_their_format() -> None:
    assert formats.task_family("osworld", "osworld") == formats.FAMILY_OSWORLD
    assert formats.task_family("osworld", "deskcraft") == formats.FAMILY_DESKCRAFT
    assert formats.task_family("deskcraft", "osworld") == formats.FAMILY_DESKCRAFT
    with pytest.raises(FormatError):
        formats.task_family("osworld", "nope")


def test_registering_a_taken_name_or_an_unknown_anchor_fails_and_built_ins_stay() -> None:
    with pytest.raises(FormatError, match="already registered"):
        formats.register(Format(name="osworld", read_episode=formats.OSWORLD.read_episode))
    with pytest.raises(FormatError, match="'nope', which is not registered"):
        formats.register(Format(name="x", read_episode=formats.OSWORLD.read_episode, before="nope"))
    with pytest.raises(FormatError, match="built in"):
        formats.unregister("osworld")
    assert "x" not in formats.names()
    assert formats.register(formats.OSWORLD) is formats.OSWORLD  # the same object: no-op
    assert formats.names().count("osworld") == 1


# ---- detection ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MEMBERS))
def test_each_built_in_format_finds_its_task_folders_from_member_names(name: str) -> None:
    listing = _listing(MEMBERS[name])
    for fmt in formats.BUILT_IN:
        found = list(fmt.find(listing))
        assert bool(found) == (fmt.name == name), fmt.name
    [run] = discover(MEMBERS[name])
    assert run.format == name and run.run_path == "run"
    assert run.tasks[0].files == tuple(sorted(m.rpartition("/")[2] for m in MEMBERS[name]))


def test_live_runs_are_never_found_in_an_archive() -> None:
    every = [m for members in MEMBERS.values() for m in members]
    assert list(formats.LIVE.find(_listing(every))) == []
    assert {r.format for r in discover(every)} == set(MEMBERS)


@pytest.mark.parametrize(
    ("folder", "files", "expected"),
    [
        (f"calc/{STEM}", ("traj.jsonl",), "deskcraft"),
        (f"calc/{STEM}", ("data.json", "meta.json"), "uitars"),  # a submission, whatever its name
        ("calc/some task", ("data.json", "meta.json"), "uitars"),
        ("calc/some task", ("data.json", "meta.json", "traj.jsonl"), "osworld"),
        ("chrome/20250226@161539-failed", ("runtime.log",), "osworld"),
        ("chrome/20250226@161539-failed", ("messages.json", "traj.jsonl"), "osworld"),
        ("run_1/some-task", ("step_1_trace.json", "step_1.png"), "step-traces"),
        ("run_1/some-task", ("step_1_trace.json", "traj.jsonl"), "osworld"),
    ],
)
def test_under_a_layout_each_folder_is_the_first_claiming_format_else_osworld(
    folder: str, files: tuple[str, ...], expected: str
) -> None:
    [run] = discover([f"{folder}/{f}" for f in files], "{domain}/{task_id}")
    assert run.format == expected


def test_messages_json_beside_a_trajectory_is_part_of_an_osworld_folder() -> None:
    files = [*MEMBERS["osworld"], f"run/chrome/{UUID}/messages.json"]
    [run] = discover(files)
    assert run.format == "osworld" and "messages.json" in run.tasks[0].files


def test_step_traces_are_found_at_the_run_level_beside_results_csv() -> None:
    traces = [f"results/run_1/{UUID}/step_01_trace.json", f"results/run_1/{UUID}/step_01.png"]
    assert discover(traces) == []  # no results.csv: nothing says it is a run of this form
    [run] = discover([*traces, "results/run_1/results.csv"])
    assert (run.format, run.run_path) == ("step-traces", "results/run_1")
    assert [t.task_id for t in run.tasks] == [UUID]
    # a uuid folder with a result.txt is OSWorld's too: the step traces are tried first
    [run] = discover([*traces, f"results/run_1/{UUID}/result.txt", "results/run_1/results.csv"])
    assert run.format == "step-traces"
    listing = _listing([*traces, "results/run_1/results.csv"])
    assert [f.name for f in formats.BUILT_IN if list(f.find(listing))] == ["step-traces"]


def test_a_folder_two_formats_find_is_the_first_registered_ones() -> None:
    def uuid_folders(path: str, names: tuple[str, ...]) -> Found | None:
        parent, _, name = path.rpartition("/")
        if "traj.jsonl" in names:
            return Found(parent.rpartition("/")[0], TaskFolder(path, "d", name, names))
        return None

    files = MEMBERS["osworld"]
    late = Format(
        name="late", read_episode=formats.OSWORLD.read_episode, find=each_folder(uuid_folders)
    )
    early = Format(
        name="early",
        read_episode=formats.OSWORLD.read_episode,
        find=each_folder(uuid_folders),
        before="osworld",
    )
    try:
        formats.register(late)
        assert [r.format for r in discover(files)] == ["osworld"]
        formats.register(early)
        assert formats.names().index("early") < formats.names().index("osworld")
        assert [r.format for r in discover(files)] == ["early"]
    finally:
        formats.unregister("late")
        formats.unregister("early")
    assert [r.format for r in discover(files)] == ["osworld"]
    assert formats.process_local() == ()


def test_the_light_read_of_a_format_without_one_is_its_full_read_without_steps(
    tmp_path: Path,
) -> None:
    write_archive(tmp_path, task_slice()[:2])
    source = open_source(str(tmp_path))
    [run, *_] = [r for r in discover(source.files()) if r.format == "deskcraft"]
    task = run.tasks[0]
    full = formats.DESKCRAFT.read_episode(source, run, task, run_id="r", benchmark="b")
    light = formats.DESKCRAFT.light(source, run, task, run_id="r", benchmark="b")
    assert full.read.steps and light.steps == []
    assert light.episode == full.read.episode and light.quarantine == full.read.quarantine


# ---- a made-up format, end to end -----------------------------------------------------------


def _write_made_up_archive(root: Path, n_tasks: int = 3) -> list[tuple[str, str, int, float]]:
    """A run of the plugin's format over real OSWorld tasks: (domain, task_id, steps, score)."""
    tasks = load_bundled("verified")[:n_tasks]
    written = []
    for i, t in enumerate(tasks):
        folder = root / "made-up-agent" / t["domain"] / t["task_id"]
        folder.mkdir(parents=True)
        actions = [f"pyautogui.click({10 * k}, {20 * k})" for k in range(1, i + 3)] + ["DONE"]
        (folder / "steps.json").write_text(json.dumps(actions))
        score = 1.0 if i % 2 == 0 else 0.0
        (folder / "score.txt").write_text(f"{score}\n")
        written.append((t["domain"], t["task_id"], len(actions), score))
    return written


@pytest.fixture
def made_up_format() -> Iterator[Format]:
    fmt = formats.register(_plugin().FORMAT)
    yield fmt
    formats.unregister(fmt.name)


def _ingest_score_and_look(archive: Path, wh: Path, workers: int) -> dict:
    from deskscore.pipelines.cli.report import build_report
    from deskscore.pipelines.jobs.ingest import run_ingest
    from deskscore.pipelines.jobs.score import run_score
    from deskscore.sql import connect

    run_ingest(IngestOptions(str(wh), sources=(str(archive),), workers=workers))
    run_score(ScoreOptions(str(wh), max_steps_scoring=15, workers=workers))
    con = connect(wh)
    report = wh.parent / "report.html"
    build_report(str(wh), str(report))
    return {
        "runs": con.sql("SELECT format, agent, n_task_folders FROM runs").fetchall(),
        "episodes": con.sql(
            "SELECT domain, task_id, n_steps, score FROM episodes ORDER BY domain, task_id"
        ).fetchall(),
        "steps": con.sql("SELECT count(*) FROM steps").fetchall()[0][0],
        "leaderboard": con.sql(
            "SELECT agent, n_tasks_run, success_rate_run_pct FROM leaderboard"
        ).fetchall(),
        "report": report.read_text(),
    }


def _assert_seen(seen: dict, written: list[tuple[str, str, int, float]], name: str) -> None:
    assert seen["runs"] == [(name, "made-up-agent", len(written))]
    assert seen["episodes"] == sorted(written)
    assert seen["steps"] == sum(w[2] for w in written)
    successes = sum(w[3] for w in written)
    assert {row[:2] for row in seen["leaderboard"]} == {("made-up-agent", len(written))}
    rates = [row[2] for row in seen["leaderboard"]]
    assert rates == pytest.approx([100 * successes / len(written)] * len(rates))
    assert "made-up-agent" in seen["report"]


def test_a_format_registered_in_process_is_ingested_scored_and_reported(
    made_up_format: Format, tmp_path: Path
) -> None:
    written = _write_made_up_archive(tmp_path / "archive")
    assert [r.format for r in discover(open_source(str(tmp_path / "archive")).files())] == [
        made_up_format.name
    ]
    assert formats.process_local() == (made_up_format.name,)
    # two workers asked for: a format only this process knows keeps the jobs in-process
    seen = _ingest_score_and_look(tmp_path / "archive", tmp_path / "wh", workers=2)
    _assert_seen(seen, written, made_up_format.name)


def _declare(site: Path, entry_points: str) -> None:
    """An installed distribution in `site` that declares `entry_points` (lines of its group)."""
    dist = site / "steps_json_format-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: steps-json-format\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{formats.ENTRY_POINT_GROUP}]\n{entry_points}\n")


def _fresh_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry a new process starts with: built-ins, then what entry points declare."""
    monkeypatch.setattr(formats, "_registry", list(formats.BUILT_IN))
    monkeypatch.setattr(formats, "_entry_points_loaded", False)


def test_a_broken_entry_point_is_an_error_naming_it_at_every_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _declare(tmp_path, "gone = no_such_module_here:FORMAT")
    monkeypatch.syspath_prepend(str(tmp_path))
    _fresh_registry(monkeypatch)
    for _ in range(2):
        with pytest.raises(FormatError, match="entry point gone = no_such_module_here:FORMAT"):
            formats.registered()
    assert formats.get("osworld") is formats.OSWORLD  # built-ins need no entry point


def test_a_format_declared_as_an_entry_point_reaches_worker_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    name = _plugin().NAME
    _declare(site, f"{name} = steps_json_format:FORMAT")
    path = [str(site), str(PLUGIN_DIR)]
    given = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([*path, *([given] if given else [])]))
    for p in reversed(path):
        monkeypatch.syspath_prepend(p)
    _fresh_registry(monkeypatch)
    assert formats.names()[-1] == name

    written = _write_made_up_archive(tmp_path / "archive")
    seen = _ingest_score_and_look(tmp_path / "archive", tmp_path / "wh", workers=2)
    _assert_seen(seen, written, name)

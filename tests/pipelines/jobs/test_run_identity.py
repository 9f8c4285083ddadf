"""Every run told apart: dated result folders of one model, runs named on the command line,
one folder ingested through two sources; labels never move a run's id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deskscore.collectors.ids import run_id
from deskscore.collectors.synthetic import load_profiles, task_slice, write_run
from deskscore.pipelines.cli.main import main
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.options import IngestOptions
from deskscore.sql import connect

DATED = ("20250130-1", "20250203-1", "20250204-1")
"""Result folders of one model on three days, as karakuri-ai's OSWorld-JP traces hold them."""


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One agent's run written under three dated result folders."""
    root = tmp_path_factory.mktemp("identity") / "traces"
    profile = load_profiles()[0]
    tasks = task_slice(per_domain=1)
    runs = [write_run(root / d, profile, tasks, seed=i) for i, d in enumerate(DATED)]
    return {"root": root, "runs": runs, "model": profile.model}


def _ingest(wh: Path, *sources: Path, **options: str) -> None:
    run_ingest(
        IngestOptions(str(wh), sources=tuple(str(s) for s in sources), engine="direct", **options)
    )


def _labels(wh: Path) -> dict[str, str]:
    """run path (source/run_path) -> label."""
    rows = connect(wh).sql(
        "SELECT r.source || '/' || r.run_path, l.label FROM runs r JOIN run_labels l USING (run_id)"
    )
    return dict(rows.fetchall())


def test_three_dated_runs_of_one_model_get_three_labels_from_their_date_folders(
    traces: dict, tmp_path: Path
) -> None:
    _ingest(tmp_path / "wh", traces["root"])
    labels = _labels(tmp_path / "wh")
    model = traces["model"]
    assert sorted(labels.values()) == [f"{model} ({d})" for d in DATED]
    for path, label in labels.items():
        assert label == f"{model} ({Path(path).relative_to(traces['root']).parts[0]})"


def test_a_run_alone_keeps_its_bare_name_and_a_namesake_added_later_qualifies_it(
    traces: dict, tmp_path: Path
) -> None:
    wh = tmp_path / "wh"
    first = traces["root"] / DATED[0]
    _ingest(wh, first)
    [(rid, label)] = connect(wh).sql("SELECT run_id, label FROM run_labels").fetchall()
    assert label == traces["model"]
    _ingest(wh, traces["root"] / DATED[1])
    labels = dict(connect(wh).sql("SELECT run_id, label FROM run_labels").fetchall())
    assert labels[rid] == f"{traces['model']} ({DATED[0]})"  # the label moved ...
    run_path = str(traces["runs"][0].relative_to(first))
    assert rid == run_id(str(first), run_path)  # ... the id did not


def test_one_folder_ingested_through_two_sources_is_told_apart_by_run_id(
    traces: dict, tmp_path: Path
) -> None:
    wh = tmp_path / "wh"
    _ingest(wh, traces["root"], traces["root"] / DATED[0])
    rows = connect(wh).sql("SELECT run_id, label FROM run_labels").fetchall()
    assert len(rows) == 4 and len({label for _, label in rows}) == 4
    twins = [(rid, label) for rid, label in rows if f"({DATED[0]})" in label]
    assert len(twins) == 2
    assert all(label.endswith(f"[{rid[:8]}]") for rid, label in twins)


def test_a_run_name_given_to_several_runs_is_qualified_like_an_agent(
    traces: dict, tmp_path: Path
) -> None:
    wh = tmp_path / "wh"
    _ingest(wh, traces["root"], run_name="nightly", agent="atlas")
    assert sorted(_labels(wh).values()) == [f"nightly ({d})" for d in DATED]
    rows = connect(wh).sql("SELECT DISTINCT agent, run_name FROM runs").fetchall()
    assert rows == [("atlas", "nightly")]


def test_run_name_and_agent_are_recorded_and_shown_on_the_leaderboard(
    traces: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wh = str(tmp_path / "wh")
    run = str(traces["root"] / DATED[1])
    common = ["--warehouse", wh, "--engine", "direct"]
    assert main(["ingest", run, *common, "--run-name", "feb-3", "--agent", "atlas-swift"]) == 0
    assert main(["score", *common, "--no-costs", "--max-steps-scoring", "50"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--warehouse", wh, "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert (row["label"], row["agent"]) == ("feb-3", "atlas-swift")
    assert main(["leaderboard", "--warehouse", wh]) == 0
    text = capsys.readouterr().out
    assert (
        text.splitlines()[0]
        == "Leaderboard (OSWorld-Human verified, step budget S = max(50, longest run), deskscore rules)"
    )
    header, _, line = text.splitlines()[1:4]
    assert header.split()[:2] == ["rank", "run"] and header.split()[-1] == "agent"
    assert line.split()[1] == "feb-3" and line.split()[-1] == "atlas-swift"


def test_the_leaderboard_shows_each_dated_run_once(
    traces: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wh = str(tmp_path / "wh")
    common = ["--warehouse", wh, "--engine", "direct"]
    assert main(["ingest", str(traces["root"]), *common]) == 0
    for compat in ("deskscore", "osworld-human"):
        assert main(["score", *common, "--no-costs", "--compat", compat]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--warehouse", wh, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted(r["label"] for r in rows) == [f"{traces['model']} ({d})" for d in DATED]
    assert {r["compat"] for r in rows} == {"deskscore"}  # one configuration, not both

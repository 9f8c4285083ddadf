"""What `deskscore score` says of runs none of whose tasks matched the human data."""

from __future__ import annotations

import pytest

from deskscore.pipelines.cli.score import unmatched_runs
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.jobs.score import run_score
from deskscore.pipelines.options import IngestOptions, ScoreOptions

_NOT_A_HUMAN_TASK = "00000000-0000-4000-8000-000000000000"


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory, small_archive) -> dict[str, str]:
    """The small archive's folder of two runs and one run of a task OSWorld-Human does not have,
    ingested and scored."""
    root = tmp_path_factory.mktemp("unmatched")
    task = root / "odd" / "chrome" / _NOT_A_HUMAN_TASK
    task.mkdir(parents=True)
    (task / "traj.jsonl").write_bytes(b'{"step_num": 1, "action": "DONE"}\n')
    (task / "result.txt").write_text("1\n")
    wh = str(root / "wh")
    sources = (str(small_archive["results"]), str(root / "odd"))
    run_ingest(IngestOptions(wh, sources=sources, engine="direct"))
    run_score(ScoreOptions(wh, max_steps_scoring=15, engine="direct"))
    return {"wh": wh, "odd": str(root / "odd")}


def _others(scored: dict[str, str]) -> tuple[str, ...]:
    """The run ids of the small archive's runs (all of whose tasks are OSWorld-Human's)."""
    from deskscore.collectors.warehouse import Warehouse

    runs = Warehouse(scored["wh"]).read("runs", columns=["source", "run_id"]).to_pylist()
    return tuple(r["run_id"] for r in runs if r["source"] != scored["odd"])


def test_the_run_that_matched_no_human_task_is_named_and_no_other(scored) -> None:
    [label] = unmatched_runs(ScoreOptions(scored["wh"], max_steps_scoring=15))
    assert label == "odd"


def test_runs_asked_for_that_all_matched_name_none(scored) -> None:
    others = _others(scored)
    assert len(others) == 2
    assert unmatched_runs(ScoreOptions(scored["wh"], max_steps_scoring=15, runs=others)) == []


def test_a_configuration_never_scored_names_none(scored) -> None:
    assert unmatched_runs(ScoreOptions(scored["wh"], max_steps_scoring=50)) == []


def test_when_every_run_matched_no_query_engine_is_started(scored, fresh_python) -> None:
    """The usual case is told by run_scores alone: the command does not import DuckDB."""
    others = _others(scored)
    code = (
        "import sys\n"
        "from deskscore.pipelines.cli.score import unmatched_runs\n"
        "from deskscore.pipelines.options import ScoreOptions\n"
        f"print(unmatched_runs(ScoreOptions({scored['wh']!r}, max_steps_scoring=15, "
        f"runs={others!r})), 'duckdb' in sys.modules)\n"
    )
    assert fresh_python(code).split() == ["[]", "False"]


def test_a_run_without_a_usable_result_is_named_for_that_not_as_unmatched(tmp_path) -> None:
    """Every task of the run is OSWorld-Human's, but no result.txt was archived: the summary
    says the results are missing, not that the task ids matched nothing."""
    from deskscore.pipelines.cli.score import runs_without_results, score, summary_lines

    task = tmp_path / "src" / "noresult" / "chrome" / "030eeff7-b492-4218-b312-701ec99ee0cc"
    task.mkdir(parents=True)
    (task / "traj.jsonl").write_bytes(b'{"step_num": 1, "action": "DONE"}\n')
    wh = str(tmp_path / "wh")
    run_ingest(IngestOptions(wh, sources=(str(tmp_path / "src" / "noresult"),), engine="direct"))
    options = ScoreOptions(wh, max_steps_scoring=15, engine="direct")
    summary = score(options)
    assert summary["unmatched_runs"] == [] and summary["runs_without_results"] == ["noresult"]
    assert runs_without_results(options) == ["noresult"]
    lines = summary_lines(summary, "deskscore", "verified")
    assert not any("matched no task" in line for line in lines)
    [line] = [line for line in lines if "no task with a usable result" in line]
    assert line.startswith("1 run(s) have no task with a usable result (noresult): no result.txt")

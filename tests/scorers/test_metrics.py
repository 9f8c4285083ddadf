"""The metric registry, the warehouse schema and the SQL views held to each other."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from importlib import resources

import pytest

from deskscore.schemas import TABLES
from deskscore.schemas.tables import METRIC_COLUMNS
from deskscore.scorers import metrics
from deskscore.scorers.metrics import EPISODES, Aggregate, Metric, PerEpisode, mean
from deskscore.sql import DUCKDB_TYPES, connect

SCORE_TABLES = ("episode_scores", "run_scores")


def _declared(table: str) -> list[str]:
    """The columns schemas/tables.py writes out for a score table (the rest are metrics)."""
    from deskscore.schemas.tables import _DECLARED

    return [f.name for f in _DECLARED[table].fields if f != METRIC_COLUMNS]


def test_every_metric_is_a_field_of_its_table_with_its_doc_and_type() -> None:
    for m in metrics.metrics():
        if m.table is not None:
            assert metrics.field(m) in TABLES[m.table].fields, m.name
            continue
        for table, part in (("episode_scores", m.episode), ("run_scores", m.run)):
            fields = {f.name: f for f in TABLES[table].fields}
            if part is None:
                assert m.name not in fields or m.name in _declared(table), (table, m.name)
                continue
            assert (fields[m.name].type, fields[m.name].doc) == (part.type, part.doc), m.name
            assert not fields[m.name].required


def test_the_score_tables_hold_exactly_their_declared_columns_and_the_registrys() -> None:
    for table in SCORE_TABLES:
        metric_columns = [f.name for f in metrics.score_fields(table)]
        columns = TABLES[table].columns
        assert metric_columns and set(columns) == set(_declared(table)) | set(metric_columns)
        assert not set(_declared(table)) & set(metric_columns), table
        at = columns.index(metric_columns[0])
        assert columns[at : at + len(metric_columns)] == metric_columns, table


def test_a_metric_is_stored_after_the_run_figures_it_needs() -> None:
    order = [m.name for m in metrics.computed()]
    needing = [m for m in metrics.computed() if m.needs]
    assert needing
    for m in needing:
        assert all(order.index(n) < order.index(m.name) for n in m.needs), m.name
        run_columns = TABLES["run_scores"].columns
        assert all(run_columns.index(n) < run_columns.index(m.name) for n in m.needs)


def test_every_metric_is_a_staging_column_of_its_type(tmp_path) -> None:
    con = connect(tmp_path)
    views = {
        t: dict(con.sql(f"SELECT column_name, column_type FROM (DESCRIBE {t})").fetchall())
        for t in {*SCORE_TABLES, *(m.table for m in metrics.metrics() if m.table)}
    }
    for m in metrics.metrics():
        for table, part in (("episode_scores", m.episode), ("run_scores", m.run)):
            if m.table is None and part is not None:
                assert views[table][m.name] == DUCKDB_TYPES[part.type], (table, m.name)
        if m.table is not None:
            assert views[m.table][m.name] == DUCKDB_TYPES[metrics.field(m).type], m.name


def test_the_leaderboard_view_has_every_board_figure_in_order(tmp_path) -> None:
    columns = connect(tmp_path).sql("SELECT * FROM leaderboard").columns
    board = [m.column for m in metrics.board()]
    at = columns.index(board[0])
    assert columns[at : at + len(board)] == board
    assert {m.name for m in metrics.board() if m.table is None} == {
        f.name for f in metrics.score_fields("run_scores")
    }
    for m in metrics.metrics():
        if m.header is not None:
            assert m.column in columns, m.name


def test_the_sql_files_write_no_metric_column_out() -> None:
    """The score tables' staging views and the leaderboard take every metric column from the
    registry, so a metric is never in the SQL without being in the registry (or missing)."""
    names = {m.name for m in metrics.metrics()}
    for folder, name in (
        ("staging", "episode_scores"),
        ("staging", "run_scores"),
        ("marts", "10_leaderboard"),
    ):
        text = resources.files("deskscore.sql").joinpath(folder, f"{name}.sql").read_text()
        code = "\n".join(line.split("--", 1)[0] for line in text.splitlines())
        assert not names & set(re.findall(r"\w+", code)), name


def test_percent_figures_are_fractions_shown_as_percent() -> None:
    for m in metrics.board():
        if m.percent:
            assert m.unit == "fraction" and m.column.endswith("_pct"), m.name
            assert m.axis_label.endswith("(%)")


def test_better_follows_the_direction() -> None:
    assert metrics.better("wes_plus_single", 0.5, 0.4)
    assert metrics.better("cost_per_task_usd", 0.4, 0.5)
    with pytest.raises(KeyError, match="unknown metric 'nope'; known: success_rate_run"):
        metrics.metric("nope")


def _half(name: str = "half_reward", **changes) -> Metric:
    declared = Metric(
        name,
        version=1,
        direction="higher",
        unit="fraction",
        label="half reward",
        episode=PerEpisode(lambda e, run: None if e.reward is None else e.reward / 2, "r / 2."),
        run=Aggregate(EPISODES, mean, "Mean r / 2 over the run's episodes with a result."),
    )
    return replace(declared, **changes)


@pytest.mark.parametrize(
    "bad, why",
    [
        (_half("wes_minus"), "already registered"),
        (_half("reward"), "score tables already have a column"),
        (_half("Half"), "lower-case identifier"),
        (_half(direction="up"), "direction"),
        (_half(version=0), "version"),
        (_half(needs=("nope",)), "needs 'nope'"),
        (_half(needs=("step_ratio_single",)), "needs 'step_ratio_single'"),
        (_half(table="run_costs"), "computed by another scorer"),
        (_half(board_column="wes_single_pct", percent=True), "already has a column"),
        (
            Metric("n_steps", version=1, direction="lower", unit="steps", label="x", table="runs"),
            "table 'runs' has no column",
        ),
        (Metric("x", version=1, direction="lower", unit="steps", label="x"), "give a per-episode"),
    ],
)
def test_a_wrong_declaration_is_refused_and_nothing_is_added(bad, why) -> None:
    before = metrics.metrics(), TABLES["run_scores"]
    with pytest.raises(ValueError, match=why):
        metrics.register(bad)
    assert (metrics.metrics(), TABLES["run_scores"]) == before


def test_metrics_that_need_each_other_are_refused() -> None:
    a, b = _half("needs_b", needs=("needs_a",)), _half("needs_a", needs=("needs_b",))
    with pytest.raises(ValueError, match="need each other"):
        metrics.register(a, b)
    assert "needs_a" not in {m.name for m in metrics.metrics()}


def test_registering_and_removing_a_metric_changes_the_tables_and_the_version() -> None:
    before = metrics.version_bumps(), TABLES["episode_scores"], TABLES["run_scores"]
    metrics.register(_half(version=3))
    try:
        assert metrics.version_bumps() == before[0] + 2
        assert "half_reward" in TABLES["episode_scores"].columns
        assert TABLES["run_scores"].columns[-1] == "half_reward"
        with pytest.raises(ValueError, match="is needed by wes_single"):
            metrics.unregister("mean_t_fail")
    finally:
        metrics.unregister("half_reward")
    assert (metrics.version_bumps(), TABLES["episode_scores"], TABLES["run_scores"]) == before


def test_the_score_tables_cannot_be_used_before_the_registry_fills_them() -> None:
    code = (
        "from deskscore.schemas import conform_rows\n"
        "try:\n    conform_rows('run_scores', [])\n"
        "except RuntimeError as e:\n    print(e)\n"
        "import deskscore.scorers.metrics\n"
        "print(conform_rows('run_scores', []).num_columns)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, second = out.stdout.splitlines()
    assert "import deskscore.scorers.metrics" in first
    assert int(second) == len(TABLES["run_scores"].columns)

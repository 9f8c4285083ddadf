"""Trials end to end: generated trial trees ingested and scored; trial_scores against the
generator's own outcomes counted over every k-subset of trials; the trials mart and
`leaderboard --trials`; `check`; groups named with --trial-of."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from deskscore.collectors.synthetic import load_profiles, task_slice, write_run
from deskscore.collectors.synthetic.trials import write_trials
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.check import check_warehouse
from deskscore.pipelines.cli.main import main
from deskscore.sql import connect

N_TRIALS = 3
SEED = 11


@pytest.fixture(scope="module")
def trial_trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    profile = load_profiles()[1]
    tasks = task_slice(per_domain=1)
    below = tmp_path_factory.mktemp("below")
    above = tmp_path_factory.mktemp("above")
    _, plans = write_trials(below, profile, tasks, trials=N_TRIALS, seed=SEED, where="task")
    _, plans_above = write_trials(above, profile, tasks, trials=N_TRIALS, seed=SEED, where="run")
    assert plans == plans_above
    return {"below": below, "above": above, "plans": plans}


@pytest.fixture(scope="module")
def scored(trial_trees: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    wh = tmp_path_factory.mktemp("trials") / "wh"
    sources = [str(trial_trees["below"]), str(trial_trees["above"])]
    assert main(["ingest", *sources, "--warehouse", str(wh), "--engine", "direct"]) == 0
    assert main(["score", "--warehouse", str(wh), "--no-costs", "--engine", "direct"]) == 0
    return wh


def _expected(plans: list[list]) -> dict[int, tuple[int, float | None, float | None]]:
    """k -> (tasks with n >= k, mean pass@k, mean pass^k), counted over every k-subset of the
    trials that ran each task (a result.txt scored; r == 1 is a success)."""
    outcomes: dict[tuple[str, str], list[bool]] = {}
    for trial in plans:
        for p in trial:
            if p.outcome != "absent" and p.score is not None:
                outcomes.setdefault((p.domain, p.task_id), []).append(p.score == 1.0)
    out = {}
    for k in range(1, len(plans) + 1):
        some, every = [], []
        for trials in outcomes.values():
            subsets = list(itertools.combinations(trials, k))
            if subsets:
                some.append(sum(any(s) for s in subsets) / len(subsets))
                every.append(sum(all(s) for s in subsets) / len(subsets))
        mean = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731
        out[k] = (len(some), mean(some), mean(every))
    return out


def test_each_trial_is_a_run_of_its_group(scored: Path, trial_trees: dict) -> None:
    con = connect(scored)
    runs = con.sql(
        "SELECT source, trial, run_group, run_id, n_task_folders FROM runs ORDER BY source, trial"
    ).fetchall()
    assert [r[1] for r in runs] == ["0", "1", "2"] * 2
    groups: dict[str, set[str]] = {}
    for source, _, group, _, _ in runs:
        groups.setdefault(source, set()).add(group)
    assert sorted(len(g) for g in groups.values()) == [1, 1]  # one group per tree
    assert len(set.union(*groups.values())) == 2
    assert len({r[3] for r in runs}) == 6 and not {r[2] for r in runs} & {r[3] for r in runs}
    written = [sum(p.outcome != "absent" for p in trial) for trial in trial_trees["plans"]]
    assert [r[4] for r in runs] == written * 2


def test_trial_scores_are_the_shares_of_k_subsets_of_the_generated_outcomes(
    scored: Path, trial_trees: dict
) -> None:
    expected = _expected(trial_trees["plans"])
    rows = (
        connect(scored)
        .sql(
            "SELECT run_group, k, n_trials, n_tasks_k, pass_at_k, pass_hat_k FROM trial_scores "
            "WHERE human_version = 'verified' AND max_steps_scoring = 15 AND compat = 'deskscore' "
            "ORDER BY run_group, k"
        )
        .fetchall()
    )
    assert len(rows) == 2 * N_TRIALS  # both layouts, k = 1..3 each
    for _, k, n_trials, n_tasks, at, hat in rows:
        n, want_at, want_hat = expected[k]
        assert (n_trials, n_tasks) == (N_TRIALS, n)
        assert math.isclose(at, want_at, rel_tol=1e-12)
        assert math.isclose(hat, want_hat, rel_tol=1e-12, abs_tol=1e-15)


def test_trial_variance_splits_the_standard_error_of_the_generated_outcomes(
    scored: Path, trial_trees: dict
) -> None:
    import numpy as np

    outcomes: dict[tuple[str, str], list[float]] = {}
    for trial in trial_trees["plans"]:
        for p in trial:
            if p.outcome != "absent" and p.score is not None:
                outcomes.setdefault((p.domain, p.task_id), []).append(float(p.score == 1.0))
    kept = [np.array(v) for v in outcomes.values() if len(v) >= 2]
    means = np.array([v.mean() for v in kept])
    within = np.mean([v.var(ddof=1) for v in kept])
    k = np.mean([v.size for v in kept])
    rows = (
        connect(scored)
        .sql(
            "SELECT n_tasks, mean_success, se, se_within, se_between FROM trial_variance "
            "WHERE max_steps_scoring = 15 AND compat = 'deskscore'"
        )
        .fetchall()
    )
    assert len(rows) == 2  # both layouts
    for n, mean, se, se_within, se_between in rows:
        assert n == len(kept)
        assert math.isclose(mean, means.mean(), rel_tol=1e-12)
        assert math.isclose(se, math.sqrt(means.var(ddof=1) / n), rel_tol=1e-9)
        assert math.isclose(se_within, math.sqrt(within / (k * n)), rel_tol=1e-9)
        between = max(means.var(ddof=1) - within / k, 0.0)
        assert math.isclose(se_between, math.sqrt(between / n), rel_tol=1e-9, abs_tol=1e-15)


def test_each_trial_keeps_its_own_row_and_pass_at_1_is_the_mean_per_task_rate(
    scored: Path,
) -> None:
    con = connect(scored)
    per_run = con.sql(
        "SELECT count(*) FROM leaderboard WHERE human_version = 'verified' AND compat = 'deskscore'"
    ).fetchall()
    assert per_run == [(2 * N_TRIALS,)]  # OSWorld-Human's figures per trial: the per-run rows
    pairs = con.sql(
        """
        WITH per_task AS (
            SELECT t.run_group, t.pass_at_1, e.domain, e.task_id, avg(e.success::INT) AS rate
            FROM trials t, unnest(t.run_ids) AS u(run_id)
            JOIN episode_scores e ON e.run_id = u.run_id AND e.human_version = t.human_version
                 AND e.max_steps_scoring = t.max_steps_scoring AND e.compat = t.compat
            WHERE e.reward IS NOT NULL
            GROUP BY ALL
        )
        SELECT pass_at_1, avg(rate) FROM per_task GROUP BY run_group, pass_at_1
        """
    ).fetchall()
    assert len(pairs) == 2  # the two layouts
    for pass_at_1, mean_rate in pairs:
        assert math.isclose(pass_at_1, mean_rate, rel_tol=1e-12)


def test_leaderboard_trials_shows_each_group_at_its_trial_count(
    scored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    fmt = ["--format", "csv"]
    assert main(["leaderboard", "--trials", "--warehouse", str(scored), *fmt]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    header = lines[0].split(",")
    assert header[:8] == [
        "rank",
        "agent",
        "n_trials",
        "n_tasks",
        "pass_at_1_pct",
        "pass_at_k_pct",
        "pass_hat_k_pct",
        "k",
    ]
    rows = [dict(zip(header, line.split(","), strict=True)) for line in lines[1:]]
    assert len(rows) == 2 and {r["k"] for r in rows} == {str(N_TRIALS)}
    expected_at_k = (
        connect(scored)
        .sql(
            f"SELECT 100 * pass_at_k FROM trial_scores WHERE k = {N_TRIALS} AND compat = 'deskscore'"
        )
        .fetchall()
    )
    assert {float(r["pass_at_k_pct"]) for r in rows} == {v for (v,) in expected_at_k}


def test_check_passes_on_trial_runs(scored: Path) -> None:
    result = check_warehouse(scored)
    assert result.ok, result.problems
    assert f"{2 * N_TRIALS} run(s); {2 * N_TRIALS} re-counted from their source" in result.facts


def test_scoring_again_unchanged_keeps_the_figures_and_restores_a_lost_file(
    scored: Path, tmp_path: Path
) -> None:
    import shutil

    wh = Path(shutil.copytree(scored, tmp_path / "wh"))
    before = connect(wh).sql("SELECT * FROM trial_scores ORDER BY ALL").fetchall()
    for path in Warehouse(wh).files("trial_scores"):
        path.unlink()
    assert main(["score", "--warehouse", str(wh), "--no-costs", "--engine", "direct"]) == 0
    assert connect(wh).sql("SELECT * FROM trial_scores ORDER BY ALL").fetchall() == before


def test_runs_ingested_apart_become_trials_of_the_group_named(tmp_path: Path) -> None:
    profile = load_profiles()[0]
    tasks = task_slice(per_domain=1)
    roots = [write_run(tmp_path / f"results{i}", profile, tasks, seed=i) for i in (1, 2)]
    wh = str(tmp_path / "wh")
    for i in (1, 2):
        source = str(tmp_path / f"results{i}")
        args = ["ingest", source, "--warehouse", wh, "--trial-of", "agent-s3-bbon"]
        assert main([*args, "--engine", "direct"]) == 0
    assert main(["score", "--warehouse", wh, "--no-costs", "--engine", "direct"]) == 0
    con = connect(wh)
    runs = con.sql("SELECT trial, run_group FROM runs ORDER BY trial").fetchall()
    rel = roots[0].relative_to(tmp_path / "results1").as_posix()
    assert runs == [(f"results1/{rel}", "agent-s3-bbon"), (f"results2/{rel}", "agent-s3-bbon")]
    assert con.sql("SELECT DISTINCT run_group, n_trials FROM trial_scores").fetchall() == [
        ("agent-s3-bbon", 2)
    ]
    assert check_warehouse(wh).ok


def _rows(wh: Path, table: str) -> list[str]:
    """The table's rows as text, read from its files alone (no view reads other tables)."""
    return sorted(map(repr, Warehouse(wh).read(table).to_pylist()))


def test_a_score_of_new_runs_reads_only_their_groups_episode_scores(
    scored: Path, tmp_path: Path
) -> None:
    """The groups of runs a job did not score keep their stored rows: their runs' episode
    scores are not read again (made unreadable here), so a job costs what its runs hold."""
    import shutil

    wh = Path(shutil.copytree(scored, tmp_path / "wh"))
    before = _rows(wh, "trial_scores")
    split = _rows(wh, "trial_variance")
    for path in Warehouse(wh).files("episode_scores"):
        path.write_bytes(b"not parquet")
    write_run(tmp_path / "new", load_profiles()[0], task_slice(per_domain=1), seed=5)
    how = ["--warehouse", str(wh), "--no-compact", "--engine", "direct"]  # packing reads them
    assert main(["ingest", str(tmp_path / "new"), *how]) == 0
    assert main(["score", "--no-costs", *how]) == 0
    after = _rows(wh, "trial_scores")
    assert set(before) < set(after)
    assert len(after) == len(before) + 1  # the new run is a group of one trial
    assert _rows(wh, "trial_variance") == split and len(split) == 2  # the two groups of three


def test_a_trial_that_joins_its_group_later_counts_in_the_group(tmp_path: Path) -> None:
    """A group whose stored rows name other trials than it has now is computed again:
    scoring each trial as it arrives gives what scoring both at once gives."""
    profile = load_profiles()[0]
    tasks = task_slice(per_domain=1)
    for i in (1, 2):
        write_run(tmp_path / f"results{i}", profile, tasks, seed=i)
    apart, together = str(tmp_path / "apart"), str(tmp_path / "together")
    for i in (1, 2):
        source = str(tmp_path / f"results{i}")
        args = ["ingest", source, "--warehouse", apart, "--trial-of", "g", "--engine", "direct"]
        assert main(args) == 0
        assert main(["score", "--warehouse", apart, "--no-costs", "--engine", "direct"]) == 0
    sources = [str(tmp_path / f"results{i}") for i in (1, 2)]
    args = ["ingest", *sources, "--warehouse", together, "--trial-of", "g", "--engine", "direct"]
    assert main(args) == 0
    assert main(["score", "--warehouse", together, "--no-costs", "--engine", "direct"]) == 0
    for table in ("trial_scores", "trial_variance"):
        rows = [connect(w).sql(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
                for w in (apart, together)]  # fmt: skip
        assert rows[0] == rows[1] and rows[0]

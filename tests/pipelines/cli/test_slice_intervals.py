"""`leaderboard --by ... --ci`: each slice rate with its interval, whose estimate is the
mart's figure; without --ci the output stays as it was."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from pathlib import Path

import pytest

from deskscore.pipelines.cli.main import main
from deskscore.scorers.slice_intervals import slice_intervals
from deskscore.scorers.success import CATEGORIES
from deskscore.sql import connect


@pytest.fixture(scope="module")
def osworld(small_archive: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    wh = tmp_path_factory.mktemp("slice_intervals") / "wh"
    assert main(["ingest", str(small_archive["results"]), "--warehouse", str(wh)]) == 0
    assert main(["score", "--warehouse", str(wh), "--bootstrap-resamples", "20"]) == 0
    return wh


def _csv(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, str]]:
    assert main([*argv, "--format", "csv"]) == 0
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


@pytest.mark.parametrize(("by", "view", "key"), [("domain", "per_domain", "domain"),
                                                 ("app", "per_category", "category")])  # fmt: skip
def test_osworld_slice_estimates_are_the_marts_figures(
    osworld: Path, by: str, view: str, key: str
) -> None:
    con = connect(str(osworld))
    groups = {d: c for c, ds in CATEGORIES.items() for d in ds} if by == "app" else {}
    units: dict[tuple, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for *config, domain, over, reward, wes, den in con.sql(
        "SELECT run_id, human_version, max_steps_scoring, compat, domain, over, num_reward, "
        "num_wes_plus_single, den FROM per_domain_units"
    ).fetchall():
        columns = {
            "run": [("success_rate_run_pct", reward)],
            "human": [("success_rate_human_pct", reward), ("wes_plus_single_pct", wes)],
        }
        for column, num in columns[over]:  # fmt: skip
            nums, dens = units[(*config, groups.get(domain, domain), column)]
            nums.append(num)
            dens.append(den)
    found = slice_intervals(units, n_resamples=50)
    rows = con.sql(
        f"SELECT run_id, human_version, max_steps_scoring, compat, {key}, success_rate_run_pct, "
        f"success_rate_human_pct, wes_plus_single_pct FROM {view}"
    ).pl()
    checked = 0
    for row in rows.to_dicts():
        for column in ("success_rate_run_pct", "success_rate_human_pct", "wes_plus_single_pct"):
            if row[column] is None:
                continue
            got = found[(row["run_id"], row["human_version"], row["max_steps_scoring"],
                         row["compat"], row[key], column)]  # fmt: skip
            assert 100 * got.estimate == pytest.approx(row[column], rel=1e-9, abs=1e-9)
            assert got.ci_low <= got.estimate <= got.ci_high
            checked += 1
    assert checked >= 3 * len(rows) // 2


@pytest.mark.parametrize("by", ["domain", "app"])
def test_osworld_by_ci_prints_intervals_and_the_default_is_unchanged(
    osworld: Path, by: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["leaderboard", "--warehouse", str(osworld), "--by", by]
    assert main(argv) == 0
    plain = capsys.readouterr().out
    assert main([*argv, "--ci", "none"]) == 0
    assert capsys.readouterr().out == plain
    assert "±" not in plain
    assert main([*argv, "--ci", "pm"]) == 0
    with_pm = capsys.readouterr().out
    assert with_pm.count("±") >= 2 * (len(plain.splitlines()) - 3)
    assert main([*argv, "--ci", "interval"]) == 0
    assert "[" in capsys.readouterr().out
    rows = _csv([*argv, "--ci", "pm"], capsys)
    assert {"success_rate_human_pct_ci_low", "success_rate_run_pct_ci_high"} <= set(rows[0])
    for row in rows:
        for column in ("success_rate_run_pct", "success_rate_human_pct", "wes_plus_single_pct"):
            if row[column] and row[f"{column}_ci_low"]:
                low, value = float(row[f"{column}_ci_low"]), float(row[column])
                assert low - 1e-9 <= value <= float(row[f"{column}_ci_high"]) + 1e-9
    plain_rows = _csv(argv, capsys)
    assert [{k: r[k] for k in plain_rows[0]} for r in rows] == plain_rows


@pytest.mark.parametrize(("by", "view", "key", "slicing", "split"), [
    ("level", "per_level", "level", "level_stem", "all"),
    ("app", "per_app", "app", "app", "all"),
    ("domain", "deskcraft_per_domain", "domain", "domain", "all"),
    ("mode", "per_mode", "mode", "mode", "interactive"),
])  # fmt: skip
def test_deskcraft_slice_intervals_hold_the_marts_figures(
    deskcraft_archive: dict,
    capsys: pytest.CaptureFixture[str],
    by: str,
    view: str,
    key: str,
    slicing: str,
    split: str,
) -> None:
    wh = str(deskcraft_archive["warehouse"])
    con = connect(wh)
    units: dict[tuple, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for run_id, value, solved, reward in con.sql(
        "SELECT run_id, slice, solved, reward FROM deskcraft_slice_members "
        "WHERE slicing = $slicing AND ($split = 'all' OR split = $split)",
        params={"slicing": slicing, "split": split},
    ).fetchall():
        for column, num in (("strict_success_pct", float(bool(solved))),
                            ("mean_score_pct", reward or 0.0)):  # fmt: skip
            nums, dens = units[(run_id, value, column)]
            nums.append(num)
            dens.append(0.0 if reward is None else 1.0)
    found = slice_intervals(units, n_resamples=50)
    filters = " AND split = 'all'" if by != "mode" else ""
    filters += " AND level_source = 'stem'" if by == "level" else ""
    rows = con.sql(
        f"SELECT run_id, {key}, strict_success_pct, mean_score_pct FROM {view} WHERE true{filters}"
    ).fetchall()
    assert rows
    for run_id, value, strict, score in rows:
        for column, figure in (("strict_success_pct", strict), ("mean_score_pct", score)):
            if figure is not None:
                got = found[(run_id, value, column)]
                assert 100 * got.estimate == pytest.approx(figure, rel=1e-9, abs=1e-9)
                assert got.ci_low <= got.estimate <= got.ci_high
    argv = ["leaderboard", "--warehouse", wh, "--by", by]
    assert main(argv) == 0
    plain = capsys.readouterr().out
    assert main([*argv, "--ci", "pm"]) == 0
    assert "±" in capsys.readouterr().out
    with_ci = _csv([*argv, "--ci", "interval"], capsys)
    assert {"strict_success_pct_ci_low", "mean_score_pct_ci_high"} <= set(with_ci[0])
    assert "±" not in plain

"""DeskCraft from the command line: ingest finds stem folders, score writes verdicts, the
leaderboard slices by level, app, domain and mode, check and the report know DeskCraft."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deskscore.collectors.synthetic.deskcraft import AGENTS, task_slice, write_archive
from deskscore.pipelines.cli.check import check_warehouse
from deskscore.pipelines.cli.main import main
from deskscore.pipelines.cli.report import build_report


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One agent over one task per (app, split, level) group, ingested and scored by the CLI."""
    root = tmp_path_factory.mktemp("deskcraft_cli")
    plans = write_archive(root / "archive", task_slice(per_group=1)[:40], agents=AGENTS[:1])
    return {"root": root, "plans": plans[AGENTS[0].name]}


def test_ingest_and_score_from_the_cli(small: dict, capsys) -> None:
    archive, wh = small["root"] / "archive", small["root"] / "warehouse"
    args = ["--warehouse", str(wh), "--workers", "1"]
    assert (
        main(["ingest", str(archive), "--benchmark", "deskcraft", *args, "--engine", "direct"]) == 0
    )
    out = capsys.readouterr().out
    assert "quarantined by reason: none" in out
    [src] = [line for line in out.splitlines() if line.startswith(str(archive))]
    assert src.rstrip().endswith("yes")  # lines = step rows + quarantined lines
    assert main(["score", *args, "--engine", "direct"]) == 0
    out = capsys.readouterr().out
    plans = small["plans"]
    n_run = sum(1 for p in plans if p.score is not None)
    recomputed = sum(1 for p in plans if p.ends_with_fail or p.metrics is not None)
    disagree = sum(1 for p in plans if p.tampered and p.score is not None)
    assert (
        f"verdicts: {n_run} archived, {recomputed} recomputed offline, {disagree} disagreeing"
        in out
    )
    assert main(["sql", "SELECT count(*) AS n FROM tasks WHERE benchmark = 'deskcraft'",
                 "--warehouse", str(wh), "--format", "json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out) == [{"n": 538}]  # the bundled task figures


def test_leaderboard_by_level_prints_each_agent_and_level(deskcraft_archive: dict, capsys) -> None:
    wh = str(deskcraft_archive["warehouse"])
    assert main(["leaderboard", "--warehouse", wh, "--by", "level"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == "DeskCraft runs by level (level source stem, split all, " \
        "deskscore rules)"  # fmt: skip
    header = text.splitlines()[1].split()
    assert header[:3] == ["run", "level", "tasks"] and "strict" in header and "mean" in header
    lines = [line.split() for line in text.splitlines()[3:] if line.startswith("deskcraft-")]
    assert sorted((c[0], c[1]) for c in lines) == sorted(
        (a.name, lv) for a in AGENTS for lv in ("L1", "L2", "L3", "unlabelled")
    )
    assert {c[-3] for c in lines} == {"stem"} and {c[-2] for c in lines} == {"all"}


def test_leaderboard_by_level_takes_a_level_source_and_a_split(
    deskcraft_archive: dict, capsys
) -> None:
    wh = str(deskcraft_archive["warehouse"])
    args = ["leaderboard", "--warehouse", wh, "--by", "level", "--format", "json"]
    assert main([*args, "--level-source", "difficulty", "--split", "interactive"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {(r["level_source"], r["split"]) for r in rows} == {("difficulty", "interactive")}
    plans = deskcraft_archive["plans"]["deskcraft-weak"]
    l3 = [p for p in plans if p.split == "interactive" and p.level_difficulty == "L3"]
    [row] = [r for r in rows if r["label"] == "deskcraft-weak" and r["level"] == "L3"]
    assert row["n_episodes"] == len(l3)
    assert row["n_strict_success"] == sum(1 for p in l3 if p.score == 1)


@pytest.mark.parametrize(("by", "key"), [("app", "app"), ("domain", "domain"), ("mode", "mode")])
def test_leaderboard_by_app_domain_and_mode(
    deskcraft_archive: dict, capsys, by: str, key: str
) -> None:
    wh = str(deskcraft_archive["warehouse"])
    assert main(["leaderboard", "--warehouse", wh, "--by", by, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    plans = deskcraft_archive["plans"]
    from deskscore.collectors.deskcraft_tasks import CATEGORIES

    def slice_of(p) -> str | None:
        if by == "mode":
            return (p.mode or "untyped") if p.split == "interactive" else None
        return p.app if by == "app" else CATEGORIES[p.app]

    expected = {
        (agent, k): sum(1 for p in ps if slice_of(p) == k)
        for agent, ps in plans.items()
        for k in {slice_of(p) for p in ps} - {None}
    }
    assert {(r["label"], r[key]): r["n_episodes"] for r in rows} == expected


def test_leaderboard_by_level_without_deskcraft_runs_says_what_to_do(
    tmp_path: Path, capsys
) -> None:
    assert main(["leaderboard", "--warehouse", str(tmp_path), "--by", "level"]) == 2
    assert "--benchmark deskcraft" in capsys.readouterr().err


def test_check_recounts_deskcraft_runs_from_their_source(deskcraft_archive: dict) -> None:
    result = check_warehouse(deskcraft_archive["warehouse"])
    assert result.ok, result.problems
    assert any("2 re-counted from their source" in f for f in result.facts)


def test_the_report_draws_the_per_level_chart(deskcraft_archive: dict, tmp_path: Path) -> None:
    report = build_report(str(deskcraft_archive["warehouse"]), str(tmp_path / "r.html"))
    assert "per_level" in report.figures
    page = report.path.read_text()
    section = page.split('<section id="levels">', 1)[1].split("</section>", 1)[0]
    assert "data:image/png;base64," in section and "these runs carry no level data" not in section


def test_a_warehouse_of_both_benchmarks_prints_each_titled(
    deskcraft_archive: dict, tmp_path: Path, capsys
) -> None:
    import shutil

    from deskscore.collectors.synthetic import load_profiles, write_run
    from deskscore.collectors.synthetic import task_slice as osworld_tasks

    wh = str(shutil.copytree(deskcraft_archive["warehouse"], tmp_path / "wh"))
    run = write_run(tmp_path / "results", load_profiles()[0], osworld_tasks(per_domain=1), seed=3)
    common = ["--warehouse", wh, "--engine", "direct"]
    assert main(["ingest", str(run), *common]) == 0
    assert main(["score", *common, "--no-costs", "--max-steps-scoring", "15"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--warehouse", wh, "--by", "domain"]) == 0
    sections = capsys.readouterr().out.split("\n\n")
    titles = [s.splitlines()[0] for s in sections]
    assert titles == [
        "OSWorld runs by domain (OSWorld-Human verified, step budget S = max(15, longest run), deskscore rules)",
        "DeskCraft runs by DeskCraft domain (split all, deskscore rules)",
    ]
    assert sections[0].rstrip().endswith("(10 rows)")  # one OSWorld run, ten domains
    assert main(["leaderboard", "--warehouse", wh]) == 0
    board = capsys.readouterr().out
    assert "Leaderboard, deskcraft runs (OSWorld-Human verified" in board
    assert "Leaderboard, osworld runs (OSWorld-Human verified" in board
    assert "DeskCraft tasks are not OSWorld-Human tasks" in board
    assert main(["leaderboard", "--warehouse", wh, "--by", "level"]) == 0  # DeskCraft only
    assert capsys.readouterr().out.startswith("DeskCraft runs by level")

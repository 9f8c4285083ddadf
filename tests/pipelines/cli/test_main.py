from __future__ import annotations

import io
import json
import sys

import pytest

from deskscore.pipelines.cli.main import COMMANDS, _subparsers, build_parser, main
from deskscore.sql import connect


def _run_demo(out, *args: str) -> tuple[str, str]:
    capture = pytest.MonkeyPatch()
    buf = io.StringIO()
    capture.setattr(sys, "stdout", buf)
    try:
        assert main(["demo", "--out", str(out), *args]) == 0
    finally:
        capture.undo()
    return buf.getvalue(), str(out / "warehouse")


@pytest.fixture(scope="module")
def full_demo(tmp_path_factory) -> tuple[str, str]:
    """`deskscore demo`, the README's first command, run for real; (stdout, warehouse)."""
    return _run_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[str, str]:
    """The demo on three tasks per domain: the same archive forms, in a few seconds."""
    return _run_demo(tmp_path_factory.mktemp("demo"), "--per-domain", "3")


@pytest.mark.slow
def test_demo_reconciles_every_source_and_prints_a_ranked_leaderboard(full_demo) -> None:
    text, _ = full_demo
    reconciliation = text.split("Reconciliation", 1)[1].split("quarantined by reason", 1)[0]
    source_rows = [line for line in reconciliation.splitlines() if line.startswith("/")]
    assert len(source_rows) == 5
    assert all(line.rstrip().endswith("yes") for line in source_rows), reconciliation
    assert any(".zip" in line for line in source_rows)
    board = text.split("Leaderboard", 1)[1]
    ranks = [int(line.split()[0]) for line in board.splitlines() if line.strip()[:1].isdigit()]
    assert ranks == [1, 2, 3, 4, 5]


def test_sql_prints_json_that_parses(demo, capsys) -> None:
    _, wh = demo
    assert (
        main(
            [
                "sql",
                "SELECT domain, count(*) AS n FROM episodes GROUP BY domain ORDER BY domain",
                "--warehouse",
                wh,
                "--format",
                "json",
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 10
    [(episodes,)] = connect(wh).sql("SELECT count(*) FROM episodes").fetchall()
    assert sum(r["n"] for r in rows) == episodes > 100


def test_a_bad_query_is_an_error_that_names_the_problem(demo, capsys) -> None:
    _, wh = demo
    assert main(["sql", "SELECT nope FROM episodes", "--warehouse", wh]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "SHOW TABLES" in err


def test_leaderboard_filters_and_prints_csv(demo, capsys) -> None:
    _, wh = demo
    assert (
        main(["leaderboard", "--warehouse", wh, "--human-version", "verified", "--format", "csv"])
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("rank,label,")
    assert len(lines) == 6


def test_the_leaderboard_of_a_configuration_never_scored_says_so(demo, capsys) -> None:
    _, wh = demo
    assert main(["leaderboard", "--warehouse", wh]) == 0  # the demo's floor 50, the only one
    assert capsys.readouterr().out.splitlines()[0] == (
        "Leaderboard (OSWorld-Human verified, step budget S = max(50, longest run), deskscore rules)"
    )
    assert main(["leaderboard", "--warehouse", wh, "--max-steps-scoring", "15"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no empty table
    assert (
        "no figures for OSWorld-Human verified, step budget S = max(15, longest run), deskscore rules"
        in captured.err
    )
    assert (
        "It holds figures for: OSWorld-Human verified, step budget S = max(50, longest run), deskscore rules"
        in captured.err
    )
    assert f"deskscore score --warehouse {wh} --human-version verified --max-steps-scoring 15" in (
        captured.err
    )
    assert main(["leaderboard", "--warehouse", wh, "--by", "app", "--compat", "osworld-human"]) == 2
    assert (
        "no figures for OSWorld-Human verified, step budget S = max(50, longest run), osworld-human rules"
        in (capsys.readouterr().err)
    )


def test_commands_on_a_missing_warehouse_say_what_to_run_first(tmp_path, capsys) -> None:
    assert main(["leaderboard", "--warehouse", str(tmp_path / "nothing")]) == 2
    assert "deskscore ingest" in capsys.readouterr().err


def test_stray_positional_arguments_are_refused(tmp_path) -> None:
    with pytest.raises(SystemExit):
        main(["score", "--warehouse", str(tmp_path), "oops"])


def test_ingest_then_score_through_the_cli_with_a_beam_option(demo, tmp_path, capsys) -> None:
    text, _ = demo
    wh = tmp_path / "wh"
    manifest_sources = [
        line.split()[0]
        for line in text.split("Reconciliation", 1)[1].splitlines()
        if line.startswith("/")
    ]
    assert (
        main(["ingest", *manifest_sources[:2], "--warehouse", str(wh), "--direct_num_workers=2"])
        == 0
    )
    out = capsys.readouterr().out
    assert "ingested 2 of 2 source(s)" in out
    assert (
        main(
            [
                "score",
                "--warehouse",
                str(wh),
                "--compat",
                "osworld-human",
                "--max-steps-scoring",
                "50",
            ]
        )
        == 0
    )
    assert "scored 2 run(s)" in capsys.readouterr().out


def test_an_unreadable_source_fails_the_command_but_not_the_others(demo, tmp_path, capsys) -> None:
    text, _ = demo
    good = next(
        line.split()[0] for line in text.splitlines() if line.startswith("/") and ".zip" in line
    )
    missing = tmp_path / "no-such-archive.zip"
    assert main(["ingest", str(missing), good, "--warehouse", str(tmp_path / "wh")]) == 1
    captured = capsys.readouterr()
    assert f"{missing}: no such folder or file; check the path" in captured.out
    assert "1 source(s) could not be read" in captured.err
    assert "ingested 1 of 2 source(s)" in captured.out  # not "2 of 2", as it once said
    assert "(1 could not be read)" in captured.out
    assert (
        main(
            [
                "sql",
                "SELECT count(*) AS runs FROM runs",
                "--warehouse",
                str(tmp_path / "wh"),
                "--format",
                "csv",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.splitlines() == ["runs", "1"]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_line_gets_the_same_parser_with_only_its_command_declared(command) -> None:
    alone = _subparsers(build_parser([command, "--help"])).choices
    assert list(alone) == [command]
    full = _subparsers(build_parser()).choices[command]
    assert alone[command].format_help() == full.format_help()


@pytest.mark.parametrize("argv", [[], ["--help"], ["-h", "sql"], ["leaderbord"], ["--", "sql"]])
def test_help_and_unknown_commands_get_every_command_declared(argv) -> None:
    assert list(_subparsers(build_parser(argv)).choices) == list(COMMANDS)

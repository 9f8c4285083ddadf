"""Terminal escape sequences in archive names and text (run folders, model names, task ids,
actions, zip members) reach no terminal raw: every command's output for people shows them
escaped, while csv and json keep the data exact.

The archive (`hostile_run`) carries an OSC that sets the terminal's title, CSI sequences, a
right-to-left override and a C1 CSI; `shown_escaped` checks an output.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from deskscore.collectors.synthetic import write_zip
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.main import main
from deskscore.pipelines.cli.output import printable, render

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[31m\u202eevil\x9b0m"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


# --------------------------------------------------------------------------- the function


def test_printable_escapes_control_characters_and_nothing_else() -> None:
    assert printable(HOSTILE) == "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31m\\u202eevil\\x9b0m"
    assert printable("a\tb\nc\rd\x00\x7f\u2066\u2028\udc80") == (
        "a\\tb\\nc\\rd\\x00\\x7f\\u2066\\u2028\\udc80"
    )
    assert printable("a\tb\nc\x1b", lines=True) == "a\tb\nc\\x1b"
    ordinary = (
        "C:\\path\\to é 中文 ✓ \u2018quotes\u2019 emoji \U0001f469\u200d\U0001f4bb (ZWJ kept)"
    )
    assert printable(ordinary) == ordinary


def test_tables_escape_cells_and_headers_while_csv_and_json_keep_them() -> None:
    rows = [[f"agent{HOSTILE}", 1.5], ["two\nlines", None]]
    table = render([f"name{HOSTILE}", "x"], rows)
    assert "\x1b" not in table and "\u202e" not in table and "two\\nlines" in table
    widths = {len(line) for line in table.splitlines()[1:3]}
    assert len(widths) == 1  # aligned on the escaped text
    assert "\x1b" not in render(["name", "x"], rows, "md")
    assert list(csv.reader(io.StringIO(render(["name", "x"], rows, "csv"))))[1][0] == rows[0][0]
    assert json.loads(render(["name", "x"], rows, "json"))[0]["name"] == rows[0][0]


# --------------------------------------------------------------------------- the commands


def test_ingest_shows_paths_and_member_names_escaped(
    hostile_run: dict, tmp_path: Path, capsys, shown_escaped
) -> None:
    archive = write_zip(hostile_run["root"], tmp_path / "run.zip", prefix="")
    code, out, err = _run(
        capsys,
        "ingest",
        str(hostile_run["root"]),
        str(archive),
        "--warehouse",
        str(tmp_path / "wh"),
        "--layout",
        hostile_run["layout"],
        "--engine",
        "direct",
    )
    assert code == 0, err
    shown_escaped(out + err)
    assert "invalid_json" in out and f"!chrome/{printable(hostile_run['task_ids'][0])}" in out


def test_leaderboard_escapes_labels_in_tables_and_keeps_them_in_csv_and_json(
    hostile_warehouse: Path, capsys, shown_escaped
) -> None:
    wh = str(hostile_warehouse)
    code, out, err = _run(capsys, "leaderboard", "--warehouse", wh)
    assert code == 0, err
    shown_escaped(out + err)
    code, out, _ = _run(capsys, "leaderboard", "--warehouse", wh, "--format", "json")
    assert json.loads(out)[0]["agent"] == f"agent{HOSTILE}"
    code, out, _ = _run(capsys, "leaderboard", "--warehouse", wh, "--by", "domain")
    shown_escaped(out)
    code, out, _ = _run(capsys, "leaderboard", "--warehouse", wh, "--format", "md")
    shown_escaped(out)


def test_cost_escapes_agent_names_in_every_line(
    hostile_warehouse: Path, capsys, shown_escaped
) -> None:
    wh = str(hostile_warehouse)
    code, out, err = _run(capsys, "cost", "--warehouse", wh)
    assert code == 0, err
    shown_escaped(out + err)
    assert f"agent{printable(HOSTILE)} (" in out  # the cost-accuracy front names it too
    code, out, _ = _run(capsys, "cost", "--warehouse", wh, "--format", "csv")
    assert next(csv.DictReader(io.StringIO(out)))["agent"] == f"agent{HOSTILE}"


def test_loops_escapes_agents_and_task_ids(hostile_warehouse: Path, capsys, shown_escaped) -> None:
    wh = str(hostile_warehouse)
    code, out, _ = _run(capsys, "loops", "--warehouse", wh, "--format", "json")
    rows = json.loads(out)
    assert rows and rows[0]["agent"] == f"agent{HOSTILE}" and rows[0]["task_id"].endswith(HOSTILE)
    code, out, err = _run(capsys, "loops", "--warehouse", wh)
    assert code == 0, err
    shown_escaped(out + err)


def test_sql_escapes_values_column_names_and_errors(
    hostile_warehouse: Path, capsys, shown_escaped
) -> None:
    wh = str(hostile_warehouse)
    query = 'SELECT task_id, action_text AS "a\x1b]0;pwned\x07" FROM steps WHERE step_idx = 0'
    code, out, err = _run(capsys, "sql", query, "--warehouse", wh)
    assert code == 0, err
    shown_escaped(out + err)
    assert "a\\x1b]0;pwned\\x07" in out
    code, out, _ = _run(capsys, "sql", query, "--warehouse", wh, "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][1] == "a\x1b]0;pwned\x07" and all(r[0].endswith(HOSTILE) for r in rows[1:])
    code, out, _ = _run(capsys, "sql", query, "--warehouse", wh, "--format", "json")
    assert all(HOSTILE in r["a\x1b]0;pwned\x07"] for r in json.loads(out))
    code, out, err = _run(capsys, "sql", f"SELECT no_such_column_{HOSTILE}", "--warehouse", wh)
    assert code == 2
    # the error's first line only (DuckDB's excerpt of the query is left out), nothing raw
    shown_escaped(out + err, names_hostile=False)


def test_check_escapes_the_paths_it_names(
    hostile_warehouse: Path, tmp_path: Path, capsys, shown_escaped
) -> None:
    wh = tmp_path / "wh"
    shutil.copytree(hostile_warehouse, wh)
    store = Warehouse(wh)
    [run] = store.read("runs").to_pylist()
    part = {"benchmark": run["benchmark"], "run_id": run["run_id"]}
    episodes = store.read("episodes", part).to_pylist()
    for e in episodes:
        e["n_quarantined"] += 1  # every episode now claims a line it does not account for
    store.write("episodes", episodes, part)
    code, out, err = _run(capsys, "check", "--warehouse", str(wh))
    assert code == 1
    assert out.count("re-ingest run") >= len(episodes)
    shown_escaped(out + err)

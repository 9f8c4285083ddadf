"""Everyday conveniences: the warehouse from the environment or deskscore.toml, --version,
`sql -f` and the shell, --digits that never shows a non-zero figure as 0, JSON summaries,
one --wait default and a repeatable --run."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from deskscore.pipelines.cli.main import build_parser, main
from deskscore.pipelines.cli.output import decimals, render
from deskscore.pipelines.cli.settings import SettingsError, file_settings, resolved
from deskscore.sql import connect
from deskscore.sql.shell import init_script


@pytest.fixture(scope="module")
def warehouse(small_archive: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("conveniences") / "wh"
    sources = [str(small_archive["results"]), str(small_archive["zip"])]
    assert main(["ingest", *sources, "--warehouse", str(root), "--engine", "direct"]) == 0
    assert main(["score", "--warehouse", str(root), "--engine", "direct"]) == 0
    return root


def _deskscore(*args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str = ""):
    return subprocess.run(
        [sys.executable, "-m", "deskscore.pipelines.cli.main", *args],
        capture_output=True, text=True, cwd=cwd, input=stdin,
        env={**os.environ, **(env or {})},
    )  # fmt: skip


def test_the_flag_beats_the_environment_which_beats_deskscore_toml(tmp_path: Path) -> None:
    (tmp_path / "deskscore.toml").write_text('warehouse = "from-toml"\nwait = 5\ndigits = 4\n')
    env = {"DESKSCORE_WAREHOUSE": "from-env"}
    assert resolved("warehouse", "from-flag", env, tmp_path) == "from-flag"
    assert resolved("warehouse", None, env, tmp_path) == "from-env"
    assert resolved("warehouse", None, {}, tmp_path) == "from-toml"
    assert resolved("warehouse", None, {}, tmp_path / "nothing-here") == "warehouse"
    assert resolved("wait", None, env, tmp_path) == 5.0
    assert resolved("digits", None, {}, tmp_path) == 4


def test_a_bad_deskscore_toml_says_what_to_fix(tmp_path: Path) -> None:
    (tmp_path / "deskscore.toml").write_text('warehose = "typo"\n')
    with pytest.raises(SettingsError, match=r"unknown setting.*warehose.*may set warehouse"):
        file_settings(tmp_path)
    (tmp_path / "deskscore.toml").write_text("wait = 'soon'\n")
    with pytest.raises(SettingsError, match="wait must be a float"):
        file_settings(tmp_path)
    (tmp_path / "deskscore.toml").write_text("warehouse = [\n")
    with pytest.raises(SettingsError, match="not valid TOML"):
        file_settings(tmp_path)
    p = _deskscore("leaderboard", cwd=tmp_path)
    assert p.returncode == 2 and "not valid TOML" in p.stderr and "Traceback" not in p.stderr


def test_commands_find_the_warehouse_without_the_flag(warehouse: Path, tmp_path: Path) -> None:
    flagged = _deskscore("leaderboard", "--warehouse", str(warehouse), cwd=tmp_path)
    by_env = _deskscore("leaderboard", cwd=tmp_path, env={"DESKSCORE_WAREHOUSE": str(warehouse)})
    assert by_env.returncode == 0 and by_env.stdout == flagged.stdout
    (tmp_path / "deskscore.toml").write_text(f"warehouse = {json.dumps(str(warehouse))}\n")
    env = {"DESKSCORE_WAREHOUSE": ""}
    assert _deskscore("leaderboard", cwd=tmp_path, env=env).stdout == flagged.stdout
    missing = _deskscore("leaderboard", cwd=tmp_path, env={"DESKSCORE_WAREHOUSE": "gone"})
    assert missing.returncode == 2
    assert "no warehouse at gone (set by $DESKSCORE_WAREHOUSE)" in missing.stderr


def test_version_prints_the_installed_version(tmp_path: Path) -> None:
    from importlib.metadata import version

    p = _deskscore("--version", cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.strip() == f"deskscore {version('deskscore')}"


def test_every_command_has_digits_and_one_wait_default() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    waits = set()
    for name, command in sub.choices.items():
        flags = {f for a in command._actions for f in a.option_strings}
        assert "--digits" in flags, name
        waits |= {a.help for a in command._actions if "--wait" in a.option_strings}
    assert all("else 600" in h for h in waits) and waits


def test_a_non_zero_figure_never_shows_as_zero() -> None:
    # two significant digits where the decimals asked for would show 0
    assert f"{0.00046:.{decimals(0.00046, 2)}f}" == "0.00046"
    assert f"{-0.003:.{decimals(-0.003, 2)}f}" == "-0.0030"
    assert decimals(0.5, 2) == 2 and decimals(0.0, 2) == 2 and decimals(0.004, 2) == 4
    text = render(["model", "usd"], [("a", 0.00042), ("b", 12.3456), ("c", 0.0)])
    assert "0.00042" in text and "12.35" in text and "0.00 " not in text.replace("0.00042", "")
    assert render(["usd"], [(12.3456,)], digits=3).splitlines()[2].strip() == "12.346"


def test_digits_changes_the_decimals_of_tables(warehouse: Path, tmp_path: Path) -> None:
    query = "SELECT 2.0/3 AS third, 0.0001::DOUBLE AS tiny"
    two = _deskscore("sql", query, "--warehouse", str(warehouse), cwd=tmp_path).stdout
    four = _deskscore("sql", query, "--warehouse", str(warehouse), "--digits", "4", cwd=tmp_path)
    assert "0.67" in two and "0.00010" in two
    assert "0.6667" in four.stdout and "0.0001" in four.stdout


def test_sql_reads_the_query_from_a_file_or_stdin(warehouse: Path, tmp_path: Path) -> None:
    (tmp_path / "q.sql").write_text("SELECT count(*) AS n\nFROM runs\n")
    by_file = _deskscore("sql", "-f", "q.sql", "--warehouse", str(warehouse), cwd=tmp_path)
    inline = _deskscore("sql", "SELECT count(*) AS n FROM runs", "--warehouse", str(warehouse),
                        cwd=tmp_path)  # fmt: skip
    assert by_file.returncode == 0 and by_file.stdout == inline.stdout
    piped = _deskscore("sql", "-f", "-", "--warehouse", str(warehouse), cwd=tmp_path,
                       stdin="SELECT count(*) AS n FROM runs")  # fmt: skip
    assert piped.stdout == inline.stdout
    both = _deskscore("sql", "SELECT 1", "-f", "q.sql", "--warehouse", str(warehouse),
                      cwd=tmp_path)  # fmt: skip
    assert both.returncode == 2 and "not both" in both.stderr


def test_sql_without_a_query_says_how_to_get_a_shell(warehouse: Path, tmp_path: Path) -> None:
    p = _deskscore("sql", "--warehouse", str(warehouse), cwd=tmp_path, env={"PATH": "/nonexistent"})
    assert p.returncode == 2
    assert "'duckdb' program" in p.stderr and "-f FILE" in p.stderr


def test_sql_without_a_query_opens_duckdbs_shell_on_the_views(
    warehouse: Path, tmp_path: Path
) -> None:
    """A stand-in `duckdb` program runs the init script the shell would get on DuckDB itself."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "duckdb"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sys, duckdb\n"
        "init = open(sys.argv[sys.argv.index('-init') + 1]).read()\n"
        "con = duckdb.connect(sys.argv[-1])\n"
        "con.execute('\\n'.join(l for l in init.splitlines() if not l.startswith('.')))\n"
        "print(con.sql(sys.stdin.read()).fetchall())\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    p = _deskscore("sql", "--warehouse", str(warehouse), cwd=tmp_path, env=env,
                   stdin="SELECT count(*) FROM leaderboard")  # fmt: skip
    assert p.returncode == 0, p.stderr
    expected = connect(warehouse).sql("SELECT count(*) FROM leaderboard").fetchall()
    assert p.stdout.strip() == str(expected)


def test_the_shells_views_can_read_but_not_write(warehouse: Path, tmp_path: Path) -> None:
    con = duckdb.connect()
    script = init_script(warehouse)
    con.execute("\n".join(line for line in script.splitlines() if not line.startswith(".")))
    expected = connect(warehouse).sql("SELECT count(*) FROM run_scores").fetchall()
    assert con.sql("SELECT count(*) FROM run_scores").fetchall() == expected
    with pytest.raises(duckdb.PermissionException):
        con.execute(f"COPY (SELECT 1) TO '{tmp_path / 'x.csv'}'")
    with pytest.raises(duckdb.Error, match="configuration"):
        con.execute("SET enable_external_access = true")
    assert not (tmp_path / "x.csv").exists()


def test_ingest_score_and_check_summaries_as_json(
    small_archive: dict[str, Path], tmp_path: Path
) -> None:
    wh = str(tmp_path / "wh")
    source = str(small_archive["zip"])
    p = _deskscore("ingest", source, "--warehouse", wh, "--format", "json", cwd=tmp_path)
    ingested = json.loads(p.stdout)
    assert ingested["runs_written"] == 1 and ingested["sources_read"] == [source]
    assert ingested["per_source"][0]["reconciled"] is True
    p = _deskscore("score", "--warehouse", wh, "--format", "json", cwd=tmp_path)
    scored = json.loads(p.stdout)
    assert scored["runs_scored"] == 1 and scored["configuration"]["max_steps_scoring"] == 15
    p = _deskscore("check", "--warehouse", wh, "--format", "json", cwd=tmp_path)
    checked = json.loads(p.stdout)
    assert p.returncode == 0 and checked["ok"] is True and checked["problems"] == []


def test_loops_takes_several_runs(warehouse: Path, tmp_path: Path) -> None:
    ids = [r for (r,) in connect(warehouse).sql("SELECT run_id FROM runs ORDER BY 1").fetchall()]
    args = ["loops", "--warehouse", str(warehouse), "--format", "json", "--top", "100"]
    every = json.loads(_deskscore(*args, cwd=tmp_path).stdout)
    two = json.loads(_deskscore(*args, "--run", ids[0], "--run", ids[1], cwd=tmp_path).stdout)
    assert {r["run_id"] for r in two} == {r["run_id"] for r in every} & set(ids[:2])
    assert len(two) < len(every) or {r["run_id"] for r in every} <= set(ids[:2])


def test_the_leaderboard_and_its_slices_take_several_runs(warehouse: Path, tmp_path: Path) -> None:
    ids = [r for (r,) in connect(warehouse).sql("SELECT run_id FROM runs ORDER BY 1").fetchall()]
    base = ["--warehouse", str(warehouse), "--format", "json"]
    every = json.loads(_deskscore("leaderboard", *base, cwd=tmp_path).stdout)
    two = json.loads(_deskscore("leaderboard", *base, "--run", ids[0], "--run", ids[2],
                                cwd=tmp_path).stdout)  # fmt: skip
    labels = dict(connect(warehouse).sql("SELECT run_id, label FROM run_labels").fetchall())
    assert [r for r in every if r["label"] in {labels[ids[0]], labels[ids[2]]}] == two
    assert len(two) == 2 < len(every)
    sliced = json.loads(_deskscore("leaderboard", *base, "--by", "domain", "--run", ids[1],
                                   cwd=tmp_path).stdout)  # fmt: skip
    assert sliced and {r["run_id"] for r in sliced} == {ids[1]}

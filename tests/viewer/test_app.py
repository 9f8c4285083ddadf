"""The viewer over HTTP, served by `deskscore view` itself: what it refuses (paths, files that
are not screenshots, writes, other hosts) and what its task list and SQL page return."""

from __future__ import annotations

import csv
import http.client
import io
import re
import shutil
import zipfile
from pathlib import Path
from urllib.parse import urlencode, urlparse

import pytest
from markupsafe import escape

from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.main import main
from deskscore.sql import connect
from deskscore.viewer.store import Store, TaskFilter

from .conftest import viewer_at


def _get(url: str, path: str, method: str = "GET", host: str | None = None):
    """(status, body) of a request sent as written: no client-side normalisation of `path`."""
    where = urlparse(url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    headers = {"Host": host} if host else {}
    conn.request(method, path, headers=headers)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, body


TRAVERSALS = (
    "/shot/../../etc/passwd",
    "/../../etc/passwd",
    "/static/../app.py",
    "/static/..%2f..%2fapp.py",
    "/static/%2e%2e/store.py",
    "/static/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc/passwd",
    "/shot?run=..%2F..%2Fetc&domain=x&task=passwd&step=0",
    "/shot?step=..%2F..%2F..%2Fetc%2Fpasswd",
    "/shot?run=&domain=&task=&step=0",
)


@pytest.mark.parametrize("path", TRAVERSALS)
def test_paths_in_the_url_never_reach_a_file(viewer_url: str, path: str) -> None:
    status, body = _get(viewer_url, path)
    assert status in (400, 404)
    assert b"root:" not in body and b"import " not in body


@pytest.mark.parametrize("number", ["99999999999999999999", "-99999999999999999999", "2147483648"])
def test_a_number_past_any_count_in_the_task_list_is_a_page_not_an_error(
    viewer_url: str, viewer_warehouse: Path, number: str
) -> None:
    """A page of 1e20 once made `OFFSET 5e21`, which DuckDB refuses (500)."""
    [(run_id,)] = connect(viewer_warehouse).execute("SELECT run_id FROM runs LIMIT 1").fetchall()
    for param in ("page", "min_steps", "max_steps"):
        status, body = _get(viewer_url, f"/run/{run_id}?{param}={number}")
        assert status == 200, (param, body[-500:])


def _first_episode(wh: Path, source_like: str) -> tuple[str, str, str, str, str]:
    con = connect(wh)
    return con.execute(
        "SELECT e.run_id, e.domain, e.task_id, r.source, r.benchmark FROM episodes AS e "
        "JOIN runs AS r USING (run_id) WHERE r.source LIKE ? ORDER BY e.domain, e.task_id "
        "LIMIT 1",
        [f"%{source_like}"],
    ).fetchone()


def test_screenshot_refs_naming_other_files_are_refused(
    viewer_warehouse: Path, tmp_path: Path
) -> None:
    """A warehouse whose screenshot rows point outside the archive, at an absolute path, or
    at a file of the archive that is not an image: none is served; a real one still is."""
    wh = tmp_path / "wh"
    shutil.copytree(viewer_warehouse, wh)
    run_id, domain, task, source, benchmark = _first_episode(wh, ".zip")
    with zipfile.ZipFile(source) as z:
        traj = next(n for n in z.namelist() if n.endswith(f"{task}/traj.jsonl"))
    store = Warehouse(wh)
    refs = [r for r in store.read("screenshot_refs").to_pylist() if r["run_id"] == run_id]
    hostile = {0: "../../../../../../etc/passwd", 1: "/etc/passwd", 2: traj}
    for r in refs:
        if (r["domain"], r["task_id"]) == (domain, task) and r["step_idx"] in hostile:
            r["screenshot_path"] = hostile[r["step_idx"]]
    store.write("screenshot_refs", refs, {"benchmark": benchmark, "run_id": run_id})
    with viewer_at(wh) as url:
        for step in (0, 1, 2, 3):
            q = urlencode({"run": run_id, "domain": domain, "task": task, "step": step})
            status, body = _get(url, f"/shot?{q}")
            if step in hostile:
                assert status == 404, (step, body[:200])
                assert b"root:" not in body and b'"step' not in body
            else:
                assert status == 200 and body.startswith(b"\x89PNG")


@pytest.mark.parametrize("path", ["/", "/sql", "/sql.csv", "/episode", "/shot", "/compare"])
def test_no_route_accepts_a_write(viewer_url: str, path: str) -> None:
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert _get(viewer_url, path, method)[0] == 405


def test_a_request_naming_another_host_is_refused(viewer_url: str) -> None:
    """A page of another site cannot reach the viewer by rebinding its name to 127.0.0.1."""
    assert _get(viewer_url, "/", host="attacker.example")[0] == 400
    assert _get(viewer_url, "/")[0] == 200


def test_every_page_forbids_fetching_from_elsewhere(viewer_url: str) -> None:
    where = urlparse(viewer_url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    conn.request("GET", "/")
    csp = conn.getresponse().getheader("Content-Security-Policy")
    conn.close()
    assert "default-src 'none'" in csp and "http" not in csp


def test_the_sql_page_answers_reads_and_refuses_writes(
    viewer_url: str, viewer_warehouse: Path, tmp_path: Path
) -> None:
    [(n_steps,)] = connect(viewer_warehouse).sql("SELECT count(*) FROM steps").fetchall()
    status, body = _get(viewer_url, "/sql?" + urlencode({"q": "SELECT count(*) AS n FROM steps"}))
    assert status == 200 and f">{n_steps}<".encode() in body

    out = tmp_path / "leak.csv"
    for query in (
        f"COPY (SELECT * FROM steps) TO '{out}'",
        "SELECT * FROM read_csv('/etc/passwd')",
        f"ATTACH '{tmp_path / 'x.db'}' AS x",
    ):
        status, body = _get(viewer_url, "/sql?" + urlencode({"q": query}))
        assert status == 200 and b'id="sql-error"' in body and b"root:" not in body
    assert not out.exists() and not (tmp_path / "x.db").exists()

    query = "SELECT domain, count(*) AS n FROM episodes GROUP BY domain ORDER BY domain"
    status, body = _get(viewer_url, "/sql.csv?" + urlencode({"q": query}))
    rows = list(csv.reader(io.StringIO(body.decode())))
    expected = connect(viewer_warehouse).sql(query).fetchall()
    assert status == 200 and rows[0] == ["domain", "n"]
    assert [(d, int(n)) for d, n in rows[1:]] == expected
    assert _get(viewer_url, "/sql.csv?" + urlencode({"q": f"COPY steps TO '{out}'"}))[0] == 400


def test_task_list_pages_cover_every_episode_once_in_order(viewer_warehouse: Path) -> None:
    store = Store(viewer_warehouse)
    run_id = store.runs()[0]["run_id"]
    everything = store.tasks(run_id, TaskFilter(), page_size=1000)
    pages, k = [], 0
    while True:
        got = store.tasks(run_id, TaskFilter(page=k), page_size=7)
        assert got.total == everything.total
        if not got.rows:
            break
        pages.extend(got.rows)
        k += 1
    assert k == got.n_pages == -(-everything.total // 7)
    assert pages == everything.rows
    store.close()


def test_task_list_filters_match_the_views(viewer_warehouse: Path) -> None:
    con = connect(viewer_warehouse)
    store = Store(viewer_warehouse)
    [zipped] = [r["run_id"] for r in store.runs() if r["source"].endswith(".zip")]

    def keys(f: TaskFilter) -> set[tuple[str, str]]:
        return {(r["domain"], r["task_id"]) for r in store.tasks(zipped, f, 10_000).rows}

    def expect(sql: str, *params: object) -> set[tuple[str, str]]:
        return set(con.execute(sql, [zipped, *params]).fetchall())

    looping = expect(
        "SELECT domain, task_id FROM episode_loops WHERE run_id = ? AND looping_steps > 0"
    )
    assert looping and keys(TaskFilter(looping=True)) == looping
    failed = expect("SELECT domain, task_id FROM episodes WHERE run_id = ? AND score = 0")
    assert keys(TaskFilter(outcome="failure")) == failed
    domain = sorted(looping)[0][0]
    in_domain = expect(
        "SELECT domain, task_id FROM episodes WHERE run_id = ? AND domain = ?", domain
    )
    assert keys(TaskFilter(domain=domain)) == in_domain
    long = expect("SELECT domain, task_id FROM episodes WHERE run_id = ? AND n_steps >= 10")
    assert keys(TaskFilter(min_steps=10)) == long
    assert keys(TaskFilter(min_steps=10, looping=True)) == long & looping
    typed = expect(
        "SELECT DISTINCT domain, task_id FROM steps WHERE run_id = ? AND action_text ILIKE ?",
        "%ctrl%",
    )
    assert typed and keys(TaskFilter(text="CTRL")) >= typed
    assert keys(TaskFilter(text="100%_no_such_text")) == set()
    disagree = expect(
        "SELECT DISTINCT domain, task_id FROM verdicts WHERE run_id = ? "
        "AND agrees_with_archived = false"
    )
    assert keys(TaskFilter(disagreement=True)) == disagree
    store.close()


def test_the_episode_page_shows_every_step_and_the_loop_spans(
    viewer_url: str, viewer_warehouse: Path
) -> None:
    con = connect(viewer_warehouse)
    run_id, domain, task, n_steps = con.sql(
        "SELECT l.run_id, l.domain, l.task_id, count(s.step_idx) FROM episode_loops AS l "
        "JOIN steps AS s USING (run_id, domain, task_id) WHERE l.looping_steps > 0 "
        "GROUP BY ALL ORDER BY 4 DESC LIMIT 1"
    ).fetchall()[0]
    q = urlencode({"run": run_id, "domain": domain, "task": task})
    status, body = _get(viewer_url, f"/episode?{q}")
    page = body.decode()
    assert status == 200
    assert len(re.findall(r'class="step(?: loop)?"', page)) == n_steps
    spans = con.execute(
        "SELECT first_step FROM loop_spans WHERE run_id = ? AND domain = ? AND task_id = ?",
        [run_id, domain, task],
    ).fetchall()
    for (first,) in spans:
        assert f'href="#step-{first}"' in page
    assert _get(viewer_url, "/episode?" + urlencode({"run": run_id, "domain": "x"}))[0] == 404


def test_the_command_needs_an_existing_warehouse(tmp_path: Path, capsys) -> None:
    assert main(["view", "--warehouse", str(tmp_path / "none"), "--no-browser"]) == 2
    assert "no warehouse" in capsys.readouterr().err


def test_archive_text_is_escaped_on_every_page(viewer_warehouse: Path, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    shutil.copytree(viewer_warehouse, wh)
    run_id, domain, task, _, benchmark = _first_episode(wh, ".zip")
    store = Warehouse(wh)
    steps = [r for r in store.read("steps").to_pylist() if r["run_id"] == run_id]
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    for r in steps:
        if (r["domain"], r["task_id"], r["step_idx"]) == (domain, task, 0):
            r["action_text"], r["response"] = evil, evil
    store.write("steps", steps, {"benchmark": benchmark, "run_id": run_id})
    with viewer_at(wh) as url:
        q = urlencode({"run": run_id, "domain": domain, "task": task})
        page = _get(url, f"/episode?{q}")[1].decode()
        search = _get(url, f"/run/{run_id}?" + urlencode({"text": "<script>"}))[1].decode()
    assert "&lt;script&gt;alert(" in page and "<script>alert" not in page
    assert "<img src=x" not in page
    assert "&lt;script&gt;" in search and f">{task}</a>" in search


def test_interactions_show_in_line_and_verdicts_with_their_sources(deskcraft_archive: dict) -> None:
    wh = deskcraft_archive["warehouse"]
    con = connect(wh)
    run_id, domain, task = con.sql(
        "SELECT run_id, domain, task_id FROM interactions WHERE step IS NOT NULL "
        "GROUP BY ALL ORDER BY count(*) DESC, run_id, domain, task_id LIMIT 1"
    ).fetchall()[0]
    exchanges = con.execute(
        "SELECT step, message FROM interactions WHERE run_id = ? AND domain = ? AND task_id = ? "
        "AND message IS NOT NULL ORDER BY seq",
        [run_id, domain, task],
    ).fetchall()
    sources = {s for (s,) in con.execute(
        "SELECT DISTINCT source FROM verdicts WHERE run_id = ? AND domain = ? AND task_id = ?",
        [run_id, domain, task],
    ).fetchall()}  # fmt: skip
    with viewer_at(wh) as url:
        q = urlencode({"run": run_id, "domain": domain, "task": task})
        status, body = _get(url, f"/episode?{q}")
    page = body.decode()
    assert status == 200 and exchanges and sources
    steps = {
        int(num): m.start()
        for m, num in (
            (m, m.group(1))
            for m in re.finditer(r'step-\d+" data-step="\d+".*?turn (\d+)', page, re.S)
        )
    }
    at = 0
    for step, message in exchanges:  # in order, each after the turn it follows
        where = page.find(str(escape(message)), at)
        assert where > 0, message
        if step in steps:
            assert where > steps[step]
        at = where + 1
    table = page[page.index('id="verdicts"') :]
    for source in sources:
        assert f"<td>{source}" in table


def test_the_human_reference_and_the_instruction_come_from_the_human_data(
    human_dirs: dict[str, Path], tmp_path: Path
) -> None:
    """Scored with OSWorld-Human's own files, an episode page lists the human's actions for
    the task beside the steps, and the task's instruction from the task index."""
    from deskscore.collectors.synthetic import load_profiles, task_slice, write_run
    from deskscore.pipelines.jobs.ingest import run_ingest
    from deskscore.pipelines.jobs.score import run_score
    from deskscore.pipelines.options import IngestOptions, ScoreOptions

    write_run(tmp_path / "r", load_profiles()[0], task_slice(per_domain=1), seed=1)
    wh = tmp_path / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(tmp_path / "r"),), engine="direct"))
    human = str(human_dirs["verified"])
    run_score(ScoreOptions(str(wh), max_steps_scoring=50, engine="direct", human_path=human))
    con = connect(wh)
    run_id, domain, task, actions, instruction = con.sql(
        "SELECT e.run_id, e.domain, e.task_id, h.single_actions, t.instruction FROM episodes "
        "AS e JOIN human_refs AS h USING (domain, task_id) JOIN tasks AS t USING (domain, "
        "task_id) WHERE len(h.single_actions) > 0 AND t.instruction IS NOT NULL "
        "ORDER BY e.domain, e.task_id LIMIT 1"
    ).fetchall()[0]
    with viewer_at(wh) as url:
        q = urlencode({"run": run_id, "domain": domain, "task": task})
        page = _get(url, f"/episode?{q}")[1].decode()
    side = page[page.index('class="side"') :]
    for action in actions:
        assert f"<li>{escape(action)}</li>" in side
    assert str(escape(instruction)) in page[: page.index('class="side"')]

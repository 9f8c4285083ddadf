"""The loop stage over generated warehouses (loops where the generator put them) and over the
real OSWorld-Sec-Eval runs, and the `deskscore loops` listing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from deskscore.collectors.synthetic import (
    AgentProfile,
    EpisodePlan,
    load_profiles,
    plan_run,
    task_slice,
)
from deskscore.collectors.synthetic import write_run as synthetic_run
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.loops import worst_episodes_text
from deskscore.pipelines.infra.runner import run_stages
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.options import HashOptions, IngestOptions
from deskscore.pipelines.stages.base import run_keys
from deskscore.pipelines.stages.loops import LoopsStage, detect_run, run_frames
from deskscore.schemas import conform_rows
from deskscore.scorers.loops import STEP_COLUMNS, LoopParams, detect_loops
from deskscore.sql import connect

SEED = 0


def planned_loops(profile: AgentProfile, plans: list[EpisodePlan]) -> Iterator[tuple]:
    """(domain, task_id, first step, last step, outcome) of every loop the generator planned
    with at least one repeat, the outcome read off the plan: what follows the loop."""
    for plan in plans:
        idx, loop_steps, after = 0, [], []
        for turn in plan.turns:
            for act in turn.acts:
                if turn.loop:
                    loop_steps.append(idx)
                elif loop_steps:
                    after.append(act.op)
                idx += 1
        if plan.outcome == "absent" or len(loop_steps) < 2:
            continue
        if any(op not in ("done", "fail") for op in after):
            outcome = "recovered"
        elif not after and len(plan.turns) >= profile.max_steps:
            outcome = "step_limit"
        else:
            outcome = "abandoned"
        yield plan.domain, plan.task_id, loop_steps[0], loop_steps[-1], outcome


def run_loops(warehouse: str) -> int:
    """The loop stage over every run of the warehouse; returns how many runs it saw."""
    keys = run_keys(Warehouse(warehouse))
    run_stages([LoopsStage(warehouse)], keys)
    return len(keys)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every demo agent's run of 30 tasks, ingested and loop-detected, with the plans."""
    root = tmp_path_factory.mktemp("loops")
    tasks = task_slice(per_domain=3)
    profiles = load_profiles()
    for i, profile in enumerate(profiles):
        synthetic_run(root / "results", profile, tasks, seed=SEED + i, screenshots="none")
    wh = root / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(root / "results"),), engine="direct"))
    n_runs = run_loops(str(wh))
    runs = Warehouse(wh).read("runs").to_pylist()
    by_model = {r["model"]: r for r in runs}
    expected = {}
    for i, profile in enumerate(profiles):
        run = by_model[profile.model]
        for loop in planned_loops(profile, plan_run(profile, tasks, seed=SEED + i)):
            expected[(run["run_id"], *loop[:2])] = loop[2:]
    return {"wh": wh, "n_runs": n_runs, "runs": runs, "expected": expected}


def _found(wh: Path) -> dict[tuple, tuple]:
    spans = Warehouse(wh).read("loop_spans").to_pylist()
    out = {}
    for s in spans:
        out.setdefault((s["run_id"], s["domain"], s["task_id"]), []).append(
            (s["first_step"], s["last_step"], s["outcome"], s["length"])
        )
    return out


def test_every_planned_loop_is_found_with_its_outcome(generated) -> None:
    found = _found(generated["wh"])
    expected = generated["expected"]
    assert {o for *_, o in expected.values()} == {"recovered", "abandoned", "step_limit"}
    for key, (first, last, outcome) in expected.items():
        spans = found.get(key, [])
        assert (first, last, outcome) in [s[:3] for s in spans], (key, spans)


def test_spans_the_generator_did_not_plan_are_single_repeats(generated) -> None:
    """The generator's planner texts come from a few templates, so two unrelated turns now and
    then read alike and act alike: such chance repeats are one step long, never more."""
    expected = generated["expected"]
    extra = [
        (key, span)
        for key, spans in _found(generated["wh"]).items()
        for span in spans
        if key not in expected or span[:2] != expected[key][:2]
    ]
    assert all(span[3] == 2 for _, span in extra), extra
    assert len(extra) < len(expected)


def test_with_two_looping_steps_required_the_spans_are_exactly_the_planned_loops(
    generated,
) -> None:
    wh = Warehouse(generated["wh"])
    params = LoopParams(min_looping_steps=2)
    found = set()
    for run in generated["runs"]:
        table, looping = detect_run(wh, run["benchmark"], run["run_id"], params)
        rows = table.to_pylist()
        assert looping == sum(r["looping_steps"] for r in rows)
        found |= {
            (r["run_id"], r["domain"], r["task_id"], r["first_step"], r["last_step"], r["outcome"])
            for r in rows
        }
    planned = {
        (*key, *value) for key, value in generated["expected"].items() if value[1] - value[0] >= 2
    }
    assert found == planned


def test_every_run_gets_one_loop_spans_file_of_conforming_rows(generated) -> None:
    wh = Warehouse(generated["wh"])
    spans = wh.read("loop_spans")
    assert generated["n_runs"] == len(generated["runs"]) == len(wh.files("loop_spans"))
    assert spans.num_rows > 0
    conform_rows("loop_spans", spans.to_pylist())


def test_a_second_run_writes_the_same_bytes(generated) -> None:
    wh = Warehouse(generated["wh"])
    before = {p: p.read_bytes() for p in wh.files("loop_spans")}
    run_loops(str(generated["wh"]))
    assert {p: p.read_bytes() for p in wh.files("loop_spans")} == before


def test_a_run_without_loops_gets_an_empty_file(tmp_path: Path) -> None:
    profile = next(p for p in load_profiles() if p.name == "atlas-swift")
    synthetic_run(tmp_path / "r", profile, task_slice(per_domain=1)[:3], seed=5, screenshots="none")
    plans = plan_run(profile, task_slice(per_domain=1)[:3], seed=5)
    assert not list(planned_loops(profile, plans))
    run_ingest(IngestOptions(str(tmp_path / "wh"), sources=(str(tmp_path / "r"),), engine="direct"))
    assert run_loops(str(tmp_path / "wh")) == 1
    wh = Warehouse(tmp_path / "wh")
    assert len(wh.files("loop_spans")) == 1
    assert wh.read("loop_spans").num_rows == 0


# --------------------------------------------------------------------------- phash lookup


def _step(run: str, task: str, idx: int, text: str) -> dict:
    return {
        "run_id": run,
        "benchmark": "osworld",
        "domain": "os",
        "task_id": task,
        "step_idx": idx,
        "line_no": idx + 1,
        "step_num": idx + 1,
        "action_text": text,
        "action_format": "code",
        "action_kind": "press",
        "response": None,
    }


def _shots_in_two_runs(tmp_path: Path) -> Warehouse:
    """Run r1, whose steps show four screenshots: one hashed in its own partition, one in
    r2's, one corrupt, one never hashed."""
    wh = Warehouse(tmp_path)
    for run in ("r1", "r2"):
        part = {"benchmark": "osworld", "run_id": run}
        wh.write(
            "runs",
            [
                {
                    "run_id": run,
                    "benchmark": "osworld",
                    "source": "s",
                    "run_path": run,
                    "format": "osworld",
                    "agent": run,
                    "n_task_folders": 1,
                }
            ],
            part,
        )
    part1 = {"benchmark": "osworld", "run_id": "r1"}
    steps = [_step("r1", "t", i, f"pyautogui.press('{k}')") for i, k in enumerate("abcd")]
    wh.write("steps", steps, part1)
    wh.write(
        "episodes",
        [
            {
                "run_id": "r1",
                "benchmark": "osworld",
                "domain": "os",
                "task_id": "t",
                "source_task_id": "t",
                "task_path": "os/t",
                "n_lines": 4,
                "n_steps": 4,
                "n_turns": 4,
                "n_error_lines": 0,
                "n_quarantined": 0,
                "result_status": "missing",
                "ended_by": "none",
            }
        ],
        part1,
    )
    refs = [
        {"run_id": "r1", "benchmark": "osworld", "domain": "os", "task_id": "t"}
        | {"step_idx": i, "screenshot_path": f"os/t/step_{i}.png", "content_hash": h}
        for i, h in enumerate(["own", "other", "corrupt", None])
    ]
    wh.write("screenshot_refs", refs, part1)

    def shot(h: str, run: str, phash: int | None, status: str = "ok") -> dict:
        return {"content_hash": h, "run_id": run, "benchmark": "osworld", "phash": phash}.copy() | {
            "n_bytes": 10,
            "status": status,
        }

    wh.write("screenshots", [shot("own", "r1", -5), shot("corrupt", "r1", None, "corrupt")], part1)
    wh.write("screenshots", [shot("other", "r2", 2**62)], {"benchmark": "osworld", "run_id": "r2"})
    return wh


def test_phashes_come_from_the_screenshots_of_any_run_and_only_usable_ones(
    tmp_path: Path,
) -> None:
    wh = _shots_in_two_runs(tmp_path)
    frame, episodes = (pl.from_arrow(t) for t in run_frames(wh, "osworld", "r1"))
    assert frame.get_column("phash").to_list() == [-5, 2**62, None, None]
    assert frame.columns == list(STEP_COLUMNS)
    assert episodes.get_column("max_steps").to_list() == [None]


def test_other_runs_hashes_are_read_once_per_job_not_once_per_run(tmp_path, monkeypatch) -> None:
    """A job keeps the other runs' hashes once it has read them: releases whose runs share
    screenshots no longer read the whole screenshots table again for every run."""
    wh = _shots_in_two_runs(tmp_path)
    alone = run_frames(wh, "osworld", "r1")[0]
    whole_reads = []
    read = Warehouse.read

    def counted(self, name, partition=None, **kw):
        if name == "screenshots" and partition is None:
            whole_reads.append(name)
        return read(self, name, partition, **kw)

    monkeypatch.setattr(Warehouse, "read", counted)
    stage = LoopsStage(str(tmp_path))
    stage.setup()
    for _ in range(3):
        assert run_frames(stage.wh, "osworld", "r1", stage.shared)[0].equals(alone)
    assert len(whole_reads) == 1


# --------------------------------------------------------------------------- the real runs


@pytest.fixture(scope="module")
def sec_eval(sec_eval_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The 24 real Claude runs, ingested, their screenshots hashed, their loops detected."""
    from deskscore.pipelines.jobs.hash import run_hash

    wh = tmp_path_factory.mktemp("sec-wh")
    run_ingest(
        IngestOptions(
            str(wh),
            sources=(str(sec_eval_dir),),
            layout="{domain}/{task_id}",
            benchmark="osworld-sec-eval",
            engine="direct",
        )
    )
    hashed = run_hash(HashOptions(str(wh)))
    run_loops(str(wh))
    [run] = Warehouse(wh).read("runs").to_pylist()
    steps, episodes = (
        pl.from_arrow(t) for t in run_frames(Warehouse(wh), run["benchmark"], run["run_id"])
    )
    flags, _ = detect_loops(steps, episodes)
    return {
        "wh": wh,
        "hashed": hashed,
        "steps": steps,
        "episodes": episodes,
        "flags": flags,
    }


def test_the_real_runs_have_phashes_for_their_screenshots(sec_eval) -> None:
    steps = sec_eval["steps"]
    assert sec_eval["hashed"]["decoded"] > 200
    assert steps.get_column("phash").null_count() == 2  # the two lines without a screenshot


def test_the_real_runs_show_no_loop(sec_eval) -> None:
    """The agent never repeats itself: it navigates (move, then click at the pointer), types,
    runs different shell commands. Screens often stay the same (a shell command run without a
    terminal, a pointer move), so phash fires alone; its reasoning (read from messages.json)
    is new at every turn, so the response signal votes but never fires."""
    assert Warehouse(sec_eval["wh"]).read("loop_spans").num_rows == 0
    flags = sec_eval["flags"]
    assert flags.height == sec_eval["episodes"].get_column("n_steps").sum()
    assert not flags.get_column("response").any()
    assert flags.get_column("phash").sum() > 50
    assert flags.filter(pl.col("phash")).get_column("n_available").max() >= 2
    assert not flags.get_column("repeats").any()


def test_the_response_signal_votes_on_the_real_runs(sec_eval) -> None:
    """Each pair of steps of two turns whose replies were read adds one available signal."""
    steps = sec_eval["steps"].filter(pl.col("action_kind") != "error")
    assert steps.get_column("response").null_count() < steps.height // 5  # final turns only
    ordered = steps.sort("domain", "task_id", "step_idx")
    prev = ordered.shift(1)
    voting = (
        (ordered.get_column("task_id") == prev.get_column("task_id"))
        & (ordered.get_column("step_num") != prev.get_column("step_num"))
        & ordered.get_column("response").is_not_null()
        & prev.get_column("response").is_not_null()
    ).sum()
    unread = sec_eval["steps"].with_columns(pl.lit(None, pl.String).alias("response"))
    without, _ = detect_loops(unread, sec_eval["episodes"])
    gained = sec_eval["flags"].get_column("n_available").sum() - without["n_available"].sum()
    assert gained == voting > 100


# --------------------------------------------------------------------------- the listing


def test_the_listing_ranks_episodes_by_looping_steps(generated) -> None:
    rows = json.loads(worst_episodes_text(str(generated["wh"]), top=4, fmt="json"))
    con = connect(generated["wh"])
    top = con.sql("SELECT max(looping_steps) FROM episode_loops").fetchall()[0][0]
    assert rows[0]["looping_steps"] == top
    keys: list[tuple] = []
    for r in rows:
        if (r["run_id"], r["domain"], r["task_id"]) not in keys:
            keys.append((r["run_id"], r["domain"], r["task_id"]))
    assert len(keys) == 4
    looping = [
        next(r["looping_steps"] for r in rows if (r["run_id"], r["domain"], r["task_id"]) == k)
        for k in keys
    ]
    assert looping == sorted(looping, reverse=True)
    n_spans = sum(
        con.execute(
            "SELECT n_spans FROM episode_loops WHERE run_id = ? AND domain = ? AND task_id = ?",
            list(k),
        ).fetchall()[0][0]
        for k in keys
    )
    assert len(rows) == n_spans  # one row per span


def test_the_listing_filters_by_run_as_a_parameter(generated) -> None:
    run_id = generated["runs"][0]["run_id"]
    rows = json.loads(worst_episodes_text(str(generated["wh"]), run_id=run_id, fmt="json"))
    assert rows and {r["run_id"] for r in rows} == {run_id}
    hostile = f"{run_id}' OR '1'='1"
    assert json.loads(worst_episodes_text(str(generated["wh"]), run_id=hostile, fmt="json")) == []


def _listing_warehouse(root: Path) -> Path:
    """One run: episode t1 with two spans (3 + 1 looping steps), t2 with one of 5, t3 none."""
    wh = Warehouse(root)
    part = {"benchmark": "osworld", "run_id": "r1"}
    run = {"run_id": "r1", "benchmark": "osworld", "source": "s", "run_path": ""}
    wh.write("runs", [run | {"format": "osworld", "agent": "agent-x", "n_task_folders": 3}], part)
    episodes = [
        {"run_id": "r1", "benchmark": "osworld", "domain": "vlc", "task_id": t}
        | {"source_task_id": t, "task_path": f"vlc/{t}", "n_lines": n, "n_steps": n}
        | {"n_turns": n, "n_error_lines": 0, "n_quarantined": 0, "result_status": "missing"}
        | {"ended_by": "none"}
        for t, n in (("t1", 20), ("t2", 10), ("t3", 8))
    ]
    wh.write("episodes", episodes, part)
    spans = [
        {"run_id": "r1", "benchmark": "osworld", "domain": "vlc", "task_id": t}
        | {"first_step": a, "last_step": b, "length": b - a + 1, "looping_steps": b - a}
        | {"signals": ["response", "coords"], "outcome": o, "detector_version": "v"}
        for t, a, b, o in (
            ("t1", 2, 5, "recovered"),
            ("t1", 9, 10, "abandoned"),
            ("t2", 4, 9, "step_limit"),
        )
    ]
    wh.write("loop_spans", spans, part)
    return root


def test_the_listing_table_prints_an_episode_once_above_its_spans(tmp_path: Path) -> None:
    wh = str(_listing_warehouse(tmp_path))
    lines = worst_episodes_text(wh).splitlines()
    assert lines[0].split()[:4] == ["agent", "run", "domain", "task"]
    body = lines[2:-1]
    assert [line.split()[3] for line in body[:2]] == ["t2", "t1"]  # 5 looping steps, then 4
    assert body[2].startswith(" ") and "9-10" in body[2] and "abandoned" in body[2]
    assert len(body) == 3 and lines[-1] == "(3 rows)"
    rows = json.loads(worst_episodes_text(wh, fmt="json"))
    assert [(r["task_id"], r["span"], r["looping_pct"]) for r in rows] == [
        ("t2", "4-9", 50.0),
        ("t1", "2-5", 20.0),
        ("t1", "9-10", 20.0),
    ]
    assert json.loads(worst_episodes_text(wh, top=1, fmt="json"))[0]["task_id"] == "t2"


def test_the_listing_gives_each_span_the_turns_its_steps_are_in(tmp_path: Path) -> None:
    """Spans count steps from 0 (step_idx); the trajectory and its screenshots number turns
    (step_num), which need not be step_idx + 1 (two actions of one turn share a number): the
    listing shows both, read from the steps themselves."""
    root = _listing_warehouse(tmp_path)
    turns = {"t1": [1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 9], "t2": [1, 2, 3, 4, None, 5, 6, 7, 8, 9]}
    steps = [
        {"run_id": "r1", "benchmark": "osworld", "domain": "vlc", "task_id": t, "step_idx": i}
        | {"line_no": i + 1, "step_num": n, "action_format": "pyautogui", "action_kind": "click"}
        for t, numbers in turns.items()
        for i, n in enumerate(numbers)
    ]
    Warehouse(root).write("steps", steps, {"benchmark": "osworld", "run_id": "r1"})
    rows = json.loads(worst_episodes_text(str(root), fmt="json"))
    assert [(r["task_id"], r["span"], r["turns"]) for r in rows] == [
        ("t2", "4-9", None),  # it starts on a runner's error row, which has no turn
        ("t1", "2-5", "2-5"),
        ("t1", "9-10", "9-9"),
    ]
    header = worst_episodes_text(str(root)).splitlines()[0]
    assert "span (step_idx)" in header and "turns (step_num)" in header

"""The synthetic archive generator: realistic OSWorld result folders, deterministic per seed."""

from __future__ import annotations

import ast
import io
import itertools
import json
import re
import statistics
import uuid
import zipfile
from importlib import resources
from pathlib import Path

import pytest

from deskscore.collectors import synthetic
from deskscore.collectors.ids import thunderbird_old_to_new
from deskscore.collectors.synthetic import (
    AgentProfile,
    load_profiles,
    plan_run,
    write_demo_archive,
    write_run,
    write_zip,
)
from deskscore.collectors.synthetic import planning as planning_module
from deskscore.collectors.synthetic.demo import bundled_tasks
from deskscore.collectors.synthetic.profiles import profiles_path
from deskscore.collectors.synthetic.texts import TEXTS_FILE, parse_texts, texts
from deskscore.scorers.domains import OSWORLD_DOMAINS

BASE_KEYS = {
    "step_num",
    "action_timestamp",
    "action",
    "response",
    "reward",
    "done",
    "info",
    "screenshot_file",
}
TS_SECONDS = re.compile(r"^\d{8}@\d{6}$")
TS_MICROS = re.compile(r"^\d{8}@\d{12}$")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def made_up_tasks() -> list[dict]:
    """Three tasks per domain with human step counts from 1 to 40, one infeasible per domain."""
    rows = []
    for d, domain in enumerate(OSWORLD_DOMAINS):
        for k, steps in enumerate((1 + d % 3, 5 + d, 12 + 3 * d)):
            rows.append(
                {
                    "domain": domain,
                    "task_id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{domain}/{k}")),
                    "single_steps": steps,
                    "grouped_steps": max(1, steps // 2),
                    "infeasible": k == 0,
                }
            )
    return rows


def profile(**changes: object) -> AgentProfile:
    base = {
        "name": "probe",
        "model": "org/probe-7b",
        "action_space": "pyautogui",
        "observation_type": "screenshot",
        "skill": 0.5,
        "efficiency": 1.8,
        "max_steps": 15,
        "loop_rate": 0.5,
        "error_rate": 0.1,
        "partial_rate": 0.2,
        "actions_per_turn": 1.0,
        "timestamp_micros": False,
    }
    base.update(changes)
    return AgentProfile(**base)  # type: ignore[arg-type]


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def source_files(source: Path) -> dict[str, bytes]:
    """Every file of a folder or a zip (macOS metadata and directory entries left out)."""
    if source.is_dir():
        return tree_bytes(source)
    with zipfile.ZipFile(source) as zf:
        return {
            n: zf.read(n)
            for n in zf.namelist()
            if not n.endswith("/") and not n.startswith("__MACOSX/")
        }


def task_folders(files: dict[str, bytes]) -> dict[str, dict[str, bytes]]:
    """`<...>/<domain>/<uuid>` -> {file name: bytes}, found the way robust readers find them."""
    out: dict[str, dict[str, bytes]] = {}
    for name, data in files.items():
        parts = name.split("/")
        if len(parts) >= 3 and parts[-3] in OSWORLD_DOMAINS and UUID.match(parts[-2]):
            out.setdefault("/".join(parts[:-1]), {})[parts[-1]] = data
    return out


def traj_lines(folder: dict[str, bytes]) -> list[dict]:
    return [json.loads(line) for line in folder["traj.jsonl"].decode().splitlines()]


def result_value(text: bytes) -> float:
    """result.txt read as OSWorld-Human's score.py reads it."""
    first = text.decode().splitlines()[0]
    return {"True": 1.0, "False": 0.0}.get(first) if first in ("True", "False") else float(first)


def action_lines(lines: list[dict]) -> list[dict]:
    return [x for x in lines if "Error" not in x]


def loops_in(lines: list[dict]) -> int:
    """Longest run of consecutive lines with the same response and the same kind of action."""
    best = run = 1
    for a, b in itertools.pairwise(lines):
        same = a["response"] == b["response"] and _op(a["action"]) == _op(b["action"])
        run = run + 1 if same and a["step_num"] != b["step_num"] else 1
        best = max(best, run)
    return best if lines else 0


def _op(action: object) -> str:
    if isinstance(action, dict):
        return str(action.get("action_type")) + str(action.get("input", {}).get("action", ""))
    return re.sub(r"\(.*", "", str(action))


# --------------------------------------------------------------------------- determinism


def test_same_seed_writes_identical_bytes_and_another_seed_does_not(tmp_path: Path) -> None:
    tasks = made_up_tasks()
    agent = profile(actions_per_turn=2.0, timestamp_micros=True, action_space="claude_computer_use")
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        write_run(tmp_path / name, agent, tasks, seed=seed, screenshots="tiny")
    a, b, c = (tree_bytes(tmp_path / n) for n in "abc")
    assert a == b
    assert a != c
    assert sum(1 for k in a if k.endswith(".png")) > 50


def test_zip_of_the_same_folder_is_byte_identical(tmp_path: Path) -> None:
    run_root = write_run(tmp_path / "run", profile(), made_up_tasks()[:6], seed=1)
    first = write_zip(tmp_path / "run", tmp_path / "one.zip", prefix="results")
    second = write_zip(tmp_path / "run", tmp_path / "two.zip", prefix="results")
    assert first.read_bytes() == second.read_bytes()
    assert run_root == tmp_path / "run" / "pyautogui" / "screenshot" / "org" / "probe-7b"


def test_task_order_does_not_change_the_output(tmp_path: Path) -> None:
    tasks = made_up_tasks()
    write_run(tmp_path / "fwd", profile(), tasks, seed=3)
    write_run(tmp_path / "rev", profile(), list(reversed(tasks)), seed=3)
    assert tree_bytes(tmp_path / "fwd") == tree_bytes(tmp_path / "rev")


# --------------------------------------------------------------------------- format


@pytest.mark.parametrize("space", ["pyautogui", "claude_computer_use", "computer_13"])
def test_every_traj_line_is_json_with_the_base_keys(tmp_path: Path, space: str) -> None:
    micros = space == "claude_computer_use"
    agent = profile(
        action_space=space, timestamp_micros=micros, actions_per_turn=2.2 if micros else 1
    )
    write_run(tmp_path, agent, made_up_tasks() * 1, seed=5, screenshots="none")
    folders = task_folders(tree_bytes(tmp_path))
    n_lines = 0
    for folder in folders.values():
        lines = traj_lines(folder)
        n_lines += len(lines)
        for i, line in enumerate(lines):
            if "Error" in line:
                assert set(line) == {"Error"} and i == len(lines) - 1
                continue
            assert set(line) == BASE_KEYS
            assert line["reward"] == 0
            assert line["info"] in ({}, {"done": True}, {"fail": True})
            assert line["done"] == bool(line["info"])
            assert (TS_MICROS if micros else TS_SECONDS).match(line["action_timestamp"])
            stamp = line["action_timestamp"]
            assert line["screenshot_file"] == f"step_{line['step_num']}_{stamp}.png"
            action = line["action"]
            if space == "pyautogui":
                assert isinstance(action, str)
                assert action in ("WAIT", "DONE", "FAIL") or "pyautogui." in action
            elif space == "claude_computer_use":
                assert action.get("action_type") in ("tool_use", "DONE", "FAIL")
                if action["action_type"] == "tool_use":
                    assert action["name"] == "computer" and action["command"].startswith(
                        "import pyautogui"
                    )
                    assert action["raw_response"] == line["response"]
            else:
                assert action["action_type"] in {
                    "CLICK",
                    "DOUBLE_CLICK",
                    "RIGHT_CLICK",
                    "MOVE_TO",
                    "TYPING",
                    "PRESS",
                    "HOTKEY",
                    "SCROLL",
                    "WAIT",
                    "DONE",
                    "FAIL",
                }
        steps = [x["step_num"] for x in action_lines(lines)]
        assert steps == sorted(steps) and (not steps or steps[0] == 1)
        assert len(set(steps)) <= agent.max_steps
        stamps = [x["action_timestamp"] for x in action_lines(lines)]
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert n_lines > 100


def test_lines_look_like_the_real_claude_runs(sec_eval_dir: Path, tmp_path: Path) -> None:
    """Same keys, value types and timestamp shape as lines real OSWorld runners wrote."""
    real = [
        json.loads(line)
        for traj in sorted(sec_eval_dir.glob("*/*/traj.jsonl"))
        for line in traj.read_text().splitlines()
    ]
    real_actions = [x for x in real if "Error" not in x]
    assert real_actions and any("Error" in x for x in real)
    write_run(tmp_path, profile(error_rate=0.5), made_up_tasks(), seed=2)
    ours = [x for f in task_folders(tree_bytes(tmp_path)).values() for x in traj_lines(f)]
    ours_actions = [x for x in ours if "Error" not in x]
    assert {k for x in real if "Error" in x for k in x} == {
        k for x in ours if "Error" in x for k in x
    }
    assert set.union(*(set(x) for x in real_actions)) <= set(ours_actions[0])
    for key in ("step_num", "action_timestamp", "reward", "done", "info", "screenshot_file"):
        assert {type(x[key]) for x in real_actions} == {type(x[key]) for x in ours_actions}, key
    assert all(TS_SECONDS.match(x["action_timestamp"]) for x in real_actions)


def test_run_level_files_agree_with_the_task_folders(tmp_path: Path) -> None:
    run_root = write_run(tmp_path, profile(error_rate=0.3), made_up_tasks(), seed=4)
    folders = task_folders(tree_bytes(run_root))
    args = json.loads((run_root / "args.json").read_text())
    assert (args["model"], args["max_steps"], args["action_space"]) == (
        "org/probe-7b",
        15,
        "pyautogui",
    )
    all_result = ast.literal_eval((run_root / "all_result.json").read_text())
    with_result = {
        k: result_value(v["result.txt"]) for k, v in folders.items() if "result.txt" in v
    }
    assert {f"{d}/{t}": s for d, m in all_result.items() for t, s in m.items()} == with_result
    summary = json.loads((tmp_path / "summary" / "results.json").read_text())
    assert all(
        set(e) >= {"application", "task_id", "status", "score", "timestamp"} for e in summary
    )
    errors = {f"{e['application']}/{e['task_id']}" for e in summary if e["status"] == "error"}
    with_error_line = {k for k, v in folders.items() if b'{"Error": ' in v["traj.jsonl"]}
    assert errors == with_error_line and errors


def test_flat_layout_puts_domains_and_args_at_the_root(tmp_path: Path) -> None:
    run_root = write_run(tmp_path, profile(), made_up_tasks()[:4], seed=0, model_level=False)
    assert run_root == tmp_path
    assert (tmp_path / "args.json").is_file()
    assert {p.name for p in tmp_path.iterdir() if p.is_dir()} >= {"chrome", "gimp"}


def test_results_are_printed_the_way_osworld_prints_them(tmp_path: Path) -> None:
    agent = profile(skill=0.9, partial_rate=0.5, error_rate=0.0)
    tasks = [
        {
            "domain": d,
            "task_id": str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{d}{i}")),
            "single_steps": 3 + i % 20,
            "infeasible": i % 7 == 0,
        }
        for i in range(120)
        for d in ("chrome",)
    ]
    write_run(tmp_path, agent, tasks, seed=0)
    texts = {
        f["result.txt"] for f in task_folders(tree_bytes(tmp_path)).values() if "result.txt" in f
    }
    assert {b"1.0\n", b"0.0\n", b"1\n", b"0\n", b"True\n", b"False\n"} <= texts
    assert any(0 < result_value(t) < 1 for t in texts)  # partial credit such as 0.5
    assert all(t.endswith(b"\n") and t.count(b"\n") == 1 for t in texts)


# --------------------------------------------------------------------------- screenshots


def test_tiny_screenshots_repeat_exactly_when_the_agent_loops(tmp_path: Path) -> None:
    from PIL import Image

    agent = profile(loop_rate=1.0, skill=0.0, error_rate=0.0)
    write_run(tmp_path, agent, made_up_tasks(), seed=11, screenshots="tiny")
    looped = 0
    for folder in task_folders(tree_bytes(tmp_path)).values():
        lines = action_lines(traj_lines(folder))
        for line in lines:
            image = Image.open(io.BytesIO(folder[line["screenshot_file"]]))
            assert image.size == (64, 36) and image.format == "PNG"
        for a, b in itertools.pairwise(lines):
            same_turn_text = a["response"] == b["response"] and _op(a["action"]) == _op(b["action"])
            if same_turn_text and "click" in _op(a["action"]):
                looped += 1
                assert folder[a["screenshot_file"]] == folder[b["screenshot_file"]]
            elif _op(b["action"]) not in ("WAIT", "DONE", "FAIL") and not same_turn_text:
                assert folder[a["screenshot_file"]] != folder[b["screenshot_file"]]
    assert looped > 10


def test_loops_repeat_the_response_with_near_identical_clicks(tmp_path: Path) -> None:
    agent = profile(loop_rate=1.0, skill=0.0, error_rate=0.0, max_steps=50)
    for plan in plan_run(agent, made_up_tasks(), seed=2):
        loop = [t for t in plan.turns if t.loop]
        if not loop:
            continue
        assert 3 <= len(loop) <= 10
        assert len({t.response for t in loop}) == 1
        points = [(t.acts[0].x, t.acts[0].y) for t in loop]
        assert max(abs(x - points[0][0]) + abs(y - points[0][1]) for x, y in points) <= 6


def test_no_screenshots_still_names_them(tmp_path: Path) -> None:
    write_run(tmp_path, profile(), made_up_tasks()[:6], seed=0, screenshots="none")
    files = tree_bytes(tmp_path)
    assert not any(k.endswith(".png") for k in files)
    named = [
        x["screenshot_file"]
        for f in task_folders(files).values()
        for x in action_lines(traj_lines(f))
    ]
    assert named and all(n.startswith("step_") and n.endswith(".png") for n in named)


def test_realistic_screenshots_are_full_size_and_differ_between_steps(tmp_path: Path) -> None:
    from PIL import Image

    task_id = str(uuid.uuid5(uuid.NAMESPACE_URL, "realistic"))
    tasks = [{"domain": "libreoffice_calc", "task_id": task_id, "single_steps": 4}]
    agent = profile(skill=1.0, error_rate=0.0, efficiency=1.5)
    write_run(tmp_path, agent, tasks, seed=0, screenshots="realistic")
    (folder,) = task_folders(tree_bytes(tmp_path)).values()
    lines = action_lines(traj_lines(folder))
    assert len(lines) >= 4 and lines[-1]["action"] == "DONE"
    assert Image.open(io.BytesIO(folder[lines[0]["screenshot_file"]])).size == (1280, 720)
    for a, b in itertools.pairwise(lines):
        if b["action"] not in ("WAIT", "DONE"):
            assert folder[a["screenshot_file"]] != folder[b["screenshot_file"]]


# --------------------------------------------------------------------------- zips


def test_zip_holds_a_prefix_folder_and_macos_entries(tmp_path: Path) -> None:
    write_run(tmp_path / "run", profile(), made_up_tasks()[:5], seed=0, screenshots="tiny")
    path = write_zip(tmp_path / "run", tmp_path / "run.zip", prefix="release-2025")
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        assert zf.testzip() is None
        assert all(n.startswith(("release-2025/", "__MACOSX/")) for n in names)
        assert "release-2025/" in names and "__MACOSX/" in names
        assert any(n.startswith("__MACOSX/release-2025/") and "/._" in n for n in names)
    assert source_files(path) == {
        f"release-2025/{k}": v for k, v in tree_bytes(tmp_path / "run").items()
    }


# --------------------------------------------------------------------------- profiles


def test_bundled_profiles_are_clearly_different() -> None:
    profiles = load_profiles()
    assert len(profiles) >= 4
    assert {p.action_space for p in profiles} == {"pyautogui", "claude_computer_use", "computer_13"}
    assert max(p.skill for p in profiles) - min(p.skill for p in profiles) > 0.3
    assert max(p.efficiency for p in profiles) - min(p.efficiency for p in profiles) > 1.0
    assert any(p.actions_per_turn > 1 and p.timestamp_micros for p in profiles)
    assert any(p.loop_rate > 0.5 for p in profiles)


def test_a_profile_with_a_misspelt_field_is_refused(tmp_path: Path) -> None:
    raw = json.loads(profiles_path().read_text())
    raw["profiles"][0]["skil"] = raw["profiles"][0].pop("skill")
    path = tmp_path / "agents.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="skil"):
        load_profiles(path)


# --------------------------------------------------------------------------- text tables


def test_text_tables_cover_every_domain_and_every_action() -> None:
    tables = texts()
    for table in (tables.targets, tables.texts, tables.hotkeys):
        assert set(table) == set(OSWORLD_DOMAINS)
        assert all(entries for entries in table.values())
    assert all(
        isinstance(combo, tuple) and all(k and "+" not in k for k in combo)
        for combos in tables.hotkeys.values()
        for combo in combos
    )
    ops = {"click", "double_click", "right_click", "move", "write", "press", "hotkey"}
    assert ops | {"scroll", "wait", "done", "fail"} <= set(tables.intents)
    assert all(float(p) < 1 for p in tables.partials)
    assert all(e.format(d="chrome", i="x") for e in tables.errors)


def test_what_agents_say_and_type_comes_from_the_text_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raw = json.loads(resources.files("deskscore.datasets").joinpath(TEXTS_FILE).read_text())
    raw["openers"] = ["Marker opener about {t}."]
    raw["texts"] = {d: ["marker typed text"] for d in raw["texts"]}
    edited = parse_texts(raw)
    monkeypatch.setattr(planning_module, "texts", lambda: edited)
    plans = plan_run(profile(error_rate=0.0), made_up_tasks(), seed=0)
    turns = [t for p in plans for t in p.turns]
    assert turns and all(t.response.startswith("Marker opener about ") for t in turns)
    typed = {a.text for t in turns for a in t.acts if a.op == "write"}
    assert typed == {"marker typed text"}


# --------------------------------------------------------------------------- the demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> synthetic.DemoArchive:
    """The full demo over the bundled human index (no PNGs, to keep the suite quick)."""
    return write_demo_archive(tmp_path_factory.mktemp("demo"), seed=0, screenshots="none")


@pytest.fixture(scope="module")
def demo_folders(demo: synthetic.DemoArchive) -> dict[str, dict[str, dict[str, bytes]]]:
    return {r.stats.agent: task_folders(source_files(r.source)) for r in demo.runs}


def test_demo_sources_are_folders_and_one_zip(demo: synthetic.DemoArchive) -> None:
    kinds = sorted("zip" if s.suffix == ".zip" else "dir" for s in demo.sources)
    assert kinds.count("zip") == 1 and kinds.count("dir") >= 3
    assert all(s.exists() and demo.out_dir in s.parents for s in demo.sources)
    on_disk = json.loads((demo.out_dir / synthetic.MANIFEST_NAME).read_text())
    assert on_disk == demo.manifest()
    with zipfile.ZipFile(next(s for s in demo.sources if s.suffix == ".zip")) as zf:
        names = zf.namelist()
    prefixes = {n.split("/")[0] for n in names}
    assert "__MACOSX" in prefixes and len(prefixes) == 2


def test_demo_manifest_counts_match_the_files(demo: synthetic.DemoArchive, demo_folders) -> None:
    n_human = len(bundled_tasks("verified"))
    for run in demo.runs:
        s = run.stats
        folders = demo_folders[s.agent]
        results = [result_value(f["result.txt"]) for f in folders.values() if "result.txt" in f]
        lines = [traj_lines(f) for f in folders.values()]
        assert s.n_planned == n_human and s.n_tasks + s.n_absent == n_human and s.n_absent > 0
        assert len(folders) == s.n_tasks
        assert len(results) == s.n_with_result < s.n_tasks
        assert sum(1 for r in results if r == 1.0) == s.planned_successes
        assert sum(results) == pytest.approx(s.planned_score)
        assert sum(len(x) for x in lines) == s.n_lines
        assert sum(1 for x in lines if x and "Error" in x[-1]) == s.n_errors
        assert {k.rsplit("/", 2)[0] if k.count("/") > 1 else "" for k in folders} == {run.run_path}


def test_demo_covers_every_domain_and_the_awkward_cases(demo_folders) -> None:
    everything = [f for folders in demo_folders.values() for f in folders.values()]
    for agent, folders in demo_folders.items():
        assert {k.split("/")[-2] for k in folders} == set(OSWORLD_DOMAINS), agent
    texts = {f["result.txt"] for f in everything if "result.txt" in f}
    assert {b"True\n", b"False\n", b"0.5\n"} <= texts
    assert sum(1 for f in everything if "result.txt" not in f) >= 10
    assert any(b'{"Error": ' in f["traj.jsonl"] and "result.txt" not in f for f in everything)
    fails = [
        f for f in everything if traj_lines(f) and traj_lines(f)[-1].get("info") == {"fail": True}
    ]
    assert any(
        f.get("result.txt") == b"1\n" for f in fails
    )  # an infeasible task answered with FAIL
    assert any(f.get("result.txt") == b"0\n" for f in fails)  # giving up on a feasible one


def test_demo_claude_run_shares_step_nums_and_uses_microseconds(demo_folders) -> None:
    claude = next(v for k, v in demo_folders.items() if "claw" in k)
    lines = [x for f in claude.values() for x in action_lines(traj_lines(f))]
    assert all(TS_MICROS.match(x["action_timestamp"]) for x in lines)
    turns = sum(len({x["step_num"] for x in action_lines(traj_lines(f))}) for f in claude.values())
    assert len(lines) / turns > 1.5
    assert any(isinstance(x["action"], dict) and x["action"].get("input") for x in lines)


def test_demo_legacy_run_uses_pre_2025_thunderbird_ids(demo_folders) -> None:
    old_ids = set(thunderbird_old_to_new())
    for agent, folders in demo_folders.items():
        ids = {k.split("/")[-1] for k in folders if k.split("/")[-2] == "thunderbird"}
        if agent == "legacy-c13":
            assert ids and ids <= old_ids
        else:
            assert not ids & old_ids


def test_demo_agents_differ_in_the_intended_direction(demo_folders) -> None:
    def success_steps(agent: str) -> float:
        folders = demo_folders[agent].values()
        return statistics.mean(
            len(traj_lines(f))
            for f in folders
            if "result.txt" in f and result_value(f["result.txt"]) == 1.0
        )

    def success_rate(agent: str) -> float:
        folders = demo_folders[agent].values()
        return sum(
            result_value(f["result.txt"]) == 1.0 for f in folders if "result.txt" in f
        ) / len(folders)

    def loop_share(agent: str) -> float:
        folders = demo_folders[agent].values()
        return statistics.mean(loops_in(action_lines(traj_lines(f))) >= 3 for f in folders)

    assert success_steps("atlas-swift") < success_steps("atlas-deliberate")
    assert success_rate("atlas-swift") > success_rate("claw-cu") > success_rate("loopy-7b")
    assert success_rate("atlas-deliberate") > 2 * success_rate("loopy-7b")
    assert loop_share("loopy-7b") > 2 * loop_share("atlas-swift")


def test_demo_rerun_replaces_the_previous_one(tmp_path: Path) -> None:
    tasks = made_up_tasks()[:12]
    first = write_demo_archive(tmp_path, seed=1, tasks=tasks, screenshots="tiny")
    before = tree_bytes(tmp_path)
    again = write_demo_archive(tmp_path, seed=1, tasks=tasks, screenshots="tiny")
    assert tree_bytes(tmp_path) == before and first.manifest() == again.manifest()
    write_demo_archive(tmp_path, seed=2, tasks=tasks, screenshots="tiny")
    assert tree_bytes(tmp_path) != before


def test_demo_refuses_a_folder_it_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "runs" / "mine").mkdir(parents=True)
    with pytest.raises(FileExistsError):
        write_demo_archive(tmp_path, tasks=made_up_tasks()[:3])
    assert (tmp_path / "runs" / "mine").is_dir()


def test_two_agents_in_one_result_dir_share_the_summary(tmp_path: Path) -> None:
    tasks = made_up_tasks()[:6]
    a = write_run(tmp_path, profile(name="a", model="model-a"), tasks, seed=0)
    b = write_run(tmp_path, profile(name="b", model="model-b"), tasks, seed=0)
    assert a.parent == b.parent and a != b
    summary = json.loads((tmp_path / "summary" / "results.json").read_text())
    with_result = [f for f in task_folders(tree_bytes(tmp_path)).values() if "result.txt" in f]
    assert len(summary) >= len(with_result) > len(tasks)


def test_the_mixed_archive_carries_its_damage_and_is_the_same_each_time(tmp_path: Path) -> None:
    from PIL import Image

    from deskscore.collectors.synthetic.hostile import (
        CUT_LINE,
        ESCAPING_MEMBER,
        STRAY_FILE,
        write_mixed_archive,
    )

    sources = write_mixed_archive(tmp_path / "a", zips=2)
    write_mixed_archive(tmp_path / "b", zips=2)
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    folder, first_zip, _ = sources
    assert folder.is_dir() and [p.suffix for p in sources[1:]] == [".zip", ".zip"]

    cut = [p for p in folder.rglob("traj.jsonl") if p.read_bytes().endswith(CUT_LINE)]
    assert len(cut) == 1 and (cut[0].parent / STRAY_FILE).is_file()
    broken = 0
    for path in folder.rglob("*.png"):
        try:
            with Image.open(path) as image:
                image.load()
        except (OSError, SyntaxError):
            broken += 1
    assert broken == 2
    with zipfile.ZipFile(first_zip) as zf:
        assert ESCAPING_MEMBER in zf.namelist()
        members = [n for n in zf.namelist() if n.endswith("traj.jsonl")]
        assert sum(zf.read(n).endswith(CUT_LINE) for n in members) == 1

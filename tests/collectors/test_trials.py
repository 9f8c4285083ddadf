"""Trials found by discovery: trial folders below the tasks, trial levels above the domains,
and the folders that only look like trials (CoAct's cua_output_N, dates, step budgets)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskscore.collectors.ids import run_id
from deskscore.collectors.layout import discover, discover_source, parse_layout
from deskscore.collectors.source import open_source
from deskscore.collectors.synthetic import load_profiles, task_slice
from deskscore.collectors.synthetic.trials import write_trials
from deskscore.collectors.trials import is_trial_name, run_identity, trial_label

A = "0a1b2c3d-1111-4222-8333-444455556666"
B = "bb5e4c0d-f964-439c-97b6-bdb9747de3f4"
ROOT = "results/pyautogui/screenshot/qwen3-vl"


def _files(folder: str, *names: str) -> list[str]:
    return [f"{folder}/{n}" for n in names or ("traj.jsonl", "result.txt")]


def test_trial_names_are_small_whole_numbers() -> None:
    assert all(is_trial_name(n) for n in ("0", "1", "9", "10", "999"))
    assert not any(
        is_trial_name(n) for n in ("", "01", "1000", "-1", "1.0", "t1", "trial_1", "results1")
    )


def test_trial_folders_below_the_tasks_make_one_run_per_trial_with_the_same_root() -> None:
    files = [
        *_files(f"{ROOT}/chrome/{A}/0"),
        *_files(f"{ROOT}/chrome/{A}/1"),
        *_files(f"{ROOT}/os/{B}/0"),
        *_files(f"{ROOT}/os/{B}/2", "traj.jsonl"),  # a trial without result.txt (fxsc03)
        f"{ROOT}/args.json",
    ]
    runs = discover(files)
    assert [(r.run_path, r.trial, r.group_path) for r in runs] == [
        (ROOT, "0", ROOT),
        (ROOT, "1", ROOT),
        (ROOT, "2", ROOT),
    ]
    assert [[(t.domain, t.task_id, t.path) for t in r.tasks] for r in runs] == [
        [("chrome", A, f"{ROOT}/chrome/{A}/0"), ("os", B, f"{ROOT}/os/{B}/0")],
        [("chrome", A, f"{ROOT}/chrome/{A}/1")],
        [("os", B, f"{ROOT}/os/{B}/2")],
    ]
    assert runs[2].tasks[0].files == ("traj.jsonl",)


def test_each_trial_has_its_own_stable_id_and_the_group_is_the_trial_less_roots_id() -> None:
    files = [*_files(f"{ROOT}/chrome/{A}/0"), *_files(f"{ROOT}/chrome/{A}/1")]
    first = [run_identity("/src", r) for r in discover(files)]
    again = [run_identity("/src", r) for r in discover(list(reversed(files)))]
    assert first == again
    assert len({rid for rid, _ in first}) == 2
    assert {group for _, group in first} == {run_id("/src", ROOT)}
    assert run_id("/src", ROOT) not in {rid for rid, _ in first}


def test_a_trial_level_above_the_domains_makes_trials_of_the_folder_above() -> None:
    runs = discover([f for k in ("0", "1", "2") for f in _files(f"{ROOT}/{k}/chrome/{A}")])
    assert [(r.run_path, r.trial, r.group_path) for r in runs] == [
        (f"{ROOT}/{k}", k, ROOT) for k in ("0", "1", "2")
    ]
    for r in runs:  # the run keeps the id its path always gave it; the group is the root's
        assert run_identity("/src", r) == (run_id("/src", r.run_path), run_id("/src", ROOT))


@pytest.mark.parametrize(
    "levels",
    [
        ("20250101", "20250102"),  # date folders
        ("2025-01-01",),
        ("15", "50"),  # step budgets side by side
        ("100",),
        ("2", "3"),  # numbers that do not start at 0 or 1
        ("gpt-4o", "claude-3-7"),  # model names
    ],
)
def test_folders_above_the_domains_that_only_look_numeric_are_not_trials(levels) -> None:
    files = [f for lv in levels for f in _files(f"{ROOT}/{lv}/chrome/{A}")]
    runs = discover(files)
    assert [(r.run_path, r.trial, r.group_path) for r in runs] == [
        (f"{ROOT}/{lv}", None, None) for lv in sorted(levels)
    ]


def test_coact_cua_output_folders_are_neither_trials_nor_tasks() -> None:
    task = f"{ROOT}/chrome/{A}"
    files = [
        *_files(task),
        f"{task}/cua_output_0/result.txt",
        f"{task}/cua_output_1/result.txt",
        f"{task}/cua_output_1/step_1.png",
    ]
    [run] = discover(files)
    assert run.trial is None
    assert [(t.path, t.task_id) for t in run.tasks] == [(task, A)]


def test_coact_folders_beside_a_result_only_task_folder_are_not_tasks_either() -> None:
    task = f"{ROOT}/chrome/{A}"
    [run] = discover([f"{task}/result.txt", f"{task}/cua_output_0/result.txt"])
    assert run.trial is None and [t.path for t in run.tasks] == [task]


def test_a_task_folder_with_its_own_trajectory_is_never_split_into_trials() -> None:
    task = f"{ROOT}/chrome/{A}"
    [run] = discover([*_files(task), *_files(f"{task}/0")])
    assert run.trial is None and [t.path for t in run.tasks] == [task]


def test_a_layout_without_a_trial_level_finds_no_task_in_a_trial_tree() -> None:
    files = [*_files(f"chrome/{A}/0"), *_files(f"chrome/{A}/1")]
    assert discover(files, "{domain}/{task_id}") == []


def test_a_trial_level_of_a_layout_below_the_tasks_makes_one_run_per_trial() -> None:
    files = [*_files("sc/chrome/t1/0"), *_files("sc/chrome/t1/1"), *_files("sc/os/t2/1")]
    runs = discover(files, "{run}/{domain}/{task_id}/{trial}")
    assert [(r.run_path, r.trial, r.group_path, [t.task_id for t in r.tasks]) for r in runs] == [
        ("sc", "0", "sc", ["t1"]),
        ("sc", "1", "sc", ["t1", "t2"]),
    ]
    assert runs[1].tasks[0].path == "sc/chrome/t1/1"


def test_a_trial_level_of_a_layout_above_the_domains_groups_by_the_folder_above() -> None:
    files = [*_files("m/7/chrome/t1"), *_files("m/9/chrome/t1")]
    runs = discover(files, "*/{trial}/{domain}/{task_id}")
    assert [(r.run_path, r.trial, r.group_path) for r in runs] == [
        ("m/7", "7", "m"),
        ("m/9", "9", "m"),
    ]


@pytest.mark.parametrize(
    "pattern",
    ["{trial}/{domain}/{task_id}/{trial}", "{domain}/{trial}/{task_id}", "{domain}/{task_id}/*"],
)
def test_a_trial_level_elsewhere_is_refused(pattern) -> None:
    with pytest.raises(ValueError, match="bad layout"):
        parse_layout(pattern)


def test_trial_labels_of_runs_ingested_as_trials_of_a_named_group() -> None:
    files = [*_files(f"{ROOT}/chrome/{A}/0"), *_files(f"{ROOT}/chrome/{A}/1")]
    runs = discover(files)
    assert [trial_label(r, "results1", None) for r in runs] == ["0", "1"]
    assert [trial_label(r, "results1", "s3") for r in runs] == [
        f"results1/{ROOT}#0",
        f"results1/{ROOT}#1",
    ]
    [plain] = discover(_files(f"chrome/{A}"))
    assert trial_label(plain, "results2", "s3") == "results2"
    [nested] = discover(_files(f"{ROOT}/chrome/{A}"))
    assert trial_label(nested, "results2", "s3") == f"results2/{ROOT}"
    assert trial_label(plain, "results2", None) is None


@pytest.mark.parametrize("where", ["task", "run"])
def test_generated_trials_are_found_with_every_written_task(tmp_path: Path, where: str) -> None:
    profile = load_profiles()[0]
    root, plans = write_trials(tmp_path, profile, task_slice(per_domain=1), trials=3, seed=4,
                               where=where)  # fmt: skip
    with open_source(str(tmp_path)) as source:
        runs, problems = discover_source(source)
    assert problems == []
    assert [r.trial for r in runs] == ["0", "1", "2"]
    rel = root.relative_to(tmp_path).as_posix()
    assert {r.group_path for r in runs} == {rel}
    for run, trial_plans in zip(runs, plans, strict=True):
        written = sorted((p.domain, p.task_id) for p in trial_plans if p.outcome != "absent")
        assert [(t.domain, t.task_id) for t in run.tasks] == written

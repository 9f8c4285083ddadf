"""Finding runs and task folders, by UUID anchoring or by an explicit layout pattern."""

from __future__ import annotations

import pytest

from deskscore.collectors.layout import discover, is_uuid, parse_layout

A = "0a1b2c3d-1111-4222-8333-444455556666"
B = "bb5e4c0d-f964-439c-97b6-bdb9747de3f4"
C = "ABCDEF01-2345-6789-ABCD-EF0123456789"


def task_files(prefix: str, extra: tuple[str, ...] = ("step_1_20250101@120000.png",)) -> list[str]:
    return [f"{prefix}/traj.jsonl", f"{prefix}/result.txt", *(f"{prefix}/{e}" for e in extra)]


def test_uuid_names_are_recognised_in_any_case() -> None:
    assert is_uuid(A) and is_uuid(C) and is_uuid(C.lower())
    assert not is_uuid(A[:-1] + "g")
    assert not is_uuid(A.replace("-", "_"))
    assert not is_uuid("20250226@161539-failed")


def test_standard_osworld_run_with_a_model_name_holding_a_slash() -> None:
    root = "results/pyautogui/screenshot/ByteDance-Seed/UI-TARS-1.5-7B"
    files = [
        *task_files(f"{root}/chrome/{A}"),
        *task_files(f"{root}/gimp/{C}"),
        f"{root}/args.json",
    ]
    [run] = discover(files)
    assert run.run_path == root and run.format == "osworld"
    assert [(t.domain, t.task_id, t.path) for t in run.tasks] == [
        ("chrome", A, f"{root}/chrome/{A}"),
        ("gimp", C, f"{root}/gimp/{C}"),
    ]
    assert run.tasks[0].files == ("result.txt", "step_1_20250101@120000.png", "traj.jsonl")


def test_missing_model_level_extra_trial_level_and_bare_domains_each_make_a_run() -> None:
    files = [
        *task_files(f"pyautogui/screenshot/chrome/{A}"),
        *task_files(f"out/pyautogui/screenshot/gpt-4o/trial_2/os/{A}"),
        *task_files(f"vlc/{B}"),
    ]
    runs = discover(files)
    assert [(r.run_path, [t.domain for t in r.tasks]) for r in runs] == [
        ("", ["vlc"]),
        ("out/pyautogui/screenshot/gpt-4o/trial_2", ["os"]),
        ("pyautogui/screenshot", ["chrome"]),
    ]


def test_a_result_alone_or_any_jsonl_makes_a_task_folder_but_other_files_do_not() -> None:
    files = [
        f"run/chrome/{A}/result.txt",
        f"run/chrome/{B}/agent_trace.jsonl",
        f"run/chrome/{C}/runtime.log",
        "run/chrome/not-a-uuid/traj.jsonl",
    ]
    [run] = discover(files)
    assert sorted(t.task_id for t in run.tasks) == sorted([A, B])


def test_uuid_folders_below_a_task_folder_are_part_of_it() -> None:
    files = [*task_files(f"run/chrome/{A}"), f"run/chrome/{A}/sub/{B}/traj.jsonl"]
    [run] = discover(files)
    assert [t.task_id for t in run.tasks] == [A]
    assert run.tasks[0].files == ("result.txt", "step_1_20250101@120000.png", "traj.jsonl")


def test_uitars_folders_are_found_beside_each_other() -> None:
    files = [
        "uitars_run/task one/data.json",
        "uitars_run/task one/meta.json",
        "uitars_run/task two/data.json",
        "uitars_run/task two/meta.json",
        "uitars_run/half/data.json",
    ]
    [run] = discover(files)
    assert run.format == "uitars" and run.run_path == "uitars_run"
    assert [(t.domain, t.task_id) for t in run.tasks] == [
        ("uitars", "task one"),
        ("uitars", "task two"),
    ]


def test_layout_pattern_matches_folders_at_its_depth_only() -> None:
    files = [
        "execute_binary/20250226@161539-failed/traj.jsonl",
        "execute_binary/20250226@161539-failed/deeper/x.png",
        "prompt_injection/20250226@165220-failed/result.txt",
        "README.md",
    ]
    [run] = discover(files, "{domain}/{task_id}")
    assert run.run_path == ""
    assert [(t.domain, t.task_id) for t in run.tasks] == [
        ("execute_binary", "20250226@161539-failed"),
        ("prompt_injection", "20250226@165220-failed"),
    ]


def test_run_and_wildcard_levels_belong_to_the_run_root_and_literals_must_match() -> None:
    files = [
        "r1/trial/chrome/t1/traj.jsonl",
        "r2/trial/chrome/t2/traj.jsonl",
        "r2/other/chrome/t3/traj.jsonl",
    ]
    runs = discover(files, "{run}/trial/{domain}/{task_id}")
    assert [(r.run_path, [t.task_id for t in r.tasks]) for r in runs] == [
        ("r1/trial", ["t1"]),
        ("r2/trial", ["t2"]),
    ]
    runs = discover(files, "*/*/{domain}/{task_id}")
    assert len(runs) == 3


@pytest.mark.parametrize(
    "pattern",
    ["{domain}", "{task_id}/{domain}", "{domain}/{id}", "{domain}//{task_id}", "",
     "{domain}/{task_id}/{task_id}", "{domain}/*/{run}/{task_id}"],
)  # fmt: skip
def test_malformed_layouts_raise_with_a_valid_example(pattern: str) -> None:
    with pytest.raises(ValueError, match=r"e\.g\. '\{domain\}/\{task_id\}'"):
        parse_layout(pattern)


def test_macos_metadata_of_an_unpacked_zip_makes_no_tasks() -> None:
    files = [
        *task_files(f"run/chrome/{A}"),
        f"__MACOSX/run/chrome/{A}/._traj.jsonl",
        f"__MACOSX/run/chrome/{A}/._result.txt",
        f"run/chrome/{A}/._traj.jsonl",
    ]
    [run] = discover(files)
    assert run.run_path == "run"
    assert run.tasks[0].files == ("result.txt", "step_1_20250101@120000.png", "traj.jsonl")


def test_a_trajectory_in_no_task_folder_gets_a_row_naming_a_layout_that_reads_it(
    tmp_path,
) -> None:
    """A task folder named 'abc 123' (not a UUID) beside UUID ones was dropped unseen: its
    lines were in no table and `check`, re-counting the same folders, passed."""
    from deskscore.collectors.layout import discover_source
    from deskscore.collectors.source import open_source

    root = "res/pyautogui/screenshot/m"
    stray = f"{root}/chrome/{A[:8]} {A[9:]}"
    files = [*task_files(f"{root}/chrome/{B}"), *task_files(stray), f"{root}/traj.jsonl"]
    files += [f"{root}/chrome/{B}/0/traj.jsonl", "__MACOSX/x/traj.jsonl", f"{root}/notes.txt"]
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_bytes(b'{"step_num": 1, "action": "DONE"}\n')
    with open_source(str(tmp_path)) as src:
        runs, problems = discover_source(src)
    assert [t.path for r in runs for t in r.tasks] == [f"{root}/chrome/{B}"]
    # a trial folder below a task folder is part of it; macOS metadata is no trajectory
    locations = sorted(p["location"] for p in problems)
    assert locations == [f"{stray}/traj.jsonl", f"{root}/traj.jsonl"]
    [row] = [p for p in problems if p["location"].startswith(stray)]
    assert row["reason"] == "outside_task_folder"
    assert row["message"].startswith(f"{src.uri}!{stray}/traj.jsonl: ")  # as every row names it
    assert "--layout '*/*/*/*/{domain}/{task_id}'" in row["message"]
    with open_source(str(tmp_path)) as src:
        runs, problems = discover_source(src, "*/*/*/*/{domain}/{task_id}")
    assert f"{stray}" in {t.path for r in runs for t in r.tasks}
    assert not [p for p in problems if p["location"].startswith(stray)]


def test_a_source_without_task_folders_gets_no_row_per_trajectory(tmp_path) -> None:
    from deskscore.collectors.layout import discover_source
    from deskscore.collectors.source import open_source

    (tmp_path / "x y").mkdir()
    (tmp_path / "x y" / "traj.jsonl").write_bytes(b"{}\n")
    with open_source(str(tmp_path)) as src:
        assert discover_source(src) == ([], [])

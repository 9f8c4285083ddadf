"""OSWorld-Human human data: task index, step counts, bundled figures, original skip behaviour."""

from __future__ import annotations

import csv
import json
import os
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from deskscore.collectors.human import (
    BUNDLED_COLUMNS,
    BUNDLED_VERSIONS,
    HumanTask,
    bundled_human_refs,
    bundled_tasks,
    iter_human_counts,
    iter_human_tasks,
    load_bundled,
    parse_bundled,
    read_human_dir,
    write_bundled,
)
from deskscore.schemas import conform_rows
from deskscore.scorers.domains import OSWORLD_DOMAINS

EXPECTED_TASKS = {"2025-06": 364, "verified": 369}


def _old_to_new() -> dict[str, str]:
    text = resources.files("deskscore.datasets").joinpath("osworld_thunderbird_ids.csv").read_text()
    return {r["old_id"]: r["new_id"] for r in csv.DictReader(text.splitlines())}


def _files(human_dir: Path) -> dict[tuple[str, str], dict]:
    """Every task file of the ten domains, read with json alone: (domain, file name) -> data."""
    out = {}
    for domain in OSWORLD_DOMAINS:
        folder = human_dir / domain
        if folder.is_dir():
            for path in folder.glob("*.json"):
                out[(domain, path.name)] = json.loads(path.read_text(encoding="utf-8"))
    return out


def _original_order(human_dir: Path) -> list[tuple[str, str]]:
    """(domain, file) in the order OSWorld-Human's score.py visits them."""
    order = []
    for application in os.listdir(human_dir):
        app_path = os.path.join(human_dir, application)
        if application in OSWORLD_DOMAINS and os.path.isdir(app_path):
            order += [(application, f) for f in os.listdir(app_path) if f.endswith(".json")]
    return order


def _original_skip(path: Path) -> str | None:
    """The line OSWorld-Human's score.py prints for a file it skips (None when it keeps it).

    Where the original would crash on the file instead, the crash's exception is named.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["id"]
        data["human-ground-truth"]["single-action"]
        data["human-ground-truth"]["grouped-action"]
    except Exception as e:
        return f"Skipping task {path.name} due to exception: {e}"
    return None


@pytest.fixture(scope="module")
def read_versions(human_dirs):
    return {v: read_human_dir(d, version=v) for v, d in human_dirs.items()}


@pytest.mark.parametrize("version", BUNDLED_VERSIONS)
def test_each_version_yields_one_task_per_file(version, human_dirs, read_versions):
    tasks, refs, quarantine = read_versions[version]
    files = _files(human_dirs[version])
    assert len(files) == EXPECTED_TASKS[version]
    assert len(tasks) == len(refs) == len(files)
    assert quarantine == []


@pytest.mark.parametrize("version", BUNDLED_VERSIONS)
def test_per_domain_counts_equal_the_json_files_in_each_domain_folder(
    version, human_dirs, read_versions
):
    _, refs, _ = read_versions[version]
    on_disk = {
        d: len(list((human_dirs[version] / d).glob("*.json")))
        for d in OSWORLD_DOMAINS
        if (human_dirs[version] / d).is_dir()
    }
    assert Counter(r["domain"] for r in refs) == Counter(on_disk)


@pytest.mark.parametrize("version", BUNDLED_VERSIONS)
def test_step_counts_are_the_lengths_of_the_human_action_lists(version, human_dirs, read_versions):
    tasks, refs, _ = read_versions[version]
    by_file = {t["source_file"]: r for t, r in zip(tasks, refs, strict=True)}
    for (domain, name), data in _files(human_dirs[version]).items():
        ref = by_file[f"{domain}/{name}"]
        gt = data["human-ground-truth"]
        assert ref["single_steps"] == len(gt["single-action"])
        assert ref["grouped_steps"] == len(gt["grouped-action"])
        assert ref["single_actions"] == gt["single-action"]
        assert len(ref["grouped_actions"]) == len(gt["grouped-action"])


@pytest.mark.parametrize("version", BUNDLED_VERSIONS)
def test_tasks_carry_the_embedded_osworld_config(version, human_dirs, read_versions):
    tasks, _, _ = read_versions[version]
    by_file = {t["source_file"]: t for t in tasks}
    for (domain, name), data in _files(human_dirs[version]).items():
        task = by_file[f"{domain}/{name}"]
        func = data["evaluator"]["func"]
        assert task["evaluator_funcs"] == (func if isinstance(func, list) else [func])
        assert task["conj"] == data["evaluator"].get("conj")
        assert task["instruction"] == data["instruction"]
        assert task["related_apps"] == data["related_apps"]
        assert task["snapshot"] == data["snapshot"]
        assert task["data_version"] == version
        assert task["source"] == "osworld-human"


@pytest.mark.parametrize("version", BUNDLED_VERSIONS)
def test_infeasible_flag_counts_the_configs_whose_evaluator_is_infeasible(
    version, human_dirs, read_versions
):
    tasks, _, _ = read_versions[version]
    expected = 0
    for data in _files(human_dirs[version]).values():
        func = data["evaluator"]["func"]
        expected += func == "infeasible" or (isinstance(func, list) and "infeasible" in func)
    assert expected > 0
    assert sum(t["infeasible"] for t in tasks) == expected


@pytest.mark.parametrize("version", BUNDLED_VERSIONS)
def test_renumbered_thunderbird_tasks_keep_their_old_id_as_alias(version, read_versions):
    _, refs, _ = read_versions[version]
    new_to_old = {new: old for old, new in _old_to_new().items()}
    thunderbird = [r for r in refs if r["domain"] == "thunderbird"]
    assert thunderbird
    for r in thunderbird:
        assert r["alias_task_id"] == new_to_old.get(r["task_id"])
    assert sum(r["alias_task_id"] is not None for r in thunderbird) == len(
        {r["task_id"] for r in thunderbird} & set(new_to_old)
    )
    # old thunderbird ids that are also chrome ids get no alias outside thunderbird
    assert all(r["alias_task_id"] is None for r in refs if r["domain"] != "thunderbird")


@pytest.mark.parametrize("version", BUNDLED_VERSIONS)
def test_rows_conform_to_the_warehouse_schemas(version, read_versions):
    tasks, refs, quarantine = read_versions[version]
    assert conform_rows("tasks", tasks).num_rows == len(tasks)
    assert conform_rows("human_refs", refs).num_rows == len(refs)
    conform_rows("quarantine", quarantine)


@pytest.mark.parametrize("version", BUNDLED_VERSIONS)
def test_bundled_counts_equal_the_human_data(version, read_versions):
    """The shipped CSVs are current: regenerate them with write_bundled when this fails."""
    tasks, refs, _ = read_versions[version]
    infeasible = {(t["domain"], t["task_id"]): t["infeasible"] for t in tasks}
    apps = {(t["domain"], t["task_id"]): t["related_apps"] for t in tasks}
    expected = sorted(
        (
            r["domain"],
            r["task_id"],
            r["alias_task_id"],
            r["single_steps"],
            r["grouped_steps"],
            infeasible[(r["domain"], r["task_id"])],
            apps[(r["domain"], r["task_id"])],
        )
        for r in refs
    )
    bundled = load_bundled(version)
    got = [
        (
            b["domain"],
            b["task_id"],
            b["alias_task_id"],
            b["single_steps"],
            b["grouped_steps"],
            b["infeasible"],
            b["related_apps"],
        )
        for b in bundled
    ]
    assert got == expected
    assert all(b["human_version"] == version for b in bundled)


@pytest.mark.parametrize("version", BUNDLED_VERSIONS)
def test_bundled_csv_holds_ids_and_counts_but_no_task_text(version, read_versions):
    tasks, refs, _ = read_versions[version]
    name = f"osworld_human_{version}.csv"
    text = resources.files("deskscore.datasets").joinpath(name).read_text(encoding="utf-8")
    assert tuple(next(csv.reader(text.splitlines()))) == BUNDLED_COLUMNS
    for t in tasks:
        assert t["instruction"] not in text
    for r in refs:
        assert not any(a in text for a in r["single_actions"] if len(a) > 3)


@pytest.mark.parametrize("version", BUNDLED_VERSIONS)
def test_bundled_rows_conform_to_the_warehouse_schemas(version):
    assert (
        conform_rows("human_refs", bundled_human_refs(version)).num_rows == EXPECTED_TASKS[version]
    )
    assert conform_rows("tasks", bundled_tasks(version)).num_rows == EXPECTED_TASKS[version]


def test_unknown_bundled_version_names_the_known_ones():
    with pytest.raises(ValueError, match="verified"):
        load_bundled("1999-01")


@pytest.mark.parametrize("version", BUNDLED_VERSIONS)
def test_fast_counts_come_in_the_original_listdir_order(version, human_dirs, read_versions):
    human_dir = human_dirs[version]
    items = list(iter_human_counts(human_dir))
    files = _files(human_dir)
    expected = [
        (d, files[(d, f)]["id"], len(files[(d, f)]["human-ground-truth"]["single-action"]),
         len(files[(d, f)]["human-ground-truth"]["grouped-action"]))
        for d, f in _original_order(human_dir)
    ]  # fmt: skip
    assert items == expected


def test_fast_counts_in_query_mode_are_keyed_by_instruction(human_dirs):
    human_dir = human_dirs["verified"]
    files = _files(human_dir)
    items = list(iter_human_counts(human_dir, use_query=True, listdir_order=False))
    assert [i[1] for i in items] == [
        files[k]["instruction"] for k in sorted(files, key=lambda k: (k[0], k[1]))
    ]


# --- generated human data folders: bad files, the original's skips --------------------------


def _task(task_id: str, n_single: int, n_grouped: int, func="exact_match") -> dict:
    return {
        "id": task_id,
        "snapshot": "chrome",
        "instruction": f"Do task {task_id}",
        "related_apps": ["chrome", "os"],
        "evaluator": {"func": func, "result": {}, "expected": {}},
        "human-ground-truth": {
            "single-action": [f"`CLICK` item {i}" for i in range(n_single)],
            "grouped-action": [[f"`CLICK` item {i}"] for i in range(n_grouped)],
        },
    }


@pytest.fixture
def messy_dir(tmp_path: Path) -> Path:
    """A human data folder with good files, each kind of bad file, and things to ignore."""
    root = tmp_path / "human"

    def put(rel: str, content) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content))

    put("chrome/good-1.json", _task("good-1", 5, 3))
    put("chrome/good-2.json", _task("good-2", 2, 2, func=["infeasible"]))
    no_gt = _task("no-gt", 1, 1)
    del no_gt["human-ground-truth"]
    put("chrome/no-gt.json", no_gt)
    no_grouped = _task("no-grouped", 1, 1)
    del no_grouped["human-ground-truth"]["grouped-action"]
    put("gimp/no-grouped.json", no_grouped)
    no_id = _task("x", 1, 1)
    del no_id["id"]
    put("gimp/no-id.json", no_id)
    put("gimp/truncated.json", json.dumps(_task("truncated", 4, 2), indent=1)[:150])
    put("os/a-list.json", [1, 2])
    string_group = _task("string-group", 2, 0)
    string_group["human-ground-truth"]["grouped-action"] = ["`CLICK` alone", ["`TYPING` a", 3]]
    put("os/string-group.json", string_group)
    old_id = next(iter(_old_to_new()))
    put(f"thunderbird/{old_id}.json", _task(old_id, 3, 1))
    put("chrome/notes.txt", "not a task")
    put("not_a_domain/ignored.json", _task("ignored", 1, 1))
    put("README.md", "# human data")
    return root


def test_bad_files_become_quarantine_rows_with_the_originals_skip_line(messy_dir):
    tasks, refs, quarantine = read_human_dir(messy_dir, version="test")
    reasons = {q["location"]: q["reason"] for q in quarantine}
    assert reasons == {
        "chrome/no-gt.json": "missing_human_ground_truth",
        "gimp/no-grouped.json": "missing_human_ground_truth",
        "gimp/no-id.json": "missing_id",
        "gimp/truncated.json": "invalid_json",
        "os/a-list.json": "not_an_object",
    }
    for q in quarantine:
        assert q["location"] in q["message"]
        assert len(q["excerpt"]) <= 200
        original = _original_skip(messy_dir / q["location"])
        if q["reason"] != "invalid_json":
            assert original in q["message"]
    truncated = next(q for q in quarantine if q["reason"] == "invalid_json")
    assert truncated["line_no"] > 1
    assert f"line {truncated['line_no']}" in truncated["message"]
    assert conform_rows("quarantine", quarantine).num_rows == len(quarantine)
    assert conform_rows("tasks", tasks).num_rows == len(refs) == 4
    assert conform_rows("human_refs", refs).num_rows == 4


def test_fast_path_reports_skips_with_the_originals_wording_in_listdir_order(messy_dir):
    items = list(iter_human_counts(messy_dir))
    expected = []
    for domain, name in _original_order(messy_dir):
        path = messy_dir / domain / name
        skip = _original_skip(path)
        if skip is not None:
            expected.append(("skip", name, skip))
        else:
            data = json.loads(path.read_text())
            gt = data["human-ground-truth"]
            expected.append(
                (domain, data["id"], len(gt["single-action"]), len(gt["grouped-action"]))
            )
    assert items == expected
    assert sum(1 for i in items if i[0] == "skip") == 5


def test_fast_path_tasks_name_their_file_and_instruction(messy_dir):
    tasks = [
        t for t in iter_human_tasks(messy_dir, listdir_order=False) if isinstance(t, HumanTask)
    ]
    assert [t.file for t in tasks] == sorted(t.file for t in tasks)
    for t in tasks:
        data = json.loads((messy_dir / t.file).read_text())
        assert (t.task_id, t.instruction) == (data["id"], data["instruction"])


def test_old_thunderbird_id_maps_to_the_new_one_and_stays_as_alias(messy_dir):
    old_id, new_id = next(iter(_old_to_new().items()))
    tasks, refs, _ = read_human_dir(messy_dir, version="test")
    ref = next(r for r in refs if r["domain"] == "thunderbird")
    assert (ref["task_id"], ref["alias_task_id"]) == (new_id, old_id)
    assert next(t for t in tasks if t["domain"] == "thunderbird")["task_id"] == new_id
    # the fast path keeps the raw id, as the original keys its dict
    assert ("thunderbird", old_id, 3, 1) in list(iter_human_counts(messy_dir))


def test_a_bare_string_group_is_a_group_of_one_action(messy_dir):
    _, refs, _ = read_human_dir(messy_dir, version="test")
    ref = next(r for r in refs if r["task_id"] == "string-group")
    assert ref["grouped_actions"] == [["`CLICK` alone"], ["`TYPING` a", "3"]]
    assert ref["grouped_steps"] == 2


def test_infeasible_in_a_list_of_metrics_flags_the_task(messy_dir):
    tasks, _, _ = read_human_dir(messy_dir, version="test")
    flags = {t["task_id"]: t["infeasible"] for t in tasks}
    assert flags["good-2"] is True
    assert flags["good-1"] is False


def test_duplicate_task_ids_keep_the_first_file_and_quarantine_the_rest(tmp_path):
    root = tmp_path / "human"
    (root / "vlc").mkdir(parents=True)
    (root / "vlc" / "a.json").write_text(json.dumps(_task("same", 1, 1)))
    (root / "vlc" / "b.json").write_text(json.dumps(_task("same", 9, 9)))
    _, refs, quarantine = read_human_dir(root, version="test")
    assert [(r["task_id"], r["single_steps"]) for r in refs] == [("same", 1)]
    assert [(q["location"], q["reason"]) for q in quarantine] == [
        ("vlc/b.json", "duplicate_task_id")
    ]


def test_missing_folder_is_reported_not_raised(tmp_path):
    tasks, refs, quarantine = read_human_dir(tmp_path / "absent", version="test")
    assert (tasks, refs) == ([], [])
    assert [q["reason"] for q in quarantine] == ["unreadable"]
    conform_rows("quarantine", quarantine)
    items = list(iter_human_counts(tmp_path / "absent"))
    assert len(items) == 1 and items[0][0] == "skip"


def test_write_bundled_round_trips_the_counts(messy_dir, tmp_path):
    out = tmp_path / "bundled.csv"
    n = write_bundled(messy_dir, "test", out)
    _, refs, _ = read_human_dir(messy_dir, version="test")
    rows = parse_bundled(out.read_text(), "test")
    assert n == len(rows) == len(refs)
    assert [(r["domain"], r["task_id"]) for r in rows] == sorted(
        (r["domain"], r["task_id"]) for r in refs
    )
    by_key = {(r["domain"], r["task_id"]): r for r in refs}
    for row in rows:
        ref = by_key[(row["domain"], row["task_id"])]
        assert (row["single_steps"], row["grouped_steps"], row["alias_task_id"]) == (
            ref["single_steps"],
            ref["grouped_steps"],
            ref["alias_task_id"],
        )
        assert row["related_apps"] == ["chrome", "os"]

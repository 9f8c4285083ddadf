"""The DeskCraft task reader against the real task files, and the figures bundled from them."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from deskscore.collectors.deskcraft_tasks import (
    APPS,
    CATEGORIES,
    PAPER_LEVEL_TOTALS,
    count_rule_atoms,
    figures_csv,
    level_from_difficulty,
    level_from_stem,
    load_bundled_tasks,
    mode_of,
    read_deskcraft_tasks,
    trigger_label,
)
from deskscore.schemas import conform_rows


@pytest.fixture(scope="module")
def examples(reference_data: Path) -> Path:
    return reference_data / "deskcraft" / "evaluation_examples"


@pytest.fixture(scope="module")
def read(examples: Path) -> tuple[list[dict], list[dict]]:
    return read_deskcraft_tasks(examples)


@pytest.fixture(scope="module")
def scanned(examples: Path) -> list[dict]:
    """The files as a plain scan sees them, independently of the reader: one dict per task."""
    out = []
    for split, index in (
        ("standard", "standard_task.json"),
        ("interactive", "interactive_task.json"),
    ):
        for app, stems in json.loads((examples / index).read_text()).items():
            for stem in stems:
                obj = json.loads((examples / "ubuntu_examples" / app / f"{stem}.json").read_text())
                out.append({"app": app, "stem": stem, "split": split, "obj": obj})
    return out


def test_every_real_task_file_becomes_a_row_and_nothing_is_quarantined(read, scanned) -> None:
    rows, quarantine = read
    assert quarantine == []
    assert len(rows) == len(scanned) == 538
    assert conform_rows("tasks", rows).num_rows == 538
    assert len({(r["domain"], r["task_id"]) for r in rows}) == 538


def test_counts_per_app_and_split_equal_the_files(read, scanned) -> None:
    rows, _ = read
    got = Counter((r["domain"], r["split"]) for r in rows)
    assert got == Counter((t["app"], t["split"]) for t in scanned)
    assert Counter(r["split"] for r in rows) == {"standard": 386, "interactive": 152}
    assert set(r["domain"] for r in rows) == set(APPS)


def test_levels_per_source_equal_the_files(read, scanned) -> None:
    rows, _ = read
    by_stem = Counter((r["split"], r["level_stem"]) for r in rows)
    expected_stem = Counter(
        (t["split"], t["stem"][:2] if t["stem"][:3] in ("L1_", "L2_", "L3_") else None)
        for t in scanned
    )
    assert by_stem == expected_stem
    by_field = Counter((r["split"], r["level_difficulty"]) for r in rows)
    assert by_field == Counter((t["split"], t["obj"].get("difficulty")) for t in scanned)
    # REFERENCE section 3, checked against the files rather than trusted
    assert {lv: by_stem["standard", lv] for lv in ("L1", "L2", "L3")} == {
        "L1": 126,
        "L2": 147,
        "L3": 113,
    }
    assert {lv: by_field["standard", lv] for lv in ("L1", "L2", "L3", None)} == {
        "L1": 112,
        "L2": 136,
        "L3": 103,
        None: 35,
    }
    assert by_stem["interactive", None] == 152
    # the paper's totals cover the standard split too, with another split of it
    assert sum(PAPER_LEVEL_TOTALS.values()) == sum(
        by_stem["standard", lv] for lv in PAPER_LEVEL_TOTALS
    )


def test_counts_per_app_and_level_equal_the_files(read, scanned) -> None:
    rows, _ = read
    assert Counter((r["domain"], r["level_stem"]) for r in rows) == Counter(
        (t["app"], level_from_stem(t["stem"])) for t in scanned
    )
    assert Counter((r["domain"], r["level_difficulty"]) for r in rows) == Counter(
        (t["app"], t["obj"].get("difficulty")) for t in scanned
    )


def test_modes_follow_scenario_type_and_multi_app_interactive_tasks_are_untyped(read) -> None:
    rows, _ = read
    interactive = [r for r in rows if r["split"] == "interactive"]
    assert all(r["mode"] is None for r in rows if r["split"] == "standard")
    untyped = [r for r in interactive if r["mode"] is None]
    assert len(untyped) == 25 and {r["domain"] for r in untyped} == {"multi_app"}
    assert Counter(r["mode"] for r in interactive if r["mode"]) == {
        "clarification": 31,
        "requirement_change": 25,
        "progressive_refinement": 24,
        "interruption": 22,
        "correction": 16,
        "workflow": 9,
    }
    assert all(
        r["scenario_type"].startswith("ambiguous_")
        for r in interactive
        if r["mode"] == "clarification"
    )


def test_phases_and_triggers_equal_the_files(read, scanned) -> None:
    rows, _ = read
    by_key = {(r["domain"], r["task_id"]): r for r in rows}
    for t in scanned:
        row = by_key[t["app"], t["stem"]]
        phases = t["obj"].get("phases", [])
        assert row["n_phases"] == len(phases)
        assert row["triggers"] == [
            p["trigger"]["type"] + (f":{p['trigger']['value']}" if "value" in p["trigger"] else "")
            for p in phases
        ]
    triggers = Counter(tr for r in rows for tr in r["triggers"])
    assert triggers["agent_asks"] == 31 and triggers["agent_done"] == 308


def test_evaluator_counts_and_no_infeasible_task(read, scanned) -> None:
    rows, _ = read
    by_key = {(r["domain"], r["task_id"]): r for r in rows}
    for t in scanned:
        func = t["obj"]["evaluator"]["func"]
        assert by_key[t["app"], t["stem"]]["n_evaluators"] == (
            len(func) if isinstance(func, list) else 1
        )
    assert not any(r["infeasible"] for r in rows)
    assert Counter(r["conj"] for r in rows) == {None: 343, "and": 195}


def test_rule_atoms_are_the_scalar_leaves_of_the_rules() -> None:
    include_exclude = {
        "func": "check_include_exclude",
        "expected": {"type": "rule", "rules": {"include": ["a", "b"], "exclude": ["c"]}},
    }
    assert count_rule_atoms(include_exclude) == 3
    selector = {"func": "f", "expected": {"type": "rule", "rules": {"type": "url", "url": "x"}}}
    assert count_rule_atoms(selector) == 1  # 'type' picks the rule's form; it checks nothing
    nested = {
        "func": "f",
        "expected": {"type": "rule", "rules": {"m": {"A": {"w": 1, "s": 2}}, "t": 0.1}},
    }
    assert count_rule_atoms(nested) == 3
    per_metric = {
        "func": ["f", "g"],
        "expected": [
            {"type": "cache_file", "path": "gold.xlsx"},
            {"type": "rule", "rules": {"k": [1, 2]}},
        ],
    }
    assert count_rule_atoms(per_metric) == 2  # the gold-file metric adds none
    table = {
        "func": "compare_table",
        "options": {"rules": [{"type": "sheet_data", "a": 0, "b": "x"}]},
    }
    assert count_rule_atoms(table) == 2
    assert count_rule_atoms({"func": "f", "expected": {"type": "rule", "rules": {}}}) == 0


def test_rule_atoms_of_a_real_task(read, examples: Path) -> None:
    rows, _ = read
    row = next(r for r in rows if r["task_id"] == "INTERACTIVE_calc_interactive_calc_002")
    assert row["n_rule_atoms"] == 2  # include ["PASSED"], exclude ["FAILED"]


def test_level_mode_and_trigger_parsing() -> None:
    assert level_from_stem("L3_calc_x") == "L3"
    assert level_from_stem("INTERACTIVE_calc_x") is None
    assert level_from_difficulty(" l2 ") == "L2" and level_from_difficulty(2) is None
    assert mode_of("ambiguous_whatever") == "clarification"
    assert (
        mode_of("error_correction") == "correction"
        and mode_of("task_interruption") == "interruption"
    )
    assert mode_of("brand_new") == "other" and mode_of(None) is None and mode_of("  ") is None
    assert trigger_label({"type": "step_count", "value": 3}) == "step_count:3"
    assert trigger_label(None) == "agent_done"
    assert trigger_label("agent_done") is None and trigger_label({"type": 5}) is None
    assert set(CATEGORIES) == set(APPS) and len(set(CATEGORIES.values())) == 6


def test_the_bundled_figures_are_the_reference_files(read) -> None:
    rows, _ = read
    from importlib import resources

    bundled = resources.files("deskscore.datasets").joinpath("deskcraft_tasks.csv").read_text()
    assert figures_csv(rows) == bundled
    loaded = {(r["domain"], r["task_id"]): r for r in load_bundled_tasks()}
    for r in rows:
        b = loaded[r["domain"], r["task_id"]]
        for col in ("category", "split", "level_stem", "level_difficulty", "mode", "triggers",
                    "n_phases", "n_evaluators", "n_rule_atoms", "evaluator_funcs", "conj",
                    "infeasible"):  # fmt: skip
            assert b[col] == r[col], (r["task_id"], col)
        assert b.get("instruction") is None  # no task text is bundled
    assert conform_rows("tasks", load_bundled_tasks()).num_rows == 538


def _tiny_tree(tmp_path: Path, examples: Path) -> Path:
    """Two real calc tasks in a tree of their own, to break on purpose."""
    root = tmp_path / "evaluation_examples"
    (root / "ubuntu_examples" / "calc").mkdir(parents=True)
    stems = sorted(p.stem for p in (examples / "ubuntu_examples" / "calc").glob("L1_*.json"))[:2]
    for s in stems:
        shutil.copy(
            examples / "ubuntu_examples" / "calc" / f"{s}.json", root / "ubuntu_examples" / "calc"
        )
    (root / "standard_task.json").write_text(json.dumps({"calc": [*stems, "L2_calc_missing"]}))
    (root / "interactive_task.json").write_text(json.dumps({}))
    return root


def test_bad_task_files_are_quarantined_and_the_rest_is_read(
    tmp_path: Path, examples: Path
) -> None:
    root = _tiny_tree(tmp_path, examples)
    calc = root / "ubuntu_examples" / "calc"
    good, bad = sorted(calc.glob("*.json"))
    bad.write_text(bad.read_text()[:50])  # truncated
    (calc / "L3_calc_stray.json").write_text("{}")  # no index names it
    rows, quarantine = read_deskcraft_tasks(root)
    assert [r["task_id"] for r in rows] == [good.stem]
    reasons = {q["reason"]: q for q in quarantine}
    assert set(reasons) == {"invalid_json", "missing_task_file", "unindexed_task_file"}
    assert reasons["invalid_json"]["location"] == f"ubuntu_examples/calc/{bad.name}"
    assert bad.name in reasons["invalid_json"]["message"]
    assert conform_rows("quarantine", quarantine).num_rows == 3


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"[1, 2]", "not_an_object"),
        (b'{"id": "x"}', "no_evaluator"),
        (b'{"evaluator": {"func": 3}}', "no_evaluator"),
        (b"\xff\xfe{}", "not_utf8"),
        (b"[" * 100_000, "invalid_json"),
    ],
)
def test_each_kind_of_bad_task_file_has_its_reason(
    tmp_path: Path, examples: Path, content: bytes, reason: str
) -> None:
    root = _tiny_tree(tmp_path, examples)
    first = sorted((root / "ubuntu_examples" / "calc").glob("*.json"))[0]
    first.write_bytes(content)
    rows, quarantine = read_deskcraft_tasks(root)
    assert len(rows) == 1
    assert reason in {q["reason"] for q in quarantine}


def test_a_broken_index_is_quarantined(tmp_path: Path, examples: Path) -> None:
    root = _tiny_tree(tmp_path, examples)
    (root / "interactive_task.json").write_text('{"calc": "not a list"}')
    (root / "standard_task.json").write_text("{")
    rows, quarantine = read_deskcraft_tasks(root)
    assert {q["reason"] for q in quarantine} >= {"unreadable_index", "bad_index_entry"}
    assert rows == []

"""The rows that record screenshots: built in the tables' schemas, with messages that say where
and what to do, matched back to their screenshots, read and written per run."""

from __future__ import annotations

import hashlib
import io
import random
from pathlib import Path

import pytest
from PIL import Image

from deskscore.collectors.screenshot_tables import (
    IMAGE_REASONS,
    QUARANTINE_FILE,
    Origin,
    bad_image_rows,
    changed_file_row,
    content_hashes,
    first_steps,
    quarantine_of_rows,
    quarantine_rows,
    ref_rows,
    screenshot_row,
    screenshot_steps,
    step_location,
    unreadable_file_row,
    unreadable_source_row,
    write_run,
)
from deskscore.collectors.screenshots import decode_screenshot
from deskscore.collectors.source import SourceError
from deskscore.collectors.warehouse import Warehouse
from deskscore.schemas import conform_rows

SHOT = Origin("run1", "osworld", "/archive/run1", "chrome/t1/step_2.png", "step 2 of chrome/t1")


def _png(width: int = 40, height: int = 30) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 10, 10)).save(out, "PNG")
    return out.getvalue()


def _bad_files() -> dict[str, bytes]:
    png = _png()
    return {
        "truncated": png[: len(png) // 2],
        "corrupt": png[:33] + b"\x00\x00\x00\x10IDAT" + b"\xff" * 20 + png[-12:],
        "too_large": _png(80, 60),
        "not_an_image": b"plain text, not a screenshot",
    }


def _step(domain: str, task: str, idx: int, path: str | None) -> dict:
    return {
        "run_id": "run1",
        "benchmark": "osworld",
        "domain": domain,
        "task_id": task,
        "step_idx": idx,
        "line_no": idx + 1,
        "action_format": "pyautogui",
        "action_kind": "click",
        "screenshot_path": path,
    }


def test_a_step_is_named_by_index_episode_and_line() -> None:
    step = _step("chrome", "t1", 3, "a.png")
    assert step_location(step) == "step 3 of chrome/t1, line 4"


def test_each_path_is_shown_by_the_first_step_that_names_it() -> None:
    steps = [_step("chrome", "t1", i, p) for i, p in enumerate(["a.png", "b.png", "a.png"])]
    first = first_steps(steps)
    assert list(first) == ["a.png", "b.png"] and first["a.png"]["step_idx"] == 0


def test_refs_carry_each_steps_hash_and_null_for_an_unreadable_file() -> None:
    steps = [_step("chrome", "t1", i, p) for i, p in enumerate(["a.png", "b.png", "a.png"])]
    refs = ref_rows(SHOT, steps, {"a.png": "aa", "b.png": None})
    conform_rows("screenshot_refs", refs)
    assert [(r["step_idx"], r["content_hash"]) for r in refs] == [(0, "aa"), (1, None), (2, "aa")]


def test_a_good_screenshot_has_a_row_and_no_quarantine() -> None:
    decoded = decode_screenshot(_png())
    row = screenshot_row(SHOT, decoded.facts)
    conform_rows("screenshots", [row])
    assert (row["run_id"], row["status"], row["width"], row["height"]) == ("run1", "ok", 40, 30)
    assert row["content_hash"] == hashlib.sha256(_png()).hexdigest()
    assert bad_image_rows(SHOT, decoded) == []


@pytest.mark.parametrize("status", sorted(IMAGE_REASONS))
def test_a_bad_screenshot_is_quarantined_with_where_it_is_and_what_to_do(status: str) -> None:
    data = _bad_files()[status]
    decoded = decode_screenshot(data, max_pixels=40 * 30)
    assert decoded.facts.status == status
    row = screenshot_row(SHOT, decoded.facts)
    [q] = bad_image_rows(SHOT, decoded)
    conform_rows("screenshots", [row])
    conform_rows("quarantine", [q])
    assert (q["reason"], q["location"], q["source"]) == (
        IMAGE_REASONS[status],
        SHOT.path,
        SHOT.source,
    )
    assert q["message"].startswith(f"{SHOT.source}!{SHOT.path} ({SHOT.where}): ")
    assert decoded.facts.message in q["message"]
    todo = "check where" if status == "too_large" else "run `deskscore hash` again"
    assert todo in q["message"] and bytes.fromhex(q["excerpt"]) == data[:48]


def test_unreadable_and_changed_files_and_sources_say_why_and_what_then() -> None:
    error = SourceError(SHOT.source, "no such file", SHOT.path)
    first = unreadable_file_row(SHOT, error)
    again = unreadable_file_row(SHOT, error, again=True)
    changed = changed_file_row(SHOT, "89 50")
    source = unreadable_source_row(SHOT, error, 12, 10)
    conform_rows("quarantine", [first, again, changed, source])
    assert {first["reason"], again["reason"]} == {"unreadable_screenshot"}
    assert "no content hash" in first["message"] and "read again" in again["message"]
    assert all("no such file" in q["message"] for q in (first, again, source))
    assert (changed["reason"], changed["excerpt"]) == ("screenshot_changed", "89 50")
    assert (source["reason"], source["location"]) == ("unreadable_source", "")
    assert "12 screenshot references" in source["message"] and "(10)" in source["message"]


def test_a_screenshot_row_keeps_the_quarantine_rows_of_its_path_and_status() -> None:
    files = _bad_files()
    decoded = {s: decode_screenshot(d, max_pixels=40 * 30) for s, d in files.items()}
    shots = {s: SHOT._replace(path=f"{s}.png") for s in files}
    rows = [screenshot_row(shots[s], d.facts) for s, d in decoded.items()]
    quarantine = [q for s, d in decoded.items() for q in bad_image_rows(shots[s], d)]
    unreadable = unreadable_file_row(shots["corrupt"], SourceError("x", "gone"))
    hashes = {f"{s}.png": d.facts.content_hash for s, d in decoded.items()}
    matched = dict(
        (row["status"], qs)
        for row, qs in quarantine_of_rows(rows, [*quarantine, unreadable], hashes)
    )
    assert {s: [q["reason"] for q in qs] for s, qs in matched.items()} == {
        s: [IMAGE_REASONS[s]] for s in files
    }
    moved = {"elsewhere.png": hashes["corrupt.png"]}  # no path holds the others now
    assert [len(qs) for _, qs in quarantine_of_rows(rows, quarantine, moved)] == [0, 0, 0, 0]


# --------------------------------------------------------------------------- the warehouse


def _rows(n: int, run: Origin = SHOT) -> tuple[list[dict], list[dict], list[dict]]:
    steps = [_step("chrome", f"t{i % 3}", i, f"s{i}.png") for i in range(n)]
    refs = ref_rows(run, steps, {f"s{i}.png": f"{i:064x}" for i in range(n)})
    facts = decode_screenshot(_png()).facts
    shots = [screenshot_row(run, facts._replace(content_hash=f"{i:064x}")) for i in range(n)]
    quarantine = [
        unreadable_file_row(run._replace(path=f"s{i}.png"), SourceError("x", "gone"))
        for i in range(n)
    ]
    return refs, shots, quarantine


def _digests(root: Path) -> dict[str, str]:
    """Every slot of the warehouse and the file holding it (named by its bytes)."""
    return Warehouse(root).snapshot()


def test_a_runs_files_are_written_sorted_so_any_order_gives_the_same_bytes(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    refs, shots, quarantine = _rows(12)
    written = write_run(wh, SHOT, refs, shots, quarantine)
    assert [p.parent.parent.parent.name for p in written] == [
        "screenshot_refs",
        "screenshots",
        "quarantine",
    ]
    before = _digests(tmp_path)
    for seed in range(3):
        rng = random.Random(seed)
        write_run(wh, SHOT, *(rng.sample(rows, len(rows)) for rows in (refs, shots, quarantine)))
        assert _digests(tmp_path) == before
    assert wh.read("screenshot_refs").to_pylist() == sorted(
        refs, key=lambda r: (r["domain"], r["task_id"], r["step_idx"])
    )
    assert quarantine_rows(wh, SHOT) == sorted(quarantine, key=lambda q: q["location"])


def test_a_run_with_no_screenshot_rows_or_quarantine_has_no_such_files(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    refs, shots, quarantine = _rows(4)
    write_run(wh, SHOT, refs, shots, quarantine)
    written = write_run(wh, SHOT, refs, [], [])
    assert len(written) == 1
    assert wh.read("screenshots").num_rows == 0 and quarantine_rows(wh, SHOT) == []
    assert not wh.has_file(
        "quarantine", {"benchmark": SHOT.benchmark, "run_id": SHOT.run_id}, QUARANTINE_FILE
    )


def test_a_runs_steps_with_screenshots_come_in_episode_and_step_order(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    steps = [
        _step("os", "t1", 1, "c.png"),
        _step("chrome", "t2", 0, None),
        _step("chrome", "t2", 2, "b.png"),
        _step("chrome", "t2", 1, "a.png"),
    ]
    wh.write("steps", steps, {"benchmark": "osworld", "run_id": "run1"})
    got = screenshot_steps(wh, SHOT)
    assert [(s["domain"], s["step_idx"], s["screenshot_path"]) for s in got] == [
        ("chrome", 1, "a.png"),
        ("chrome", 2, "b.png"),
        ("os", 1, "c.png"),
    ]
    assert screenshot_steps(wh, SHOT._replace(run_id="run2")) == []


def test_content_hashes_leave_out_the_runs_named(tmp_path) -> None:
    wh = Warehouse(tmp_path)
    other = SHOT._replace(run_id="run2")
    for run, n in ((SHOT, 3), (other, 5)):
        refs, shots, _ = _rows(n, run)
        write_run(wh, run, refs, shots, [])
    everything = {f"{i:064x}" for i in range(5)}
    assert content_hashes(wh, "screenshots") == everything
    assert content_hashes(wh, "screenshots", excluding=[other]) == {f"{i:064x}" for i in range(3)}
    assert content_hashes(wh, "screenshots", excluding=[SHOT, other]) == set()
    assert content_hashes(wh, "screenshot_refs", excluding=[SHOT]) == everything

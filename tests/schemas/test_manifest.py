"""Reading the current generation: parsed once per process, whatever how many readers open
it, each with a copy of its own; a generation file replaced is read again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from deskscore.collectors.warehouse import Warehouse
from deskscore.schemas import manifest
from deskscore.schemas.manifest import Manifest, current_generation, generation_file


def _hash_row(run: str) -> dict:
    return {"content_hash": run, "run_id": run, "benchmark": "osworld", "n_bytes": 1} | {
        "status": "ok"
    }


def _warehouse(root: Path, runs: int) -> Warehouse:
    wh = Warehouse(root)
    for i in range(runs):
        wh.write("screenshots", [_hash_row(f"r{i}")], {"benchmark": "osworld", "run_id": f"r{i}"})
    return wh


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Generation numbers parsed from here on."""
    seen: list[int] = []
    parse = Manifest.from_json.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Manifest], value: dict) -> Manifest:
        seen.append(int(value["generation"]))
        return parse(cls, value)

    monkeypatch.setattr(Manifest, "from_json", classmethod(counted))
    return seen


def test_readers_of_one_generation_parse_it_once_and_change_only_their_copy(
    tmp_path: Path, parses: list[int]
) -> None:
    _warehouse(tmp_path, 3)
    parses.clear()  # what the writes read
    first = manifest.read_manifest(tmp_path)
    assert first is not None and len(first.tables["screenshots"]) == 3
    first.tables["screenshots"].clear()
    first.slots("steps")["x"] = manifest.Entry("f")
    readers = [Warehouse(tmp_path) for _ in range(4)]
    assert [len(r.slots("screenshots")) for r in readers] == [3, 3, 3, 3]
    assert all(r.slots("steps") == [] for r in readers)
    assert parses == [current_generation(tmp_path)]


def test_a_new_or_rewritten_generation_file_is_parsed_again(tmp_path: Path) -> None:
    wh = _warehouse(tmp_path, 1)
    assert len(_screenshots(tmp_path)) == 1
    wh.write("screenshots", [_hash_row("r1")], {"benchmark": "osworld", "run_id": "r1"})
    assert len(_screenshots(tmp_path)) == 2

    # the same generation written again (as a commit cut short, then redone, would), same size
    path = generation_file(tmp_path, current_generation(tmp_path) or 0)
    body = json.loads(path.read_text())
    slots = body["tables"]["screenshots"]
    slot = next(iter(slots))
    slots[slot]["file"] = slots[slot]["file"][::-1]
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body, separators=(",", ":")))
    os.replace(tmp, path)
    assert _screenshots(tmp_path)[slot].file == slots[slot]["file"]


def _screenshots(root: Path) -> dict[str, manifest.Entry]:
    current = manifest.read_manifest(root)
    assert current is not None
    return current.tables["screenshots"]


def _damaged_message(root: Path) -> str:
    with pytest.raises(manifest.WarehouseDamaged) as caught:
        manifest.read_manifest(root)
    return str(caught.value)


def test_a_current_pointer_that_names_no_generation_is_reported_as_damage(tmp_path: Path) -> None:
    _warehouse(tmp_path, 2)
    newest = generation_file(tmp_path, current_generation(tmp_path) or 0)
    pointer = manifest.manifest_dir(tmp_path) / manifest.CURRENT
    for text in ("", "garbage\n"):
        pointer.write_text(text)
        message = _damaged_message(tmp_path)
        assert str(pointer) in message and "names no generation" in message
        assert f"newest intact generation is {newest.name}" in message


def test_a_generation_file_gone_from_disk_is_damage_not_a_manifest_that_keeps_changing(
    tmp_path: Path,
) -> None:
    _warehouse(tmp_path, 2)
    newest = current_generation(tmp_path)
    (manifest.manifest_dir(tmp_path) / manifest.CURRENT).write_text("99\n")
    message = _damaged_message(tmp_path)
    assert str(generation_file(tmp_path, 99)) in message and "is missing" in message
    assert f"write {newest} into" in message  # the way back: the newest intact generation


def test_a_truncated_generation_is_reported_with_the_newest_intact_one(tmp_path: Path) -> None:
    _warehouse(tmp_path, 2)
    newest = generation_file(tmp_path, current_generation(tmp_path) or 0)
    newest.write_bytes(newest.read_bytes()[:50])
    message = _damaged_message(tmp_path)
    assert str(newest) in message and "not a readable generation" in message
    older = generation_file(tmp_path, (current_generation(tmp_path) or 0) - 1)
    assert f"newest intact generation is {older.name}" in message

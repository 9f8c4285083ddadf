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

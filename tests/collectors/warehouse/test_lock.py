"""The warehouse's writer lock: one that cannot be taken says why, and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskscore.collectors.warehouse.lock import LOCK_NAME, WarehouseNotWritable, writer_lock


def _take(warehouse: Path) -> None:
    with writer_lock(warehouse, "test"):
        pass


def test_a_lock_that_cannot_be_made_names_the_folder_and_what_to_do(tmp_path: Path) -> None:
    (tmp_path / LOCK_NAME).mkdir()  # as root, the one open that fails whatever the mode bits
    with pytest.raises(WarehouseNotWritable, match="needs write access to the warehouse folder"):
        _take(tmp_path)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(WarehouseNotWritable, match="run it as a user who can write there"):
        _take(tmp_path / "afile" / "wh")

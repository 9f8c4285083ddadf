"""Runner action timestamps: both OSWorld formats, ISO-8601, and nothing else."""

from __future__ import annotations

from datetime import datetime

import pytest

from deskscore.collectors.timestamps import parse_action_timestamp


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        ("20250226@163156", "%Y%m%d@%H%M%S"),
        ("20250226@163156123456", "%Y%m%d@%H%M%S%f"),
        ("20250226@1631561", "%Y%m%d@%H%M%S%f"),
        ("20241231@235959999", "%Y%m%d@%H%M%S%f"),
    ],
)
def test_runner_formats_parse_like_strptime(text: str, fmt: str) -> None:
    assert parse_action_timestamp(text) == datetime.strptime(text, fmt)


def test_iso_timestamps_are_accepted_and_offsets_become_naive_utc() -> None:
    assert parse_action_timestamp("2025-02-26T16:31:56") == datetime(2025, 2, 26, 16, 31, 56)
    assert parse_action_timestamp("2025-02-26T16:31:56+02:00") == datetime(2025, 2, 26, 14, 31, 56)
    assert parse_action_timestamp("2025-02-26T16:31:56Z") == datetime(2025, 2, 26, 16, 31, 56)


@pytest.mark.parametrize(
    "text",
    ["", "yesterday", "20250230@120000", "20250226@1631", "20250226@16315612345678",
     "2025022x@163156", "2025-02-26 at noon", "12"],
)  # fmt: skip
def test_anything_else_is_none(text: str) -> None:
    assert parse_action_timestamp(text) is None

"""Run clocks: when a run starts and how its timestamps are printed.

Times are kept as microseconds since `EPOCH` so episode writers can add latencies as integers
and print them in the runner's formats.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from deskscore.collectors.synthetic.profiles import AgentProfile
from deskscore.collectors.synthetic.seeds import rng

EPOCH = datetime(2000, 1, 1)


def run_start(seed: int, profile: AgentProfile, legacy: bool) -> datetime:
    """When the run began: fixed by the seed; legacy runs predate the 2025-02-10 id change."""
    draw = rng(seed, profile.name, "run-start")
    first = datetime(2024, 11, 4, 9, 0, 0) if legacy else datetime(2025, 6, 2, 9, 0, 0)
    return first + timedelta(days=draw.randint(0, 60), minutes=draw.randint(0, 600))


def micros_since_epoch(when: datetime) -> int:
    """`when` on the run clock."""
    return int((when - EPOCH).total_seconds() * 1e6)


def step_timestamp(micros: int, with_micros: bool) -> str:
    """An action timestamp as OSWorld runners print it (%Y%m%d@%H%M%S, optionally %f)."""
    ts = EPOCH + timedelta(microseconds=micros)
    return ts.strftime("%Y%m%d@%H%M%S%f" if with_micros else "%Y%m%d@%H%M%S")


def iso(micros: int) -> str:
    """ISO 8601 with milliseconds, as agent_s3's token_usage.json prints call starts."""
    return (EPOCH + timedelta(microseconds=micros)).isoformat(timespec="milliseconds")


def summary_time(micros: int) -> str:
    """A summary/results.json timestamp."""
    return (EPOCH + timedelta(microseconds=micros)).strftime("%Y-%m-%d %H:%M:%S")

"""Benchmark: parsing a run's actions, compiling every code string against parse_action now.

    python benchmarks/actions.py [--profile atlas-swift] [--tasks 369] [--seed 0] [--repeat 5]

Generates one run of a demo agent (deskscore's run generator, the bundled verified tasks, no
screenshots) and reads the `action` of every trajectory line, in file order, as ingest meets
them. Then times parsing all of them, from cold, four ways in the same run:

  (a) baseline: `parse_action_uncached` with every code string compiled by `ast` and nothing
      remembered;
  (b) the same with read_code's cache (each distinct string compiled once): ingest's way
      before the plain-form reading, though with today's faster reading of the calls;
  (c) the plain-form reading (`simple_code`: plain calls read without compiling), no memo;
  (d) now: `parse_action` (a click at new coordinates read from its shape, remembered by
      shape only; other strings' whole results remembered; then the plain-form reading).

Each is run --repeat times, in turn, and the fastest kept (the machine may be shared). All
four must give equal results for every action. Prints actions, distinct strings, the share
read in the plain form, each way's time, microseconds per action and speed-up over (a)
(target: (d) at least 3x). A script, not a test: it writes to a temporary folder and
removes it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from functools import lru_cache, partial
from pathlib import Path

from deskscore.collectors.action_code import _simple_calls, read_code_uncached
from deskscore.collectors.actions import clear_action_memo, parse_action, parse_action_uncached
from deskscore.collectors.human import load_bundled
from deskscore.collectors.synthetic import load_profiles, write_run
from deskscore.pipelines.cli.output import render

TARGET_SPEEDUP = 3.0
COMPILED = partial(read_code_uncached, simple=False)


def run_actions(profile_name: str, n_tasks: int, seed: int) -> list[object]:
    """The `action` of every trajectory line of one generated run, in file order."""
    profiles = {p.name: p for p in load_profiles()}
    if profile_name not in profiles:
        sys.exit(f"no demo agent {profile_name!r}; one of: {', '.join(profiles)}")
    tasks = list(load_bundled("verified"))[:n_tasks]
    actions: list[object] = []
    with tempfile.TemporaryDirectory(prefix="deskscore-actions-") as tmp:
        root = write_run(Path(tmp), profiles[profile_name], tasks, seed=seed, screenshots="none")
        for traj in sorted(root.rglob("traj.jsonl")):
            for line in traj.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                if "action" in record:
                    actions.append(record["action"])
    return actions


def _compiled_with_cache() -> Callable[[object], dict]:
    """(b): a fresh read_code cache (4096 strings, as read_code keeps) over the ast reading."""
    read = lru_cache(maxsize=4096)(COMPILED)
    return partial(parse_action_uncached, read=read)


def _now() -> Callable[[object], dict]:
    """(d): parse_action from an empty memo."""
    clear_action_memo()
    return parse_action


WAYS: list[tuple[str, Callable[[], Callable[[object], dict]]]] = [
    ("(a) compile every string, no memo", lambda: partial(parse_action_uncached, read=COMPILED)),
    ("(b) compile, read_code cache", _compiled_with_cache),
    ("(c) plain form, no memo", lambda: partial(parse_action_uncached, read=read_code_uncached)),
    ("(d) parse_action: memo + shapes + plain form", _now),
]


def time_way(make: Callable[[], Callable[[object], dict]], actions: list[object]) -> tuple:
    """(seconds, results) of parsing every action once, from a fresh start."""
    parse = make()
    started = time.perf_counter()
    results = [parse(a) for a in actions]
    return time.perf_counter() - started, results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="atlas-swift", help="demo agent (atlas-swift)")
    parser.add_argument("--tasks", type=int, default=369, help="bundled tasks (default all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5, help="rounds; best kept (default 5)")
    args = parser.parse_args(argv)

    actions = run_actions(args.profile, args.tasks, args.seed)
    codes = [a for a in actions if isinstance(a, str)]
    distinct = set(codes)
    plain = sum(_simple_calls(c) is not None for c in distinct)
    print(
        f"{args.profile}, {args.tasks} tasks, seed {args.seed}: {len(actions)} actions, "
        f"{len(codes)} strings ({len(distinct)} distinct, {plain} of them in the plain form); "
        f"best of {args.repeat}\n"
    )
    walls: dict[str, list[float]] = {name: [] for name, _ in WAYS}
    reference = None
    same = True
    for _ in range(max(1, args.repeat)):
        for name, make in WAYS:
            wall, results = time_way(make, actions)
            walls[name].append(wall)
            if reference is None:
                reference = results
            same = same and results == reference and repr(results) == repr(reference)
    base = min(walls[WAYS[0][0]])
    rows = []
    for name, _ in WAYS:
        best = min(walls[name])
        rows.append(
            [
                name,
                f"{1000 * best:.1f}",
                f"{1e6 * best / len(actions):.1f}",
                f"{base / best:.2f}",
                " ".join(f"{1000 * w:.0f}" for w in walls[name]),
            ]
        )
    print(render(["", "ms", "us/action", "x (a)", "all rounds (ms)"], rows))
    speedup = base / min(walls[WAYS[-1][0]])
    ok = speedup >= TARGET_SPEEDUP and same
    print(
        f"\nresults {'identical' if same else 'DIFFER'} in all four ways; "
        f"(a)/(d) = {speedup:.2f} (target >= {TARGET_SPEEDUP:g}): {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

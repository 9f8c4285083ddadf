"""Benchmark: loop detection against a plain DuckDB scan-and-window over the same step rows.

    python benchmarks/loops.py [--rows 10000000] [--repeat 3] [--seed 0] [--keep DIR]

Generates N step rows directly as Arrow columns (no files per episode): episodes of 15-100
steps, some model turns with several actions, about 1% runner error rows, planner responses
of 50-400 characters built from templates and random words, pyautogui action texts,
coordinates on pointer actions, 64-bit perceptual hashes, and loops of 3-10 repeated steps
(jittered clicks, slightly reworded responses, near-identical screens) in a fifth of the
episodes. The rows are written once to a Parquet file, then timed in the same run:

- floor: DuckDB reads the Parquet file and, over a window partitioned by episode and ordered
  by step, compares each executed step with the previous one on the same four columns
  (text equality, squared distance, XOR popcount) and counts the 2-of-4 rows;
- ours: pyarrow reads the same file a run at a time (one row group per run) and, run by run
  as the loop stage does, `find_loops` flags steps (rapidfuzz similarity, the missing-data and same-turn
  rules) and builds the spans with their outcomes; its peak RSS is printed (each side runs
  in a process of its own), which follows the largest run, not the total rows.

Each is run --repeat times, alternating, and the best wall time of each is kept (the machine
may be shared). Prints rows, both times, rows/s and the ratio (target: ours <= 4x the floor)
and PASS or FAIL. A script, not a test: it writes to a temporary folder and removes it (unless --keep).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np

if TYPE_CHECKING:  # imported where used: the timed child of `ours` loads no Polars
    import polars as pl
    import pyarrow as pa

from deskscore.scorers.domains import OSWORLD_DOMAINS
from deskscore.scorers.loops import EPISODE_COLUMNS, STEP_COLUMNS, LoopParams, find_loops

T = TypeVar("T")
TARGET_RATIO = 4.0
LOOP_SHARE = 0.2
EPISODES_PER_RUN = 400
_OPENERS = (
    "The screenshot shows",
    "Looking at the current screen, I can see",
    "The previous action worked and now",
    "I notice that the window displays",
    "It seems the application has loaded and",
    "After the last step the desktop shows",
    "The dialog is open and I can see",
    "The page finished loading; it shows",
)
_KEYS = ("enter", "tab", "esc", "down", "backspace", "space", "up", "delete")


def _words(rng: np.random.Generator, n: int) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(2, 10, n)
    flat = letters[rng.integers(0, 26, int(lengths.sum()))]
    out, at = [], 0
    for k in lengths:
        out.append("".join(flat[at : at + k]))
        at += k
    return out


def _layout(rng: np.random.Generator, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Episode lengths (15-100 steps, the last one cut to fit) and each row's episode."""
    lengths = rng.integers(15, 101, n_rows // 57 + 10)
    n_eps = int(np.searchsorted(np.cumsum(lengths), n_rows)) + 1
    lengths = lengths[:n_eps]
    lengths[-1] -= int(lengths.sum()) - n_rows
    lengths = lengths[lengths > 0]
    return lengths, np.repeat(np.arange(len(lengths)), lengths)


def _loop_sources(
    rng: np.random.Generator, lengths: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(source row of each row, in_loop): loop rows copy the loop's first row."""
    n = int(lengths.sum())
    looping = np.flatnonzero(rng.random(len(lengths)) < LOOP_SHARE)
    loop_len = np.minimum(rng.integers(3, 11, len(looping)), lengths[looping] - 1)
    offset = (rng.random(len(looping)) * (lengths[looping] - loop_len)).astype(np.int64)
    first = starts[looping] + offset
    within = np.arange(int(loop_len.sum())) - np.repeat(np.cumsum(loop_len) - loop_len, loop_len)
    rows = np.repeat(first, loop_len) + within
    src = np.arange(n)
    src[rows] = np.repeat(first, loop_len)
    in_loop = np.zeros(n, dtype=bool)
    in_loop[rows] = True
    return src, in_loop


def _responses(rng: np.random.Generator, n: int) -> pl.Series:
    """Planner texts of 50-400 characters: an opener and 1-8 phrases of random words."""
    import polars as pl

    words = _words(rng, 4000)
    phrases = pl.Series(
        [
            " ".join(words[i] for i in rng.integers(0, len(words), rng.integers(3, 9)))
            for _ in range(3000)
        ]
    )
    openers = pl.Series(_OPENERS)
    n_phrases = pl.Series(rng.integers(1, 9, n))
    parts = [pl.lit(openers.gather(pl.Series(rng.integers(0, len(openers), n)).cast(pl.UInt32)))]
    for k in range(8):
        part = phrases.gather(pl.Series(rng.integers(0, len(phrases), n)).cast(pl.UInt32))
        parts.append(pl.when(pl.lit(n_phrases) > k).then(pl.lit(part)))
    text = pl.concat_str(parts, separator=" ", ignore_nulls=True).str.slice(0, 400)
    return pl.select(text).to_series()


def _actions(frame: pl.DataFrame) -> pl.Series:
    """pyautogui code for each row's kind, coordinates and arguments."""
    import polars as pl

    xi = pl.col("x").cast(pl.Int64).cast(pl.String)
    yi = pl.col("y").cast(pl.Int64).cast(pl.String)

    def code(*parts: pl.Expr | str) -> pl.Expr:
        return pl.concat_str([pl.lit(p) if isinstance(p, str) else p for p in parts])

    k = pl.col("kind")
    expr = (
        pl.when(k == "click")
        .then(code("pyautogui.click(", xi, ", ", yi, ")"))
        .when(k == "move")
        .then(code("pyautogui.moveTo(", xi, ", ", yi, ")"))
        .when(k == "scroll")
        .then(code("pyautogui.scroll(", pl.col("amount").cast(pl.String), ")"))
        .when(k == "type")
        .then(code("pyautogui.write('", pl.col("word"), "', interval=0.03)"))
        .when(k == "press")
        .then(code("pyautogui.press('", pl.col("key"), "')"))
        .when(k == "hotkey")
        .then(code("pyautogui.hotkey('ctrl', '", pl.col("letter"), "')"))
        .when(k == "wait")
        .then(pl.lit("WAIT"))
    )
    return frame.select(expr).to_series()


def generate(n_rows: int, seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(steps, episodes) with `n_rows` step rows; vectorised, deterministic per seed."""
    import polars as pl

    rng = np.random.default_rng(seed)
    lengths, ep = _layout(rng, n_rows)
    n_eps, n = len(lengths), int(lengths.sum())
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    step_idx = np.arange(n) - starts[ep]
    src, in_loop = _loop_sources(rng, lengths, starts)
    src_pl = pl.Series(src).cast(pl.UInt32)

    kinds = np.array(["click", "type", "press", "hotkey", "scroll", "wait", "move", "error"])
    kind = rng.choice(len(kinds), n, p=[0.42, 0.14, 0.12, 0.1, 0.08, 0.04, 0.09, 0.01])
    kind[src[in_loop]] = np.where(kind[src[in_loop]] == 7, 0, kind[src[in_loop]])
    kind = kind[src]
    pointer = np.isin(kind, [0, 4, 6])
    jitter = np.where(in_loop, rng.integers(-3, 4, (2, n)), 0)
    x = np.where(pointer, np.clip(rng.integers(0, 1920, n)[src] + jitter[0], 0, 1919), np.nan)
    y = np.where(pointer, np.clip(rng.integers(0, 1080, n)[src] + jitter[1], 0, 1079), np.nan)

    # model turns: about 15% of actions join the previous action's turn; loop steps never do
    joins = (rng.random(n) < 0.15) & (step_idx > 0) & ~in_loop
    turn_no = np.cumsum(~joins)
    step_num = turn_no - turn_no[starts][ep] + 1

    response = _responses(rng, n).gather(src_pl)
    reworded = pl.Series(in_loop & (rng.random(n) < 0.3) & (src != np.arange(n)))
    response = pl.select(
        pl.when(pl.lit(reworded))
        .then(pl.concat_str([pl.lit(response), pl.lit(" again")]))
        .otherwise(pl.lit(response))
    ).to_series()
    words = pl.Series(_words(rng, 4000))
    frame = pl.DataFrame(
        {
            "kind": kinds[kind],
            "x": x,
            "y": y,
            "word": words.gather(pl.Series(rng.integers(0, len(words), n)).cast(pl.UInt32)),
            "key": np.array(_KEYS)[rng.integers(0, len(_KEYS), n)],
            "letter": np.array(list("acfnostvxz"))[rng.integers(0, 10, n)],
            "amount": rng.choice([-5, -3, 3, 5], n),
        }
    )
    frame = frame.with_columns(pl.col("word", "key", "letter", "amount").gather(src_pl))
    action = _actions(frame)

    # screens: mostly a new one after each action, else a bit away from the last; loops stay
    fresh = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64)
    same_screen = ((rng.random(n) < 0.3) & (step_idx > 0)) | (in_loop & (src != np.arange(n)))
    screen = np.maximum.accumulate(np.where(same_screen, 0, np.arange(n)))
    flip = np.where(same_screen, np.left_shift(np.int64(1), rng.integers(0, 64, n)), 0)
    phash = fresh[screen] ^ flip
    has_phash = rng.random(n) >= 0.05  # a few steps have no screenshot

    is_error = pl.Series(kind == 7)
    task_ids = pl.Series(rng.integers(0, 2**62, n_eps, dtype=np.int64)).cast(pl.String)
    steps = pl.DataFrame(
        {
            "run_id": pl.Series(ep // EPISODES_PER_RUN).cast(pl.String).str.pad_start(6, "0"),
            "benchmark": pl.repeat("osworld", n, eager=True),
            "domain": np.array(OSWORLD_DOMAINS)[ep % len(OSWORLD_DOMAINS)],
            "task_id": task_ids.gather(pl.Series(ep).cast(pl.UInt32)),
            "step_idx": pl.Series(step_idx).cast(pl.Int32),
            "step_num": pl.Series(step_num).cast(pl.Int32),
            "action_kind": kinds[kind],
            "action_text": pl.select(pl.when(~pl.lit(is_error)).then(pl.lit(action))).to_series(),
            "response": pl.select(pl.when(~pl.lit(is_error)).then(pl.lit(response))).to_series(),
            "x": pl.Series(x).fill_nan(None),
            "y": pl.Series(y).fill_nan(None),
            "phash": pl.select(
                pl.when(pl.lit(pl.Series(has_phash))).then(pl.lit(pl.Series(phash)))
            ).to_series(),
        }
    )
    last = pl.Series(starts + lengths - 1).cast(pl.UInt32)
    episodes = (
        steps.select("run_id", "domain", "task_id", "step_num")
        .gather(last)
        .select(
            "run_id",
            "domain",
            "task_id",
            pl.Series("ended_by", np.where(rng.random(n_eps) < 0.6, "done", "none")),
            pl.Series("n_steps", lengths).cast(pl.Int32),
            pl.col("step_num").alias("n_turns"),
            pl.lit(100, pl.Int32).alias("max_steps"),
        )
    )
    return steps.select(STEP_COLUMNS), episodes.select(EPISODE_COLUMNS)


FLOOR_SQL = """
WITH w AS (
    SELECT
        response = lag(response) OVER e                                          AS s_response,
        action_text = lag(action_text) OVER e                                    AS s_action,
        (x - lag(x) OVER e) ^ 2 + (y - lag(y) OVER e) ^ 2 <= 2500                AS s_coords,
        bit_count(xor(phash, lag(phash) OVER e)) <= 3                            AS s_phash
    FROM read_parquet(?)
    WHERE action_kind <> 'error'
    WINDOW e AS (PARTITION BY run_id, domain, task_id ORDER BY step_idx)
)
SELECT
    count(*) AS n,
    count(*) FILTER (
        WHERE coalesce(s_response, false)::INT + coalesce(s_action, false)::INT
            + coalesce(s_coords, false)::INT + coalesce(s_phash, false)::INT >= 2
    ) AS two_of_four
FROM w
"""


def floor(path: Path) -> tuple[float, int, int]:
    """(seconds, executed rows, rows with 2 equal signals) of the DuckDB scan-and-window."""
    import duckdb

    con = duckdb.connect()
    started = time.perf_counter()
    n, hits = con.execute(FLOOR_SQL, [str(path)]).fetchone()
    return time.perf_counter() - started, n, hits


def _runs(path: Path) -> Iterator[pa.Table]:
    """The step rows of each run in turn: the file holds one row group per run (as the
    warehouse holds one file, or one packed row group, per run), read one at a time."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    source = pq.ParquetFile(path)
    for group in range(source.num_row_groups):
        table = source.read_row_group(group, columns=list(STEP_COLUMNS))
        if pc.count_distinct(table.column("run_id")).as_py() != 1:
            raise ValueError(f"row group {group} of {path} holds several runs")
        yield table


def write_by_run(steps: pl.DataFrame, path: Path) -> None:
    """`steps` as Parquet, one row group per run, in run order."""

    import pyarrow.parquet as pq

    table = steps.to_arrow()
    with pq.ParquetWriter(path, table.schema, compression="zstd") as writer:
        for frame in steps.partition_by("run_id", maintain_order=True):
            writer.write_table(frame.to_arrow(), row_group_size=frame.height)


def ours(path: Path, episodes_path: Path) -> tuple[float, int, int, int, float]:
    """(seconds, executed rows, looping steps, spans, peak RSS in MB) of pyarrow reading +
    find_loops run by run, as the loop stage runs it (no Polars in the process): memory
    follows the largest run, not the total rows. Run in a process of its own, for its peak
    RSS."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    started = time.perf_counter()
    episodes = pq.read_table(episodes_path)
    executed = looping = n_spans = 0
    for steps in _runs(path):
        run = steps.column("run_id")[0]
        run_episodes = episodes.filter(pc.equal(episodes.column("run_id"), run))
        flags, spans = find_loops(steps, run_episodes, LoopParams())
        executed += flags.num_rows
        looping += pc.sum(flags.column("looping")).as_py() or 0
        n_spans += spans.num_rows
    elapsed = time.perf_counter() - started
    return elapsed, executed, looping, n_spans, _peak_mb()


def _peak_mb() -> float:
    """This process's peak RSS (VmHWM: getrusage's maxrss would carry the peak of the process
    that spawned it across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _in_child(fn: Callable[..., T], *args: object) -> T:
    """`fn(*args)` in a fresh process (spawned: its peak RSS is its own)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(fn, *args).result()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=10_000_000, help="step rows (default 10 M)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs of each (best kept)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keep", help="write the Parquet files here and keep them")
    args = p.parse_args(argv)

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="deskscore-loops-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        started = time.perf_counter()
        steps, episodes = generate(args.rows, args.seed)
        path, episodes_path = work / "steps.parquet", work / "episodes.parquet"
        write_by_run(steps, path)
        episodes.write_parquet(episodes_path)
        n_rows, n_eps = steps.height, episodes.height
        del steps, episodes
        print(
            f"generated {n_rows:,} step rows in {n_eps:,} episodes "
            f"({path.stat().st_size / 2**20:,.0f} MiB Parquet) in {time.perf_counter() - started:.1f} s"
        )
        floors, oursies = [], []
        for _ in range(max(1, args.repeat)):
            floors.append(_in_child(floor, path))
            oursies.append(_in_child(ours, path, episodes_path))
        t_floor, n_floor, hits = min(floors)
        t_ours, n_ours, looping, n_spans, peak = min(oursies)
        print(
            f"runs:  floor {', '.join(f'{f[0]:.2f}' for f in floors)} s; "
            f"ours {', '.join(f'{o[0]:.2f}' for o in oursies)} s (best of each kept)"
        )
        ratio = t_ours / t_floor
        print(f"rows:  {n_rows:,} ({n_floor:,} executed)")
        print(
            f"floor: DuckDB scan + lag window, equality/distance on 4 columns: {t_floor:7.2f} s "
            f"({n_rows / t_floor:,.0f} rows/s; {hits:,} rows with 2 of 4 equal)"
        )
        print(
            f"ours:  pyarrow read + find_loops (rapidfuzz, spans, outcomes):  {t_ours:7.2f} s "
            f"({n_rows / t_ours:,.0f} rows/s; {looping:,} looping steps in {n_spans:,} spans; "
            f"peak RSS {peak:,.0f} MB, run by run)"
        )
        if n_ours != n_floor:
            print(f"row counts differ: floor {n_floor:,}, ours {n_ours:,}")
            return 1
        verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
        print(f"ratio: {ratio:.2f}x the floor (target <= {TARGET_RATIO:g}x): {verdict}")
        return 0 if verdict == "PASS" else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

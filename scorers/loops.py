"""Loop detection: steps in which an agent repeats what it just did.

OSWorld-Human's definition (REFERENCE section 2): a step *loops* when at least 2 of 4 signals
hold against the previous step:

- ``response``: the planner/model text of the two steps is similar (rapidfuzz ``fuzz.ratio``,
  the normalised Indel similarity, >= ``text_threshold`` on a 0-100 scale);
- ``action``: the action texts are similar, by the same measure, once what every action of
  a format repeats is dropped (import lines, pauses, JSON keys, typing speed: see
  ACTION_BOILERPLATE; otherwise 'import pyautogui; ' alone makes unrelated clicks look alike);
- ``coords``: both steps name pointer coordinates and they lie within ``coord_radius`` px;
- ``phash``: both screenshots have a perceptual hash and their Hamming distance is at most
  ``phash_max_distance`` of 64 bits (3 bits, about 5%).

Only executed steps count (``action_kind != 'error'``: runner error lines are not steps) and
"the previous step" is the previous executed step of the same episode.

Missing data does not vote. A signal whose data is missing on either side (no response, no
coordinates, no screenshot hash, an empty string) is *unavailable* for that pair, and so is
``response`` for two actions of the same model turn (equal ``step_num``): they share one
response by construction, so its equality says nothing. The rule adapts to what is left:

    a pair gets a verdict only when at least ``min_available`` signals are available;
    it then loops when at least ``min(min_signals, available)`` of them fire.

With the defaults (2 and 2) that is "2 of the signals that can vote, and at least 2 must be
able to": a pair with one available signal gets no verdict, so two identical ``press('enter')``
in a row loop only if something else (the same planner text, the same screen) agrees. Setting
``min_available=1`` lets a single available signal decide (more recall on bare logs, more
false alarms).

Spans are maximal runs of consecutive looping steps of an episode; a span starts at the step
the first looping step repeats, so ``length = looping_steps + 1``. A span needs at least
``min_looping_steps`` looping steps (default 1: per the definition above, doing the same
thing twice in a row is already a loop; set 2 to ignore single retries); the looping steps of
shorter runs are not counted as looping.

Outcome of a span, from what happens after its last step:

- ``recovered``: a non-terminal executed step (anything but DONE/FAIL) follows it: the agent
  left the loop and went on;
- ``step_limit``: no executed step follows it and the episode used its budget
  (``n_turns >= max_steps``);
- ``abandoned``: otherwise: the episode ends with DONE/FAIL right after (or inside) the span,
  or simply stops there (runner error, killed runner).

When the run's budget is unknown (no ``args.json``) and ``infer_budget`` is set, it is
inferred: the largest ``n_turns`` among the run's episodes that just stopped (no DONE/FAIL,
no runner error: ``ended_by = 'none'``), provided at least two of them stopped at exactly that
count (a budget cuts many
episodes at the same turn; a single episode stopping there is a crash, not a budget).
Without a budget a span at the end of an episode is ``abandoned``.

Everything is vectorised over Arrow columns and numpy (`find_loops`), with rapidfuzz's
``process.cpdist`` for the pairs that survive cheap pre-checks: exact equality fires without
scoring, and a pair whose lengths alone cap the similarity below the threshold is never
scored. No Polars: a scoring worker then holds its imports plus one run (Polars costs about
45 MB per process once used); `detect_loops` is the same on Polars frames, for callers that
have them. Heavy modules are imported inside the functions: importing this module stays cheap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import polars as pl
    import pyarrow as pa

SIGNALS = ("response", "action", "coords", "phash")
"""The four signals, in the order spans list them."""

OUTCOMES = ("recovered", "abandoned", "step_limit")

TERMINAL_KINDS = ("done", "fail")
"""Action kinds that end an episode by the agent's own decision."""

EPISODE_KEY = ("run_id", "domain", "task_id")

STEP_COLUMNS = (
    "run_id",
    "benchmark",
    "domain",
    "task_id",
    "step_idx",
    "step_num",
    "action_kind",
    "action_text",
    "response",
    "x",
    "y",
    "phash",
)
"""Columns `detect_loops` reads from `steps` (phash: Int64, null when the step has none)."""

EPISODE_COLUMNS = ("run_id", "domain", "task_id", "ended_by", "n_steps", "n_turns", "max_steps")
"""Columns `detect_loops` reads from `episodes` (max_steps: the run's budget, nullable)."""

_VERSION = 1


@dataclass(frozen=True)
class LoopParams:
    """Thresholds of the detector; the defaults are OSWorld-Human's."""

    text_threshold: float = 90.0
    """rapidfuzz fuzz.ratio (0-100) at or above which two texts are similar."""
    coord_radius: float = 50.0
    """Pixels within which two pointer positions are the same place."""
    phash_max_distance: int = 3
    """Hamming distance (of 64 bits) at or below which two screenshots look the same."""
    min_signals: int = 2
    """Signals that must fire for a step to loop (capped at the number available)."""
    min_available: int = 2
    """Signals that must be available for a pair to get a verdict at all."""
    min_looping_steps: int = 1
    """Looping steps a span needs to count."""
    infer_budget: bool = True
    """Infer an unknown step budget from episodes cut at the same turn count (see module doc)."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.text_threshold <= 100.0:
            raise ValueError("text_threshold must be within [0, 100]")
        if self.coord_radius < 0 or not 0 <= self.phash_max_distance <= 64:
            raise ValueError("coord_radius >= 0 and phash_max_distance within [0, 64]")
        if not 1 <= self.min_signals <= len(SIGNALS) or not 1 <= self.min_available <= 4:
            raise ValueError("min_signals and min_available must be within [1, 4]")
        if self.min_looping_steps < 1:
            raise ValueError("min_looping_steps must be at least 1")

    @property
    def version(self) -> str:
        """Detector version and every parameter, as stored in loop_spans.detector_version."""
        return (
            f"loops-v{_VERSION}(text>={self.text_threshold:g},coords<={self.coord_radius:g}px,"
            f"phash<={self.phash_max_distance},signals>={self.min_signals},"
            f"available>={self.min_available},span>={self.min_looping_steps},"
            f"budget={'infer' if self.infer_budget else 'known'})"
        )


DETECTOR_VERSION = LoopParams().version
"""The version string of the default detector."""


def length_bound_ok(len_a: Any, len_b: Any, threshold: float) -> Any:
    """Whether two lengths allow a fuzz.ratio >= threshold at all (numbers or numpy arrays).

    fuzz.ratio = 100 * (1 - indel / (la + lb)) and indel >= |la - lb|, so the best possible
    score is 100 * 2 * min(la, lb) / (la + lb); pairs below the threshold are never scored.
    """
    import numpy as np

    shorter = np.minimum(len_a, len_b).astype(np.float64)
    total = np.add(len_a, len_b).astype(np.float64)
    return 200.0 * shorter >= threshold * total - 1e-9


ACTION_BOILERPLATE = (
    r"(?:^|[;\n])\s*(?:(?:import|from)\s[^;\n]*|time\.sleep\([^)]*\))"  # imports, pauses
    r'|"\w+"\s*:'  # the keys of dict (JSON) actions
    r"|,\s*interval\s*=\s*[\d.]+"  # typing speed
)
"""What the action signal ignores: what every action of a format repeats (imports, pauses,
JSON keys, typing speed).

Scored raw, two clicks at unrelated places look alike once a format wraps them: with
Claude's 'import pyautogui; ' prefix 30% of random click pairs reach fuzz.ratio 90, with an
'import pyautogui\nimport time\n' header 71%, as computer_13 JSON 71-100%. Without it they
score as the bare call does: 1% ('pyautogui.click(x, y)'), 3% ('click(x=.., y=..)'), 0.2%
(JSON), while clicks 3 px apart still reach 90 in 47-87% of pairs (the coords signal judges
the place anyway).
"""

_BOILERPLATE_HINT = r'import|from|time\.sleep|"|interval'
"""A text without any of these holds no boilerplate: it is only trimmed, never searched."""

_S = r"[\t\n\x0b\x0c\r \x1c-\x1f]"  # Python's \s in ASCII text (RE2's lacks \v, \x1c-\x1f)
ACTION_BOILERPLATE_ASCII = (
    rf"(?:^|[;\n]){_S}*(?:(?:import|from){_S}[^;\n]*|time\.sleep\([^)]*\))"
    rf'|"[0-9A-Za-z_]+"{_S}*:'
    rf"|,{_S}*interval{_S}*={_S}*[0-9.]+"
)
"""ACTION_BOILERPLATE for Arrow's RE2, on ASCII texts: the classes spelled out as Python's
engine reads them there, so both find the same matches (a text with any other character
goes through Python's engine)."""


def action_core(texts: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The action texts as compared: without ACTION_BOILERPLATE, separators trimmed (nulls
    stay null). Only the texts that can hold boilerplate are searched: in Arrow (RE2) when
    they are ASCII, as nearly all actions are, otherwise by Python's regex engine."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    texts = _flat(texts).cast(pa.large_string())
    hint = _bools(pc.match_substring_regex(texts, _BOILERPLATE_HINT))
    if hint.any():
        ascii_ = _bools(pc.string_is_ascii(texts))
        cleaned = pc.replace_substring_regex(texts, ACTION_BOILERPLATE_ASCII, "")
        texts = pc.if_else(pa.array(hint & ascii_), cleaned, texts)
        rows = np.flatnonzero(hint & ~ascii_)
        if len(rows):
            pattern = re.compile(ACTION_BOILERPLATE)
            other = [pattern.sub("", t) for t in texts.take(rows).to_pylist()]
            mask = np.zeros(len(texts), dtype=bool)
            mask[rows] = True
            texts = pc.replace_with_mask(texts, pa.array(mask), pa.array(other, pa.large_string()))
    return pc.utf8_trim(texts, characters=" ;\n\t")


def _flat(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous array of a column."""
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    return column


def _bools(values: pa.Array) -> np.ndarray:
    """A boolean Arrow array as numpy, null as False."""
    return values.fill_null(False).to_numpy(zero_copy_only=False)


def _same_as_previous(column: pa.Array) -> np.ndarray:
    """Row i equals row i-1 (False for row 0 and wherever either is null)."""
    import numpy as np
    import pyarrow.compute as pc

    out = np.zeros(len(column), dtype=bool)
    if len(column) > 1:
        out[1:] = _bools(pc.equal(column.slice(1), column.slice(0, len(column) - 1)))
    return out


def _numbers(column: pa.Array, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """(values, valid) of a numeric column cast to `dtype`; values at nulls are 0."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    arrow_type = pa.int64() if dtype == np.int64 else pa.float64()
    cast = pc.cast(column, arrow_type)
    valid = _bools(pc.is_valid(cast))
    return cast.fill_null(0).to_numpy(zero_copy_only=False).astype(dtype), valid


def _popcount(values: np.ndarray) -> np.ndarray:
    """Set bits of each 64-bit integer."""
    import numpy as np

    unsigned = values.astype(np.int64).view(np.uint64)  # two's complement bits, not |value|
    if hasattr(np, "bitwise_count"):  # numpy >= 2
        return np.bitwise_count(unsigned)
    as_bytes = unsigned.view(np.uint8).reshape(-1, 8)
    return np.unpackbits(as_bytes, axis=1).sum(axis=1)


def _episode_order(steps: pa.Table) -> tuple[pa.Table, np.ndarray]:
    """Executed steps, each episode's rows together and in step order, and where each
    episode starts (`_new_episode` of the rows returned).

    Warehouse partitions already come that way (one run, sorted by domain, task, step), so
    the input is only checked (each episode one block, steps increasing within it) and
    sorted when it is not.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    missing = [c for c in STEP_COLUMNS if c not in steps.column_names]
    if missing:
        raise ValueError(f"steps lacks columns {missing}")
    numeric = {"step_idx": pa.int64(), "step_num": pa.int64(), "x": pa.float64()}
    numeric |= {"y": pa.float64(), "phash": pa.int64()}
    table = pa.table(
        {
            c: pc.cast(_flat(steps.column(c)), numeric.get(c, pa.large_string()))
            for c in STEP_COLUMNS
        }
    )
    executed = pc.not_equal(table.column("action_kind"), "error").fill_null(True)
    if not pc.all(executed).as_py():
        table = table.filter(executed)
    if table.num_rows < 2:
        return table, np.ones(table.num_rows, dtype=bool)
    starts = _new_episode(table)
    idx, idx_ok = _numbers(_flat(table.column("step_idx")), np.int64)
    backwards = ~starts[1:] & (~idx_ok[1:] | ~idx_ok[:-1] | (idx[1:] <= idx[:-1]))
    firsts = table.filter(pa.array(starts)).select(list(EPISODE_KEY)).to_pylist()
    unique = len({tuple(row.values()) for row in firsts}) == len(firsts)
    if unique and not backwards.any():
        return table, starts
    table = table.sort_by([(c, "ascending") for c in (*EPISODE_KEY, "step_idx")])
    return table, _new_episode(table)


def _new_episode(table: pa.Table) -> np.ndarray:
    """True on each row that starts an episode (its key differs from the row before, or is
    null)."""
    import numpy as np

    same = np.ones(table.num_rows, dtype=bool)
    for key in EPISODE_KEY:
        same &= _same_as_previous(_flat(table.column(key)))
    return ~same


def _text_signal(
    text: pa.Array, usable: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """(available, fired) for texts against the previous row, as boolean arrays.

    `usable` says where the pair may vote at all (same episode, same-turn rule). Equal texts
    fire without scoring; pairs whose lengths alone cap the similarity below the threshold
    are never scored; only the rest goes to rapidfuzz, each needed text converted to a
    Python string once.
    """
    import numpy as np
    import pyarrow.compute as pc
    from rapidfuzz import fuzz, process

    length = pc.utf8_length(text).fill_null(0).to_numpy(zero_copy_only=False)
    prev_length = _shift(length)
    available = usable & (length > 0) & (prev_length > 0)
    bound = length_bound_ok(length, prev_length, threshold)
    fired = available & _same_as_previous(text)
    rest = np.flatnonzero(available & bound & ~fired)
    if len(rest) and threshold <= 0:
        fired[rest] = True
    elif len(rest):
        needed = np.zeros(len(text), dtype=bool)
        needed[rest] = True
        needed[rest - 1] = True
        rows = np.flatnonzero(needed)
        values = np.empty(len(rows), dtype=object)
        values[:] = text.take(rows).to_pylist()
        at = np.searchsorted(rows, rest)
        scores = process.cpdist(
            values[at], values[at - 1], scorer=fuzz.ratio, score_cutoff=threshold, workers=1
        )
        fired[rest[scores >= threshold]] = True
    return available, fired & available


def _budgets(episodes: pa.Table, infer: bool) -> dict[str, int | None]:
    """run_id -> the known max_steps, else (with `infer`) the inferred one, else None."""
    known: dict[str, int | None] = {}
    stopped: dict[str, list[int]] = {}
    for run, max_steps, ended_by, turns in zip(
        *(episodes.column(c).to_pylist() for c in ("run_id", "max_steps", "ended_by", "n_turns")),
        strict=True,
    ):
        before = known.get(run)
        known[run] = before if max_steps is None else max(before or max_steps, max_steps)
        if infer and ended_by == "none" and turns is not None and turns > 0:
            stopped.setdefault(run, []).append(turns)
    for run, turns in stopped.items():
        top = max(turns)
        if known.get(run) is None and turns.count(top) >= 2:
            known[run] = top
    return known


def _span_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            ("run_id", pa.large_string()),
            ("benchmark", pa.large_string()),
            ("domain", pa.large_string()),
            ("task_id", pa.large_string()),
            ("first_step", pa.int32()),
            ("last_step", pa.int32()),
            ("length", pa.int32()),
            ("looping_steps", pa.int32()),
            ("signals", pa.large_list(pa.large_string())),
            ("signal_counts_json", pa.large_string()),
            ("outcome", pa.large_string()),
            ("detector_version", pa.large_string()),
        ]
    )


def find_loops(
    steps: pa.Table, episodes: pa.Table, params: LoopParams | None = None
) -> tuple[pa.Table, pa.Table]:
    """Flag looping steps and gather them into spans with their outcome, on Arrow tables.

    `steps` has the columns of STEP_COLUMNS (any order, extra columns ignored; any number
    of runs and episodes), `episodes` those of EPISODE_COLUMNS. Returns `(flags, spans)`:

    - flags: one row per executed step in episode order: the episode key, step_idx,
      step_num, prev_step (the step it is compared with, null for an episode's first),
      action_kind, one boolean per signal (fired), n_available, `repeats` (the 2-of-4
      verdict) and `looping` (repeats and part of a span that counts);
    - spans: exactly the loop_spans columns, in the table's order.

    Arrow and numpy only (no Polars): a scoring worker's memory is its imports plus one run.
    """
    import numpy as np
    import pyarrow as pa

    params = params or LoopParams()
    missing = [c for c in EPISODE_COLUMNS if c not in episodes.column_names]
    if missing:
        raise ValueError(f"episodes lacks columns {missing}")
    df, new_ep = _episode_order(steps)
    col = {c: _flat(df.column(c)) for c in STEP_COLUMNS}
    same = ~new_ep
    same_turn = _same_as_previous(col["step_num"]) & same
    resp_avail, resp_fired = _text_signal(col["response"], same & ~same_turn, params.text_threshold)
    act_avail, act_fired = _text_signal(
        action_core(col["action_text"]), same, params.text_threshold
    )
    x, x_ok = _numbers(col["x"], np.float64)
    y, y_ok = _numbers(col["y"], np.float64)
    coords_avail = same & x_ok & y_ok & _shift(x_ok & y_ok)
    with np.errstate(invalid="ignore"):
        d2 = (x - _shift(x)) ** 2 + (y - _shift(y)) ** 2
        coords_fired = coords_avail & (d2 <= params.coord_radius**2)
    ph, ph_ok = _numbers(col["phash"], np.int64)
    phash_avail = same & ph_ok & _shift(ph_ok)
    phash_fired = phash_avail & (_popcount(ph ^ _shift(ph)) <= params.phash_max_distance)

    fired = np.stack([resp_fired, act_fired, coords_fired, phash_fired])
    avail = np.stack([resp_avail, act_avail, coords_avail, phash_avail])
    n_available = avail.sum(axis=0).astype(np.int8)
    required = np.minimum(n_available, params.min_signals)
    repeats = (n_available >= params.min_available) & (fired.sum(axis=0) >= required)

    # spans: runs of consecutive repeating steps (rows are in episode order)
    starts = repeats & ~(_shift(repeats) & same)
    span_of = np.cumsum(starts) - 1  # meaningful where repeats
    rows = np.flatnonzero(repeats)
    spans_at = span_of[rows]
    n_spans = int(starts.sum())
    looping_steps = np.bincount(spans_at, minlength=n_spans)
    kept = looping_steps >= params.min_looping_steps
    looping = repeats.copy()
    looping[rows] = kept[spans_at]

    step_idx, idx_ok = _numbers(col["step_idx"], np.int64)
    prev_step = pa.array(_shift(step_idx), mask=~(same & _shift(idx_ok)), type=pa.int64())
    flags = pa.table(
        {
            **{k: col[k] for k in EPISODE_KEY},
            "step_idx": col["step_idx"],
            "step_num": col["step_num"],
            "prev_step": prev_step,
            "action_kind": col["action_kind"],
            **{s: pa.array(fired[i]) for i, s in enumerate(SIGNALS)},
            "n_available": pa.array(n_available, pa.int8()),
            "repeats": pa.array(repeats),
            "looping": pa.array(looping),
        }
    )
    if not kept.any():
        return flags, _span_schema().empty_table()
    counts = np.stack([np.bincount(spans_at, weights=f[rows], minlength=n_spans) for f in fired])
    first_rows = np.flatnonzero(starts)
    last_rows = rows[np.searchsorted(spans_at, np.arange(n_spans), side="right") - 1]
    spans = _finish_spans(
        df, new_ep, episodes, params, first_rows[kept], last_rows[kept], counts[:, kept]
    )
    return flags, spans


def _shift(values: np.ndarray) -> np.ndarray:
    """values moved one row down; row 0 gets the zero of the type (callers mask it)."""
    import numpy as np

    out = np.zeros_like(values)
    out[1:] = values[:-1]
    return out


def _finish_spans(
    df: pa.Table,
    new_ep: np.ndarray,
    episodes: pa.Table,
    params: LoopParams,
    first_rows: np.ndarray,
    last_rows: np.ndarray,
    counts: np.ndarray,
) -> pa.Table:
    """Outcome, signal lists and loop_spans columns for the spans found (one per entry of
    `first_rows`/`last_rows`, the rows of its first and last looping step)."""
    import json

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = df.num_rows
    ep_of = np.cumsum(new_ep) - 1
    ep_last_row = np.append(np.flatnonzero(new_ep)[1:] - 1, n - 1)
    terminal = pc.is_in(df.column("action_kind"), pa.array(TERMINAL_KINDS))
    active_rows = np.flatnonzero(~_bools(_flat(terminal)))

    budgets = _budgets(episodes, params.infer_budget)
    hit_budget: dict[tuple[Any, ...], bool] = {}
    for run, domain, task, turns in zip(
        *(episodes.column(c).to_pylist() for c in ("run_id", "domain", "task_id", "n_turns")),
        strict=True,
    ):
        budget = budgets.get(run)
        hit = turns is not None and budget is not None and turns >= budget
        hit_budget.setdefault((run, domain, task), hit)

    first_steps = df.column("step_idx").take(first_rows - 1).to_pylist()
    last_steps = df.column("step_idx").take(last_rows).to_pylist()
    keys = [df.column(c).take(first_rows).to_pylist() for c in ("run_id", "domain", "task_id")]
    benchmark = df.column("benchmark").take(last_rows).to_pylist()
    out: dict[str, list[Any]] = {name: [] for name in _span_schema().names}
    for i, (first, last) in enumerate(zip(first_rows.tolist(), last_rows.tolist(), strict=True)):
        ep_last = int(ep_last_row[ep_of[last]])
        after = active_rows[np.searchsorted(active_rows, last, side="right") :]
        if len(after) and after[0] <= ep_last:
            outcome = "recovered"
        elif ep_last == last and hit_budget.get((keys[0][i], keys[1][i], keys[2][i]), False):
            outcome = "step_limit"
        else:
            outcome = "abandoned"
        n_signal = [int(c) for c in counts[:, i]]
        out["run_id"].append(keys[0][i])
        out["benchmark"].append(benchmark[i])
        out["domain"].append(keys[1][i])
        out["task_id"].append(keys[2][i])
        out["first_step"].append(first_steps[i])
        out["last_step"].append(last_steps[i])
        out["length"].append(last - first + 2)
        out["looping_steps"].append(last - first + 1)
        out["signals"].append([s for s, c in zip(SIGNALS, n_signal, strict=True) if c > 0])
        out["signal_counts_json"].append(json.dumps(dict(zip(SIGNALS, n_signal, strict=True))))
        out["outcome"].append(outcome)
        out["detector_version"].append(params.version)
    spans = pa.table(out, schema=_span_schema())
    return spans.sort_by([(c, "ascending") for c in (*EPISODE_KEY, "first_step")])


def detect_loops(
    steps: pl.DataFrame, episodes: pl.DataFrame, params: LoopParams | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`find_loops` on Polars frames: (flags, spans) as Polars frames (see `find_loops`)."""
    import polars as pl

    flags, spans = find_loops(steps.to_arrow(), episodes.to_arrow(), params)
    spans_frame = pl.from_arrow(spans)
    flags_frame = pl.from_arrow(flags)
    assert isinstance(spans_frame, pl.DataFrame) and isinstance(flags_frame, pl.DataFrame)
    return flags_frame, spans_frame


def episode_loop_summary(flags: pl.DataFrame) -> pl.DataFrame:
    """Per episode: executed steps, looping steps and their share, from `detect_loops` flags.

    Episodes without executed steps are absent here (their share is 0 by convention in the
    `episode_loops` mart, which starts from the episodes table).
    """
    import polars as pl

    return (
        flags.group_by(list(EPISODE_KEY), maintain_order=True)
        .agg(
            pl.len().alias("executed_steps"),
            pl.col("looping").sum().cast(pl.Int64).alias("looping_steps"),
        )
        .with_columns((pl.col("looping_steps") / pl.col("executed_steps")).alias("looping_share"))
    )


__all__ = [
    "DETECTOR_VERSION",
    "EPISODE_COLUMNS",
    "OUTCOMES",
    "SIGNALS",
    "STEP_COLUMNS",
    "LoopParams",
    "detect_loops",
    "episode_loop_summary",
    "find_loops",
    "length_bound_ok",
]

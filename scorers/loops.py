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

Everything is vectorised (polars expressions over the episode-sorted steps, numpy, and
rapidfuzz's ``process.cpdist`` for the pairs that survive cheap pre-checks: exact equality
fires without scoring, and a pair whose lengths alone cap the similarity below the threshold
is never scored). polars and rapidfuzz are imported inside the functions: importing this
module stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

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


def length_bound_ok(len_a: pl.Expr, len_b: pl.Expr, threshold: float) -> pl.Expr:
    """Whether two lengths allow a fuzz.ratio >= threshold at all.

    fuzz.ratio = 100 * (1 - indel / (la + lb)) and indel >= |la - lb|, so the best possible
    score is 100 * 2 * min(la, lb) / (la + lb); pairs below the threshold are never scored.
    """
    import polars as pl

    shorter = pl.min_horizontal(len_a, len_b).cast(pl.Float64)
    total = (len_a + len_b).cast(pl.Float64)
    return 200.0 * shorter >= threshold * total - 1e-9


def _episode_order(steps: pl.DataFrame) -> pl.DataFrame:
    """Executed steps, each episode's rows together and in step order.

    Warehouse partitions already come that way (one run, sorted by domain, task, step), so
    the input is only checked (each episode one block, steps increasing within it) and
    sorted when it is not.
    """
    import polars as pl

    missing = [c for c in STEP_COLUMNS if c not in steps.columns]
    if missing:
        raise ValueError(f"steps lacks columns {missing}")
    numeric = {"step_idx": pl.Int64, "step_num": pl.Int64, "x": pl.Float64, "y": pl.Float64}
    numeric["phash"] = pl.Int64
    df = steps.select([pl.col(c).cast(numeric.get(c, pl.String)) for c in STEP_COLUMNS])
    if df.select((pl.col("action_kind") == "error").any()).item():
        df = df.filter(pl.col("action_kind") != "error")
    if df.height < 2:
        return df
    starts = _new_episode(df)
    first_rows = df.filter(starts).select(EPISODE_KEY)
    backwards = df.select((~starts & (pl.col("step_idx") <= pl.col("step_idx").shift(1))).any())
    if first_rows.is_unique().all() and not backwards.item():
        return df
    return df.sort([*EPISODE_KEY, "step_idx"])


def _new_episode(df: pl.DataFrame) -> pl.Series:
    """True on each row that starts an episode (its key differs from the row before)."""
    import polars as pl

    same = pl.lit(True)
    for key in EPISODE_KEY:
        same = same & (pl.col(key) == pl.col(key).shift(1)).fill_null(False)
    return df.select(~same).to_series()


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


def action_core(column: str = "action_text") -> pl.Expr:
    """The action text as compared: without ACTION_BOILERPLATE, separators trimmed."""
    import polars as pl

    return pl.col(column).str.replace_all(ACTION_BOILERPLATE, "").str.strip_chars(" ;\n\t")


def _text_signal(
    text: pl.Series, usable: pl.Series, threshold: float
) -> tuple[pl.Series, pl.Series]:
    """(available, fired) for texts against the previous row, as boolean Series.

    `usable` says where the pair may vote at all (same episode, same-turn rule). Equal texts
    fire without scoring (found by hash, confirmed by comparison); pairs whose lengths alone
    cap the similarity below the threshold are never scored; only the rest goes to
    rapidfuzz, each needed text converted to a Python string once.
    """
    import numpy as np
    import polars as pl
    from rapidfuzz import fuzz, process

    length = text.str.len_chars().fill_null(0)
    prev_length = length.shift(1, fill_value=0)
    available = usable & (length > 0) & (prev_length > 0)
    bound = pl.select(length_bound_ok(pl.lit(length), pl.lit(prev_length), threshold)).to_series()
    digest = text.hash()
    same_digest = (digest == digest.shift(1)).fill_null(False)
    fired = np.zeros(len(text), dtype=bool)

    equal_idx = (available & same_digest).arg_true()
    if len(equal_idx):
        confirmed = (text.gather(equal_idx) == text.gather(equal_idx - 1)).fill_null(False)
        fired[equal_idx.filter(confirmed).to_numpy()] = True
    rest = (available & bound & ~pl.Series(fired)).arg_true().to_numpy()
    if len(rest) and threshold <= 0:
        fired[rest] = True
    elif len(rest):
        needed = np.zeros(len(text), dtype=bool)
        needed[rest] = True
        needed[rest - 1] = True
        rows = np.flatnonzero(needed)
        values = np.empty(len(rows), dtype=object)
        values[:] = text.gather(pl.Series(rows, dtype=pl.UInt32)).to_list()
        at = np.searchsorted(rows, rest)
        scores = process.cpdist(
            values[at], values[at - 1], scorer=fuzz.ratio, score_cutoff=threshold, workers=-1
        )
        fired[rest[scores >= threshold]] = True
    return available, pl.Series(text.name, fired) & available


def _budgets(episodes: pl.DataFrame, infer: bool) -> pl.DataFrame:
    """(run_id, budget): the known max_steps, else (with `infer`) the inferred one."""
    import polars as pl

    known = episodes.group_by("run_id").agg(pl.col("max_steps").drop_nulls().max().alias("known"))
    if not infer:
        return known.select("run_id", pl.col("known").alias("budget"))
    stopped = episodes.filter((pl.col("ended_by") == "none") & (pl.col("n_turns") > 0)).select(
        "run_id", "n_turns"
    )
    top = stopped.group_by("run_id").agg(pl.col("n_turns").max().alias("top"))
    hits = (
        stopped.join(top, on="run_id")
        .filter(pl.col("n_turns") == pl.col("top"))
        .group_by("run_id")
        .agg(pl.len().alias("hits"), pl.col("top").first())
    )
    inferred = hits.filter(pl.col("hits") >= 2).select("run_id", pl.col("top").alias("inferred"))
    return known.join(inferred, on="run_id", how="left").select(
        "run_id", pl.coalesce("known", "inferred").alias("budget")
    )


def _empty_spans() -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame(schema=_span_schema())


def _span_schema() -> dict[str, pl.DataType]:
    import polars as pl

    return {
        "run_id": pl.String,
        "benchmark": pl.String,
        "domain": pl.String,
        "task_id": pl.String,
        "first_step": pl.Int32,
        "last_step": pl.Int32,
        "length": pl.Int32,
        "looping_steps": pl.Int32,
        "signals": pl.List(pl.String),
        "signal_counts_json": pl.String,
        "outcome": pl.String,
        "detector_version": pl.String,
    }


def detect_loops(
    steps: pl.DataFrame, episodes: pl.DataFrame, params: LoopParams | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Flag looping steps and gather them into spans with their outcome.

    `steps` has the columns of STEP_COLUMNS (any order, extra columns ignored; any number
    of runs and episodes), `episodes` those of EPISODE_COLUMNS. Returns `(flags, spans)`:

    - flags: one row per executed step in episode order: the episode key, step_idx,
      step_num, action_kind, prev_step (the step it is compared with, null for an episode's
      first), one boolean per signal (fired), n_available, `repeats` (the 2-of-4 verdict)
      and `looping` (repeats and part of a span that counts);
    - spans: exactly the loop_spans columns, in the table's order.
    """
    import polars as pl

    params = params or LoopParams()
    missing = [c for c in EPISODE_COLUMNS if c not in episodes.columns]
    if missing:
        raise ValueError(f"episodes lacks columns {missing}")
    df = _episode_order(steps)
    n = df.height

    new_ep = _new_episode(df) if n else pl.Series("new", [], dtype=pl.Boolean)
    same = ~new_ep
    prev_x, prev_y, prev_ph = (pl.col(c).shift(1) for c in ("x", "y", "phash"))
    base = df.select(
        (pl.col("step_num") == pl.col("step_num").shift(1)).fill_null(False).alias("same_turn"),
        pl.all_horizontal(
            pl.col("x", "y").is_not_null(), prev_x.is_not_null(), prev_y.is_not_null()
        ).alias("coords_ok"),
        ((pl.col("x") - prev_x).pow(2) + (pl.col("y") - prev_y).pow(2)).alias("d2"),
        (pl.col("phash").is_not_null() & prev_ph.is_not_null()).alias("phash_ok"),
        pl.col("phash").xor(prev_ph).bitwise_count_ones().alias("hamming"),
    )
    same_turn = base.get_column("same_turn") & same
    # response: not between two actions of one model turn (they share it by construction)
    resp_avail, resp_fired = _text_signal(
        df.get_column("response"), same & ~same_turn, params.text_threshold
    )
    actions = df.select(action_core()).to_series()
    act_avail, act_fired = _text_signal(actions, same, params.text_threshold)
    coords_avail = same & base.get_column("coords_ok").fill_null(False)
    coords_fired = coords_avail & (
        base.get_column("d2").fill_null(float("inf")) <= params.coord_radius**2
    )
    phash_avail = same & base.get_column("phash_ok").fill_null(False)
    phash_fired = phash_avail & (
        base.get_column("hamming").fill_null(65) <= params.phash_max_distance
    )

    flags = df.select(
        *EPISODE_KEY,
        pl.col("step_idx"),
        pl.col("step_num"),
        pl.when(same).then(pl.col("step_idx").shift(1)).alias("prev_step"),
        pl.col("action_kind"),
    ).with_columns(
        pl.Series("response", resp_fired),
        pl.Series("action", act_fired),
        pl.Series("coords", coords_fired),
        pl.Series("phash", phash_fired),
        pl.sum_horizontal(
            pl.Series(resp_avail).cast(pl.Int8),
            pl.Series(act_avail).cast(pl.Int8),
            pl.Series(coords_avail).cast(pl.Int8),
            pl.Series(phash_avail).cast(pl.Int8),
        )
        .cast(pl.Int8)
        .alias("n_available"),
    )
    n_fired = pl.sum_horizontal(*(pl.col(s).cast(pl.Int8) for s in SIGNALS))
    required = pl.min_horizontal(pl.col("n_available"), pl.lit(params.min_signals, pl.Int8))
    flags = flags.with_columns(
        ((pl.col("n_available") >= params.min_available) & (n_fired >= required)).alias("repeats")
    )

    # spans: runs of consecutive repeating steps (rows are in episode order)
    rep = pl.col("repeats")
    starts = rep & ~(rep.shift(1).fill_null(False) & pl.col("prev_step").is_not_null())
    flags = flags.with_columns(
        pl.when(rep).then(starts.cum_sum()).alias("_span"),
        pl.lit(new_ep).cum_sum().alias("_ep"),
        pl.int_range(pl.len()).alias("_row"),
    )
    raw = (
        flags.filter(rep)
        .group_by("_span", maintain_order=True)
        .agg(
            pl.col("run_id").first(),
            pl.col("domain").first(),
            pl.col("task_id").first(),
            pl.col("_ep").first(),
            pl.col("prev_step").first().alias("first_step"),
            pl.col("step_idx").last().alias("last_step"),
            pl.col("_row").last().alias("last_row"),
            pl.len().alias("looping_steps"),
            *(pl.col(s).sum().alias(f"n_{s}") for s in SIGNALS),
        )
        .filter(pl.col("looping_steps") >= params.min_looping_steps)
    )
    kept = raw.get_column("_span")
    flags = flags.with_columns((rep & pl.col("_span").is_in(kept.implode())).alias("looping"))

    spans = _finish_spans(flags, raw, df, episodes, params) if raw.height else _empty_spans()
    flags = flags.drop("_span", "_ep", "_row")
    return flags, spans


def _finish_spans(
    flags: pl.DataFrame,
    raw: pl.DataFrame,
    df: pl.DataFrame,
    episodes: pl.DataFrame,
    params: LoopParams,
) -> pl.DataFrame:
    """Outcome, signal lists and loop_spans columns for the spans found."""
    import polars as pl

    # per episode with a span: its last executed row and last non-terminal executed row
    span_eps = raw.get_column("_ep").unique().implode()
    tail = (
        flags.filter(pl.col("_ep").is_in(span_eps))
        .group_by("_ep")
        .agg(
            pl.col("_row").max().alias("ep_last_row"),
            pl.col("_row")
            .filter(~pl.col("action_kind").is_in(TERMINAL_KINDS))
            .max()
            .alias("ep_last_active_row"),
        )
    )
    ep = episodes.select(
        pl.col("run_id").cast(pl.String),
        pl.col("domain").cast(pl.String),
        pl.col("task_id").cast(pl.String),
        pl.col("ended_by").cast(pl.String),
        pl.col("n_turns").cast(pl.Int64),
        pl.col("max_steps").cast(pl.Int64),
    )
    budgets = _budgets(ep, params.infer_budget)
    ep = ep.join(budgets, on="run_id", how="left").select(
        *EPISODE_KEY, (pl.col("n_turns") >= pl.col("budget")).fill_null(False).alias("hit_budget")
    )
    benchmark = df.get_column("benchmark").gather(raw.get_column("last_row"))
    out = (
        raw.with_columns(benchmark.alias("benchmark"))
        .join(tail, on="_ep", how="left")
        .join(ep, on=list(EPISODE_KEY), how="left", nulls_equal=True)
    )
    outcome = (
        pl.when(pl.col("ep_last_active_row").fill_null(-1) > pl.col("last_row"))
        .then(pl.lit("recovered"))
        .when((pl.col("ep_last_row") == pl.col("last_row")) & pl.col("hit_budget").fill_null(False))
        .then(pl.lit("step_limit"))
        .otherwise(pl.lit("abandoned"))
    )
    counts = pl.concat_str(
        [
            pl.lit('{"response": '),
            pl.col("n_response").cast(pl.String),
            pl.lit(', "action": '),
            pl.col("n_action").cast(pl.String),
            pl.lit(', "coords": '),
            pl.col("n_coords").cast(pl.String),
            pl.lit(', "phash": '),
            pl.col("n_phash").cast(pl.String),
            pl.lit("}"),
        ]
    )
    signals = pl.concat_list(
        [pl.when(pl.col(f"n_{s}") > 0).then(pl.lit(s)) for s in SIGNALS]
    ).list.drop_nulls()
    schema = _span_schema()
    return (
        out.select(
            pl.col("run_id"),
            pl.col("benchmark"),
            pl.col("domain"),
            pl.col("task_id"),
            pl.col("first_step").cast(pl.Int32),
            pl.col("last_step").cast(pl.Int32),
            (pl.col("looping_steps") + 1).cast(pl.Int32).alias("length"),
            pl.col("looping_steps").cast(pl.Int32),
            signals.alias("signals"),
            counts.alias("signal_counts_json"),
            outcome.alias("outcome"),
            pl.lit(params.version).alias("detector_version"),
        )
        .cast(schema)
        .sort([*EPISODE_KEY, "first_step"])
    )


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
    "length_bound_ok",
]

"""A run's model calls priced over columns: the figures of `cost.price_calls` and
`cost.episode_costs`, exactly, without a Python row or a Decimal per call.

A run records tens of thousands of calls; priced one Decimal row at a time they were most of
`score`'s time. Here every rate of the prices in use is scaled to an integer (10**d units,
d the most decimal places of any of them), so each call's amount is an exact integer product
of token count and rate, summed exactly per episode; a cost becomes a float by one division
of two integers that float64 holds exactly, which IEEE rounds correctly, as `float(Decimal)`
does: the same double, bit for bit. Episode totals go back to Decimal (exactly) for the run's
figures. Where a price file or a count is too large for that (a rate with more than nine
decimal places, products beyond 2**53, counts whose sums or differences could pass an int64),
`price_run` returns None and the caller uses the row functions, which are exact for any input;
the guards are computed in Python integers, which cannot wrap round as int64 does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, NamedTuple

from deskscore.schemas.tables import MAX_INT64
from deskscore.scorers.cost import TOKEN_FIELDS, Price, PriceTable

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

_EXACT_FLOAT = 2**53
"""Integers up to this are exact in float64."""
_MAX_PLACES = 9
"""Decimal places a rate may have here: 10**(9 + 6) stays under 2**53."""

CALL_COLUMNS = (
    "run_id", "benchmark", "domain", "task_id", "call_idx", "step_num", "step_idx", "stage",
    "model", "prompt_tokens", "cached_prompt_tokens", "cache_write_tokens",
    "completion_tokens", "reasoning_tokens", "reasoning_in_completion", "latency_s",
)  # fmt: skip
"""The llm_calls columns pricing reads."""


class PricedRun(NamedTuple):
    """What `cost.price_calls` and `cost.episode_costs` give, for one run."""

    calls: pa.Table
    """llm_call_costs, one row per call, in the order of the calls given."""
    episodes: list[dict[str, Any]]
    """episode_costs rows, one per episode given, in its order."""
    exact: list[Decimal | None]
    """Each episode's exact total (None when it has no call or an unpriced one)."""
    priced: list[Decimal | None]
    """Each episode's exact sum over its priced calls."""
    unpriced_models: list[str]
    """Models of the calls left unpriced, as run_costs lists them."""


def _places(rate: Decimal) -> int:
    exponent = rate.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else _MAX_PLACES + 1


def _rates(price: Price) -> tuple[Decimal, Decimal, Decimal, Decimal]:
    """(input, cached input, cache write, output) per million tokens."""
    cached = (
        price.input_per_mtok if price.cached_input_per_mtok is None else price.cached_input_per_mtok
    )
    write = (
        price.input_per_mtok if price.cache_write_per_mtok is None else price.cache_write_per_mtok
    )
    return price.input_per_mtok, cached, write, price.output_per_mtok


def _ints(arrow: Any) -> tuple[np.ndarray, np.ndarray]:
    """(values with nulls as 0, int64; validity) of an integer column."""
    import numpy as np
    import pyarrow.compute as pc

    valid = np.asarray(arrow.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    values = pc.fill_null(arrow, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    return values, valid


def price_run(
    calls: pa.Table,
    episodes: Sequence[Mapping[str, Any]],
    table: PriceTable,
    run_model: str | None,
) -> PricedRun | None:
    """`calls` (llm_calls rows with CALL_COLUMNS, sorted by domain, task_id, call_idx) and the
    run's `episodes` (sorted by domain, task_id) priced as `cost.price_calls` and
    `cost.episode_costs` price them; None when the amounts would not be exact here (see the
    module doc)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from deskscore.schemas import arrow_schema

    n = calls.num_rows
    code, named = _model_codes(calls.column("model"))
    models = [m if m else run_model for m in named]  # per distinct name, taken per call by code
    sources = ["call" if m else ("run" if run_model else "none") for m in named]
    matches = {m: table.match(m) for m in set(models)}
    used = [p for p, _ in matches.values() if p is not None]
    places = max((_places(r) for p in used for r in _rates(p)), default=0)
    if places > _MAX_PLACES:
        return None
    scale = 10**places
    int_rates = {
        m: tuple(int(r.scaleb(places)) for r in _rates(p)) if p is not None else None
        for m, (p, _) in matches.items()
    }

    counts = {f: _ints(calls.column(f)) for f in TOKEN_FIELDS}
    if _count_bound(counts) * max(n, 4) > MAX_INT64:
        return None  # differences and sums of these counts could wrap round in int64
    prompt, prompt_ok = counts["prompt_tokens"]
    completion, completion_ok = counts["completion_tokens"]
    cached, _ = counts["cached_prompt_tokens"]
    written, _ = counts["cache_write_tokens"]
    reasoning, _ = counts["reasoning_tokens"]
    not_in = pc.invert(calls.column("reasoning_in_completion")).fill_null(False)  # v is False
    extra = np.asarray(not_in.to_numpy(zero_copy_only=False), dtype=bool) & (reasoning != 0)
    uncached = prompt - cached - written
    output = completion + np.where(extra, reasoning, 0)

    has_price = np.array([int_rates[m] is not None for m in models], dtype=bool)[code]
    if any(r > _EXACT_FLOAT for rates in int_rates.values() if rates for r in rates):
        return None
    by_name = [int_rates[m] or (0, 0, 0, 0) for m in models]
    rate = np.array(by_name, dtype=np.int64).reshape(len(models), 4)[code]
    tokens = (
        np.stack([uncached, cached, written, output], axis=1) if n else np.zeros((0, 4), np.int64)
    )
    # in Python integers: a guard in int64 would itself wrap round
    largest_call = int(np.abs(tokens).max(initial=0)) * int(np.abs(rate).max(initial=0)) * 4
    if largest_call >= _EXACT_FLOAT or largest_call * n > MAX_INT64:
        return None
    has_tokens = prompt_ok & completion_ok
    ok = has_price & has_tokens & (uncached >= 0)
    amounts = np.where(ok[:, None], tokens * rate, 0)
    totals = amounts.sum(axis=1)
    reasons = np.where(
        ~has_price, "no_price", np.where(~has_tokens, "no_tokens", "inconsistent_tokens")
    )
    denominator = float(scale * 1_000_000)

    def money(values: np.ndarray) -> pa.Array:
        return pa.array(values / denominator, type=pa.float64(), mask=~ok)

    prices = [matches[m] for m in models]
    take = pa.array(code)

    def per_call(values: list[str | None]) -> pa.Array:
        return pa.array(values, type=pa.string()).take(take)

    schema = arrow_schema("llm_call_costs")
    kept = ("run_id", "benchmark", "domain", "task_id", "call_idx", "step_num", "stage")
    columns = {
        **{k: calls.column(k) for k in kept},
        "model": per_call(models),
        "model_source": per_call(sources),
        "price_model": per_call([p.model if p else None for p, _ in prices]),
        "price_match": per_call([how for _, how in prices]),
        "price_read_on": per_call([p.read_on if p else None for p, _ in prices]),
        "input_cost_usd": money(amounts[:, 0]),
        "cached_input_cost_usd": money(amounts[:, 1]),
        "cache_write_cost_usd": money(amounts[:, 2]),
        "output_cost_usd": money(amounts[:, 3]),
        "cost_usd": money(totals),
        "unpriced_reason": pa.array(reasons, type=pa.string(), mask=ok),
    }
    priced_calls = pa.Table.from_arrays(
        [columns[f].cast(schema.field(f).type) for f in schema.names], schema=schema
    )
    unpriced_models = sorted({str(models[i] or "(no model named)") for i in np.unique(code[~ok])})
    rows, exact, priced = _episodes(counts, calls, episodes, ok, totals, places)
    return PricedRun(priced_calls, rows, exact, priced, unpriced_models)


def _model_codes(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, list[str | None]]:
    """(each call's index into the names, the distinct model names with None last): a run's
    tens of thousands of calls name a few models, each priced and labelled once."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):  # one dictionary for every call
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    encoded = pc.dictionary_encode(column)
    names: list[str | None] = [*encoded.dictionary.to_pylist(), None]
    code = encoded.indices.fill_null(len(names) - 1).to_numpy(zero_copy_only=False)
    return np.asarray(code, dtype=np.intp), names


def _blocks(calls: pa.Table) -> Iterator[tuple[tuple[Any, Any], int, int]]:
    """((domain, task_id), first row, end row) of each run of consecutive calls with the same
    episode key, in order, as `itertools.groupby` groups the keys (a null equals a null);
    only a block's first key becomes a Python value."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = calls.num_rows
    if not n:
        return
    changed = np.zeros(n, dtype=bool)
    changed[0] = True
    columns = [calls.column("domain"), calls.column("task_id")]
    if n > 1:
        for c in columns:
            after, before = c.slice(1), c.slice(0, n - 1)
            differs = pc.or_(
                pc.not_equal(after, before).fill_null(False),
                pc.not_equal(after.is_null(), before.is_null()),
            )
            changed[1:] |= np.asarray(differs.to_numpy(zero_copy_only=False), dtype=bool)
    starts = np.flatnonzero(changed)
    firsts = [c.take(pa.array(starts)).to_pylist() for c in columns]
    ends = [*starts[1:].tolist(), n]
    yield from zip(zip(*firsts, strict=True), starts.tolist(), ends, strict=True)


def _count_bound(counts: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> int:
    """The largest magnitude of any count, as a Python integer."""
    return max((max(int(v.max()), -int(v.min())) for v, _ in counts.values() if len(v)), default=0)


def _episodes(
    counts: Mapping[str, tuple[np.ndarray, np.ndarray]],
    calls: pa.Table,
    episodes: Sequence[Mapping[str, Any]],
    ok: np.ndarray,
    totals: np.ndarray,
    places: int,
) -> tuple[list[dict[str, Any]], list[Decimal | None], list[Decimal | None]]:
    """episode_costs rows and exact totals, as `cost.episode_costs` computes them. Integer
    sums (tokens, amounts, counts) are differences of running sums taken once over the run,
    exact in int64 under `price_run`'s guards (no partial sum can pass the run's); float
    sums (latencies) are added in Python, call by call, in the same order: numpy would add
    them pairwise and could differ in the last bit."""
    import numpy as np

    from deskscore.scorers.cost import _EPISODE, _seconds

    spans: dict[tuple[str, str], tuple[int, int]] = {}
    for key, at, end in _blocks(calls):
        spans.setdefault(key, (at, end))
    bounds = [spans.get((ep["domain"], ep["task_id"]), (0, 0)) for ep in episodes]
    lo = np.array([b[0] for b in bounds], dtype=np.intp)
    hi = np.array([b[1] for b in bounds], dtype=np.intp)

    def per_episode(values: np.ndarray) -> list[int]:
        running = np.zeros(len(values) + 1, dtype=np.int64)
        np.cumsum(values, dtype=np.int64, out=running[1:])
        return (running[hi] - running[lo]).tolist()

    n_ok = per_episode(ok)
    priced_sums = per_episode(np.where(ok, totals, 0))
    token_sums = {f: (per_episode(v), per_episode(valid)) for f, (v, valid) in counts.items()}
    latency = calls.column("latency_s").to_pylist()
    first = calls.column("step_idx").to_pylist()
    shift = places + 6
    rows, exact, priced = [], [], []
    for j, ep in enumerate(episodes):
        lo_j, hi_j = bounds[j]
        n = hi_j - lo_j
        unpriced = n - n_ok[j]
        known = [v for v in latency[lo_j:hi_j] if v is not None]
        first_turn = [latency[i] or 0.0 for i in range(lo_j, hi_j) if first[i] == 0]
        wall = _seconds(ep.get("started_at"), ep.get("ended_at"))
        priced_sum = Decimal(priced_sums[j]).scaleb(-shift) if n - unpriced else None
        total = priced_sum if n and not unpriced else None
        tokens = {f: s[j] if valid[j] else None for f, (s, valid) in token_sums.items()}
        rows.append(
            {
                **{k: ep[k] for k in _EPISODE},
                "n_llm_calls": n,
                "n_unpriced_calls": unpriced,
                "n_calls_without_latency": n - len(known),
                **tokens,
                "cost_usd": float(total) if total is not None else None,
                "priced_cost_usd": float(priced_sum) if priced_sum is not None else None,
                "llm_latency_s": sum(known) if known else None,
                "task_time_s": wall + sum(first_turn) if wall is not None else None,
                "n_turns": ep.get("n_turns"),
            }
        )
        exact.append(total)
        priced.append(priced_sum)
    return rows, exact, priced


__all__ = ["CALL_COLUMNS", "PricedRun", "price_run"]

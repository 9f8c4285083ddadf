"""What model calls cost: tokens x price per million, computed once, exactly, in Decimal.

The rules, and why:

- prompt_tokens count every input token (the llm_calls convention); the uncached part is
  prompt - cached - cache_write, priced at the input rate; cached tokens at the cached-input
  rate (HAL prices them at the full input rate, which overstates agents whose prompts repeat
  their history); cache-write tokens at the cache-write rate (Anthropic's). A blank cached or
  cache-write rate in the price table means the provider has no separate rate: those tokens
  cost the input rate (OpenAI bills no cache writes; a model without caching reports none).
- Output: completion_tokens at the output rate. Reasoning tokens are billed as output; OpenAI,
  Anthropic and inspect_ai report them inside completion_tokens, so they are not added again;
  Gemini reports thoughts apart (reasoning_in_completion False), so they are added.
- A call whose token counts are missing is not priced (cost null, reason no_tokens); a model
  the price table lacks is not priced either (no_price): a missing price is never a zero.
- Formats that do not split cached tokens out (gpt54's model_usage) are priced as if nothing
  was cached: the archive does not say, and the input rate is what the counts support.

Prices come from datasets/prices.csv (per model, USD per million tokens, with the date each
was read and its source); a user file with the same columns replaces rows of the same model
or adds new ones. Models match exactly first (ignoring case), then after dropping a provider
prefix ('openai/gpt-5.4' -> 'gpt-5.4') and/or a date suffix ('gpt-5-2025-08-07' -> 'gpt-5',
'claude-sonnet-4-5-20250929' -> 'claude-sonnet-4-5'), so a dated row in the table wins over
its undated family.

Only the standard library is imported: the single-run path may price a run in-process.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal, InvalidOperation
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from deskscore.schemas.tables import MAX_INT64
from deskscore.scorers.success import is_strict_success, success_rate_run
from deskscore.scorers.wes import usable_reward

PRICE_COLUMNS = (
    "model",
    "input_per_mtok",
    "cached_input_per_mtok",
    "cache_write_per_mtok",
    "output_per_mtok",
    "read_on",
    "source",
)
MILLION = Decimal(1_000_000)
_DATE_SUFFIX = re.compile(r"[-@](?:\d{4}-\d{2}-\d{2}|\d{8})$")


class PriceError(ValueError):
    """A price file that cannot be used; the message names the file, the line and the fix."""


class Price(NamedTuple):
    model: str
    input_per_mtok: Decimal
    cached_input_per_mtok: Decimal | None
    """None: no separate rate, cached tokens cost the input rate."""
    cache_write_per_mtok: Decimal | None
    """None: no separate rate, cache writes cost the input rate."""
    output_per_mtok: Decimal
    read_on: str
    source: str


class PriceTable(NamedTuple):
    prices: dict[str, Price]
    """By model name, lower-cased."""
    label: str
    """What priced the calls, for run_costs.prices: bundled date, override file and a hash."""

    def match(self, model: str | None) -> tuple[Price | None, str | None]:
        """(price, 'exact' | 'normalised') for `model`, or (None, None)."""
        if not model:
            return None, None
        for i, candidate in enumerate(model_candidates(model)):
            price = self.prices.get(candidate)
            if price is not None:
                return price, "exact" if i == 0 else "normalised"
        return None, None


TOKEN_FIELDS = (
    "prompt_tokens",
    "cached_prompt_tokens",
    "cache_write_tokens",
    "completion_tokens",
    "reasoning_tokens",
)
"""Token counts summed from calls to episodes and from episodes to runs."""


def model_candidates(model: str) -> list[str]:
    """The names a model is looked up under, in order: itself, without its provider prefix
    (up to the last '/'), without a date suffix (-YYYY-MM-DD, -YYYYMMDD, @YYYYMMDD), both."""
    name = model.strip().lower()
    bare = name.rsplit("/", 1)[-1]
    out = []
    for c in (name, bare, _DATE_SUFFIX.sub("", name), _DATE_SUFFIX.sub("", bare)):
        if c and c not in out:
            out.append(c)
    return out


def _rate(raw: str | None, column: str, where: str, required: bool) -> Decimal | None:
    text = (raw or "").strip().lstrip("$")
    if not text:
        if required:
            raise PriceError(
                f"{where}: {column} is empty; give the price in USD per million tokens"
            )
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise PriceError(
            f"{where}: {column} {raw!r} is not a number; give USD per million tokens, e.g. 2.50"
        ) from None
    if not value.is_finite() or value < 0:
        raise PriceError(f"{where}: {column} {raw!r} must be a non-negative number")
    return value


def read_prices(text: str, name: str) -> list[Price]:
    """Rows of a price CSV (PRICE_COLUMNS; blank lines and lines starting with # skipped)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    missing = [c for c in PRICE_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise PriceError(
            f"{name}: missing column(s) {', '.join(missing)}; a price file has the columns "
            f"{','.join(PRICE_COLUMNS)}"
        )
    out = []
    for i, row in enumerate(reader, 2):
        where = f"{name}: row {i}"
        model = (row.get("model") or "").strip()
        if not model:
            raise PriceError(f"{where}: the model is empty")
        out.append(
            Price(
                model,
                _rate(row.get("input_per_mtok"), "input_per_mtok", where, True),  # type: ignore[arg-type]
                _rate(row.get("cached_input_per_mtok"), "cached_input_per_mtok", where, False),
                _rate(row.get("cache_write_per_mtok"), "cache_write_per_mtok", where, False),
                _rate(row.get("output_per_mtok"), "output_per_mtok", where, True),  # type: ignore[arg-type]
                (row.get("read_on") or "").strip(),
                (row.get("source") or "").strip(),
            )
        )
    return out


def bundled_prices_text() -> str:
    return resources.files("deskscore.datasets").joinpath("prices.csv").read_text()


def load_prices(override: str | Path | None = None) -> PriceTable:
    """The bundled price table, with the rows of `override` (same columns) replacing rows of
    the same model or added; raises PriceError naming the file and row for a bad file."""
    text = bundled_prices_text()
    bundled = read_prices(text, "datasets/prices.csv")
    prices = {p.model.lower(): p for p in bundled}
    newest = max((p.read_on for p in bundled), default="")
    digest = hashlib.sha256(text.encode())
    label = f"bundled {newest}"
    if override is not None:
        path = Path(override)
        try:
            extra_text = path.read_text(encoding="utf-8-sig")
        except OSError as e:
            raise PriceError(f"{path}: cannot read the price file ({e.strerror or e})") from None
        except UnicodeDecodeError as e:
            raise PriceError(
                f"{path}: the price file is not UTF-8 text (byte {e.start}); save it as UTF-8 CSV"
            ) from None
        for p in read_prices(extra_text, str(path)):
            prices[p.model.lower()] = p
        digest.update(extra_text.encode())
        label += f" + {path.name}"
    return PriceTable(prices, f"{label} ({digest.hexdigest()[:12]})")


class CallCost(NamedTuple):
    input: Decimal
    cached_input: Decimal
    cache_write: Decimal
    output: Decimal

    @property
    def total(self) -> Decimal:
        return self.input + self.cached_input + self.cache_write + self.output


def call_cost(
    price: Price,
    *,
    prompt_tokens: int | None,
    completion_tokens: int | None,
    cached_prompt_tokens: int | None = None,
    cache_write_tokens: int | None = None,
    reasoning_tokens: int | None = None,
    reasoning_in_completion: bool | None = None,
) -> tuple[CallCost | None, str | None]:
    """(cost in USD, None), or (None, reason) when the counts cannot be priced: no_tokens,
    inconsistent_tokens."""
    if prompt_tokens is None or completion_tokens is None:
        return None, "no_tokens"
    cached, written = cached_prompt_tokens or 0, cache_write_tokens or 0
    uncached = prompt_tokens - cached - written
    if uncached < 0:
        return None, "inconsistent_tokens"
    output = completion_tokens
    if reasoning_in_completion is False and reasoning_tokens:
        output += reasoning_tokens
    cached_rate = price.cached_input_per_mtok
    write_rate = price.cache_write_per_mtok
    return (
        CallCost(
            uncached * price.input_per_mtok / MILLION,
            cached * (price.input_per_mtok if cached_rate is None else cached_rate) / MILLION,
            written * (price.input_per_mtok if write_rate is None else write_rate) / MILLION,
            output * price.output_per_mtok / MILLION,
        ),
        None,
    )


_EPISODE = ("run_id", "benchmark", "domain", "task_id")


class Priced(NamedTuple):
    """Rows of a cost table, and the exact Decimal amount behind each row's cost_usd."""

    rows: list[dict[str, Any]]
    exact: list[Decimal | None]


def price_calls(
    calls: Iterable[Mapping[str, Any]], table: PriceTable, run_model: str | None
) -> Priced:
    """llm_call_costs rows for llm_calls rows; a call naming no model is priced as the run's."""
    matches: dict[str | None, tuple[Price | None, str | None]] = {}
    rows, exact = [], []
    for c in calls:
        model, source = (c.get("model"), "call") if c.get("model") else (run_model, "run")
        if not model:
            source = "none"
        if model not in matches:
            matches[model] = table.match(model)
        price, how = matches[model]
        cost, reason = (None, "no_price") if price is None else call_cost(
            price,
            prompt_tokens=c.get("prompt_tokens"),
            completion_tokens=c.get("completion_tokens"),
            cached_prompt_tokens=c.get("cached_prompt_tokens"),
            cache_write_tokens=c.get("cache_write_tokens"),
            reasoning_tokens=c.get("reasoning_tokens"),
            reasoning_in_completion=c.get("reasoning_in_completion"),
        )  # fmt: skip
        total = cost.total if cost is not None else None
        rows.append(
            {
                "run_id": c["run_id"], "benchmark": c["benchmark"], "domain": c["domain"],
                "task_id": c["task_id"], "call_idx": c["call_idx"],
                "step_num": c.get("step_num"), "stage": c["stage"],
                "model": model, "model_source": source,
                "price_model": price.model if price else None, "price_match": how,
                "price_read_on": price.read_on if price else None,
                "input_cost_usd": float(cost.input) if cost else None,
                "cached_input_cost_usd": float(cost.cached_input) if cost else None,
                "cache_write_cost_usd": float(cost.cache_write) if cost else None,
                "output_cost_usd": float(cost.output) if cost else None,
                "cost_usd": float(total) if total is not None else None,
                "unpriced_reason": reason,
            }
        )  # fmt: skip
        exact.append(total)
    return Priced(rows, exact)


def _sum(values: Iterable[Any]) -> Any:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _count_sum(values: Iterable[int | None]) -> int | None:
    """The sum of the known counts, None when none is known or when it is beyond what the
    int64 token columns hold (an unknown count, never one wrapped around)."""
    total = _sum(values)
    return total if total is None or total <= MAX_INT64 else None


def _seconds(a: datetime | None, b: datetime | None) -> float | None:
    return (b - a).total_seconds() if a is not None and b is not None else None


class EpisodeCosts(NamedTuple):
    rows: list[dict[str, Any]]
    exact: list[Decimal | None]
    """Each episode's exact total (None when it has no call or an unpriced one)."""
    priced: list[Decimal | None]
    """Each episode's exact sum over its priced calls."""
    beyond_int64: frozenset[str] = frozenset()
    """Token fields of which some episode's sum is beyond an int64 (null in its row): the
    run's sum of them is unknown too, not the sum of the other episodes."""


def episode_costs(
    episodes: Sequence[Mapping[str, Any]], calls: Sequence[Mapping[str, Any]], priced: Priced
) -> EpisodeCosts:
    """episode_costs rows: one per episode, from its llm_calls rows and `price_calls` of them."""
    by_ep: dict[tuple[str, str], list[tuple[Mapping[str, Any], Decimal | None]]] = {}
    for call, amount in zip(calls, priced.exact, strict=True):
        by_ep.setdefault((call["domain"], call["task_id"]), []).append((call, amount))
    rows, exact, priced_sums = [], [], []
    beyond: set[str] = set()
    for ep in episodes:
        pairs = by_ep.get((ep["domain"], ep["task_id"]), [])
        amounts = [a for _, a in pairs]
        unpriced = sum(1 for a in amounts if a is None)
        latencies = [call.get("latency_s") for call, _ in pairs]
        first_turn = [
            call.get("latency_s") or 0.0 for call, _ in pairs if call.get("step_idx") == 0
        ]
        wall = _seconds(ep.get("started_at"), ep.get("ended_at"))
        total = sum(amounts) if pairs and not unpriced else None  # type: ignore[arg-type]
        priced_sum = _sum(amounts)

        def tokens(key: str, pairs: list = pairs) -> int | None:
            total = _sum(call.get(key) for call, _ in pairs)
            if total is not None and total > MAX_INT64:
                beyond.add(key)
                return None
            return total

        rows.append(
            {
                **{k: ep[k] for k in _EPISODE},
                "n_llm_calls": len(pairs),
                "n_unpriced_calls": unpriced,
                "n_calls_without_latency": sum(1 for v in latencies if v is None),
                **{f: tokens(f) for f in TOKEN_FIELDS},
                "cost_usd": float(total) if total is not None else None,
                "priced_cost_usd": float(priced_sum) if priced_sum is not None else None,
                "llm_latency_s": _sum(latencies),
                "task_time_s": wall + sum(first_turn) if wall is not None else None,
                "n_turns": ep.get("n_turns"),
            }
        )
        exact.append(total)
        priced_sums.append(priced_sum)
    return EpisodeCosts(rows, exact, priced_sums, frozenset(beyond))


def unpriced_models(priced: Priced) -> list[str]:
    """The models of the calls `price_calls` left unpriced, as run_costs lists them."""
    return sorted(
        {
            str(c["model"] or "(no model named)")
            for c, a in zip(priced.rows, priced.exact, strict=True)
            if a is None
        }
    )


def run_cost(
    run_id: str,
    benchmark: str,
    episodes: Sequence[Mapping[str, Any]],
    per_episode: EpisodeCosts,
    unpriced: Sequence[str],
    prices_label: str,
) -> dict[str, Any]:
    """The run_costs row: totals in exact Decimal, success by the deskscore rules (r clamped
    into [0, 1], non-finite and unparseable results not run); `unpriced`: the models of the
    calls left unpriced (`unpriced_models`)."""
    rows = per_episode.rows
    with_usage = [i for i, e in enumerate(rows) if e["n_llm_calls"]]
    n_unpriced = sum(e["n_unpriced_calls"] for e in rows)
    total = (
        sum(per_episode.exact[i] for i in with_usage)  # type: ignore[misc]
        if with_usage and not n_unpriced
        else None
    )
    priced_total = _sum(per_episode.priced)
    rewards = [usable_reward(e.get("score")) for e in episodes]
    n_run = sum(1 for r in rewards if r is not None)
    n_success = sum(1 for r in rewards if is_strict_success(r))
    times = [e["task_time_s"] for e in rows if e["task_time_s"] is not None]

    def tokens(key: str) -> int | None:
        return None if key in per_episode.beyond_int64 else _count_sum(e[key] for e in rows)

    return {
        "run_id": run_id,
        "benchmark": benchmark,
        "n_episodes": len(episodes),
        "n_episodes_with_usage": len(with_usage),
        "n_llm_calls": sum(e["n_llm_calls"] for e in rows),
        "n_unpriced_calls": n_unpriced,
        "unpriced_models": list(unpriced) or None,
        **{f: tokens(f) for f in TOKEN_FIELDS},
        "cost_usd": float(total) if total is not None else None,
        "priced_cost_usd": float(priced_total) if priced_total is not None else None,
        "cost_per_task_usd": float(total / len(with_usage)) if total is not None else None,
        "n_tasks_run": n_run,
        "n_successes": n_success,
        "success_rate_run": success_rate_run(rewards),
        "cost_per_success_usd": (
            float(total / n_success) if total is not None and n_success else None
        ),
        "llm_latency_s": _sum(e["llm_latency_s"] for e in rows),
        "median_task_s": statistics.median(times) if times else None,
        "mean_task_s": statistics.fmean(times) if times else None,
        "prices": prices_label,
    }


__all__ = [
    "MILLION",
    "PRICE_COLUMNS",
    "CallCost",
    "EpisodeCosts",
    "Price",
    "PriceError",
    "PriceTable",
    "Priced",
    "call_cost",
    "episode_costs",
    "load_prices",
    "model_candidates",
    "price_calls",
    "read_prices",
    "run_cost",
    "unpriced_models",
]

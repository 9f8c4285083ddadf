"""Pricing over columns gives the row functions' figures, bit for bit."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from decimal import Decimal

import pyarrow as pa
import pytest

import deskscore.scorers.metrics  # noqa: F401  (declares the score tables' columns)
from deskscore.schemas import arrow_schema, conform_rows
from deskscore.scorers.cost import (
    Price,
    PriceTable,
    episode_costs,
    load_prices,
    price_calls,
    run_cost,
    unpriced_models,
)
from deskscore.scorers.cost_columns import CALL_COLUMNS, price_run

D = Decimal
MODELS = ["openai/gpt-5.4", "claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06", "my-local-7b",
          "", None]  # fmt: skip


def _calls(rng: random.Random, n_episodes: int) -> list[dict]:
    calls = []
    for e in range(n_episodes):
        domain, task = rng.choice(["chrome", "os", "vlc"]), f"t{e:03d}"
        for i in range(rng.randrange(0, 12)):
            prompt = rng.choice([None, 0, rng.randrange(1, 200_000)])
            calls.append(
                {
                    "run_id": "r", "benchmark": "osworld", "domain": domain, "task_id": task,
                    "call_idx": i, "step_num": rng.choice([None, i]), "step_idx": rng.choice([0, 0, 1, None]),
                    "stage": rng.choice(["planning", "grounding"]), "model": rng.choice(MODELS),
                    "prompt_tokens": prompt,
                    "cached_prompt_tokens": rng.choice([None, 0, rng.randrange(0, 250_000)]),
                    "cache_write_tokens": rng.choice([None, 0, rng.randrange(0, 9_000)]),
                    "completion_tokens": rng.choice([None, rng.randrange(0, 5_000)]),
                    "reasoning_tokens": rng.choice([None, 0, rng.randrange(1, 3_000)]),
                    "reasoning_in_completion": rng.choice([None, True, False]),
                    "latency_s": rng.choice([None, rng.random() * 30, 0.1 + 0.2]),
                }
            )  # fmt: skip
    calls.sort(key=lambda c: (c["domain"], c["task_id"], c["call_idx"]))
    return calls


def _episodes(calls: list[dict], rng: random.Random) -> list[dict]:
    keys = sorted({(c["domain"], c["task_id"]) for c in calls} | {("os", "no-calls")})
    start = datetime(2025, 7, 1, 9, 0, 0)
    out = []
    for domain, task in keys:
        began = rng.choice([None, start])
        out.append(
            {
                "run_id": "r", "benchmark": "osworld", "domain": domain, "task_id": task,
                "score": rng.choice([0.0, 1.0, None]), "started_at": began,
                "ended_at": began + timedelta(seconds=rng.randrange(1, 900)) if began else None,
                "n_turns": rng.randrange(0, 30),
            }
        )  # fmt: skip
    return out


def _table(calls: list[dict]) -> pa.Table:
    schema = arrow_schema("llm_calls")
    return pa.table({c: pa.array([r[c] for r in calls], type=schema.field(c).type)
                     for c in CALL_COLUMNS})  # fmt: skip


def _odd_prices() -> PriceTable:
    """Separate cached and write rates, some with many decimal places."""
    table = load_prices()
    odd = Price("my-local-7b", D("0.123456"), D("0.01"), None, D("7.5"), "2025-01-01", "t")
    return PriceTable({**table.prices, "my-local-7b": odd}, "test")


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("run_model", [None, "openai/gpt-5.4", "nobody-knows-me"])
def test_columns_give_the_rows_figures_exactly(seed: int, run_model: str | None) -> None:
    rng = random.Random(seed)
    calls = _calls(rng, 25)
    episodes = _episodes(calls, rng)
    table = _odd_prices() if seed % 2 else load_prices()
    rows = price_calls(calls, table, run_model)
    per_episode = episode_costs(episodes, calls, rows)
    columns = price_run(_table(calls), episodes, table, run_model)
    assert columns is not None
    assert columns.calls.equals(conform_rows("llm_call_costs", rows.rows))
    assert columns.episodes == per_episode.rows
    assert columns.exact == per_episode.exact
    assert columns.priced == per_episode.priced
    assert columns.unpriced_models == unpriced_models(rows)


def _chunked(table: pa.Table, pieces: int) -> pa.Table:
    """The table in `pieces` chunks, as a run's calls read from a pack can come."""
    step = max(1, -(-table.num_rows // pieces))
    slices = [table.slice(at, step) for at in range(0, table.num_rows, step)]
    return pa.concat_tables(slices) if slices else table


@pytest.mark.parametrize("seed", range(6))
def test_calls_in_chunks_or_with_null_keys_give_the_rows_figures(seed: int) -> None:
    """Models are priced per distinct name and episodes found by key changes, over columns of
    any chunking; calls without a task id are grouped as the rows group them."""
    rng = random.Random(seed)
    calls = _calls(rng, 25)
    if seed % 2:
        for c in calls[-3:]:
            c["task_id"] = None
    episodes = _episodes([c for c in calls if c["task_id"] is not None], rng)
    table = _odd_prices()
    rows = price_calls(calls, table, "openai/gpt-5.4")
    per_episode = episode_costs(episodes, calls, rows)
    columns = price_run(_chunked(_table(calls), 4), episodes, table, "openai/gpt-5.4")
    assert columns is not None
    if not seed % 2:  # the schema requires a task id: only the sums are compared without one
        assert columns.calls.equals(conform_rows("llm_call_costs", rows.rows))
    assert columns.episodes == per_episode.rows
    assert columns.exact == per_episode.exact
    assert columns.unpriced_models == unpriced_models(rows)


def test_rates_with_too_many_places_leave_pricing_to_the_rows() -> None:
    table = load_prices()
    tiny = Price("my-local-7b", D("0.0000000001"), None, None, D("1"), "2025-01-01", "t")
    calls = [c for c in _calls(random.Random(1), 10) if c["model"] == "my-local-7b"]
    assert calls
    priced = price_run(_table(calls), [], PriceTable({"my-local-7b": tiny}, "t"), None)
    assert priced is None
    assert price_run(_table(calls), [], table, None) is not None


def test_a_run_without_calls_prices_its_episodes_as_empty() -> None:
    episodes = _episodes([], random.Random(0))
    columns = price_run(_table([]), episodes, load_prices(), None)
    assert columns is not None
    assert columns.calls.num_rows == 0
    assert (
        columns.episodes == episode_costs(episodes, [], price_calls([], load_prices(), None)).rows
    )


def _big_calls(prompt: int) -> list[dict]:
    """Two calls of one episode; the first's prompt count is `prompt`."""
    calls = [c for c in _calls(random.Random(3), 40) if c["model"] == "openai/gpt-5.4"][:2]
    for c in calls:
        c.update(domain="os", task_id="t0", prompt_tokens=1000, cached_prompt_tokens=0,
                 cache_write_tokens=0, completion_tokens=10, reasoning_tokens=0)  # fmt: skip
    calls[0]["prompt_tokens"] = prompt
    calls[1]["call_idx"] = calls[0]["call_idx"] + 1
    return calls


@pytest.mark.parametrize("prompt", [2**60, 2**63 - 1], ids=["2**60", "int64 max"])
def test_counts_near_int64_leave_pricing_to_the_rows_which_stay_exact(prompt: int) -> None:
    """A count an int64 holds, times a rate, is beyond an int64: the guard itself is computed
    without wrapping round (it once let a count of 2**63 - 1 through as a negative cost)."""
    calls = _big_calls(prompt)
    episodes = [{"run_id": "r", "benchmark": "osworld", "domain": "os", "task_id": "t0",
                 "score": 1.0, "started_at": None, "ended_at": None, "n_turns": 2}]  # fmt: skip
    table = load_prices()
    assert price_run(_table(calls), episodes, table, None) is None
    priced = price_calls(calls, table, None)
    price = table.match("openai/gpt-5.4")[0]
    expected = (D(prompt) * price.input_per_mtok + 10 * price.output_per_mtok) / 1_000_000
    assert priced.exact[0] == expected
    assert priced.rows[0]["input_cost_usd"] == float(D(prompt) * price.input_per_mtok / 10**6)
    per_episode = episode_costs(episodes, calls, priced)
    run = run_cost("r", "osworld", episodes, per_episode, [], "t")
    # a sum of the two prompts beyond an int64 is unknown, never wrapped round
    total = prompt + 1000 if prompt + 1000 < 2**63 else None
    assert per_episode.rows[0]["prompt_tokens"] == total
    assert run["prompt_tokens"] == total
    assert run["completion_tokens"] == 20
    assert run["cost_usd"] == float(sum(priced.exact))  # type: ignore[arg-type]
    conform_rows("episode_costs", per_episode.rows)  # every count fits its column
    conform_rows("run_costs", [run])


def test_counts_whose_sum_fits_an_int64_are_summed_exactly() -> None:
    calls = _big_calls(2**62)
    episodes = [{"run_id": "r", "benchmark": "osworld", "domain": "os", "task_id": "t0",
                 "score": 1.0, "started_at": None, "ended_at": None, "n_turns": 2}]  # fmt: skip
    priced = price_calls(calls, load_prices(), None)
    per_episode = episode_costs(episodes, calls, priced)
    assert per_episode.rows[0]["prompt_tokens"] == 2**62 + 1000
    run = run_cost("r", "osworld", episodes, per_episode, [], "t")
    assert run["prompt_tokens"] == 2**62 + 1000

"""Prices and the cost of model calls: exact, cached tokens at the cached rate, no zero prices."""

from __future__ import annotations

import csv
import io
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from deskscore.schemas import conform_rows
from deskscore.scorers.cost import (
    PRICE_COLUMNS,
    Price,
    PriceError,
    bundled_prices_text,
    call_cost,
    episode_costs,
    load_prices,
    price_calls,
    run_cost,
    unpriced_models,
)

D = Decimal
PRICE = Price("m", D("2.50"), D("0.25"), D("3.125"), D("15.00"), "2026-01-01", "test")
CENT = D("0.01")


def test_the_bundled_table_has_every_column_a_date_and_a_source_for_each_model() -> None:
    rows = list(csv.DictReader(io.StringIO(bundled_prices_text())))
    assert rows and tuple(rows[0]) == PRICE_COLUMNS
    for row in rows:
        datetime.strptime(row["read_on"], "%Y-%m-%d")
        assert "https://" in row["source"]
        assert "verify" in row["source"]  # compiled from copies, not read from the page: say so
        assert D(row["input_per_mtok"]) > 0 and D(row["output_per_mtok"]) > 0
    assert len({r["model"].lower() for r in rows}) == len(rows)


def test_models_match_exactly_first_then_without_provider_prefix_or_date_suffix() -> None:
    table = load_prices()
    assert table.match("gpt-5.4")[1] == "exact"
    price, how = table.match("openai/gpt-5.4")
    assert (price.model, how) == ("gpt-5.4", "normalised")  # type: ignore[union-attr]
    assert table.match("gpt-5-2025-08-07")[0].model == "gpt-5"  # type: ignore[union-attr]
    assert table.match("claude-sonnet-4-5-20250929")[0].model == "claude-sonnet-4-5"  # type: ignore[union-attr]
    assert table.match("GPT-4o-2024-05-13")[0].input_per_mtok == D("5.00")  # type: ignore[union-attr]
    assert table.match("gpt-4o-2024-08-06")[0].input_per_mtok == D("2.50")  # type: ignore[union-attr]
    assert table.match("my-local-7b") == (None, None)
    assert table.match(None) == (None, None)


def test_an_override_file_replaces_rows_and_adds_models(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text(
        ",".join(PRICE_COLUMNS) + "\n"
        "gpt-5.4,1.00,0.10,,4.00,2026-11-01,our contract\n"
        "my-local-7b,0.05,,,0.10,2026-11-01,our GPU hours\n"
    )
    table = load_prices(path)
    assert table.match("gpt-5.4")[0].input_per_mtok == D("1.00")  # type: ignore[union-attr]
    assert table.match("my-local-7b")[0].source == "our GPU hours"  # type: ignore[union-attr]
    assert table.match("gpt-5")[0].input_per_mtok == D("1.25")  # type: ignore[union-attr]
    assert "mine.csv" in table.label and table.label != load_prices().label


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model,input_per_mtok\nx,1\n", "missing column"),
        (",".join(PRICE_COLUMNS) + "\nx,cheap,,,1,2026-01-01,s\n", "row 2: input_per_mtok 'cheap'"),
        (",".join(PRICE_COLUMNS) + "\nx,1,,,,2026-01-01,s\n", "row 2: output_per_mtok is empty"),
        (",".join(PRICE_COLUMNS) + "\nx,-1,,,1,2026-01-01,s\n", "non-negative"),
    ],
)
def test_a_bad_price_file_names_the_file_and_row(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(PriceError, match=message) as err:
        load_prices(path)
    assert "bad.csv" in str(err.value)


def test_a_missing_price_file_is_an_error_not_the_bundled_table(tmp_path: Path) -> None:
    with pytest.raises(PriceError, match="cannot read"):
        load_prices(tmp_path / "nope.csv")


def test_a_price_file_that_is_not_utf8_names_the_file_and_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "latin1.csv"
    path.write_bytes(b"model,input_per_mtok\n\xe9,1\n")
    with pytest.raises(PriceError, match=r"latin1\.csv: the price file is not UTF-8.*save it as"):
        load_prices(path)


def test_cached_tokens_cost_the_cached_rate_and_cache_writes_the_write_rate() -> None:
    cost, reason = call_cost(
        PRICE, prompt_tokens=100_000, cached_prompt_tokens=60_000, cache_write_tokens=10_000,
        completion_tokens=2_000,
    )  # fmt: skip
    assert reason is None and cost is not None
    assert cost.input == D("30000") * D("2.50") / 1_000_000  # the uncached 30k
    assert cost.cached_input == D("60000") * D("0.25") / 1_000_000
    assert cost.cache_write == D("10000") * D("3.125") / 1_000_000
    assert cost.output == D("2000") * D("15.00") / 1_000_000
    assert cost.total == D("0.15125")
    full_rate = (D(100_000) * D("2.50") + D(2_000) * D("15.00")) / 1_000_000  # HAL's way
    assert cost.total < full_rate


def test_a_blank_cached_rate_means_the_input_rate() -> None:
    no_discount = PRICE._replace(cached_input_per_mtok=None, cache_write_per_mtok=None)
    cost, _ = call_cost(no_discount, prompt_tokens=1000, cached_prompt_tokens=400,
                        cache_write_tokens=100, completion_tokens=0)  # fmt: skip
    assert cost is not None and cost.total == D(1000) * D("2.50") / 1_000_000


def test_reasoning_is_added_to_output_only_when_reported_apart() -> None:
    inside, _ = call_cost(PRICE, prompt_tokens=0, completion_tokens=1000, reasoning_tokens=800,
                          reasoning_in_completion=True)  # fmt: skip
    apart, _ = call_cost(PRICE, prompt_tokens=0, completion_tokens=1000, reasoning_tokens=800,
                         reasoning_in_completion=False)  # fmt: skip
    assert inside is not None and apart is not None
    assert inside.output == D("0.015") and apart.output == D("0.027")


def test_counts_that_cannot_be_priced_give_no_cost_and_say_why() -> None:
    assert call_cost(PRICE, prompt_tokens=None, completion_tokens=10) == (None, "no_tokens")
    assert call_cost(PRICE, prompt_tokens=10, completion_tokens=None) == (None, "no_tokens")
    assert call_cost(PRICE, prompt_tokens=10, completion_tokens=1, cached_prompt_tokens=11) == (
        None, "inconsistent_tokens",
    )  # fmt: skip


def _call(i: int, task: str, model: str | None, prompt: int, done: int, **kw: object) -> dict:
    return {
        "run_id": "r", "benchmark": "osworld", "domain": "os", "task_id": task,
        "call_idx": i, "step_num": kw.pop("step", i + 1), "step_idx": kw.pop("step_idx", i),
        "stage": "planning", "model": model, "prompt_tokens": prompt,
        "completion_tokens": done, **kw,
    }  # fmt: skip


def test_an_unknown_model_is_reported_never_priced_at_zero() -> None:
    table = load_prices()
    rows = price_calls([_call(0, "t1", "my-local-7b", 1000, 10)], table, None).rows
    [row] = rows
    assert row["cost_usd"] is None and row["unpriced_reason"] == "no_price"
    assert row["price_model"] is None and row["model_source"] == "call"
    conform_rows("llm_call_costs", rows)


def test_a_call_naming_no_model_is_priced_as_the_runs_model() -> None:
    priced = price_calls([_call(0, "t1", None, 1_000_000, 0)], load_prices(), "openai/gpt-5.4")
    [row] = priced.rows
    assert (row["model"], row["model_source"], row["price_model"], row["price_match"]) == (
        "openai/gpt-5.4", "run", "gpt-5.4", "normalised",
    )  # fmt: skip
    assert priced.exact == [D("2.50")]
    none = price_calls([_call(0, "t1", None, 10, 0)], load_prices(), None).rows[0]
    assert (none["model_source"], none["cost_usd"]) == ("none", None)


def test_episode_and_run_totals_are_exact_to_the_cent() -> None:
    table = load_prices()
    calls = [
        # t1: two gpt-5 calls, cached tokens priced at the cached rate; 3 + 4 s of latency
        _call(0, "t1", "gpt-5", 120_000, 3_000, cached_prompt_tokens=100_000, latency_s=3.0,
              step_idx=0),
        _call(1, "t1", "gpt-5", 240_000, 5_000, cached_prompt_tokens=200_000, latency_s=4.0,
              step_idx=1),
        # t2: one claude call with a cache write
        _call(2, "t2", "claude-sonnet-4-5-20250929", 50_000, 1_000, cached_prompt_tokens=30_000,
              cache_write_tokens=15_000, latency_s=None, step_idx=0),
    ]  # fmt: skip
    episodes = [
        {"run_id": "r", "benchmark": "osworld", "domain": "os", "task_id": "t1", "score": 1.0,
         "started_at": datetime(2025, 1, 1, 10, 0, 0), "ended_at": datetime(2025, 1, 1, 10, 1, 0),
         "n_turns": 2},
        {"run_id": "r", "benchmark": "osworld", "domain": "os", "task_id": "t2", "score": 0.5,
         "started_at": datetime(2025, 1, 1, 11, 0, 0), "ended_at": None, "n_turns": 1},
        {"run_id": "r", "benchmark": "osworld", "domain": "os", "task_id": "t3", "score": None,
         "started_at": None, "ended_at": None, "n_turns": 0},
    ]  # fmt: skip
    priced = price_calls(calls, table, None)
    per_episode = episode_costs(episodes, calls, priced)
    run = run_cost("r", "osworld", episodes, per_episode, unpriced_models(priced), table.label)
    # by hand: gpt-5 1.25 / 0.125 / 10.00; claude-sonnet-4-5 3.00 / 0.30 / 3.75 / 15.00
    t1 = (
        D(20_000) * D("1.25")
        + D(100_000) * D("0.125")
        + D(3_000) * D(10)
        + D(40_000) * D("1.25")
        + D(200_000) * D("0.125")
        + D(5_000) * D(10)
    ) / 1_000_000
    t2 = (D(5_000) * D(3) + D(30_000) * D("0.30") + D(15_000) * D("3.75")
          + D(1_000) * D(15)) / 1_000_000  # fmt: skip
    e1, e2, e3 = per_episode.rows
    assert per_episode.exact == [t1, t2, None]
    assert D(str(e1["cost_usd"])).quantize(CENT) == t1.quantize(CENT) == D("0.19")
    assert D(str(run["cost_usd"])).quantize(CENT) == (t1 + t2).quantize(CENT) == D("0.29")
    assert run["cost_per_task_usd"] == float((t1 + t2) / 2)
    assert run["cost_per_success_usd"] == float(t1 + t2)  # one task with r == 1
    assert (run["n_episodes"], run["n_episodes_with_usage"], run["n_successes"]) == (3, 2, 1)
    assert run["n_tasks_run"] == 2 and run["success_rate_run"] == 0.75
    assert (e1["prompt_tokens"], e1["cached_prompt_tokens"], e1["llm_latency_s"]) == (
        360_000, 300_000, 7.0,
    )  # fmt: skip
    assert e1["task_time_s"] == 60.0 + 3.0  # the first turn's call precedes the first action
    assert (e2["task_time_s"], e2["llm_latency_s"], e2["n_calls_without_latency"]) == (
        None,
        None,
        1,
    )
    assert (e3["n_llm_calls"], e3["cost_usd"], e3["prompt_tokens"]) == (0, None, None)
    assert run["median_task_s"] == 63.0
    conform_rows("episode_costs", per_episode.rows)
    conform_rows("run_costs", [run])


def test_one_unpriced_call_leaves_the_total_null_and_a_lower_bound() -> None:
    table = load_prices()
    calls = [_call(0, "t1", "gpt-5", 1_000_000, 0), _call(1, "t1", "mystery-9b", 10, 1)]
    episodes = [{"run_id": "r", "benchmark": "osworld", "domain": "os", "task_id": "t1",
                 "score": 1.0, "started_at": None, "ended_at": None, "n_turns": 2}]  # fmt: skip
    priced = price_calls(calls, table, None)
    per_episode = episode_costs(episodes, calls, priced)
    run = run_cost("r", "osworld", episodes, per_episode, unpriced_models(priced), table.label)
    assert per_episode.rows[0]["cost_usd"] is None and run["cost_usd"] is None
    assert run["priced_cost_usd"] == 1.25 and run["unpriced_models"] == ["mystery-9b"]
    assert run["cost_per_task_usd"] is None and run["n_unpriced_calls"] == 1

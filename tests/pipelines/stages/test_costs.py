"""Costs end to end: generated runs whose tokens, prices and timings are known exactly,
ingested, scored and priced by the pipeline, then read back through SQL and the CLI."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deskscore.collectors.human import load_bundled
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.cli.main import main
from deskscore.pipelines.jobs.cost import run_costs
from deskscore.pipelines.jobs.ingest import run_ingest
from deskscore.pipelines.jobs.score import run_score
from deskscore.pipelines.options import CostOptions, IngestOptions, ScoreOptions
from deskscore.scorers.cost import PRICE_COLUMNS, PriceError
from deskscore.sql import connect

D = Decimal
CENT = D("0.01")
OS_TASKS = [r["task_id"] for r in load_bundled("verified") if r["domain"] == "os"][:2]


def bundled_price(model: str) -> dict[str, D]:
    """A row of datasets/prices.csv, read with the csv module (not the code under test)."""
    path = Path(__file__).resolve().parents[3] / "datasets" / "prices.csv"
    with path.open() as f:
        row = next(r for r in csv.DictReader(f) if r["model"] == model)
    return {k: D(v) if v else D(row["input_per_mtok"]) for k, v in row.items()
            if k.endswith("_mtok")}  # fmt: skip


def rec(step: int, stamp: str, action: str, **kw: object) -> str:
    return json.dumps({"step_num": step, "action_timestamp": stamp, "action": action,
                       "reward": 0, "done": action in ("DONE", "FAIL"), "info": {},
                       "screenshot_file": f"step_{step}_{stamp}.png", **kw})  # fmt: skip


def write_task(run: Path, task_id: str, lines: list[str], result: str, **files: str) -> None:
    folder = run / "os" / task_id
    folder.mkdir(parents=True)
    (folder / "traj.jsonl").write_text("".join(x + "\n" for x in lines))
    (folder / "result.txt").write_text(result + "\n")
    for name, text in files.items():
        (folder / name).write_text(text)


def mu(seconds: float, prompt: int, completion: int) -> dict[str, object]:
    return {"model_time": seconds, "prompt_tokens": prompt, "completion_tokens": completion}


def s3_call(step: int, module: str, model: str, seconds: float, prompt: int, completion: int,
            cached: int = 0) -> dict[str, object]:  # fmt: skip
    return {"step": step, "module": module, "model": model, "latency_s": seconds,
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "prompt_tokens_details": {"cached_tokens": cached}}}  # fmt: skip


def write_archive(root: Path) -> Path:
    """Three runs of two os tasks: gpt54-style model_usage, an Agent S3 token_usage.json with
    one unpriced grounding model, and a plain run with timestamps only."""
    results = root / "results" / "pyautogui" / "screenshot"
    gpt = results / "gpt-5.4"
    gpt.mkdir(parents=True)
    (gpt / "args.json").write_text(json.dumps({"model": "gpt-5.4", "max_steps": 15}))
    a, b = OS_TASKS
    write_task(gpt, a, [
        rec(1, "20250601@100006", "pyautogui.click(1, 2)", model_usage=mu(6.0, 30_000, 2_000)),
        rec(1, "20250601@100008", "pyautogui.press('enter')", model_usage=mu(6.0, 30_000, 2_000)),
        rec(2, "20250601@100020", "pyautogui.click(3, 4)", model_usage=mu(7.5, 50_000, 1_000)),
        rec(3, "20250601@100031", "DONE", model_usage=mu(9.25, 70_000, 500)),
    ], "1")  # fmt: skip
    write_task(gpt, b, [
        rec(1, "20250601@110005", "pyautogui.click(1, 2)", model_usage=mu(5.0, 32_000, 3_000)),
        rec(2, "20250601@110015", "FAIL", model_usage=mu(8.0, 54_000, 800)),
    ], "0")  # fmt: skip
    s3 = results / "agent-s3"
    s3.mkdir(parents=True)
    (s3 / "args.json").write_text(json.dumps({"model": "gpt-5-2025-08-07", "max_steps": 15}))
    calls = [
        s3_call(1, "generator", "gpt-5-2025-08-07", 6.0, 40_000, 1_500),
        s3_call(1, "grounding", "ui-tars-1.5-7b", 0.5, 1_500, 20),
        s3_call(2, "reflection", "gpt-5-2025-08-07", 3.0, 30_000, 400, cached=25_600),
        s3_call(2, "generator", "gpt-5-2025-08-07", 7.0, 48_000, 1_200, cached=39_936),
        s3_call(2, "grounding", "ui-tars-1.5-7b", 0.5, 1_500, 20),
    ]
    write_task(s3, a, [rec(1, "20250601@120007", "pyautogui.click(5, 6)"),
                       rec(2, "20250601@120020", "DONE")], "1",
               **{"token_usage.json": json.dumps({"calls": calls})})  # fmt: skip
    plain = results / "plain-model"
    plain.mkdir(parents=True)
    write_task(plain, a, [rec(1, "20250601@130000", "pyautogui.click(1, 1)"),
                          rec(2, "20250601@130012", "DONE")], "0.5")  # fmt: skip
    return root / "results"


# the same figures by hand: gpt-5.4 has no cached split in model_usage; the S3 run's gpt-5
# calls have cached tokens, priced at the cached rate
G54, G5 = bundled_price("gpt-5.4"), bundled_price("gpt-5")
GPT_A = (D(150_000) * G54["input_per_mtok"] + D(3_500) * G54["output_per_mtok"]) / 1_000_000
GPT_B = (D(86_000) * G54["input_per_mtok"] + D(3_800) * G54["output_per_mtok"]) / 1_000_000
S3_GPT5 = (
    D(40_000 + 4_400 + 8_064) * G5["input_per_mtok"]
    + D(25_600 + 39_936) * G5["cached_input_per_mtok"]
    + D(1_500 + 400 + 1_200) * G5["output_per_mtok"]
) / 1_000_000
UI_TARS = (D(3_000) * D("0.20") + D(40) * D("0.20")) / 1_000_000


@pytest.fixture(scope="module")
def priced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cost")
    results = write_archive(root)
    wh = root / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(results),), engine="direct"))
    run_score(ScoreOptions(str(wh), max_steps_scoring=15, loops=False, engine="direct"))
    return wh


def by_agent(wh: Path, query: str) -> dict[str, dict]:
    rel = connect(wh).sql(query)
    return {r[0]: dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()}


def cents(value: float | None) -> D:
    assert value is not None
    return D(str(value)).quantize(CENT)


def test_run_totals_come_out_to_the_cent(priced: Path) -> None:
    runs = by_agent(priced, "SELECT agent, * FROM cost_per_run")
    gpt = runs["gpt-5.4"]
    assert cents(gpt["cost_usd"]) == (GPT_A + GPT_B).quantize(CENT)
    assert D(str(gpt["cost_usd"])) == GPT_A + GPT_B  # exact, not only to the cent
    assert D(str(gpt["cost_per_task_usd"])) == (GPT_A + GPT_B) / 2
    assert D(str(gpt["cost_per_success_usd"])) == GPT_A + GPT_B
    assert (gpt["n_llm_calls"], gpt["prompt_tokens"], gpt["n_successes"]) == (5, 236_000, 1)
    assert gpt["median_task_s"] == ((25 + 6.0) + (10 + 5.0)) / 2


def test_cached_tokens_are_priced_at_the_cached_rate(priced: Path) -> None:
    [(cost,)] = (
        connect(priced)
        .sql("SELECT sum(cost_usd) FROM llm_call_costs WHERE model = 'gpt-5-2025-08-07'")
        .fetchall()
    )
    assert cents(cost) == S3_GPT5.quantize(CENT)
    rows = (
        connect(priced)
        .sql(
            "SELECT cached_input_cost_usd, price_model, price_match FROM llm_call_costs "
            "WHERE stage = 'reflection'"
        )
        .fetchall()
    )
    assert rows == [(float(D(25_600) * G5["cached_input_per_mtok"] / 1_000_000), "gpt-5",
                     "normalised")]  # fmt: skip


def test_an_unknown_model_leaves_the_run_without_a_total_and_is_reported(
    priced: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s3 = by_agent(priced, "SELECT agent, * FROM cost_per_run")["gpt-5-2025-08-07"]
    assert s3["cost_usd"] is None and s3["unpriced_models"] == ["ui-tars-1.5-7b"]
    assert D(str(s3["priced_cost_usd"])) == S3_GPT5
    assert main(["cost", "--warehouse", str(priced), "--engine", "direct"]) == 0
    out = capsys.readouterr().out
    assert (
        "2 calls of models without a price: ui-tars-1.5-7b (2 calls); add them with --prices FILE"
        in out
    )
    assert "1 run(s) record no model calls" in out and "plain-model" in out
    assert "Where the task time goes" in out


def test_the_latency_breakdown_splits_task_time_by_stage(priced: Path) -> None:
    rows = (
        connect(priced)
        .sql(
            "SELECT stage, seconds, share FROM latency_breakdown "
            "WHERE agent = 'gpt-5-2025-08-07' AND domain = '(all)'"
        )
        .fetchall()
    )
    task_time = 13 + 6.0 + 0.5  # the last action minus the first, plus turn 1's calls
    expected = {"planning": 13.0, "reflection": 3.0, "grounding": 1.0, "unattributed": 2.5}
    assert {s: round(sec, 9) for s, sec, _ in rows} == expected
    assert {s: round(share, 9) for s, _, share in rows} == {
        s: round(v / task_time, 9) for s, v in expected.items()
    }


def test_an_override_file_prices_the_unknown_model_and_replaces_a_price(
    priced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    override = tmp_path / "prices.csv"
    override.write_text(
        ",".join(PRICE_COLUMNS) + "\n"
        "ui-tars-1.5-7b,0.20,,,0.20,2026-11-01,our GPU hours\n"
        "gpt-5.4,1.00,,,4.00,2026-11-01,our contract\n"
    )
    try:
        assert (
            main(
                [
                    "cost",
                    "--warehouse",
                    str(priced),
                    "--prices",
                    str(override),
                    "--engine",
                    "direct",
                ]
            )
            == 0
        )
        out = capsys.readouterr().out
        assert "without a price" not in out and "prices.csv" in out
        runs = by_agent(priced, "SELECT agent, * FROM cost_per_run")
        assert D(str(runs["gpt-5-2025-08-07"]["cost_usd"])) == S3_GPT5 + UI_TARS
        own = (D(236_000) * D(1) + D(7_300) * D(4)) / 1_000_000
        assert D(str(runs["gpt-5.4"]["cost_usd"])) == own
    finally:
        run_costs(
            CostOptions(str(priced), engine="direct")
        )  # back to the bundled prices for the other tests
    assert (
        by_agent(priced, "SELECT agent, cost_usd FROM cost_per_run")["gpt-5-2025-08-07"]["cost_usd"]
        is None
    )


def test_pricing_again_with_the_same_table_writes_the_same_bytes(priced: Path) -> None:
    wh = Warehouse(priced)
    names = ("llm_call_costs", "episode_costs", "run_costs")
    before = {p: p.read_bytes() for n in names for p in wh.files(n)}
    run_costs(CostOptions(str(priced), engine="direct"))
    assert {p: p.read_bytes() for n in names for p in wh.files(n)} == before


def test_the_leaderboard_shows_cost_per_task_and_median_task_time(
    priced: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["leaderboard", "--warehouse", str(priced), "--format", "csv"]) == 0
    rows = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    gpt = next(r for r in rows if r["agent"] == "gpt-5.4")
    assert D(gpt["cost_per_task_usd"]).quantize(CENT) == ((GPT_A + GPT_B) / 2).quantize(CENT)
    assert float(gpt["median_task_s"]) == 23.0
    plain = next(r for r in rows if r["agent"] == "plain-model")
    assert plain["cost_per_task_usd"] == "" and float(plain["median_task_s"]) == 12.0
    assert main(["leaderboard", "--warehouse", str(priced)]) == 0
    title, header = capsys.readouterr().out.splitlines()[:2]
    assert title.startswith("Leaderboard")
    assert "$/task" in header and "median task s" in header


def test_a_bad_price_file_stops_the_command_before_anything_is_written(
    priced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("model,price\ngpt-5.4,1\n")
    with pytest.raises(PriceError):
        run_score(ScoreOptions(str(priced), prices=str(bad), engine="direct"))
    assert (
        main(["score", "--warehouse", str(priced), "--prices", str(bad), "--engine", "direct"]) == 2
    )
    err = capsys.readouterr().err
    assert "bad.csv" in err and "missing column" in err


def test_cost_prices_runs_that_were_ingested_but_never_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wh = tmp_path / "wh"
    run_ingest(IngestOptions(str(wh), sources=(str(write_archive(tmp_path)),), engine="direct"))
    assert not Warehouse(wh).files("run_costs")
    assert main(["cost", "--warehouse", str(wh), "--format", "json", "--engine", "direct"]) == 0
    rows = {r["agent"]: r for r in json.loads(capsys.readouterr().out)}
    assert D(str(rows["gpt-5.4"]["cost_usd"])) == GPT_A + GPT_B
    assert rows["plain-model"]["n_llm_calls"] == 0 and rows["plain-model"]["cost_usd"] is None


KEYS = st.tuples(
    st.sampled_from(["chrome", "os", "ös", None]),
    st.sampled_from(["a", "b", "é", "\U0001f600", None]),
    st.one_of(st.integers(0, 3), st.none()),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(KEYS, max_size=8), st.booleans())
def test_calls_count_as_in_order_exactly_when_sorting_them_changes_nothing(keys, sort) -> None:
    """The cost stage sorts a run's calls only when they are not in order already."""
    import pyarrow as pa

    from deskscore.pipelines.stages.costs import _ORDER, _in_order

    if sort:  # in order, as Python sorts them (code points), whenever no key is null
        keys = sorted(keys, key=lambda k: tuple((v is None, v or 0) for v in k))
    calls = pa.table(
        {
            "domain": pa.array([k[0] for k in keys], pa.string()),
            "task_id": pa.array([k[1] for k in keys], pa.string()),
            "call_idx": pa.array([k[2] for k in keys], pa.int32()),
        }
    )
    sorted_calls = calls.sort_by([(k, "ascending") for k in _ORDER])
    no_nulls = all(None not in k for k in keys)
    assert _in_order(calls) == (no_nulls and calls.equals(sorted_calls))

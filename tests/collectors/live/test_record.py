"""Recording: units written whole, folded into the run's partitions once, with the same rows
and hashes the archive ingest and the hash stage produce."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from deskscore.collectors.images import hash_image
from deskscore.collectors.live.agents import ModelCall
from deskscore.collectors.live.collect import run_row
from deskscore.collectors.live.record import (
    EpisodeKeys,
    KnownScreenshots,
    LiveEpisode,
    Recorder,
    ScreenshotStore,
    fold_rows,
    merge_episode,
)
from deskscore.collectors.live.users import Exchange
from deskscore.collectors.warehouse import Warehouse


def png(colour: str, size: tuple[int, int] = (320, 240)) -> bytes:
    from PIL import Image, ImageDraw

    im = Image.new("RGB", size, colour)
    ImageDraw.Draw(im).rectangle((10, 10, 60, 40), fill="black")
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


KEYS = EpisodeKeys("run0001", "sandbox", "os", "11111111-2222-3333-4444-555555555555")


def record_episode(wh_root: Path, keys: EpisodeKeys = KEYS, *, score: float = 1.0) -> LiveEpisode:
    """Two turns: a click (with a model call), a frame repeated, DONE, then the end."""
    store = ScreenshotStore(wh_root)
    live = LiveEpisode(wh_root, keys.benchmark, keys.run_id, keys.domain, keys.task_id)
    live.begin({"instruction": "Do it.", "identity": "h 1 2"})
    rec = Recorder(live, keys, store)
    rec.exchanges(
        [Exchange(None, 1, "initial_instruction", "Do it.", None, None, "20260101@120000000001")]
    )
    call = ModelCall("planning", "m1", {"prompt_tokens": 120, "completion_tokens": 7}, 0.8,
                     "2026-01-01T12:00:00.500000+00:00")  # fmt: skip
    rec.calls([call], 1)
    rec.step({"step_num": 1, "action_timestamp": "20260101@120001000000",
              "action": "pyautogui.click(10, 20)", "response": "click", "reward": 0,
              "done": False, "info": {}, "screenshot_file": "step_1_20260101@120001000000.png",
              "action_s": 0.25, "screenshot_s": 0.05}, store.put(png("white")))  # fmt: skip
    rec.turn_end({"turn": 1})
    rec.step({"step_num": 2, "action_timestamp": "20260101@120003500000", "action": "DONE",
              "response": "done", "reward": 0, "done": True, "info": {"done": True},
              "screenshot_file": "step_2_20260101@120003500000.png"}, store.put(png("white")))  # fmt: skip
    rec.turn_end({"turn": 2})
    rec.end({"result_status": "ok", "score": score,
             "details": {"conj": None, "metrics": [{"func": "exact_match", "score": score}]}})  # fmt: skip
    return live


def fold(wh_root: Path, live: LiveEpisode, keys: EpisodeKeys = KEYS) -> Any:
    wh = Warehouse(wh_root)
    row = run_row(run_id=keys.run_id, benchmark=keys.benchmark,
                  source=ScreenshotStore(wh_root).uri, run_name="r", agent_label="a",
                  model=None, observation_type="screenshot", max_steps=15, args={})  # fmt: skip
    folded = fold_rows(keys, live.units(), live.meta())
    merge_episode(wh, keys, folded, row, KnownScreenshots(wh))
    return folded


def test_a_folded_episode_holds_every_table_the_ingest_writes(tmp_path: Path) -> None:
    live = record_episode(tmp_path)
    fold(tmp_path, live)
    wh = Warehouse(tmp_path)
    part = {"benchmark": "sandbox", "run_id": "run0001"}
    steps = wh.read("steps", part).to_pylist()
    assert [(s["step_idx"], s["line_no"], s["step_num"], s["action_kind"]) for s in steps] == [
        (0, 1, 1, "click"), (1, 2, 2, "done")]  # fmt: skip
    assert (steps[0]["x"], steps[0]["y"], steps[0]["action_s"], steps[0]["screenshot_s"]) == (
        10,
        20,
        0.25,
        0.05,
    )
    assert steps[0]["dt_s"] is None and steps[1]["dt_s"] == pytest.approx(2.5)
    assert steps[1]["info_json"] == '{"done":true}'
    calls = wh.read("step_actions", part).to_pylist()
    assert [(c["step_idx"], c["action_idx"], c["kind"], c["x"], c["y"], c["parser"]) for c in calls] == [
        (0, 0, "click", 10, 20, "ast"), (1, 0, "done", None, None, "word")]  # fmt: skip
    [episode] = wh.read("episodes", part).to_pylist()
    assert (episode["n_steps"], episode["n_turns"], episode["ended_by"], episode["score"]) == (
        2,
        2,
        "done",
        1.0,
    )
    assert (episode["result_status"], episode["result_raw"], episode["n_lines"]) == ("ok", "1.0", 2)
    assert json.loads(episode["metric_scores_json"])["metrics"][0]["func"] == "exact_match"
    [call] = wh.read("llm_calls", part).to_pylist()
    assert (call["call_idx"], call["step_num"], call["step_idx"], call["prompt_tokens"]) == (
        0,
        1,
        0,
        120,
    )
    assert (call["latency_s"], call["usage_format"], call["model"]) == (0.8, "openai.chat", "m1")
    [inter] = wh.read("interactions", part).to_pylist()
    assert (inter["seq"], inter["type"], inter["step"]) == (0, "initial_instruction", None)
    refs = wh.read("screenshot_refs", part).to_pylist()
    assert len(refs) == 2 and refs[0]["content_hash"] == refs[1]["content_hash"]
    [shot] = wh.read("screenshots", part).to_pylist()  # one row per distinct content
    facts = hash_image(png("white"))
    assert (shot["content_hash"], shot["phash"], shot["width"], shot["status"]) == (
        facts.content_hash, facts.phash, 320, "ok")  # fmt: skip
    [run] = wh.read("runs", part).to_pylist()
    assert run["n_task_folders"] == 1 and run["format"] == "live"
    stored = Path(run["source"]) / steps[0]["screenshot_path"]
    assert stored.read_bytes() == png("white")
    assert not live.path.exists() or live.units()  # discarding is the collector's job


def test_folding_twice_gives_the_same_tables(tmp_path: Path) -> None:
    live = record_episode(tmp_path)
    fold(tmp_path, live)
    wh = Warehouse(tmp_path)
    tables = ("steps", "step_actions", "episodes", "llm_calls", "screenshots")
    before = {t: wh.read(t).to_pylist() for t in tables}
    fold(tmp_path, live)  # e.g. a kill after the partitions were written, before the cleanup
    after = {t: wh.read(t).to_pylist() for t in before}
    assert before == after


def test_a_unit_cut_short_by_a_kill_is_not_read(tmp_path: Path) -> None:
    live = record_episode(tmp_path)
    n = len(live.units())
    half = live.path / f".{n:06d}-step.deadbeef.tmp"  # what a kill mid-write leaves
    half.mkdir()
    (half / "steps.parquet").write_bytes(b"PAR1 truncated")
    assert len(live.units()) == n


def test_the_hash_stage_finds_every_collected_screenshot_already_hashed(tmp_path: Path) -> None:
    from deskscore.pipelines.jobs.hash import run_hash
    from deskscore.pipelines.options import HashOptions

    live = record_episode(tmp_path)
    other = EpisodeKeys("run0001", "sandbox", "os", "66666666-2222-3333-4444-555555555555")
    store = ScreenshotStore(tmp_path)
    live2 = LiveEpisode(tmp_path, "sandbox", "run0001", other.domain, other.task_id)
    live2.begin({"instruction": "x"})
    rec = Recorder(live2, other, store)
    rec.step({"step_num": 1, "action_timestamp": "20260101@130000000000", "action": "FAIL",
              "response": "", "reward": 0, "done": True, "info": {"fail": True},
              "screenshot_file": "s.png"}, store.put(png("gray", (400, 300))))  # fmt: skip
    rec.end(
        {
            "result_status": "unevaluated",
            "score": None,
            "details": {},
            "err_message": "no evaluator",
        }
    )
    fold(tmp_path, live)
    fold(tmp_path, live2, other)
    wh = Warehouse(tmp_path)
    shots_before = sorted(wh.read("screenshots").to_pylist(), key=lambda r: r["content_hash"])
    refs_before = sorted(
        wh.read("screenshot_refs").to_pylist(), key=lambda r: (r["task_id"], r["step_idx"])
    )
    counters = run_hash(HashOptions(warehouse=str(tmp_path)))
    assert counters["decoded"] == 0 and counters["refs"] == 3 and counters["unreadable"] == 0
    assert (
        sorted(wh.read("screenshots").to_pylist(), key=lambda r: r["content_hash"]) == shots_before
    )
    refs_after = sorted(
        wh.read("screenshot_refs").to_pylist(), key=lambda r: (r["task_id"], r["step_idx"])
    )
    assert refs_after == refs_before
    [unevaluated] = [e for e in wh.read("episodes").to_pylist() if e["task_id"] == other.task_id]
    assert (unevaluated["result_status"], unevaluated["score"], unevaluated["ended_by"]) == (
        "unevaluated", None, "fail")  # fmt: skip

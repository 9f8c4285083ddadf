"""A run's rows become columns episode by episode, in episode order."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

import deskscore.scorers.metrics  # noqa: F401  (declares the score tables' columns)
from deskscore.collectors.osworld import EpisodeCalls, EpisodeRead
from deskscore.pipelines.stages import read
from deskscore.pipelines.stages.read import RunColumns
from deskscore.schemas.validate import ColumnRows, conform_rows


def _episode(domain: str, task: str, n_steps: int) -> EpisodeCalls:
    base = {"run_id": "r", "benchmark": "osworld", "domain": domain, "task_id": task}
    episode = {
        **base, "source_task_id": task, "task_path": f"{domain}/{task}", "n_lines": n_steps,
        "n_steps": n_steps, "n_turns": n_steps, "n_error_lines": 0, "n_quarantined": 0,
        "result_status": "ok", "ended_by": "done",
    }  # fmt: skip
    steps = [
        {**base, "step_idx": i, "line_no": i + 1, "action_text": f"{task}-{i}",
         "action_format": "code", "action_kind": "click"}
        for i in range(n_steps)
    ]  # fmt: skip
    calls = [
        {**base, "call_idx": i, "stage": "planning", "usage_format": "openai",
         "source_file": "traj.jsonl", "model": f"m{i}"}
        for i in range(n_steps // 2)
    ]  # fmt: skip
    return EpisodeCalls(EpisodeRead(episode, steps, [], actions=[]), calls)


def _rows(name: str, episodes: list[EpisodeCalls]) -> pa.Table:
    """What the tables held when every row was kept: episodes sorted, rows concatenated."""
    ordered = sorted(episodes, key=lambda o: (o.read.episode["domain"], o.read.episode["task_id"]))
    pick: dict[str, Any] = {
        "episodes": lambda o: [o.read.episode],
        "steps": lambda o: o.read.steps,
        "llm_calls": lambda o: o.llm_calls,
    }
    return conform_rows(name, [r for o in ordered for r in pick[name](o)])


def test_episodes_read_out_of_order_give_the_tables_sorted_by_episode(monkeypatch) -> None:
    monkeypatch.setattr(read, "CHUNK_ROWS", 5)  # several chunks, a chunk across episodes
    episodes = [_episode("os", "b", 4), _episode("chrome", "z", 3), _episode("os", "a", 0),
                _episode("chrome", "c", 7)]  # fmt: skip
    columns = RunColumns()
    for e in episodes:
        columns.add(e)
    tables = columns.tables()
    for name in ("episodes", "steps", "llm_calls"):
        assert tables[name].equals(_rows(name, episodes)), name
    assert "interactions" not in tables  # the format records no exchanges
    assert tables["step_actions"].num_rows == 0


def test_episodes_in_order_need_no_reordering_and_match_the_row_path() -> None:
    episodes = [_episode("chrome", "a", 2), _episode("chrome", "b", 5), _episode("os", "a", 1)]
    columns = RunColumns()
    for e in episodes:
        columns.add(e)
    tables = columns.tables()
    assert tables["steps"].column("action_text").to_pylist() == [
        "a-0", "a-1", "b-0", "b-1", "b-2", "b-3", "b-4", "a-0"
    ]  # fmt: skip
    assert tables["steps"].equals(_rows("steps", episodes))


def _held_as_columns(episode: EpisodeCalls, drop: str | None = None) -> EpisodeCalls:
    """The episode with its calls as a reader that makes many calls gives them (columns),
    optionally without one column."""
    names = [k for k in episode.llm_calls[0] if k != drop] if episode.llm_calls else []
    columns = {k: [r[k] for r in episode.llm_calls] for k in names}
    return episode._replace(llm_calls=ColumnRows(columns))


def test_calls_held_as_columns_give_the_table_calls_held_as_rows_give(monkeypatch) -> None:
    """Episodes whose calls come as columns, as rows, as columns already read as rows, and
    as columns lacking a column, mixed and out of order across chunk borders: the same
    llm_calls table as when every call was a row, in episode order."""
    monkeypatch.setattr(read, "CHUNK_ROWS", 5)
    plain = [_episode("os", "b", 8), _episode("chrome", "z", 6), _episode("os", "a", 0),
             _episode("chrome", "c", 14), _episode("gimp", "q", 4), _episode("gimp", "a", 10),
             _episode("vlc", "x", 6)]  # fmt: skip
    mixed = [_held_as_columns(plain[0]), plain[1], _held_as_columns(plain[2]),
             _held_as_columns(plain[3]), _held_as_columns(plain[4], drop="model"),
             _held_as_columns(plain[5]), _held_as_columns(plain[6])]  # fmt: skip
    assert list(mixed[6].llm_calls)  # read as dicts before ingest takes it
    assert mixed[6].llm_calls.columns is None and mixed[5].llm_calls.columns is not None
    columns = RunColumns()
    for e in mixed:
        columns.add(e)
    assert all(e.llm_calls.columns is not None for e in mixed[2:6])  # taken as columns
    got = columns.tables()["llm_calls"]
    expected = _rows("llm_calls", plain).to_pylist()
    for row in expected:  # the episode whose calls lacked `model` has it null
        if (row["domain"], row["task_id"]) == ("gimp", "q"):
            row["model"] = None
    assert got.to_pylist() == expected
    assert got.schema == _rows("llm_calls", plain).schema


def test_a_run_without_episodes_has_empty_typed_tables() -> None:
    tables = RunColumns().tables()
    assert tables["steps"].num_rows == 0
    assert tables["steps"].schema.names == conform_rows("steps", []).schema.names


def test_an_episode_without_calls_between_episodes_held_as_columns_keeps_one_chunk() -> None:
    """A task folder with no trajectory (an empty plain list of rows) between episodes whose
    rows are columns neither splits the columns into another Arrow chunk nor loses a row."""
    plain = [_episode("chrome", "a", 4), _episode("chrome", "b", 0), _episode("os", "c", 6)]
    episodes = [_held_as_columns(plain[0]), plain[1], _held_as_columns(plain[2])]
    assert plain[1].llm_calls == [] and type(plain[1].llm_calls) is list
    columns = RunColumns()
    for e in episodes:
        columns.add(e)
    got = columns.tables()["llm_calls"]
    assert got.to_pylist() == _rows("llm_calls", plain).to_pylist()
    assert got.column("model").num_chunks == 1

"""The verdicts stage takes each episode's last executed step from the run's columns: the
same step the rules find walking every step row of the episode in order."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from deskscore.pipelines.stages.verdicts import _STEP_COLUMNS, _last_executed
from deskscore.scorers.verdicts import last_action_is_fail

_step = st.fixed_dictionaries(
    {
        "domain": st.sampled_from(["chrome", "os"]),
        "task_id": st.sampled_from(["t1", "t2", "t3"]),
        "action_kind": st.sampled_from(["click", "fail", "error", "call_user", "done", None]),
        "info_json": st.sampled_from([None, "{}", '{"fail": true}', "not json"]),
    }
)


def _table(steps: list[dict]) -> pa.Table:
    rows = [{**s, "step_idx": i} for i, s in enumerate(steps)]
    rows.reverse()  # stored order is not step order
    return pa.Table.from_pylist(
        rows,
        schema=pa.schema(
            [(c, pa.int32() if c == "step_idx" else pa.string()) for c in _STEP_COLUMNS]
        ),
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(_step, max_size=25))
def test_the_last_executed_step_is_the_one_walking_the_rows_finds(steps: list[dict]) -> None:
    table = _table(steps)
    last = _last_executed(table)
    rows = table.to_pylist()
    for key in {(s["domain"], s["task_id"]) for s in steps} | {("os", "absent")}:
        walked = sorted((r for r in rows if (r["domain"], r["task_id"]) == key),
                        key=lambda r: r["step_idx"])  # fmt: skip
        step = last.get(key)
        assert last_action_is_fail([step] if step is not None else []) == last_action_is_fail(
            walked
        )


def test_runner_errors_and_questions_to_the_user_are_not_the_last_action() -> None:
    table = _table(
        [
            {"domain": "os", "task_id": "t1", "action_kind": "fail", "info_json": None},
            {"domain": "os", "task_id": "t1", "action_kind": "error", "info_json": None},
            {"domain": "os", "task_id": "t1", "action_kind": "call_user", "info_json": None},
            {"domain": "os", "task_id": "t2", "action_kind": "error", "info_json": None},
            {"domain": "os", "task_id": "t3", "action_kind": None, "info_json": None},
        ]
    )
    last = _last_executed(table)
    assert last[("os", "t1")]["action_kind"] == "fail"
    assert ("os", "t2") not in last
    assert last[("os", "t3")]["step_idx"] == 4
    assert _last_executed(table.slice(0, 0)) == {}

"""`deskscore loops`: the episodes that loop the most, each with its loop spans."""

from __future__ import annotations

from deskscore.pipelines.cli.output import render

WORST_EPISODES_SQL = """
WITH
worst AS (
    SELECT run_id, agent, domain, task_id, executed_steps, looping_steps, looping_share
    FROM episode_loops
    WHERE looping_steps > 0 AND (CAST($run_id AS VARCHAR) IS NULL OR run_id = $run_id)
    ORDER BY looping_steps DESC, looping_share DESC, run_id, domain, task_id
    LIMIT $top
)
SELECT
    w.run_id,
    w.agent,
    w.domain,
    w.task_id,
    w.executed_steps,
    w.looping_steps,
    w.looping_share,
    s.first_step,
    s.last_step,
    s.length,
    array_to_string(s.signals, '+') AS signals,
    s.outcome
FROM worst AS w
JOIN loop_spans AS s USING (run_id, domain, task_id)
ORDER BY w.looping_steps DESC, w.looping_share DESC, w.run_id, w.domain, w.task_id, s.first_step
"""
"""The top episodes by looping steps (share breaks ties), one row per span; filters are
parameters, never pasted into the text."""

COLUMNS = (
    ("agent", "agent"),
    ("run_id", "run"),
    ("domain", "domain"),
    ("task_id", "task"),
    ("executed_steps", "steps"),
    ("looping_steps", "looping"),
    ("looping_pct", "looping %"),
    ("span", "span (steps)"),
    ("length", "length"),
    ("signals", "signals"),
    ("outcome", "outcome"),
)
"""(column, header for people), in order."""

_EPISODE_COLUMNS = 7
"""The leading columns that describe the episode; a table shows them on its first span only."""


def worst_episodes_text(
    warehouse: str, *, run_id: str | None = None, top: int = 10, fmt: str = "table"
) -> str:
    """The `top` episodes with the most looping steps, with their spans, rendered in `fmt`.

    In the aligned table an episode's columns are printed on its first span's row only;
    csv, json and md repeat them on every row so each row stands alone.
    """
    from deskscore.sql import connect

    con = connect(warehouse)
    rows = con.execute(WORST_EPISODES_SQL, {"run_id": run_id, "top": max(0, int(top))}).fetchall()
    out: list[list[object]] = []
    previous = None
    for row in rows:
        run, agent, domain, task, steps, looping, share, first, last, length, signals, outcome = row
        episode = [agent, run, domain, task, steps, looping, 100.0 * share if share else None]
        span = [f"{first}-{last}", length, signals, outcome]
        key = (run, domain, task)
        if fmt == "table" and key == previous:
            episode = [None] * _EPISODE_COLUMNS
        previous = key
        out.append(episode + span)
    headers = [h for _, h in COLUMNS] if fmt in {"table", "md"} else [c for c, _ in COLUMNS]
    return render(headers, out, fmt)


__all__ = ["COLUMNS", "WORST_EPISODES_SQL", "worst_episodes_text"]

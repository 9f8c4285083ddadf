"""What the viewer's pages show, read from the warehouse's views with parameterised SQL.

One DuckDB connection (sql.connect: the views over the warehouse's current manifest, one
consistent version for the viewer's life) serves every page; DuckDB connections are not
safe to share between threads, so each query holds a lock. Since that version never changes,
what every page needs is read once: the runs with their labels (run_labels compares every
run's path), and each episode's screenshot paths when its page is first drawn (so the page's
screenshots, requested together, each cost a file read and no query). Filters and paging of the task
list are pushed into DuckDB (WHERE, ORDER BY a key, LIMIT/OFFSET), so a page of a run with
100,000 episodes costs one indexed scan, not a Python loop.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PAGE_SIZE = 50
"""Episodes per page of a task list."""
EPISODES_KEPT = 64
"""Episodes whose screenshot paths are kept (least recently drawn dropped first)."""

OUTCOMES = ("success", "partial", "failure", "no result")
"""The outcome filter's values: score 1, 0 < score < 1, score 0, no usable result."""

_OUTCOME_SQL = {
    "success": "e.score >= 1",
    "partial": "e.score > 0 AND e.score < 1",
    "failure": "e.score = 0",
    "no result": "e.score IS NULL",
}


@dataclass(frozen=True)
class TaskFilter:
    """The task list's filters, as the query string gives them (empty: no filter)."""

    domain: str = ""
    outcome: str = ""
    looping: bool = False
    min_steps: int | None = None
    max_steps: int | None = None
    disagreement: bool = False
    text: str = ""
    page: int = 0

    def where(self) -> tuple[list[str], dict[str, Any]]:
        """SQL conditions over episodes `e` (with episode_loops `l`) and their parameters."""
        conds: list[str] = []
        params: dict[str, Any] = {}
        if self.domain:
            conds.append("e.domain = $domain")
            params["domain"] = self.domain
        if self.outcome in _OUTCOME_SQL:
            conds.append(_OUTCOME_SQL[self.outcome])
        if self.looping:
            conds.append("coalesce(l.looping_steps, 0) > 0")
        if self.min_steps is not None:
            conds.append("e.n_steps >= $min_steps")
            params["min_steps"] = self.min_steps
        if self.max_steps is not None:
            conds.append("e.n_steps <= $max_steps")
            params["max_steps"] = self.max_steps
        if self.disagreement:
            conds.append(
                "EXISTS (SELECT 1 FROM verdicts AS v WHERE v.run_id = e.run_id AND "
                "v.domain = e.domain AND v.task_id = e.task_id AND v.agrees_with_archived = false)"
            )
        if self.text:
            conds.append(
                "(coalesce(e.instruction, t.instruction) ILIKE $text OR EXISTS (SELECT 1 FROM steps AS s WHERE "
                "s.run_id = e.run_id AND s.domain = e.domain AND s.task_id = e.task_id AND "
                "(s.action_text ILIKE $text OR s.response ILIKE $text)))"
            )
            params["text"] = "%" + _like_escape(self.text) + "%"
        return conds, params


def _like_escape(text: str) -> str:
    """`text` matched literally by ILIKE (DuckDB's default escape is a backslash)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@dataclass
class Page:
    """One page of a task list: its rows, how many match, and where it starts."""

    rows: list[dict[str, Any]]
    total: int
    page: int
    page_size: int = PAGE_SIZE

    @property
    def n_pages(self) -> int:
        return max(1, -(-self.total // self.page_size))


@dataclass
class Episode:
    """Everything the episode page shows."""

    facts: dict[str, Any]
    steps: list[dict[str, Any]]
    spans: list[dict[str, Any]]
    interactions: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    human: list[dict[str, Any]] = field(default_factory=list)


class Store:
    """The warehouse's views, queried one at a time."""

    def __init__(self, warehouse: str | Path) -> None:
        from deskscore.sql import connect

        self.warehouse = Path(warehouse).resolve()
        self.con = connect(self.warehouse)
        self.lock = threading.Lock()
        with self.lock:  # footers read once, not per query: the files never change here
            self.con.execute("SET parquet_metadata_cache = true")
        self._runs = {
            r["run_id"]: r
            for r in self.rows(
                "SELECT r.*, l.label FROM runs AS r JOIN run_labels AS l USING (run_id) "
                "ORDER BY l.label, r.run_id"
            )
        }
        counts = self.rows("SELECT run_id, count(*) AS n FROM episodes GROUP BY run_id")
        for r in counts:
            if r["run_id"] in self._runs:
                self._runs[r["run_id"]]["n_episodes"] = r["n"]
        for r in self._runs.values():
            r.setdefault("n_episodes", 0)
        self._shots: OrderedDict[tuple[str, str, str], dict[int, str]] = OrderedDict()

    def close(self) -> None:
        with self.lock:
            self.con.close()

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        with self.lock:
            rel = self.con.execute(sql, params or {})
            cols = [d[0] for d in rel.description]
            return [dict(zip(cols, r, strict=True)) for r in rel.fetchall()]

    def one(self, sql: str, params: dict[str, Any] | None = None) -> dict[str, Any] | None:
        got = self.rows(sql, params)
        return got[0] if got else None

    # -- leaderboard and runs ---------------------------------------------------------------

    def leaderboard(self, columns: Sequence[str]) -> list[dict[str, Any]]:
        """The leaderboard's rows (every configuration), with the bootstrap interval of the
        figure it ranks by when the intervals stage has computed one."""
        cols = ", ".join(f"l.{c}" for c in dict.fromkeys(["rank", "run_id", "label", *columns]))
        return self.rows(
            f"SELECT {cols}, 100 * i.ci_low AS ci_low, 100 * i.ci_high AS ci_high "
            "FROM leaderboard AS l LEFT JOIN leaderboard_intervals AS i ON i.run_id = l.run_id "
            "AND i.human_version = l.human_version AND i.max_steps_scoring = l.max_steps_scoring "
            "AND i.compat = l.compat AND i.metric = 'success_rate_run' "
            "AND i.method = 'bootstrap_domain' "
            "ORDER BY l.human_version, l.max_steps_scoring, l.compat, l.rank"
        )

    def runs(self) -> list[dict[str, Any]]:
        """Every run, by label, with its episode count."""
        return list(self._runs.values())

    def run(self, run_id: str) -> dict[str, Any] | None:
        return self._runs.get(run_id)

    def per_domain(self, run_id: str) -> list[dict[str, Any]]:
        return self.rows(
            "SELECT domain, n_tasks_run, success_rate_run_pct, wes_plus_single_pct, "
            "mean_step_ratio_single, human_version, max_steps_scoring, compat FROM per_domain "
            "WHERE run_id = $run ORDER BY human_version, max_steps_scoring, compat, domain",
            {"run": run_id},
        )

    def domains(self, run_id: str) -> list[str]:
        got = self.rows(
            "SELECT DISTINCT domain FROM episodes WHERE run_id = $run ORDER BY domain",
            {"run": run_id},
        )
        return [r["domain"] for r in got]

    # -- task list --------------------------------------------------------------------------

    def tasks(self, run_id: str, f: TaskFilter, page_size: int = PAGE_SIZE) -> Page:
        """One page of the run's episodes that pass `f`, ordered by domain and task. Every
        relation is narrowed to the run before it is joined; the task index (instructions
        the archive lacks) is joined to the page's rows only, unless the text filter needs
        it."""
        conds, params = f.where()
        where = " AND ".join(["e.run_id = $run", *conds])
        params |= {"run": run_id}
        index = (
            "(SELECT benchmark, domain, task_id, any_value(instruction) AS instruction "
            "FROM tasks GROUP BY ALL)"
        )
        base = (
            "FROM episodes AS e LEFT JOIN (SELECT domain, task_id, "
            "CAST(sum(looping_steps) AS BIGINT) AS looping_steps FROM loop_spans "
            "WHERE run_id = $run GROUP BY ALL) AS l "
            "ON l.domain = e.domain AND l.task_id = e.task_id "
            + (
                f"LEFT JOIN {index} AS t ON t.benchmark = e.benchmark "
                "AND t.domain = e.domain AND t.task_id = e.task_id "
                if f.text
                else ""
            )
            + f"WHERE {where}"
        )
        total = self.one(f"SELECT count(*) AS n {base}", params)
        rows = self.rows(
            "WITH page AS (SELECT e.benchmark, e.domain, e.task_id, e.instruction, e.n_steps, "
            "e.n_turns, e.score, e.ended_by, coalesce(l.looping_steps, 0) AS looping_steps "
            f"{base} ORDER BY e.domain, e.task_id LIMIT $limit OFFSET $offset) "
            "SELECT p.domain, p.task_id, coalesce(p.instruction, t.instruction) AS instruction, "
            "p.n_steps, p.n_turns, p.score, p.ended_by, p.looping_steps FROM page AS p "
            f"LEFT JOIN {index} AS t ON t.benchmark = p.benchmark AND t.domain = p.domain "
            "AND t.task_id = p.task_id ORDER BY p.domain, p.task_id",
            params | {"limit": page_size, "offset": max(0, f.page) * page_size},
        )
        return Page(rows, int(total["n"]) if total else 0, max(0, f.page), page_size)

    # -- one episode ------------------------------------------------------------------------

    def episode(self, run_id: str, domain: str, task_id: str) -> Episode | None:
        key = {"run": run_id, "domain": domain, "task": task_id}
        match = "run_id = $run AND domain = $domain AND task_id = $task"
        run = self._runs.get(run_id)
        facts = (
            None
            if run is None
            else self.one(
                "SELECT e.* REPLACE (coalesce(e.instruction, (SELECT any_value(t.instruction) "
                "FROM tasks AS t WHERE t.benchmark = e.benchmark AND t.domain = e.domain "
                "AND t.task_id = e.task_id)) AS instruction), "
                "try(CAST(json_extract_string($args, '$.screen_width') AS INTEGER)) AS screen_w, "
                "try(CAST(json_extract_string($args, '$.screen_height') AS INTEGER)) AS screen_h "
                "FROM episodes AS e "
                "WHERE e.run_id = $run AND e.domain = $domain AND e.task_id = $task",
                key | {"args": run["args_json"]},
            )
        )
        if run is None or facts is None:
            return None
        facts |= {"agent": run["agent"], "source": run["source"], "label": run["label"]}
        steps = self.rows(
            "WITH tok AS (SELECT step_num, sum(prompt_tokens) AS prompt_tokens, "
            "sum(completion_tokens) AS completion_tokens, sum(latency_s) AS llm_s "
            f"FROM llm_calls WHERE {match} GROUP BY step_num), "
            "acts AS (SELECT step_idx, list({'kind': kind, 'x': x, 'y': y} ORDER BY action_idx) "
            f"AS actions FROM step_actions WHERE {match} GROUP BY step_idx), "
            "refs AS (SELECT step_idx, content_hash FROM screenshot_refs "
            f"WHERE {match}), "
            "dims AS (SELECT content_hash, any_value(width) AS width, any_value(height) AS height "
            "FROM screenshots WHERE content_hash IN (SELECT content_hash FROM refs) "
            "GROUP BY content_hash) "
            "SELECT s.step_idx, s.step_num, s.action_kind, s.action_text, s.x, s.y, s.response, "
            "s.dt_s, s.phase, s.screenshot_path IS NOT NULL AS has_shot, dims.width, "
            "dims.height, tok.prompt_tokens, tok.completion_tokens, tok.llm_s, acts.actions "
            "FROM steps AS s LEFT JOIN tok USING (step_num) LEFT JOIN acts USING (step_idx) "
            "LEFT JOIN refs USING (step_idx) LEFT JOIN dims USING (content_hash) "
            f"WHERE s.run_id = $run AND s.domain = $domain AND s.task_id = $task "
            "ORDER BY s.step_idx",
            key,
        )
        spans = self.rows(
            "SELECT first_step, last_step, length, looping_steps, signals, outcome "
            f"FROM loop_spans WHERE {match} ORDER BY first_step",
            key,
        )
        interactions = self.rows(
            "SELECT seq, step, phase, type, message, reason FROM interactions "
            f"WHERE {match} ORDER BY seq",
            key,
        )
        verdicts = self.rows(
            "SELECT source, rule, score, passed, agrees_with_archived, details, judge_model "
            f"FROM verdicts WHERE {match} ORDER BY source, rule",
            key,
        )
        human = self.rows(
            "SELECT human_version, single_steps, grouped_steps, single_actions FROM human_refs "
            "WHERE (task_id = $task OR alias_task_id = $task) AND domain = $domain "
            "ORDER BY human_version",
            {"task": task_id, "domain": domain},
        )
        self.screenshot_paths(run_id, domain, task_id)  # the page's screenshots come next
        return Episode(facts, steps, spans, interactions, verdicts, human)

    def screenshot_paths(self, run_id: str, domain: str, task_id: str) -> dict[int, str]:
        """{step index: path in the run's source} of an episode's screenshots, as the
        warehouse records them: the hash job's screenshot_refs, else the step rows (before
        hashing). Kept for the last EPISODES_KEPT episodes asked for."""
        key = (run_id, domain, task_id)
        with self.lock:
            if key in self._shots:
                self._shots.move_to_end(key)
                return self._shots[key]
        got = self.rows(
            "SELECT s.step_idx, coalesce(f.screenshot_path, s.screenshot_path) AS path "
            "FROM steps AS s LEFT JOIN screenshot_refs AS f "
            "ON f.run_id = s.run_id AND f.domain = s.domain AND f.task_id = s.task_id "
            "AND f.step_idx = s.step_idx "
            "WHERE s.run_id = $run AND s.domain = $domain AND s.task_id = $task",
            {"run": run_id, "domain": domain, "task": task_id},
        )
        paths = {r["step_idx"]: r["path"] for r in got if r["path"]}
        with self.lock:
            self._shots[key] = paths
            while len(self._shots) > EPISODES_KEPT:
                self._shots.popitem(last=False)
        return paths

    def screenshot_ref(
        self, run_id: str, domain: str, task_id: str, step_idx: int
    ) -> tuple[str, str] | None:
        """(runs.source, path in it) of a step's screenshot; None when it has none."""
        run = self._runs.get(run_id)
        if run is None or not run["source"]:
            return None
        path = self.screenshot_paths(run_id, domain, task_id).get(step_idx)
        return (run["source"], path) if path else None

    # -- compare ----------------------------------------------------------------------------

    def common_tasks(self, run_a: str, run_b: str, limit: int = 500) -> list[dict[str, Any]]:
        """Tasks both runs have an episode of, with each one's score and step count."""
        return self.rows(
            "SELECT a.domain, a.task_id, a.score AS score_a, b.score AS score_b, "
            "a.n_steps AS steps_a, b.n_steps AS steps_b FROM episodes AS a JOIN episodes AS b "
            "ON a.domain = b.domain AND a.task_id = b.task_id "
            "WHERE a.run_id = $a AND b.run_id = $b ORDER BY a.domain, a.task_id LIMIT $limit",
            {"a": run_a, "b": run_b, "limit": limit},
        )

    def looping_episode(self, run_id: str) -> dict[str, Any] | None:
        """The run's most looping episode (the run page links it first)."""
        return self.one(
            "SELECT domain, task_id, looping_steps FROM episode_loops WHERE run_id = $run "
            "AND looping_steps > 0 ORDER BY looping_steps DESC, domain, task_id LIMIT 1",
            {"run": run_id},
        )

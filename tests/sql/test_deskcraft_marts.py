"""The DeskCraft marts on generated runs whose figures are known from the generator's plans.

Every expected figure below is computed from the plans (`synthetic.deskcraft.plan_episode`),
not from the warehouse: the readers, the pipeline and the SQL must all agree with what was
generated.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from deskscore.collectors.synthetic.deskcraft import AGENTS, EpisodePlan
from deskscore.sql import connect


@pytest.fixture(scope="module")
def con(deskcraft_archive: dict) -> Any:
    return connect(deskcraft_archive["warehouse"])


@pytest.fixture(scope="module")
def plans(deskcraft_archive: dict) -> dict[str, list[EpisodePlan]]:
    return deskcraft_archive["plans"]


def rows(con: Any, sql: str) -> list[dict[str, Any]]:
    rel = con.sql(sql)
    return [dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()]


def figures(plans: Iterable[EpisodePlan]) -> tuple[int, int, int, float]:
    """(episodes, tasks run, strict successes, sum of scores) of some plans."""
    plans = list(plans)
    run = [p.score for p in plans if p.score is not None]
    return len(plans), len(run), sum(1 for s in run if s == 1.0), sum(run)


def expected_by(
    plans: dict[str, list[EpisodePlan]], key: Callable[[EpisodePlan], str | None]
) -> dict[tuple[str, str], tuple[int, int, int, float]]:
    groups: dict[tuple[str, str], list[EpisodePlan]] = defaultdict(list)
    for agent, ps in plans.items():
        for p in ps:
            k = key(p)
            if k is not None:
                groups[agent, k].append(p)
    return {k: figures(v) for k, v in groups.items()}


def got_by(con: Any, sql: str, key: str) -> dict[tuple[str, str], tuple[int, int, int, float]]:
    return {
        (r["agent"], r[key]): (
            r["n_episodes"],
            r["n_tasks_run"],
            r["n_strict_success"],
            r["sum_reward"],
        )
        for r in rows(con, sql)
    }


def test_ingest_read_every_generated_episode_and_line(deskcraft_archive: dict, plans) -> None:
    counters = deskcraft_archive["ingest"]
    assert counters.episodes == sum(len(ps) for ps in plans.values())
    assert (
        counters.traj_lines
        == counters.steps
        == sum(len(p.turns) for ps in plans.values() for p in ps)
    )
    assert counters.quarantined == 0


def test_environment_steps_leave_out_questions_and_respect_the_budget(con, plans) -> None:
    got = {
        (r["agent"], r["task_id"]): r
        for r in rows(
            con, "SELECT agent, task_id, n_steps, n_questions, max_steps FROM deskcraft_episodes"
        )
    }
    for agent in AGENTS:
        for p in plans[agent.name]:
            r = got[agent.name, p.task_id]
            assert r["n_steps"] == p.n_env_steps <= agent.max_steps
            assert r["n_questions"] == p.n_asks
            assert r["max_steps"] == agent.max_steps


@pytest.mark.parametrize(
    ("source", "attr"), [("stem", "level_stem"), ("difficulty", "level_difficulty")]
)
def test_per_level_matches_the_plans_for_each_level_source(
    con, plans, source: str, attr: str
) -> None:
    for split in ("all", "standard", "interactive"):
        expected = expected_by(
            plans,
            lambda p, split=split: (
                (getattr(p, attr) or "unlabelled") if split in ("all", p.split) else None
            ),
        )
        got = got_by(
            con,
            f"SELECT * FROM per_level WHERE level_source = '{source}' AND split = '{split}'",
            "level",
        )
        assert got == expected, (source, split)  # halves and ones: sums are exact
    levels = {
        r[0] for r in con.sql("SELECT level FROM per_level WHERE level_source = 'stem'").fetchall()
    }
    assert levels == {"L1", "L2", "L3", "unlabelled"}


def test_per_mode_matches_the_plans(con, plans) -> None:
    expected = expected_by(
        plans, lambda p: (p.mode or "untyped") if p.split == "interactive" else None
    )
    assert got_by(con, "SELECT * FROM per_mode", "mode") == expected
    talk = {
        (r["agent"], r["mode"]): (r["n_questions"], r["n_user_turns"])
        for r in rows(con, "SELECT * FROM per_mode")
    }
    for agent, ps in plans.items():
        for mode in {p.mode or "untyped" for p in ps if p.split == "interactive"}:
            mine = [p for p in ps if p.split == "interactive" and (p.mode or "untyped") == mode]
            users = sum(1 for p in mine for t in p.turns if t.user is not None)
            assert talk[agent, mode] == (sum(p.n_asks for p in mine), users)


def test_per_app_and_per_domain_match_the_plans(con, plans) -> None:
    from deskscore.collectors.deskcraft_tasks import CATEGORIES

    assert got_by(con, "SELECT * FROM per_app WHERE split = 'all'", "app") == expected_by(
        plans, lambda p: p.app
    )
    assert got_by(
        con, "SELECT * FROM deskcraft_per_domain WHERE split = 'all'", "domain"
    ) == expected_by(plans, lambda p: CATEGORIES[p.app])


def test_per_trigger_counts_a_task_under_each_kind_of_trigger_it_has(con, plans) -> None:
    got = got_by(con, "SELECT * FROM per_trigger", "trigger")
    for kind in ("agent_done", "agent_asks", "step_count"):
        expected = expected_by(
            plans,
            lambda p, kind=kind: (
                kind
                if p.split == "interactive" and any(t.split(":")[0] == kind for t in p.triggers)
                else None
            ),
        )
        assert {k: v for k, v in got.items() if k[1] == kind} == expected


def test_ask_rate_is_the_share_of_agent_asks_tasks_where_the_agent_asked(con, plans) -> None:
    got = {r["agent"]: r for r in rows(con, "SELECT * FROM ask_rate")}
    for agent, ps in plans.items():
        expecting = [p for p in ps if p.asks_expected]
        asked = [p for p in expecting if p.asked_when_expected]
        assert got[agent]["n_episodes"] == len(expecting) > 0
        assert got[agent]["n_asked"] == len(asked)
        assert got[agent]["ask_rate_pct"] == pytest.approx(100 * len(asked) / len(expecting))
        assert got[agent]["n_questions_logged"] == sum(
            p.n_asks for p in ps if p.split == "interactive"
        )
    assert got["deskcraft-strong"]["ask_rate_pct"] > got["deskcraft-weak"]["ask_rate_pct"]


def test_step_budget_counts_tasks_solved_within_b_environment_steps(con, plans) -> None:
    got = rows(con, "SELECT agent, budget, n_tasks, n_solved, budget_unit FROM step_budget")
    for agent, ps in plans.items():
        run = [p for p in ps if p.score is not None]
        mine = sorted((r for r in got if r["agent"] == agent), key=lambda r: r["budget"])
        longest = max(p.n_env_steps for p in run)
        assert [r["budget"] for r in mine] == list(range(5, 5 * -(-longest // 5) + 1, 5))
        for r in mine:
            assert r["budget_unit"] == "steps" and r["n_tasks"] == len(run)
            assert r["n_solved"] == sum(
                1 for p in run if p.score == 1 and p.n_env_steps <= r["budget"]
            )


def test_the_sql_overall_equals_the_pipelines_run_figures(con) -> None:
    runs = {
        r["run_id"]: r
        for r in rows(
            con,
            "SELECT run_id, success_rate_run, strict_success_rate_run, n_tasks_run FROM run_scores "
            "WHERE compat = 'deskscore'",
        )
    }
    for view, where in (
        ("per_level", "level_source = 'stem' AND split = 'all'"),
        ("per_level", "level_source = 'difficulty' AND split = 'all'"),
        ("per_app", "split = 'all'"),
        ("deskcraft_per_domain", "split = 'all'"),
    ):
        totals = rows(
            con,
            f"SELECT run_id, sum(n_tasks_run) AS n, sum(sum_reward) AS s, sum(n_strict_success) AS k "
            f"FROM {view} WHERE {where} GROUP BY run_id",
        )
        assert len(totals) == 2
        for t in totals:
            run = runs[t["run_id"]]
            assert t["n"] == run["n_tasks_run"], view
            assert t["s"] / t["n"] == pytest.approx(run["success_rate_run"]), view
            assert t["k"] / t["n"] == pytest.approx(run["strict_success_rate_run"]), view
    modes = {r[0]: r[1:] for r in con.sql(
        "SELECT run_id, sum(n_tasks_run), sum(sum_reward) FROM per_mode GROUP BY run_id").fetchall()}  # fmt: skip
    interactive = {r[0]: r[1:] for r in con.sql(
        "SELECT run_id, sum(n_tasks_run), sum(sum_reward) FROM per_level "
        "WHERE level_source = 'stem' AND split = 'interactive' GROUP BY run_id").fetchall()}  # fmt: skip
    assert modes == interactive


def test_recomputed_verdicts_report_exactly_the_contradicted_results(con, plans) -> None:
    got = rows(
        con,
        "SELECT r.agent, v.task_id, v.source, v.rule, v.score, v.agrees_with_archived "
        "FROM verdicts AS v JOIN runs AS r USING (run_id)",
    )
    for agent, ps in plans.items():
        mine = [r for r in got if r["agent"] == agent]
        by_rule: dict[str, set[str]] = defaultdict(set)
        for r in mine:
            by_rule[r["rule"]].add(r["task_id"])
        assert by_rule["result_txt"] == {p.task_id for p in ps if p.score is not None}
        assert by_rule["final_fail"] == {p.task_id for p in ps if p.ends_with_fail}
        assert by_rule["conj"] == {
            p.task_id for p in ps if p.metrics is not None and not p.ends_with_fail
        }
        disagreeing = {r["task_id"] for r in mine if r["agrees_with_archived"] is False}
        assert disagreeing == {p.task_id for p in ps if p.tampered and p.score is not None}
        conj = {r["task_id"]: r["score"] for r in mine if r["rule"] == "conj"}
        assert conj == {p.task_id: p.conj_score for p in ps if p.task_id in conj}
    shown = rows(con, "SELECT agent, task_id, archived_score, score FROM verdict_disagreements")
    assert (
        len(shown)
        == sum(1 for ps in plans.values() for p in ps if p.tampered and p.score is not None)
        > 0
    )
    summary = rows(con, "SELECT sum(n_disagree) AS n FROM verdict_agreement")
    assert summary[0]["n"] == len(shown)

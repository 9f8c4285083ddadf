"""score_run: episodes of one run against human references, under both rule sets."""

from __future__ import annotations

import math
import random
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deskscore.schemas import TABLES, conform_rows
from deskscore.scorers.config import ScoreConfig
from deskscore.scorers.run import EPISODE_INPUTS, match_human, run_units, score_run

DOMAINS = ("chrome", "gimp", "libreoffice_calc", "os", "thunderbird", "vlc", "multi_apps")
OLD_TB, NEW_TB = "2ad9387a-65d8-4e33-ad5b-7580065a27ca", "a10b69e1-6034-4a2b-93e1-571d45194f75"


def _human(rng: random.Random, n: int) -> list[tuple[str, str, int, int]]:
    out = []
    for _ in range(n):
        single = rng.randint(1, 25)
        out.append(
            (
                rng.choice(DOMAINS),
                str(uuid.UUID(int=rng.getrandbits(128))),
                single,
                rng.randint(1, single),
            )
        )
    return out


def _episode(
    domain: str,
    task_id: str,
    *,
    n_lines: int,
    n_errors: int = 0,
    n_bad: int = 0,
    status: str = "ok",
    score: float | None = 0.0,
    source: str | None = None,
    traj: bool = True,
    raw: str | None = None,
) -> dict:
    return {
        "run_id": "r1",
        "benchmark": "osworld",
        "domain": domain,
        "task_id": task_id,
        "source_task_id": source or task_id,
        "task_path": f"{domain}/{source or task_id}",
        "traj_file": f"{domain}/{source or task_id}/traj.jsonl" if traj else None,
        "n_lines": n_lines,
        "n_steps": max(n_lines - n_errors - n_bad, 0),
        "n_error_lines": n_errors,
        "n_quarantined": n_bad,
        "result_status": status,
        "score": score if status == "ok" else None,
        "result_raw": raw if raw is not None else (None if score is None else str(score)),
    }


def _run(seed: int, n_human: int = 120) -> tuple[list[dict], list[tuple[str, str, int, int]]]:
    """A run over most of the human tasks: partial rewards, missing results, error lines."""
    rng = random.Random(seed)
    human = _human(rng, n_human)
    episodes = []
    for domain, task_id, _, _ in human:
        if rng.random() < 0.15:
            continue  # not run
        status = "missing" if rng.random() < 0.05 else "ok"
        score = rng.choice((0.0, 1.0, 1.0, 0.5, 0.0)) if status == "ok" else None
        n_lines = rng.randint(1, 60)
        errors = rng.randint(0, 1) if rng.random() < 0.1 else 0
        episodes.append(
            _episode(domain, task_id, n_lines=n_lines, n_errors=errors, status=status, score=score)
        )
    episodes.append(_episode("chrome", "not-a-human-task", n_lines=30, score=1.0))
    rng.shuffle(episodes)
    return episodes, human


def _reference(episodes, human, mss, *, original: bool) -> dict:
    """The formulas, written out plainly, independent of the code under test."""
    t_of = (lambda e: e["n_lines"]) if original else (lambda e: e["n_steps"])
    s = max([mss] + [t_of(e) for e in episodes])
    found = {(e["domain"], e["source_task_id"]): e for e in episodes if e["result_status"] == "ok"}
    n = len(human)
    ws, wg, wm, rs, fails = [], [], [], [], []
    for domain, task_id, single, grouped in human:
        e = found.get((domain, task_id))
        if e is None:
            continue
        r, t = e["score"], t_of(e)
        cap = (lambda x: x) if original else (lambda x: min(x, 1.0))
        ws.append(r * cap(single / t) if t else 0.0)
        wg.append(r * cap(grouped / t) if t else 0.0)
        wm.append(-(1 - r) * t / s)
        rs.append(r)
        fails.append((1 - r, t))
    den = sum(w for w, _ in fails)
    m = sum(w * t for w, t in fails) / den if den else 0.0
    run_rs = [e["score"] for e in episodes if e["result_status"] == "ok"]
    return {
        "step_budget": s,
        "n_human_tasks": n,
        "n_tasks_run": len(run_rs),
        "n_tasks_matched": len(rs),
        "success_rate_run": sum(run_rs) / len(run_rs),
        "success_rate_human": sum(rs) / n,
        "strict_success_rate_run": run_rs.count(1.0) / len(run_rs),
        "wes_plus_single": sum(ws) / n,
        "wes_plus_grouped": sum(wg) / n,
        "wes_minus": sum(wm) / n,
        "mean_t_fail": m,
        "wes_single": sum(ws) / n * (1 - m / s),
        "wes_grouped": sum(wg) / n * (1 - m / s),
    }


def _score(episodes, human, mss=15, compat="osworld-human", **kw):
    return score_run(
        episodes,
        human,
        run_id="r1",
        benchmark="osworld",
        config=ScoreConfig("verified", mss, compat),
        **kw,
    )


@pytest.mark.parametrize("compat", ["osworld-human", "deskscore"])
@pytest.mark.parametrize("seed,mss", [(0, 15), (1, 50), (2, 100), (3, 15)])
def test_run_figures_follow_the_formulas(seed, mss, compat):
    episodes, human = _run(seed)
    _, run = _score(episodes, human, mss, compat)
    expected = _reference(episodes, human, mss, original=compat == "osworld-human")
    for key, value in expected.items():
        assert run[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key


@pytest.mark.parametrize("compat", ["osworld-human", "deskscore"])
def test_rows_conform_to_the_warehouse_tables(compat):
    episodes, human = _run(5)
    rows, run = _score(episodes, human, compat=compat)
    assert len(rows) == len(episodes)
    assert conform_rows("episode_scores", rows).num_rows == len(episodes)
    assert conform_rows("run_scores", [run]).num_rows == 1
    assert set(run) == set(TABLES["run_scores"].columns)
    assert all(set(r) == set(TABLES["episode_scores"].columns) for r in rows)


@pytest.mark.parametrize("compat", ["osworld-human", "deskscore"])
def test_run_wes_is_the_mean_of_episode_wes_over_n(compat):
    episodes, human = _run(7)
    rows, run = _score(episodes, human, compat=compat)
    n = run["n_human_tasks"]
    assert sum(r["wes_single"] for r in rows if r["scored"]) / n == pytest.approx(run["wes_single"])
    assert run["wes_grouped"] == pytest.approx(
        run["wes_plus_grouped"] * (1 - run["mean_t_fail"] / run["step_budget"])
    )
    assert sum(r["wes_minus"] for r in rows if r["scored"]) / n == pytest.approx(run["wes_minus"])


def test_second_form_identity_when_every_task_is_run():
    """WES = WES+ * (1 + WES- / (1 - success)) when all N tasks are matched: how the paper's
    two forms relate (Agent S2: 28.2 * (1 - 0.26 / 0.586) ~ 15.6)."""
    rng = random.Random(3)
    human = _human(rng, 80)
    episodes = [
        _episode(d, t, n_lines=rng.randint(1, 50), score=rng.choice((0.0, 1.0, 0.5)))
        for d, t, _, _ in human
    ]
    _, run = _score(episodes, human, 50)
    predicted = run["wes_plus_single"] * (1 + run["wes_minus"] / (1 - run["success_rate_human"]))
    assert run["wes_single"] == pytest.approx(predicted, rel=1e-12)


def test_sums_run_in_the_order_of_the_human_tasks():
    episodes, human = _run(9)
    _, run = _score(episodes, human)
    _, reordered = _score(episodes, human[::-1])
    assert reordered["wes_plus_single"] == pytest.approx(run["wes_plus_single"], rel=1e-12)
    found = {(e["domain"], e["task_id"]): e for e in episodes if e["result_status"] == "ok"}
    terms = [
        found[(d, t)]["score"] * s / found[(d, t)]["n_lines"]
        for d, t, s, _ in human
        if (d, t) in found
    ]
    assert run["wes_plus_single"] == sum(terms) / len(human)  # bit for bit, builtin sum order


def test_a_repeated_human_task_counts_once_with_its_last_counts():
    episodes = [_episode("chrome", "a", n_lines=10, score=1.0)]
    _, run = _score(episodes, [("chrome", "a", 2, 1), ("os", "b", 3, 3), ("chrome", "a", 5, 2)])
    assert run["n_human_tasks"] == 2
    assert run["wes_plus_single"] == 1.0 * 5 / 10 / 2


def test_thunderbird_prefers_the_folder_under_the_new_id():
    old = _episode("thunderbird", NEW_TB, source=OLD_TB, n_lines=20, score=0.0)
    new = _episode("thunderbird", NEW_TB, n_lines=10, score=1.0)
    human = [("thunderbird", NEW_TB, 5, 2)]
    for compat in ("osworld-human", "deskscore"):
        for order in ([old, new], [new, old]):
            rows, run = _score(order, human, compat=compat)
            assert run["success_rate_human"] == 1.0
            scored = [r for r, e in zip(rows, order, strict=True) if r["scored"]]
            assert len(scored) == 1 and scored[0]["t_agent"] == 10
            assert all(r["has_human_ref"] for r in rows)


def test_an_old_thunderbird_folder_alone_is_found_under_its_old_id():
    old = _episode("thunderbird", NEW_TB, source=OLD_TB, n_lines=8, score=1.0)
    matches = match_human([old], [("thunderbird", NEW_TB, 4, 2)], compat="osworld-human")
    assert matches[0].episode == 0
    # Only thunderbird was renumbered: another domain does not fall back.
    other = _episode("chrome", "x-new", source="x-old", n_lines=8, score=1.0)
    assert match_human([other], [("chrome", "x-new", 4, 2)], compat="deskscore")[0].episode is None


def test_a_folder_found_for_two_human_tasks_counts_for_each_with_its_own_counts():
    """Human data listing a thunderbird task under its old and its new id finds the old-id
    folder for both, as OSWorld-Human's loop does; every figure counts it twice."""
    old = _episode("thunderbird", NEW_TB, source=OLD_TB, n_lines=10, score=1.0)
    human = [("thunderbird", OLD_TB, 3, 2), ("thunderbird", NEW_TB, 7, 5)]
    for order in (human, human[::-1]):
        _, run = _score([old], order, compat="osworld-human")
        assert run["n_tasks_matched"] == 2 and run["success_rate_human"] == 1.0
        assert run["wes_plus_single"] == pytest.approx((3 / 10 + 7 / 10) / 2)
        assert run["wes_single"] == run["wes_plus_single"]  # nothing failed: factor 1
        assert run["mean_step_ratio_single"] == pytest.approx((10 / 3 + 10 / 7) / 2)


def test_a_missing_result_is_left_out_but_its_steps_count_for_the_budget():
    episodes = [
        _episode("chrome", "a", n_lines=70, status="missing", score=None),
        _episode("chrome", "b", n_lines=10, score=0.0),
    ]
    rows, run = _score(episodes, [("chrome", "a", 3, 2), ("chrome", "b", 3, 2)])
    assert run["step_budget"] == 70
    assert run["n_tasks_matched"] == 1
    assert run["wes_minus"] == -(10 / 70) / 2
    assert rows[0]["scored"] is False and rows[0]["reward"] is None


def test_error_and_garbled_lines_are_steps_only_in_the_original():
    ep = _episode("chrome", "a", n_lines=12, n_errors=1, n_bad=1, score=1.0)
    human = [("chrome", "a", 5, 5)]
    _, orig = _score([ep], human, compat="osworld-human")
    _, ours = _score([ep], human, compat="deskscore")
    assert orig["wes_plus_single"] == 5 / 12
    assert ours["wes_plus_single"] == 5 / 10


def test_an_empty_trajectory_with_a_result_scores_zero_in_both_rule_sets():
    episodes = [_episode("chrome", "a", n_lines=0, score=1.0)]
    for compat in ("osworld-human", "deskscore"):
        rows, run = _score(episodes, [("chrome", "a", 5, 5)], compat=compat)
        assert run["success_rate_human"] == 1.0
        assert run["wes_plus_single"] == 0.0 and run["wes_minus"] == 0.0
        assert rows[0]["scored"] is True


def test_empty_and_unparseable_results_are_not_run_in_both_rule_sets():
    episodes = [
        _episode("chrome", "a", n_lines=5, status="empty", score=None, raw=""),
        _episode("chrome", "b", n_lines=5, status="unparseable", score=None, raw="abc"),
    ]
    for compat, over_n in (("osworld-human", 0.0), ("deskscore", None)):
        _, run = _score(episodes, [("chrome", "a", 5, 5), ("chrome", "b", 5, 5)], compat=compat)
        assert run["n_tasks_matched"] == 0 and run["success_rate_human"] == over_n
        assert run["n_tasks_run"] == 0 and run["success_rate_run"] is None


def test_a_nan_result_poisons_the_original_figures_but_is_not_run_under_deskscore():
    episodes = [
        _episode("chrome", "a", n_lines=5, status="unparseable", score=None, raw="nan"),
        _episode("chrome", "b", n_lines=5, score=1.0),
    ]
    human = [("chrome", "a", 5, 5), ("chrome", "b", 5, 5)]
    _, orig = _score(episodes, human, compat="osworld-human")
    _, ours = _score(episodes, human, compat="deskscore")
    assert math.isnan(orig["success_rate_human"]) and math.isnan(orig["wes_minus"])
    assert ours["success_rate_human"] == 0.5 and ours["n_tasks_matched"] == 1


def test_rewards_outside_zero_one_are_clamped_only_under_deskscore():
    episodes = [_episode("chrome", "a", n_lines=10, score=2.0)]
    _, orig = _score(episodes, [("chrome", "a", 5, 5)], compat="osworld-human")
    _, ours = _score(episodes, [("chrome", "a", 5, 5)], compat="deskscore")
    assert orig["success_rate_human"] == 2.0 and orig["wes_minus"] == 10 / 15
    assert ours["success_rate_human"] == 1.0 and ours["wes_minus"] == 0.0


def test_a_result_without_trajectory_counts_only_under_deskscore():
    episodes = [_episode("chrome", "a", n_lines=0, traj=False, score=1.0)]
    _, orig = _score(episodes, [("chrome", "a", 5, 5)], compat="osworld-human")
    _, ours = _score(episodes, [("chrome", "a", 5, 5)], compat="deskscore")
    assert orig["n_tasks_matched"] == 0 and orig["success_rate_human"] == 0.0
    assert ours["n_tasks_matched"] == 1 and ours["success_rate_human"] == 1.0


def test_the_original_budget_ignores_folders_outside_the_ten_domains():
    episodes = [
        _episode("chrome", "a", n_lines=10, score=0.0),
        _episode("summary", "b", n_lines=90, score=0.0),
    ]
    _, orig = _score(episodes, [("chrome", "a", 5, 5)], compat="osworld-human")
    _, ours = _score(episodes, [("chrome", "a", 5, 5)], compat="deskscore")
    assert orig["step_budget"] == 15 and ours["step_budget"] == 90


def test_other_trajectory_files_of_a_folder_count_for_the_budget():
    episodes = [_episode("chrome", "a", n_lines=10, score=0.0)]
    _, run = _score(episodes, [("chrome", "a", 5, 5)], extra_t_agent=[40])
    assert run["step_budget"] == 40


def test_uitars_episodes_match_on_their_instruction():
    ep = _episode("uitars", "folder-1", n_lines=6, score=1.0)
    ep["instruction"] = "Open the file"
    human = [("uitars", "Open the file", 3, 2), ("uitars", "Something else", 4, 4)]
    rows, run = _score([ep], human)
    assert run["n_tasks_matched"] == 1 and run["wes_plus_single"] == 3 / 6 / 2
    assert rows[0]["has_human_ref"] and rows[0]["t_human_single"] == 3


def test_no_human_tasks_gives_no_human_figures():
    _, run = _score([_episode("chrome", "a", n_lines=3, score=1.0)], [])
    assert run["n_human_tasks"] == 0
    assert run["success_rate_human"] is None and run["wes_plus_single"] is None
    assert run["success_rate_run"] == 1.0


VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**12),
    st.floats(),
    st.text(max_size=4),
    st.lists(st.integers(), max_size=2),
)
KEYS = st.sampled_from(
    [
        "domain",
        "task_id",
        "source_task_id",
        "n_lines",
        "n_steps",
        "score",
        "result_status",
        "result_raw",
        "traj_file",
        "instruction",
    ]
)
EPISODE = st.one_of(
    st.dictionaries(KEYS, VALUES, max_size=10),
    st.fixed_dictionaries(
        {
            "domain": st.sampled_from(["chrome", "thunderbird", "uitars", "x"]),
            "task_id": st.sampled_from(["a", NEW_TB]),
            "source_task_id": st.sampled_from(["a", NEW_TB, OLD_TB, None]),
            "n_lines": VALUES,
            "n_steps": VALUES,
            "score": VALUES,
            "result_status": st.sampled_from(["ok", "missing", "empty", "unparseable", None]),
            "result_raw": VALUES,
        },
    ),
)
HUMAN = st.lists(
    st.tuples(
        st.sampled_from(["chrome", "thunderbird", "uitars"]),
        st.sampled_from(["a", NEW_TB, "b"]),
        VALUES,
        VALUES,
    ),
    max_size=5,
)


RULES_AND_BUDGET = {
    "compat": st.sampled_from(["osworld-human", "deskscore"]),
    "mss": st.integers(-3, 200),
}


@settings(max_examples=300, deadline=None)
@given(episodes=st.lists(EPISODE, max_size=6), human=HUMAN, **RULES_AND_BUDGET)
def test_score_run_never_raises(episodes, human, compat, mss):
    rows, run = _score(episodes, human, mss, compat)
    assert len(rows) == len(episodes)
    assert run["n_tasks_matched"] <= run["n_human_tasks"]


def test_figures_over_the_human_tasks_are_null_not_zero_when_no_task_matched():
    """Scenarios outside the human data (Sec-Eval's) ran and have results, yet nothing was
    measured against a human: deskscore leaves the figures over N empty; the original's rules
    print 0, as its score.py does."""
    episodes = [
        _episode("execute_binary", "20250226@161539-failed", n_lines=9, score=1.0),
        _episode("prompt_injection", "20250226@165220-failed", n_lines=4, score=0.0),
    ]
    human = [("chrome", "a", 5, 5), ("chrome", "b", 5, 5)]
    over_n = ("success_rate_human", "wes_plus_single", "wes_plus_grouped", "wes_minus")
    over_n += ("wes_single", "wes_grouped", "mean_t_fail")
    _, ours = _score(episodes, human, compat="deskscore")
    _, orig = _score(episodes, human, compat="osworld-human")
    assert ours["n_tasks_matched"] == 0 and ours["n_tasks_run"] == 2
    assert ours["success_rate_run"] == 0.5  # over the tasks run: measured
    assert all(ours[name] is None for name in over_n)
    assert all(orig[name] == 0.0 for name in over_n)


def test_one_matched_task_is_enough_for_the_figures_over_the_human_tasks():
    episodes = [
        _episode("execute_binary", "x", n_lines=9, score=1.0),
        _episode("chrome", "a", n_lines=5, score=0.0),
    ]
    _, run = _score(episodes, [("chrome", "a", 5, 5), ("chrome", "b", 5, 5)], compat="deskscore")
    assert run["n_tasks_matched"] == 1
    assert run["success_rate_human"] == 0.0 and run["wes_plus_single"] == 0.0
    assert run["wes_minus"] is not None and run["wes_minus"] < 0


WHOLE_EPISODE = st.fixed_dictionaries(
    {
        **dict.fromkeys(TABLES["episodes"].columns, VALUES),
        "domain": st.sampled_from(["chrome", "thunderbird", "uitars", "x"]),
        "task_id": st.sampled_from(["a", NEW_TB]),
        "source_task_id": st.sampled_from(["a", NEW_TB, OLD_TB, None]),
        "result_status": st.sampled_from(["ok", "missing", "empty", "unparseable", None]),
        "instruction": st.sampled_from(["a", "b", None]),
    }
)


@settings(max_examples=300, deadline=None)
@given(episodes=st.lists(WHOLE_EPISODE, max_size=6), human=HUMAN, **RULES_AND_BUDGET)
def test_rows_of_the_episode_inputs_alone_score_as_the_whole_rows(episodes, human, compat, mss):
    """The score stages read only EPISODE_INPUTS of a run's episodes: every other column may
    hold anything without changing a figure."""
    inputs = [{k: e[k] for k in EPISODE_INPUTS} for e in episodes]
    config = ScoreConfig("verified", 50, compat)
    assert repr(_score(inputs, human, mss, compat)) == repr(_score(episodes, human, mss, compat))
    assert repr(run_units(inputs, human, config=config)) == repr(
        run_units(episodes, human, config=config)
    )


@pytest.mark.parametrize("compat", ["osworld-human", "deskscore"])
def test_scoring_looks_at_no_episode_column_but_the_inputs(compat, watched):
    wrap, seen = watched
    episodes, human = _run(5)
    whole = [wrap(dict.fromkeys(TABLES["episodes"].columns) | e) for e in episodes]
    _score(whole, human, 50, compat)
    run_units(whole, human, config=ScoreConfig("verified", 50, compat))
    assert seen and seen <= set(EPISODE_INPUTS)

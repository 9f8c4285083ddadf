"""Scoring one run: its episodes against one human data version, under one rule set.

`score_run` is the single place where episodes meet human references; the Beam pipeline
calls it per run and `score.py` calls it in-process, so both give the same figures by
construction. The rules are those of `deskscore.scorers.wes` (see its docstring for what
'osworld-human' reproduces and what 'deskscore' fixes).

The figures are the registered metrics' (`deskscore.scorers.metrics`); this module prepares
what they are computed from (each episode's r and t_agent under the rule set, its human
reference, the step budget S, the match of human tasks to episodes) and runs them. Order
matters for the last printed digit: the WES sums use the builtin `sum` over the human tasks in
the order given, and the success sum adds left to right from int 0, exactly as OSWorld-Human's
score.py does, so the printed figures are character-identical to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from deskscore.scorers.config import ScoreConfig
from deskscore.scorers.domains import OSWORLD_DOMAINS, UITARS_DOMAIN
from deskscore.scorers.metrics import HUMAN_TASKS, EpisodeFacts, Metric, RunFacts, computed
from deskscore.scorers.success import is_strict_success
from deskscore.scorers.wes import as_count, check_compat, step_budget, usable_reward

_FALLBACK_DOMAIN = "thunderbird"  # renumbered on 2025-02-10; old-id folders still match

EPISODE_INPUTS = (
    "domain",
    "task_id",
    "source_task_id",
    "instruction",
    "traj_file",
    "n_lines",
    "n_steps",
    "result_status",
    "result_raw",
    "score",
)
"""The columns of an episodes row that scoring reads (`score_run`, `run_units`, `match_human`):
a stage reads only these, as rows of these alone score the same (a test holds them to it)."""


class HumanMatch(NamedTuple):
    """One human task, in the order given, and the episode scored for it (None: not found)."""

    domain: str
    task_id: str
    single_steps: int
    grouped_steps: int
    episode: int | None
    """Index into the episodes given, or None when the task was not run."""


class _Ep(NamedTuple):
    domain: str
    task_id: str
    source_task_id: str
    instruction: str | None
    t_agent: int | None
    r: float | None
    eligible: bool  # may be matched to a human task
    counts_for_budget: bool


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _osworld_human_reward(ep: Mapping) -> float | None:
    """r as the original reads result.txt: also 'nan' and 'inf', which float() accepts."""
    status = ep.get("result_status")
    if status == "ok" or status is None:
        return usable_reward(ep.get("score"), compat="osworld-human")
    if status == "unparseable":
        raw = ep.get("result_raw")
        if isinstance(raw, str):
            try:
                return float(raw)
            except ValueError:
                return None
    return None


def _prepare(episodes: Sequence[Any], compat: str) -> list[_Ep]:
    out = []
    original = compat == "osworld-human"
    for ep in episodes:
        if not isinstance(ep, Mapping):
            ep = {}
        domain = _text(ep.get("domain"))
        task_id = _text(ep.get("task_id"))
        source = ep.get("source_task_id")
        source = task_id if source is None else _text(source)
        instruction = ep.get("instruction")
        has_traj = "traj_file" not in ep or ep.get("traj_file") is not None
        if original:
            t_agent = as_count(ep.get("n_lines"))
            r = _osworld_human_reward(ep)
            read_by_original = has_traj and (domain in OSWORLD_DOMAINS or domain == UITARS_DOMAIN)
            eligible = read_by_original and r is not None
            counts = read_by_original
        else:
            t_agent = as_count(ep.get("n_steps"))
            status = ep.get("result_status")
            r = usable_reward(ep.get("score")) if status in ("ok", None) else None
            eligible = r is not None
            counts = True
        out.append(
            _Ep(
                domain,
                task_id,
                source,
                instruction if isinstance(instruction, str) else None,
                t_agent,
                r,
                eligible,
                counts,
            )
        )
    return out


def _human_dict(human: Sequence[Any]) -> dict[tuple[str, str], tuple[int, int]]:
    """Human tasks keyed like the original's dict: a repeated key keeps its first place and
    takes the last counts. Entries that are not 4-tuples are ignored; counts that are not
    counts are 0."""
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for item in human:
        try:
            domain, task_id, single, grouped = item
        except (TypeError, ValueError):
            continue
        out[(_text(domain), _text(task_id))] = (as_count(single) or 0, as_count(grouped) or 0)
    return out


def _match(eps: list[_Ep], hd: dict[tuple[str, str], tuple[int, int]]) -> list[HumanMatch]:
    by_source: dict[tuple[str, str], int] = {}
    by_canonical: dict[tuple[str, str], list[int]] = {}
    by_instruction: dict[str, int] = {}
    for i, e in enumerate(eps):
        if not e.eligible:
            continue
        if e.domain == UITARS_DOMAIN:
            if e.instruction is not None:
                by_instruction[e.instruction] = i  # the original's dict: the last one wins
            continue
        by_source[(e.domain, e.source_task_id)] = i
        by_canonical.setdefault((e.domain, e.task_id), []).append(i)
    out = []
    for (domain, task_id), (single, grouped) in hd.items():
        if domain == UITARS_DOMAIN:
            idx = by_instruction.get(task_id)
        else:
            idx = by_source.get((domain, task_id))
            if idx is None and domain == _FALLBACK_DOMAIN:
                # The task's folder under its old id: same canonical id, another source id.
                older = [
                    i
                    for i in by_canonical.get((domain, task_id), ())
                    if eps[i].source_task_id != task_id
                ]
                idx = older[-1] if older else None
        out.append(HumanMatch(domain, task_id, single, grouped, idx))
    return out


def match_human(
    episodes: Sequence[Mapping], human: Sequence[tuple[str, str, int, int]], *, compat: str
) -> list[HumanMatch]:
    """Each human task (in the order given, repeated keys merged as a dict would) with the
    episode scored for it. A task is found under its (domain, id) first; a thunderbird task
    then under its old id (an episode with the same canonical id and another source id)."""
    check_compat(compat)
    return _match(_prepare(episodes, compat), _human_dict(human))


def _has_ref(e: _Ep, hd: dict[tuple[str, str], tuple[int, int]]) -> tuple[int, int] | None:
    if e.domain == UITARS_DOMAIN:
        return hd.get((UITARS_DOMAIN, e.instruction)) if e.instruction is not None else None
    ref = hd.get((e.domain, e.source_task_id))
    if ref is None and e.domain == _FALLBACK_DOMAIN:
        ref = hd.get((e.domain, e.task_id))
    return ref


def _facts(e: _Ep, ref: tuple[int, int] | None, scored: bool) -> EpisodeFacts:
    return EpisodeFacts(
        domain=e.domain,
        task_id=e.task_id,
        reward=e.r,
        t_agent=e.t_agent,
        t_human_single=ref[0] if ref else None,
        t_human_grouped=ref[1] if ref else None,
        has_human_ref=ref is not None,
        scored=scored,
    )


def _setup(
    episodes: Sequence[Any],
    human: Sequence[Any],
    config: ScoreConfig,
    extra_t_agent: Sequence[int],
) -> tuple[list[_Ep], dict[tuple[str, str], tuple[int, int]], list[HumanMatch], RunFacts, list]:
    """What score_run and run_units share: the prepared episodes, the human tasks, every human
    task's match (episode None: not run), the run's facts (figures still empty) and each
    episode's facts."""
    eps = _prepare(episodes, config.compat)
    hd = _human_dict(human)
    matches = _match(eps, hd)
    budget = step_budget(
        config.max_steps_scoring,
        [e.t_agent for e in eps if e.counts_for_budget] + list(extra_t_agent),
    )
    run = RunFacts(config.compat, config.max_steps_scoring, budget, len(hd), {})
    scored = {m.episode for m in matches if m.episode is not None}
    facts = [_facts(e, _has_ref(e, hd), i in scored) for i, e in enumerate(eps)]
    return eps, hd, matches, run, facts


def _aggregate(
    m: Metric, facts: list[EpisodeFacts], found: list[EpisodeFacts], run: RunFacts
) -> Any:
    """Metric m's run figure: its aggregate over the episodes or the matched human tasks."""
    value = m.run.value or m.episode.value  # type: ignore[union-attr]
    chosen = found if m.run.over == HUMAN_TASKS else facts  # type: ignore[union-attr]
    return m.run.combine([value(f, run) for f in chosen], run)  # type: ignore[union-attr]


class RunUnits(NamedTuple):
    """What a run's figures are aggregated over, unit by unit, for resampling: the units of a
    figure over EPISODES are the episodes; those of a figure over HUMAN_TASKS are the N human
    tasks, each with the facts of the episode scored for it (None: not run, counting 0)."""

    run: RunFacts
    episodes: list[EpisodeFacts]
    human: list[EpisodeFacts | None]
    human_domains: list[str]
    """The domain of each human task (its stratum)."""
    figures: dict[str, Any]
    """The run figures, as score_run computes them (None: the figure is null)."""


def run_units(
    episodes: Sequence[Mapping],
    human: Sequence[tuple[str, str, int, int]],
    *,
    config: ScoreConfig,
    extra_t_agent: Sequence[int] = (),
) -> RunUnits:
    """The units of the run's figures, prepared exactly as score_run prepares them."""
    eps, _, matches, run, facts = _setup(episodes, human, config, extra_t_agent)
    units = [
        None
        if m.episode is None
        else _facts(eps[m.episode], (m.single_steps, m.grouped_steps), True)
        for m in matches
    ]
    found = [f for f in units if f is not None]
    for m in computed():
        if m.run is not None:
            run.figures[m.name] = _aggregate(m, facts, found, run)
    return RunUnits(run, facts, units, [m.domain for m in matches], run.figures)


def score_run(
    episodes: Sequence[Mapping],
    human: Sequence[tuple[str, str, int, int]],
    *,
    run_id: str,
    benchmark: str,
    config: ScoreConfig,
    extra_t_agent: Sequence[int] = (),
) -> tuple[list[dict], dict]:
    """EPISODE_SCORES rows (one per episode, in the order given) and the RUN_SCORES row.

    `human` is (domain, task_id, single_steps, grouped_steps) per human task, in the order the
    sums run (OSWorld-Human's: its dict's order). `extra_t_agent` are step counts of other
    trajectory files of the run (a task folder holding several *.jsonl): OSWorld-Human counts
    them toward S. The figures are the registered metrics' (deskscore.scorers.metrics), each
    computed after the run figures it needs. Never raises on episode content: fields that are
    missing, None, NaN or of the wrong type make the episode count as not run, or its t_agent
    unknown (scored as 0).
    """
    compat = config.compat
    eps, hd, matches, run, facts = _setup(episodes, human, config, extra_t_agent)
    budget, figures = run.step_budget, run.figures
    found = [
        _facts(eps[m.episode], (m.single_steps, m.grouped_steps), True)  # type: ignore[index]
        for m in matches
        if m.episode is not None
    ]
    keys = {"run_id": run_id, "benchmark": benchmark, "human_version": config.human_version}
    keys |= {"max_steps_scoring": config.max_steps_scoring, "step_budget": budget}
    rows = [
        keys
        | {
            "domain": f.domain,
            "task_id": f.task_id,
            "has_human_ref": f.has_human_ref,
            "scored": f.scored,
            "reward": f.reward,
            "success": is_strict_success(f.reward) if f.reward is not None else None,
            "t_agent": f.t_agent,
            "t_human_single": f.t_human_single,
            "t_human_grouped": f.t_human_grouped,
            "compat": compat,
        }
        for f in facts
    ]
    run_row = keys | {
        "compat": compat,
        "n_human_tasks": len(hd),
        "n_tasks_run": sum(1 for e in eps if e.r is not None),
        "n_tasks_matched": len(found),
    }
    for m in computed():
        if m.episode is not None:
            for row, f in zip(rows, facts, strict=True):
                row[m.name] = m.episode.value(f, run)
        if m.run is not None:
            figures[m.name] = _aggregate(m, facts, found, run)
    return rows, run_row | figures

"""`deskscore judge`: LLM-judged verdicts under TreeCUA's k-consecutive-passes rule.

Every episode of the warehouse (any benchmark) is sent, as one chat request per round, to an
OpenAI-compatible endpoint: its instruction, its actions and reasoning, what the user said
(interactive episodes) and a few screenshots (scorers/judge_prompt.py). Each round's reply is
a row of `judge_calls`, keyed by (episode, judge model, prompt hash, round), which is also the
cache: a round already there is never sent again, so a second run with the same inputs sends
nothing, and a run that was stopped resumes where it was. Each decided episode becomes a
`verdicts` row (source judged, rule k_consecutive) in the run's `judged` file.

This stage runs in-process on a thread pool, not in Beam. It is bound by the endpoint's
latency (seconds per request, next to milliseconds of local work per episode), and what
matters is how many requests are in flight against one rate-limited endpoint: a pool of
`--concurrency` threads gives exactly that, while Beam's parallelism is per worker and
unbounded across workers, and a Beam runner that retries a failed bundle would send (and
bill) its requests again. Nothing here needs a shuffle; a run's rows are written atomically
when its episodes are done (and the cache every few episodes, so a killed job loses little),
and Beam's ~1 s start would be the largest cost of a fully cached re-run.

Screenshots are read from each run's source (runs.source, steps.screenshot_path), as
`deskscore hash` reads them; a missing or undecodable one is left out and noted in the
verdict's details. A round whose reply does not follow the contract is recorded and counts as
not passed; a request that gets no reply (after bounded retries) leaves the episode
undecided, reported as an error, with its earlier rounds cached. The API key is read from the
environment by the command and lives only in the HTTP client: every text field of a row and
every message is passed through the client's `scrub` (collectors/redact.py: the key echoed
as it is, escaped, encoded or cut) where it is built, so no row, message or report holds it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

from deskscore.collectors.chat import ChatClient, ChatError
from deskscore.collectors.image_parts import image_part
from deskscore.collectors.warehouse import Warehouse
from deskscore.pipelines.infra import progress
from deskscore.pipelines.options import JudgeOptions
from deskscore.scorers import judge_prompt
from deskscore.scorers.judge import RULE, check_k, k_consecutive
from deskscore.scorers.judge_prompt import (
    REQUEST_PARAMS,
    InteractionView,
    Shot,
    StepView,
    build_prompt,
    parse_reply,
    pick_evenly,
)

SOURCE = "judged"
"""verdicts.source of the rows written here, and their file name in each run's partition."""
FLUSH_EVERY = 25
"""A run's judge_calls partition is saved after every this many finished episodes."""
_STEP_COLUMNS = [
    "domain", "task_id", "step_idx", "step_num", "action_kind", "action_text", "response",
    "screenshot_file", "screenshot_path",
]  # fmt: skip
_EPISODE_COLUMNS = ["domain", "task_id", "instruction", "ended_by", "score"]
_CallKey = tuple[str, str, str, str, str, int]


class RunInfo(NamedTuple):
    benchmark: str
    run_id: str
    source: str
    agent: str


class Episode(NamedTuple):
    """One episode to judge, with everything the prompt needs except screenshot bytes."""

    run: RunInfo
    domain: str
    task_id: str
    instruction: str | None
    instruction_source: str
    ended_by: str | None
    archived_score: float | None
    steps: list[dict[str, Any]]
    interactions: list[dict[str, Any]]


class Outcome(NamedTuple):
    """What judging one episode produced."""

    episode: Episode
    verdict: dict[str, Any] | None
    """The verdicts row; None when the episode stays undecided (see error)."""
    calls: list[dict[str, Any]]
    """New judge_calls rows (rounds sent in this pass)."""
    requests: int
    cache_hits: int
    error: str | None


@dataclass
class RunTally:
    """Per-run counts for the summary."""

    run: RunInfo
    episodes: int = 0
    judged: int = 0
    requests: int = 0
    cache_hits: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0


@dataclass
class JudgeSummary:
    runs: list[RunTally] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(getattr(t, name) for t in self.runs)


# --------------------------------------------------------------------------- one episode


def _shots(
    episode: Episode, source: Any, source_problem: str | None, cfg: JudgeOptions
) -> tuple[list[Shot], list[dict[str, Any]]]:
    """The screenshots to send (evenly spaced, the last included) and those left out, why."""
    from deskscore.collectors.source import SourceError

    with_shot = [s for s in episode.steps if s["screenshot_file"] or s["screenshot_path"]]
    shots: list[Shot] = []
    missing: list[dict[str, Any]] = []
    for i in pick_evenly(len(with_shot), cfg.max_screenshots):
        step = with_shot[i]
        path = step["screenshot_path"]
        why = None
        if path is None:
            why = f"{step['screenshot_file']} is not in the archive"
        elif source is None:
            why = f"the run's source cannot be opened ({source_problem})"
        else:
            try:
                part = image_part(source.read_bytes(path), max_side=cfg.max_side)
            except SourceError as e:
                why = e.message
            else:
                if part.data_url is None:
                    why = f"{path}: {part.problem}"
                else:
                    shots.append(Shot(step["step_idx"], part.data_url))
        if why is not None:
            missing.append({"step_idx": step["step_idx"], "why": why})
    return shots, missing


_KEY_FIELDS = frozenset(
    ("benchmark", "run_id", "domain", "task_id", "source", "judge_model", "prompt_hash")
)
"""Fields that key a row (from the warehouse and the options, never from a reply): kept as
they are, so the cache still finds the row."""


def _scrubbed(row: dict[str, Any], scrub: Callable[[str], str]) -> dict[str, Any]:
    """`row` with `scrub` applied to every other text field: the boundary no API key
    crosses into the warehouse."""
    return {
        k: scrub(v) if isinstance(v, str) and k not in _KEY_FIELDS else v for k, v in row.items()
    }


def _call_row(
    episode: Episode,
    cfg: JudgeOptions,
    prompt_hash: str,
    round_no: int,
    n_images: int,
    reply: Any,
    scrub: Callable[[str], str],
) -> dict[str, Any]:
    if reply.problem is not None:
        status, verdict, reason = "bad_body", None, reply.problem
    else:
        parsed = parse_reply(reply.text)
        status = "ok" if parsed.problem is None else "unparseable"
        verdict, reason = parsed.verdict, parsed.reason or parsed.problem
    usage = reply.usage or {}

    def tokens(name: str) -> int | None:
        value = usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    row = {
        "benchmark": episode.run.benchmark,
        "run_id": episode.run.run_id,
        "domain": episode.domain,
        "task_id": episode.task_id,
        "judge_model": cfg.model,
        "prompt_hash": prompt_hash,
        "round": round_no,
        "template_version": judge_prompt.TEMPLATE_VERSION,
        "status": status,
        "verdict": verdict,
        "passed": verdict == "pass",
        "reason": reason,
        "http_status": reply.status,
        "attempts": reply.attempts,
        "latency_s": reply.latency_s,
        "prompt_tokens": tokens("prompt_tokens"),
        "completion_tokens": tokens("completion_tokens"),
        "total_tokens": tokens("total_tokens"),
        "response_model": reply.model,
        "n_images": n_images,
        "judged_at": datetime.now(UTC),
    }
    return _scrubbed(row, scrub)


def judge_episode(
    episode: Episode,
    *,
    cfg: JudgeOptions,
    client: ChatClient,
    cache: dict[_CallKey, dict[str, Any]],
    source: Any,
    source_problem: str | None,
    stop: threading.Event,
) -> Outcome:
    """Play the rounds the k rule needs for one episode, cached rounds first."""
    shots, missing = _shots(episode, source, source_problem, cfg)
    steps = [
        StepView(s["step_idx"], s["step_num"], s["action_kind"], s["action_text"], s["response"])
        for s in episode.steps
    ]
    interactions = [
        InteractionView(i["step"], i["type"], i["message"]) for i in episode.interactions
    ]
    prompt = build_prompt(
        task_label=f"{episode.domain}/{episode.task_id}",
        instruction=episode.instruction,
        steps=steps,
        interactions=interactions,
        shots=shots,
        ended_by=episode.ended_by,
    )
    where = f"run {episode.run.run_id} ({episode.run.agent}) {episode.domain}/{episode.task_id}"
    rounds: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    requests = hits = 0
    budget = cfg.budget
    for round_no in range(1, budget + 1):
        if k_consecutive([r["passed"] for r in rounds], cfg.k, budget).decided:
            break
        key = (
            episode.run.run_id,
            episode.domain,
            episode.task_id,
            cfg.model,
            prompt.hash,
            round_no,
        )
        row = cache.get(key)
        if row is not None:
            hits += 1
            progress.tick("cache hits")
        else:
            if stop.is_set():
                error = f"{where}: not judged, the run stopped after the endpoint refused a request"
                return Outcome(episode, None, calls, requests, hits, error)
            try:
                reply = client.complete(prompt.messages, **REQUEST_PARAMS)
            except ChatError as e:
                requests += e.attempts
                progress.tick("requests", e.attempts)
                if e.refused:
                    stop.set()
                error = (
                    f"{where}, round {round_no}: {e}; the episode has no verdict yet "
                    "(rounds already answered are cached: run again to finish it)"
                )
                return Outcome(episode, None, calls, requests, hits, client.scrub(error))
            requests += reply.attempts
            progress.tick("requests", reply.attempts)
            row = _call_row(episode, cfg, prompt.hash, round_no, len(shots), reply, client.scrub)
            calls.append(row)
        rounds.append(row)
    decision = k_consecutive([r["passed"] for r in rounds], cfg.k, budget)
    archived = episode.archived_score
    details = {
        "k": cfg.k,
        "rounds_max": budget,
        "rounds": [
            {
                "round": r["round"],
                "status": r["status"],
                "verdict": r["verdict"],
                "reason": r["reason"],
            }
            for r in rounds
        ],
        "judge_model": cfg.model,
        "prompt_hash": prompt.hash,
        "template_version": judge_prompt.TEMPLATE_VERSION,
        "instruction_source": episode.instruction_source,
        "screenshots_sent": [s.step_idx for s in shots],
        "screenshots_missing": missing,
        "turns_left_out": prompt.blocks_left_out,
    }
    verdict = {
        "benchmark": episode.run.benchmark,
        "run_id": episode.run.run_id,
        "domain": episode.domain,
        "task_id": episode.task_id,
        "source": SOURCE,
        "rule": RULE,
        "score": decision.score,
        "passed": decision.passed,
        "agrees_with_archived": None if archived is None else decision.passed == (archived == 1.0),
        "details": json.dumps(details, sort_keys=True, ensure_ascii=False),
        "judge_model": cfg.model,
        "prompt_hash": prompt.hash,
    }
    return Outcome(episode, _scrubbed(verdict, client.scrub), calls, requests, hits, None)


# --------------------------------------------------------------------------- a run's inputs


def _runs(wh: Warehouse, run_ids: Sequence[str] | None) -> list[RunInfo]:
    rows = wh.read("runs", columns=["benchmark", "run_id", "source", "agent"]).to_pylist()
    runs = sorted({RunInfo(r["benchmark"], r["run_id"], r["source"], r["agent"]) for r in rows})
    if run_ids:
        unknown = sorted(set(run_ids) - {r.run_id for r in runs})
        if unknown:
            known = ", ".join(r.run_id for r in runs) or "none"
            raise ValueError(f"no run {', '.join(unknown)} in the warehouse (runs: {known})")
        runs = [r for r in runs if r.run_id in set(run_ids)]
    return runs


def _instructions(wh: Warehouse) -> dict[tuple[str, str], list[tuple[str, str, str]]]:
    """(domain, task_id) -> [(benchmark, data_version, instruction)] from the tasks table."""
    cols = ["benchmark", "data_version", "domain", "task_id", "instruction"]
    out: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for t in wh.read("tasks", columns=cols).to_pylist():
        if t["instruction"]:
            out.setdefault((t["domain"], t["task_id"]), []).append(
                (t["benchmark"], t["data_version"], t["instruction"])
            )
    return out


def _episodes(
    wh: Warehouse, run: RunInfo, instructions: dict[tuple[str, str], list[tuple[str, str, str]]]
) -> list[Episode]:
    """The run's episodes in (domain, task_id) order, with their steps and interactions."""
    from deskscore.schemas import TABLES

    part = {"benchmark": run.benchmark, "run_id": run.run_id}
    steps: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for s in wh.read("steps", part, columns=_STEP_COLUMNS).to_pylist():
        steps.setdefault((s["domain"], s["task_id"]), []).append(s)
    talk: dict[tuple[str, str], list[dict[str, Any]]] = {}
    if "interactions" in TABLES:
        cols = ["domain", "task_id", "seq", "step", "type", "message"]
        for i in wh.read("interactions", part, columns=cols).to_pylist():
            talk.setdefault((i["domain"], i["task_id"]), []).append(i)
    out = []
    for e in wh.read("episodes", part, columns=_EPISODE_COLUMNS).to_pylist():
        key = (e["domain"], e["task_id"])
        instruction, origin = e["instruction"], "episodes"
        if not instruction:
            known = sorted(instructions.get(key, []), key=lambda t: (t[0] != run.benchmark, t[1]))
            instruction, origin = (known[0][2], "tasks") if known else (None, "none")
        out.append(
            Episode(
                run,
                e["domain"],
                e["task_id"],
                instruction,
                origin,
                e["ended_by"],
                e["score"],
                sorted(steps.get(key, []), key=lambda s: s["step_idx"]),
                sorted(talk.get(key, []), key=lambda i: i["seq"]),
            )
        )
    out.sort(key=lambda e: (e.domain, e.task_id))
    return out


# --------------------------------------------------------------------------- writing


def _sort_calls(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        rows,
        key=lambda r: (r["domain"], r["task_id"], r["judge_model"], r["prompt_hash"], r["round"]),
    )


class _RunState:
    """A run in flight: its stored calls, new calls and verdicts, how many episodes are left."""

    def __init__(self, wh: Warehouse, run: RunInfo, episodes: list[Episode]) -> None:
        self.run = run
        self.part = {"benchmark": run.benchmark, "run_id": run.run_id}
        self.stored = wh.read("judge_calls", self.part).to_pylist()
        self.previous = {
            (v["domain"], v["task_id"]): v
            for v in wh.read("verdicts", self.part).to_pylist()
            if v["source"] == SOURCE
        }
        self.keys = {(e.domain, e.task_id) for e in episodes}
        self.left = len(episodes)
        self.new_calls: list[dict[str, Any]] = []
        self.verdicts: dict[tuple[str, str], dict[str, Any]] = {}
        self.undecided: set[tuple[str, str]] = set()
        self.unsaved = 0
        self.source: Any = None
        self.source_problem: str | None = None
        self.tally = RunTally(run, episodes=len(episodes))

    def cache(self, model: str) -> dict[_CallKey, dict[str, Any]]:
        return {
            (
                r["run_id"],
                r["domain"],
                r["task_id"],
                r["judge_model"],
                r["prompt_hash"],
                r["round"],
            ): r
            for r in self.stored
            if r["judge_model"] == model
        }

    def save_calls(self, wh: Warehouse) -> None:
        if not self.new_calls:
            return

        def key(r: dict[str, Any]) -> tuple:
            return (r["domain"], r["task_id"], r["judge_model"], r["prompt_hash"], r["round"])

        merged = {key(r): r for r in self.stored}
        merged.update({key(r): r for r in self.new_calls})
        self.stored = _sort_calls(list(merged.values()))
        self.new_calls = []
        self.unsaved = 0
        if self.stored:
            wh.write("judge_calls", self.stored, self.part)

    def save_verdicts(self, wh: Warehouse) -> None:
        """The run's judged verdicts: this pass's, and for an episode it could not decide,
        the last pass's row (its judge_model and prompt_hash say which)."""
        rows = dict(self.verdicts)
        for key in self.undecided:
            if key in self.previous:
                rows[key] = self.previous[key]
        ordered = [rows[k] for k in sorted(rows) if k in self.keys]
        if ordered:
            wh.write("verdicts", ordered, self.part, file=SOURCE)
        else:
            wh.remove("verdicts", self.part, file=SOURCE)

    def close(self) -> None:
        if self.source is not None:
            self.source.close()
            self.source = None


# --------------------------------------------------------------------------- the job


def run_judge(cfg: JudgeOptions, *, api_key: str | None) -> JudgeSummary:
    """Judge every episode of the warehouse (or of `cfg.runs`) and write judge_calls and the
    judged verdicts, run by run. ValueError for a bad configuration or an unknown run."""
    from deskscore.collectors.source import SourceError, open_source

    check_k(cfg.k, cfg.rounds)  # a bad k or --rounds fails before anything is sent
    if cfg.max_screenshots < 0 or cfg.concurrency < 1:
        raise ValueError("--max-screenshots must be >= 0 and --concurrency >= 1")
    client = ChatClient(
        cfg.endpoint,
        cfg.model,
        api_key,
        timeout_s=cfg.timeout_s,
        max_retries=cfg.max_retries,
        backoff_s=cfg.backoff_s,
    )
    wh = Warehouse(cfg.warehouse)
    runs = _runs(wh, cfg.runs)
    instructions = _instructions(wh)
    summary = JudgeSummary()
    stop = threading.Event()
    window = 2 * cfg.concurrency
    pending: dict[Future[Outcome], _RunState] = {}
    unfinished: dict[str, _RunState] = {}  # runs with episodes not yet finished

    def finish(future: Future[Outcome], state: _RunState) -> None:
        outcome = future.result()
        key = (outcome.episode.domain, outcome.episode.task_id)
        tally = state.tally
        tally.requests += outcome.requests
        tally.cache_hits += outcome.cache_hits
        state.new_calls.extend(outcome.calls)
        state.unsaved += 1
        if outcome.error is not None:
            tally.errors += 1
            state.undecided.add(key)
            summary.errors.append(outcome.error)
        else:
            assert outcome.verdict is not None
            tally.judged += 1
            tally.passed += bool(outcome.verdict["passed"])
            tally.failed += not outcome.verdict["passed"]
            state.verdicts[key] = outcome.verdict
        progress.tick("episodes")
        state.left -= 1
        if state.left == 0:
            state.save_calls(wh)
            state.save_verdicts(wh)
            state.close()
            unfinished.pop(state.run.run_id, None)
        elif state.unsaved >= FLUSH_EVERY:
            state.save_calls(wh)

    def drain(until: int) -> None:
        while len(pending) > until:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in done:
                finish(future, pending.pop(future))

    pool = ThreadPoolExecutor(cfg.concurrency, thread_name_prefix="judge")
    try:
        for run in runs:
            episodes = _episodes(wh, run, instructions)
            state = _RunState(wh, run, episodes)
            summary.runs.append(state.tally)
            if not episodes:
                state.save_verdicts(wh)
                continue
            try:
                state.source = open_source(run.source)
            except SourceError as e:
                state.source_problem = e.message
            cache = state.cache(cfg.model)
            unfinished[run.run_id] = state
            for episode in episodes:
                drain(window - 1)
                future = pool.submit(
                    judge_episode,
                    episode,
                    cfg=cfg,
                    client=client,
                    cache=cache,
                    source=state.source,
                    source_problem=state.source_problem,
                    stop=stop,
                )
                pending[future] = state
        drain(0)
    finally:
        # Interrupted (Ctrl-C, a bug): nothing more is sent, and every round answered so far
        # is saved, so the next run resumes from the cache.
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        for future, state in pending.items():
            if not future.cancelled() and future.exception() is None:
                state.new_calls.extend(future.result().calls)
        for state in unfinished.values():
            state.save_calls(wh)
            state.close()
    return summary


__all__ = ["JudgeSummary", "RunTally", "judge_episode", "run_judge"]

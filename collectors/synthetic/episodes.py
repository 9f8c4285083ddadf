"""One task folder written from its plan: traj.jsonl, screenshots, result.txt, runtime.log and,
for agent_s3 runs, token_usage.json."""

from __future__ import annotations

import json

from deskscore.collectors.synthetic.clock import step_timestamp
from deskscore.collectors.synthetic.planning import POINTER_OPS, EpisodePlan
from deskscore.collectors.synthetic.profiles import SCREEN, AgentProfile
from deskscore.collectors.synthetic.rendering import render_action
from deskscore.collectors.synthetic.screenshots import Shots
from deskscore.collectors.synthetic.seeds import rng as seeded_rng
from deskscore.collectors.synthetic.seeds import stable_unit
from deskscore.collectors.synthetic.sinks import Sink
from deskscore.collectors.synthetic.usage import UsageWriter


def write_episode(
    sink: Sink,
    folder: str,
    profile: AgentProfile,
    plan: EpisodePlan,
    *,
    seed: int,
    start_us: int,
    shots: Shots,
    runtime_log: bool,
) -> int:
    """Write one task folder; returns the microsecond clock when the episode ended."""
    rng = seeded_rng(seed, profile.name, plan.domain, plan.task_id, "render")
    style = int(stable_unit("style", profile.name) * 2)
    clock = start_us
    lines: list[str] = []
    log: list[str] = []
    cache: dict[int, bytes] = {}
    cursor = (SCREEN[0] // 2, SCREEN[1] // 2)
    usage = UsageWriter(profile, plan, seed) if profile.usage != "none" else None
    for t, turn in enumerate(plan.turns):
        # model latency grows through an episode as the prompt carries more history
        latency_us = int(rng.uniform(3.0, 9.0) * (1.0 + 2.0 * t / max(1, profile.max_steps)) * 1e6)
        turn_keys = usage.turn(t, turn, clock, latency_us) if usage is not None else {}
        clock += latency_us
        log.append(f"RESPONSE: {turn.response}")
        for act, state in zip(turn.acts, turn.states, strict=True):
            ts = step_timestamp(clock, profile.timestamp_micros)
            shot = f"step_{t + 1}_{ts}.png"
            if act.op in POINTER_OPS:
                cursor = (act.x, act.y)
            info = (
                {"done": True} if act.op == "done" else {"fail": True} if act.op == "fail" else {}
            )
            line = {
                "step_num": t + 1,
                "action_timestamp": ts,
                "action": render_action(profile, act, turn.response, rng, style),
                "response": turn.response,
                "reward": 0,
                "done": act.op in ("done", "fail"),
                "info": info,
                "screenshot_file": shot,
                **turn_keys,
            }
            lines.append(json.dumps(line))
            log.append(f"Step {t + 1}: {act.op}")
            if shots.mode != "none":
                png = cache.get(state)
                if png is None:
                    png = cache[state] = shots.png(plan.domain, plan.task_id, state, cursor)
                sink.write(f"{folder}/{shot}", png)
            clock += int(rng.uniform(1.0, 3.0) * 1e6)
    if plan.error is not None:
        lines.append(json.dumps({"Error": plan.error}))
        log.append(f"Exception: {plan.error}")
    sink.write(f"{folder}/traj.jsonl", "".join(line + "\n" for line in lines).encode())
    if usage is not None and usage.entries:
        sink.write(f"{folder}/token_usage.json", usage.file_bytes())
    if plan.result is not None:
        sink.write(f"{folder}/result.txt", f"{plan.result}\n".encode())
        log.append(f"Result: {plan.score:.2f}")
    if runtime_log:
        sink.write(f"{folder}/runtime.log", "".join(x + "\n" for x in log).encode())
    return clock

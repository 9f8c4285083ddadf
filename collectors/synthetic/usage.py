"""Model usage as runners archive it: gpt54 and anthropic keys on traj lines, agent_s3's
token_usage.json.

Usage draws from its own random stream, so an agent's actions, timestamps and results are the
same bytes with or without it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from deskscore.collectors.synthetic.clock import iso
from deskscore.collectors.synthetic.planning import POINTER_OPS, EpisodePlan, Turn
from deskscore.collectors.synthetic.profiles import AgentProfile
from deskscore.collectors.synthetic.seeds import rng

_S3_PLANNER = "gpt-5-2025-08-07"
_S3_GROUNDER = "gpt-5-mini-2025-08-07"


def _cached(previous: int | None, prompt: int) -> int:
    """OpenAI's automatic prompt cache: the shared prefix with the previous call, in 128-token
    blocks, only past 1024 tokens."""
    if not previous:
        return 0
    prefix = min(previous, prompt) // 128 * 128
    return prefix if prefix >= 1024 else 0


class UsageWriter:
    """One episode's model usage in the profile's runner shape (`AgentProfile.usage`).

    It draws from its own random stream, so an agent's actions, timestamps and results are
    the same bytes with or without usage. Prompts grow by `history_tokens` per earlier turn
    (the history they carry), so per-turn cost grows linearly and cumulative cost
    quadratically; call latencies split the turn's model time, which the timestamps include.
    """

    def __init__(self, profile: AgentProfile, plan: EpisodePlan, seed: int) -> None:
        self.p = profile
        self.rng = rng(seed, profile.name, plan.domain, plan.task_id, "usage")
        self.entries: list[dict[str, Any]] = []
        self.previous: dict[str, int] = {}

    def turn(self, t: int, turn: Turn, start_us: int, latency_us: int) -> dict[str, Any]:
        """Keys to add to each traj line of turn `t` (0-based); file entries are collected."""
        style = self.p.usage
        if style == "gpt54":
            return self._gpt54(t, turn, latency_us)
        if style == "anthropic":
            return self._anthropic(t)
        self._agent_s3(t, turn, start_us, latency_us)
        return {}

    def _gpt54(self, t: int, turn: Turn, latency_us: int) -> dict[str, Any]:
        r = self.rng
        prompt = 2600 + self.p.history_tokens * t + r.randint(0, 120)
        ident = hashlib.sha256(f"{self.p.name}{t}{turn.response}".encode()).hexdigest()
        return {
            "state_correct": turn.acts[0].op != "fail",
            "model_usage": {
                "model_time": latency_us / 1e6,
                "prompt_tokens": prompt,
                "completion_tokens": r.randint(90, 420),
            },
            "messages": [
                {"id": f"rs_{ident[:24]}", "type": "reasoning", "summary": []},
                {
                    "id": f"cu_{ident[24:48]}",
                    "type": "computer_call",
                    "status": "completed",
                    "call_id": f"call_{ident[48:]}",
                },
            ],
        }

    def _anthropic(self, t: int) -> dict[str, Any]:
        r = self.rng
        written = (3000 if t == 0 else self.p.history_tokens) + r.randint(0, 200)
        read = self.previous.get("total", 0)
        fresh = r.randint(1, 40)
        self.previous["total"] = read + written + fresh
        return {
            "usage": {
                "input_tokens": fresh,
                "cache_creation_input_tokens": written,
                "cache_read_input_tokens": read,
                "output_tokens": r.randint(120, 480),
            }
        }

    def _agent_s3(self, t: int, turn: Turn, start_us: int, latency_us: int) -> None:
        r = self.rng
        total_ms = latency_us // 1000
        pointer = turn.acts[0].op in POINTER_OPS
        reflect_ms = int(total_ms * r.uniform(0.30, 0.40)) if t else 0
        ground_ms = int(total_ms * r.uniform(0.04, 0.08)) if pointer else 0
        plan_ms = total_ms - reflect_ms - ground_ms
        images = 1100 * min(t + 1, 8)  # the worker keeps its last 8 screenshots
        history = self.p.history_tokens * t
        at = start_us
        if t:
            prompt = 2300 + images + history // 2 + r.randint(0, 150)
            at = self._s3_entry(t, "reflection", _S3_PLANNER, at, reflect_ms, prompt,
                                r.randint(150, 600), 0.5)  # fmt: skip
        prompt = 4200 + images + history + r.randint(0, 200)
        at = self._s3_entry(t, "generator", _S3_PLANNER, at, plan_ms, prompt,
                            r.randint(350, 1400), 0.6)  # fmt: skip
        if pointer:
            self._s3_entry(t, "grounding", _S3_GROUNDER, at, ground_ms,
                           1500 + r.randint(0, 80), r.randint(12, 30), 0.0)  # fmt: skip

    def _s3_entry(
        self, t: int, module: str, model: str, at_us: int, ms: int, prompt: int,
        completion: int, reasoning_share: float,
    ) -> int:  # fmt: skip
        # once the worker drops its oldest screenshot (after 8 turns) only the system prompt
        # before it is a shared prefix
        shared = self.previous.get(module) if t < 8 else (4200 if module == "generator" else 2300)
        cached = _cached(shared, prompt) if module != "grounding" else 0
        self.previous[module] = prompt
        self.entries.append(
            {
                "step": t + 1,
                "module": module,
                "model": model,
                "started_at": iso(at_us),
                "latency_s": ms / 1000,
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "prompt_tokens_details": {"cached_tokens": cached},
                    "completion_tokens_details": {
                        "reasoning_tokens": int(completion * reasoning_share)
                    },
                },
            }
        )
        return at_us + ms * 1000

    def file_bytes(self) -> bytes:
        """token_usage.json: the calls, and the runner's totals (which readers must not add)."""
        total = {
            k: sum(e["usage"][k] for e in self.entries)
            for k in ("prompt_tokens", "completion_tokens", "total_tokens")
        }
        return json.dumps({"calls": self.entries, "total": total}).encode()

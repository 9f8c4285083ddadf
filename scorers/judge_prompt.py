"""The judge's prompt and reply contract, as pure functions (no IO: screenshots come in as
data URLs already made by collectors/image_parts.py).

What the judge sees of an episode: the task instruction, the agent's actions in order with
the reasoning of each model turn, what the user said mid-task (interactive episodes), and a
few screenshots spread evenly over the episode, the last one always included because the
final state decides most tasks. Every text is clipped and the whole trajectory bounded
(first and last steps kept, the middle elided with a marker), so a 100-step episode with long
responses still makes a request of predictable size.

The reply contract: one JSON object `{"verdict": "pass" | "fail", "reason": str}`, bare or in
a ```json fence; anything else is an unparseable round (it counts as not passed).

`prompt_hash` covers `TEMPLATE_VERSION`, the request parameters and the exact messages sent,
so a changed episode, screenshot, bound or template is judged again, and nothing else is.
Bump `TEMPLATE_VERSION` whenever the wording below changes meaning.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

TEMPLATE_VERSION = "judge-v1"
REQUEST_PARAMS: dict[str, Any] = {"temperature": 0}
"""Sent with every request and covered by the prompt hash."""
MAX_INSTRUCTION_CHARS = 4000
MAX_ACTION_CHARS = 300
MAX_RESPONSE_CHARS = 600
MAX_MESSAGE_CHARS = 600
MAX_TRAJECTORY_CHARS = 20000
"""Bound of the trajectory text (~5k tokens): beyond it the middle steps are left out."""

SYSTEM = (
    "You judge whether a computer-use agent completed a task on a desktop computer. You are "
    "given the task instruction, the agent's actions in order with its reasoning, anything the "
    "user said during the episode, and screenshots taken after some of the actions; the last "
    "screenshot shows the final state. Decide from the evidence, not from the agent's claims: "
    "the final state of the UI must satisfy every requirement of the instruction (and of any "
    "later user instruction), and the intermediate states the task requires must have been "
    "reached. If the task cannot be done as asked, it is completed only when the agent "
    "recognised that and stopped with FAIL. When the evidence is insufficient, the verdict is "
    "fail.\n"
    'Reply with one JSON object and nothing else: {"verdict": "pass" or "fail", '
    '"reason": "one or two sentences"}.'
)
CLOSING = (
    'Was the task completed? Reply with one JSON object: {"verdict": "pass" or "fail", '
    '"reason": "..."}.'
)


_CUT = " [... cut ...]"


class StepView(NamedTuple):
    """What the prompt shows of one step row."""

    step_idx: int
    step_num: int | None
    action_kind: str | None
    action_text: str | None
    response: str | None


class InteractionView(NamedTuple):
    """What the prompt shows of one user/agent exchange (interactions table)."""

    step: int | None
    """The agent turn (step_num) the exchange follows; None before the first."""
    type: str
    message: str | None


class Shot(NamedTuple):
    """A screenshot to send: the step it follows and its data URL."""

    step_idx: int
    data_url: str


class Verdict(NamedTuple):
    """A reply read against the contract."""

    verdict: str | None
    """pass or fail; None when the reply does not follow the contract."""
    reason: str | None
    problem: str | None
    """Why the reply is unparseable; None when it parsed."""

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


def clip(text: str | None, limit: int) -> str:
    """`text` stripped and cut to `limit` characters, with a marker when cut."""
    value = (text or "").strip()
    if len(value) <= limit:
        return value
    if limit <= 2 * len(_CUT):
        return value[: max(0, limit)]
    return value[: limit - len(_CUT)].rstrip() + _CUT


def pick_evenly(n: int, count: int) -> list[int]:
    """`count` indices out of range(n), evenly spaced, the last (n - 1) always among them and
    the first too when count >= 2; all of them when count >= n."""
    if n <= 0 or count <= 0:
        return []
    if count >= n:
        return list(range(n))
    if count == 1:
        return [n - 1]
    return sorted({round(i * (n - 1) / (count - 1)) for i in range(count)})


def _interaction_text(item: InteractionView) -> str:
    text = clip(item.message, MAX_MESSAGE_CHARS) or "(no message)"
    if item.type == "call_user":
        return f"[agent asks the user]: {text}"
    label = item.type.replace("_", " ")
    return f"[user, {label}]: {text}"


def _blocks(steps: Sequence[StepView], interactions: Sequence[InteractionView]) -> list[str]:
    """One text block per model turn (its reasoning, then its actions) and per exchange, in
    episode order; an exchange follows the last step of the turn it names."""
    placed: dict[int, list[InteractionView]] = {}
    for item in interactions:
        pos = 0
        if item.step is not None:
            pos = sum(1 for s in steps if s.step_num is not None and s.step_num <= item.step)
        placed.setdefault(pos, []).append(item)
    blocks: list[str] = []
    current: list[str] = []
    last_turn: object = object()

    def close() -> None:
        if current:
            blocks.append("\n".join(current))
            current.clear()

    for i, step in enumerate(steps):
        for item in placed.get(i, []):
            close()
            blocks.append(_interaction_text(item))
        turn = step.step_num if step.step_num is not None else ("row", step.step_idx)
        if turn != last_turn:
            close()
            last_turn = turn
            label = f"turn {step.step_num}" if step.step_num is not None else "turn ?"
            if step.response:
                current.append(f"[{label}] agent: {clip(step.response, MAX_RESPONSE_CHARS)}")
            else:
                current.append(f"[{label}]")
        if step.action_kind == "error":
            what = f"runner error: {clip(step.action_text, MAX_ACTION_CHARS)}"
        else:
            kind = f"({step.action_kind}) " if step.action_kind else ""
            what = kind + (clip(step.action_text, MAX_ACTION_CHARS) or "(no action text)")
        current.append(f"  step {step.step_idx + 1}: {what}")
    close()
    for item in placed.get(len(steps), []):
        blocks.append(_interaction_text(item))
    return blocks


def bounded(blocks: Sequence[str], limit: int = MAX_TRAJECTORY_CHARS) -> tuple[str, int]:
    """The blocks joined, the middle ones left out (with a marker) when they exceed `limit`
    characters: the first half of the budget goes to the opening blocks, the rest to the
    closing ones. Returns the text and how many blocks were left out."""
    joined = "\n".join(blocks)
    if len(joined) <= limit:
        return joined, 0
    half = limit // 2
    head: list[str] = []
    used = 0
    for block in blocks:
        if used + len(block) + 1 > half:
            break
        head.append(block)
        used += len(block) + 1
    tail: list[str] = []
    used = 0
    for block in reversed(blocks[len(head) :]):
        if used + len(block) + 1 > limit - half:
            break
        tail.append(block)
        used += len(block) + 1
    tail.reverse()
    if not head and not tail:  # a single enormous block: keep its start
        return clip(blocks[0], limit), len(blocks) - 1
    left_out = len(blocks) - len(head) - len(tail)
    marker = f"[... {left_out} turn(s) left out to bound the request ...]"
    return "\n".join([*head, marker, *tail]), left_out


class Prompt(NamedTuple):
    messages: list[dict[str, Any]]
    hash: str
    blocks_left_out: int


def build_prompt(
    *,
    task_label: str,
    instruction: str | None,
    steps: Sequence[StepView],
    interactions: Sequence[InteractionView] = (),
    shots: Sequence[Shot] = (),
    ended_by: str | None = None,
) -> Prompt:
    """The chat messages for one episode, and their hash.

    `task_label` names the task (domain/task_id) so the judge and its logs can tell episodes
    apart; `shots` are sent in step order, each after a caption naming its step.
    """
    n_actions = sum(1 for s in steps if s.action_kind != "error")
    trajectory, left_out = bounded(_blocks(steps, interactions))
    ending = f"; it ended with {ended_by}" if ended_by and ended_by != "none" else ""
    body = (
        f"Task: {task_label}\n"
        "Instruction:\n"
        f"{clip(instruction, MAX_INSTRUCTION_CHARS) or '(not archived: judge from the actions and screenshots)'}\n\n"
        f"The agent's trajectory ({n_actions} action(s) in {len(steps)} step row(s){ending}):\n"
        f"{trajectory or '(no steps)'}"
    )
    parts: list[dict[str, Any]] = [{"type": "text", "text": body}]
    for shot in sorted(shots, key=lambda s: s.step_idx):
        caption = f"Screenshot after step {shot.step_idx + 1} of {len(steps)}:"
        parts.append({"type": "text", "text": caption})
        parts.append({"type": "image_url", "image_url": {"url": shot.data_url}})
    parts.append({"type": "text", "text": CLOSING})
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": parts}]
    return Prompt(messages, prompt_hash(messages), left_out)


def prompt_hash(messages: Sequence[Mapping[str, Any]]) -> str:
    """SHA-256 over the template version, the request parameters and the exact messages."""
    payload = {"template": TEMPLATE_VERSION, "params": REQUEST_PARAMS, "messages": list(messages)}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_FENCE = re.compile(r"```[ \t]*(?:json)?[ \t]*\r?\n?(.*?)```", re.DOTALL | re.IGNORECASE)


def _contract(data: Any) -> Verdict | None:
    if not isinstance(data, dict):
        return None
    verdict, reason = data.get("verdict"), data.get("reason")
    if not isinstance(verdict, str) or verdict.strip().lower() not in {"pass", "fail"}:
        return None
    if not isinstance(reason, str):
        return None
    return Verdict(verdict.strip().lower(), reason.strip(), None)


def parse_reply(text: str | None) -> Verdict:
    """The judge's reply read against the contract; never raises.

    Accepted: the JSON object alone, or inside a ``` / ```json fence with text around it;
    `verdict` pass or fail (any case), `reason` a string. Anything else is unparseable.
    """
    if text is None:
        return Verdict(None, None, "no reply text")
    candidates = [text.strip()]
    fence = _FENCE.search(text)
    if fence:
        candidates.append(fence.group(1).strip())
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        found = _contract(data)
        if found is not None:
            return found
    excerpt = text.strip()[:200]
    return Verdict(
        None,
        None,
        'reply is not {"verdict": "pass"|"fail", "reason": str}' + f": {excerpt!r}",
    )


__all__ = [
    "REQUEST_PARAMS",
    "SYSTEM",
    "TEMPLATE_VERSION",
    "InteractionView",
    "Prompt",
    "Shot",
    "StepView",
    "Verdict",
    "bounded",
    "build_prompt",
    "clip",
    "parse_reply",
    "pick_evenly",
    "prompt_hash",
]

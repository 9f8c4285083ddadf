"""DeskCraft's interaction protocol: a simulated user who speaks during the task.

An interactive task lists `phases: [{phase_id, instruction, trigger: {type, value?}}]`. The
first phase's instruction starts the episode; after each agent turn the user may intervene:

- the agent emitted CALL_USER (whatever the trigger): the user answers. It is an exchange,
  never an environment step. In an `agent_asks` phase the answer completes the phase; in any
  other phase it only clarifies (phase_complete is forced to false);
- `agent_done`: the agent said DONE or FAIL;
- `step_count`: `value` agent turns have passed since the phase began (an interruption);
- and, in any phase, DONE or FAIL while phases remain: the user brings the next requirement
  and the episode goes on (an `agent_done` or `step_count` phase advances before the user
  speaks, so the user states the new phase's goal, as DeskCraft's runner does).

DONE in the last phase ends the episode without a closing user turn. `max_steps` is one
budget over all phases (the collector counts model turns). DeskCraft's runner ends an
episode whose agent says DONE before a `step_count` or `agent_asks` trigger fired; here DONE
with phases left always brings the next phase, as the benchmark's protocol states it.

Two users: `ScriptedUser` answers from the phase instructions; `LLMUser` asks a model and
follows DeskCraft's JSON contract `{"action": "new_instruction"|"clarify", "message": str,
"phase_complete": bool, "reason": str}`: an unknown action becomes new_instruction, an
unexpected clarification cannot complete a phase, a reply that is not JSON is taken as the
message, and a failed call repeats the current instruction with phase_complete false.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

from deskscore.collectors.live.agents import call_user_question, special_of

TRIGGERS = ("agent_done", "step_count", "agent_asks")
ALL_DONE_MESSAGE = "All steps are complete. Thank you."


def stamp() -> str:
    """An exchange's timestamp as written: OSWorld's %Y%m%d@%H%M%S plus microseconds, UTC."""
    return datetime.now(UTC).strftime("%Y%m%d@%H%M%S%f")


class Exchange(NamedTuple):
    """One `interactions` row, before the episode keys and its seq are added."""

    step: int | None
    phase: int | None
    type: str
    message: str | None
    phase_complete: bool | None
    reason: str | None
    timestamp_raw: str


class UserTurn(NamedTuple):
    """What the user simulator is asked to answer."""

    phases: list[dict[str, Any]]
    phase_idx: int
    """0-based index of the current phase (after any early advance)."""
    agent_reply: str
    screenshot: bytes | None
    expected_question: bool
    """The agent asked (CALL_USER) in an agent_asks phase."""
    unexpected_question: bool
    """The agent asked in a phase that does not expect it."""
    question: str
    advanced: bool
    """The phase was advanced before the user speaks (agent_done / step_count)."""


class Outcome(NamedTuple):
    """What the protocol decided after one agent turn."""

    exchanges: list[Exchange]
    message: str | None
    """What the user said (passed to the agent), or None when the user stayed silent."""
    instruction: str
    """The instruction for the next turn (the current phase's)."""
    done: bool
    """The episode's done flag after the exchange (DONE with phases left is cleared)."""
    stop: bool
    cleared_done: bool
    """The agent's DONE was cleared so the episode goes on."""


def is_interactive(task: Mapping[str, Any]) -> bool:
    return isinstance(task.get("phases"), list) and bool(task["phases"])


def _trigger(phase: Mapping[str, Any]) -> tuple[str, Any]:
    trigger = phase.get("trigger") if isinstance(phase.get("trigger"), Mapping) else {}
    return str(trigger.get("type") or "agent_done"), trigger.get("value")


def phase_id(phases: Sequence[Mapping[str, Any]], idx: int) -> int | None:
    if 0 <= idx < len(phases):
        value = phases[idx].get("phase_id")
        return value if isinstance(value, int) else idx + 1
    return None


def _signal(actions: Sequence[Any]) -> str | None:
    """The turn's signal for the triggers: CALL_USER anywhere, else its last special."""
    specials = [special_of(a) for a in actions]
    if "CALL_USER" in specials:
        return "CALL_USER"
    return specials[-1] if specials else None


# --------------------------------------------------------------------------- users


class ScriptedUser:
    """Answers from the phase instructions: a question in an agent_asks phase gets the next
    phase's instruction, an unexpected question gets the current requirement restated, and
    an intervention after DONE or a step count gets the goal of the phase that now starts."""

    name = "scripted"

    def reply(self, turn: UserTurn) -> dict[str, Any]:
        phases, idx = turn.phases, turn.phase_idx
        current = phases[idx].get("instruction", "") if idx < len(phases) else ""
        following = phases[idx + 1].get("instruction", "") if idx + 1 < len(phases) else None
        if turn.unexpected_question:
            return {
                "action": "clarify",
                "message": current,
                "phase_complete": False,
                "reason": "a question outside an agent_asks phase: the requirement restated",
            }
        if idx >= len(phases):
            return {
                "action": "new_instruction",
                "message": ALL_DONE_MESSAGE,
                "phase_complete": True,
                "reason": "every phase is complete",
            }
        if turn.advanced:
            return {
                "action": "new_instruction",
                "message": current,
                "phase_complete": True,
                "reason": "the previous phase ended; this phase's goal",
            }
        message = following if following is not None else current
        action = "clarify" if turn.expected_question else "new_instruction"
        return {
            "action": action,
            "message": message,
            "phase_complete": True,
            "reason": "answered from the next phase's instruction",
        }

    def state(self) -> dict[str, Any]:
        return {}

    def restore(self, state: Mapping[str, Any]) -> None:
        return None


USER_PROMPT = """You play a real person using a computer, helped by an AI assistant that
operates the screen for you.

## Scenario
{scenario}

## You
- Expertise: {expertise}
- Way of speaking: {style}
{completed}
## What you want now (phase {number} of {total})
{goal}
{next_goal}

## How to answer
1. Talk like a real user of your expertise, not like a specification.
2. Judge from the screenshot whether the assistant did what you want now.
3. If it did and a next goal is given above, ask for that next goal, in your own words; never
   invent other requests.
4. If it did and there is no next goal, say that everything is done; ask for nothing more.
5. If it did not, stay in this phase: restate or correct what you want now, with
   phase_complete false.
6. Answer in the language of the scenario and of your goal.
7. Use "new_instruction" as the action in normal cases.
8. If the phase expects the assistant to ask you something and it asks, answer the question
   directly: action "clarify", phase_complete true.
9. If the assistant asks you something unexpectedly, you may answer with "clarify", and then
   phase_complete must be false.

## Output
JSON only, nothing else:
{{"action": "new_instruction" or "clarify", "message": "what you say to the assistant",
"phase_complete": true or false, "reason": "why the phase is not complete, when it is not"}}
"""


class LLMUser:
    """A user simulated by a chat model, with DeskCraft's JSON contract and fallbacks.

    `client` is a `deskscore.collectors.chat.ChatClient`. The model's calls are kept in
    `calls` (tokens, latency) for the run's report; they are not the agent's model calls and
    do not go into `llm_calls`, whose figures are the agent's cost.
    """

    name = "llm"

    def __init__(
        self,
        client: Any,
        task: Mapping[str, Any],
        *,
        temperature: float = 0.7,
        max_tokens: int = 1024,
        history: int = 8,
    ) -> None:
        self.client = client
        self.model = getattr(client, "model", None)
        self.task = task
        persona = task.get("user_persona") if isinstance(task.get("user_persona"), Mapping) else {}
        self.scenario = str(
            task.get("scenario_description") or "The user needs a computer task done."
        )
        self.expertise = str(persona.get("expertise_level") or "beginner")
        self.style = str(persona.get("communication_style") or "casual")
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.history_len = history
        self.history: list[dict[str, str]] = []
        self.calls: list[dict[str, Any]] = []

    def start(self, instruction: str) -> None:
        self.history = [{"role": "user", "content": f"[Initial instruction] {instruction}"}]

    def _system(self, turn: UserTurn) -> str:
        phases, idx = turn.phases, turn.phase_idx
        done = [
            f"- Phase {phase_id(phases, i)}: {phases[i].get('instruction', '')}" for i in range(idx)
        ]
        completed = (
            "\n## Already done (do not ask for these again)\n" + "\n".join(done) + "\n"
            if done
            else ""
        )
        if idx + 1 < len(phases):
            next_goal = (
                "\n## Next goal\nWhen what you want now is done, your next message asks for "
                "this, without turning it into another request:\n"
                + str(phases[idx + 1].get("instruction", ""))
            )
        else:
            next_goal = "\n## Next goal\nThere is none."
        return USER_PROMPT.format(
            scenario=self.scenario,
            expertise=self.expertise,
            style=self.style,
            completed=completed,
            number=idx + 1,
            total=len(phases),
            goal=phases[idx].get("instruction", "") if idx < len(phases) else "",
            next_goal=next_goal,
        )

    def _content(self, turn: UserTurn) -> list[dict[str, Any]]:
        from deskscore.collectors.image_parts import image_part

        content: list[dict[str, Any]] = []

        def say(text: str) -> None:
            content.append({"type": "text", "text": text})

        if turn.expected_question:
            say(
                "[Important] This phase expects the assistant to ask you a question. Answer it "
                'directly; add no new request. Your action is "clarify" and phase_complete '
                "is true."
            )
            say(f"The assistant's question: {turn.question}")
        if turn.unexpected_question:
            say(
                "[Important] The assistant asked you a question this phase did not call for. "
                "Answer it briefly from what you want now; add no request, do not say the task "
                'is finished, do not move on. Your action is "clarify" and phase_complete is '
                "false."
            )
            if turn.question:
                say(f"The assistant's question: {turn.question}")
        if turn.agent_reply:
            say(f"The assistant just replied: {turn.agent_reply}")
        if turn.screenshot:
            part = image_part(turn.screenshot)
            if part.data_url:
                say("The screen now:")
                content.append({"type": "image_url", "image_url": {"url": part.data_url}})
        if not content:
            say("Write your next message for what you want now.")
        return content

    def reply(self, turn: UserTurn) -> dict[str, Any]:
        from deskscore.collectors.chat import ChatError

        if turn.phase_idx >= len(turn.phases):
            return {
                "action": "new_instruction",
                "message": ALL_DONE_MESSAGE,
                "phase_complete": True,
                "reason": None,
            }
        current = str(turn.phases[turn.phase_idx].get("instruction", ""))
        history = self.history
        if len(history) > self.history_len:
            history = [history[0], *history[-self.history_len :]]
        messages = [
            {"role": "system", "content": self._system(turn)},
            *history,
            {"role": "user", "content": self._content(turn)},
        ]
        try:
            reply = self.client.complete(
                messages, temperature=self.temperature, max_tokens=self.max_tokens
            )
            self.calls.append(
                {
                    "model": reply.model or self.model,
                    "usage": reply.usage,
                    "latency_s": reply.latency_s,
                }
            )
            if reply.text is None:
                raise ChatError(reply.problem or "empty reply")
            result = parse_user_reply(reply.text)
        except ChatError as e:
            result = {
                "action": "new_instruction",
                "message": current,
                "phase_complete": False,
                "reason": f"user simulator failed ({e}); the current instruction repeated",
            }
        if turn.agent_reply:
            self.history.append({"role": "assistant", "content": f"[Assistant] {turn.agent_reply}"})
        self.history.append({"role": "user", "content": result["message"]})
        return result

    def state(self) -> dict[str, Any]:
        return {"history": list(self.history)}

    def restore(self, state: Mapping[str, Any]) -> None:
        history = state.get("history")
        if isinstance(history, list):
            self.history = [dict(h) for h in history if isinstance(h, Mapping)]


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def _last_json_object(text: str) -> str | None:
    """The last balanced {...} of `text` (strings and escapes respected)."""
    found = None
    for start, char in enumerate(text):
        if char != "{":
            continue
        depth, in_string, escaped = 0, False, False
        for end in range(start, len(text)):
            c = text[end]
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = not in_string
            elif not in_string and c == "{":
                depth += 1
            elif not in_string and c == "}":
                depth -= 1
                if depth == 0:
                    found = text[start : end + 1]
                    break
    return found


def _unfence(text: str) -> str:
    if not text.startswith("```"):
        return text
    inside: list[str] = []
    for line in text.split("\n")[1:]:
        if line.strip() == "```":
            break
        inside.append(line)
    return "\n".join(inside)


def _as_bool(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def parse_user_reply(text: str) -> dict[str, Any]:
    """A user model's reply as {action, message, phase_complete, reason}: reasoning blocks and
    code fences dropped, the last JSON object taken; missing fields get DeskCraft's defaults
    (new_instruction, the candidate text, false); text with no JSON object is the message."""
    body = _unfence(_THINK.sub("", text).strip())
    for candidate in (_last_json_object(body), body):
        if not candidate:
            continue
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        message = data.get("message")
        reason = data.get("reason")
        return {
            "action": str(data.get("action") or "new_instruction"),
            "message": message if isinstance(message, str) else candidate,
            "phase_complete": _as_bool(data.get("phase_complete", False)),
            "reason": reason if isinstance(reason, str) else None,
        }
    return {"action": "new_instruction", "message": body, "phase_complete": False, "reason": None}


def normalise_reply(
    result: Mapping[str, Any], *, expected: bool, unexpected: bool
) -> dict[str, Any]:
    """DeskCraft's rules over a reply: an expected question is answered (clarify, phase
    complete), an unexpected one only clarifies (phase not complete), anything else is a
    new_instruction."""
    out = dict(result)
    if expected:
        out["action"], out["phase_complete"] = "clarify", True
    elif unexpected:
        out["action"], out["phase_complete"] = "clarify", False
    else:
        out["action"] = "new_instruction"
    out["message"] = str(out.get("message") or "")
    return out


# --------------------------------------------------------------------------- protocol


class Protocol:
    """The phases of one interactive episode and the user who speaks in them."""

    def __init__(self, task: Mapping[str, Any], user: Any) -> None:
        self.phases: list[dict[str, Any]] = [dict(p) for p in task["phases"]]
        self.user = user
        self.idx = 0
        self.phase_start_turn = 0

    @property
    def all_complete(self) -> bool:
        return self.idx >= len(self.phases)

    @property
    def instruction(self) -> str:
        return str(self.phases[min(self.idx, len(self.phases) - 1)].get("instruction", ""))

    @property
    def phase(self) -> int | None:
        """The current phase_id (the last phase's once all are complete)."""
        return phase_id(self.phases, min(self.idx, len(self.phases) - 1))

    def start(self) -> tuple[str, Exchange]:
        """The first instruction and its `initial_instruction` exchange."""
        instruction = str(self.phases[0].get("instruction", ""))
        if hasattr(self.user, "start"):
            self.user.start(instruction)
        return instruction, Exchange(
            None, self.phase, "initial_instruction", instruction, None, None, stamp()
        )

    def _advance(self, turn: int) -> None:
        self.idx += 1
        self.phase_start_turn = turn

    def _intervenes(self, turn: int, signal: str | None) -> bool:
        if self.all_complete:
            return False
        if signal in ("CALL_USER", "DONE", "FAIL"):
            return True
        kind, value = _trigger(self.phases[self.idx])
        if kind == "step_count":
            threshold = value if isinstance(value, int) and value > 0 else 5
            return turn - self.phase_start_turn >= threshold
        return False

    def after_turn(
        self,
        turn: int,
        response: str,
        actions: Sequence[Any],
        done: bool,
        screenshot: bytes | None,
    ) -> Outcome:
        """Run the protocol after agent turn `turn` (1-based)."""
        signal = _signal(actions)
        kind, _ = _trigger(self.phases[self.idx]) if not self.all_complete else ("agent_done", None)
        last = self.idx >= len(self.phases) - 1
        if done and last and kind != "agent_asks":
            return Outcome([], None, self.instruction, done, True, False)
        if not self._intervenes(turn, signal):
            return Outcome([], None, self.instruction, done, done, False)
        asked = signal == "CALL_USER"
        unexpected = asked and kind != "agent_asks"
        expected = asked and kind == "agent_asks"
        question = call_user_question(response) if asked else ""
        exchanges: list[Exchange] = []
        if asked:
            exchanges.append(Exchange(turn, self.phase, "call_user", question, None, None, stamp()))
        advanced = kind in ("agent_done", "step_count") and not unexpected
        if advanced:
            self._advance(turn)
        ask = UserTurn(
            self.phases, self.idx, response, screenshot, expected, unexpected, question, advanced
        )
        reply = normalise_reply(self.user.reply(ask), expected=expected, unexpected=unexpected)
        exchanges.append(
            Exchange(
                turn,
                self.phase,
                reply["action"],
                reply["message"],
                bool(reply["phase_complete"]),
                reply.get("reason"),
                stamp(),
            )
        )
        completes = (
            not advanced
            and not unexpected
            and (
                reply["action"] == "new_instruction"
                or (kind == "agent_asks" and reply["action"] == "clarify")
            )
        )
        final_idx = self.idx + (1 if completes else 0)
        cleared = False
        if done and final_idx < len(self.phases):
            done, cleared = False, True
        if completes:
            self._advance(turn)
        stop = final_idx >= len(self.phases)
        return Outcome(exchanges, reply["message"], self.instruction, done, stop or done, cleared)

    def state(self) -> dict[str, Any]:
        return {
            "idx": self.idx,
            "phase_start_turn": self.phase_start_turn,
            "user": self.user.state() if hasattr(self.user, "state") else {},
        }

    def restore(self, state: Mapping[str, Any]) -> None:
        self.idx = int(state.get("idx", 0))
        self.phase_start_turn = int(state.get("phase_start_turn", 0))
        if hasattr(self.user, "restore"):
            self.user.restore(state.get("user") or {})


def make_user(kind: str, task: Mapping[str, Any], client: Any = None, **options: Any) -> Any:
    """`scripted`, or `llm` with a chat client."""
    if kind == "scripted":
        return ScriptedUser()
    if kind == "llm":
        if client is None:
            raise ValueError("the llm user simulator needs a chat client")
        return LLMUser(client, task, **options)
    raise ValueError(f"unknown user simulator {kind!r}: scripted or llm")


__all__ = [
    "ALL_DONE_MESSAGE",
    "TRIGGERS",
    "Exchange",
    "LLMUser",
    "Outcome",
    "Protocol",
    "ScriptedUser",
    "UserTurn",
    "is_interactive",
    "make_user",
    "normalise_reply",
    "parse_user_reply",
    "stamp",
]

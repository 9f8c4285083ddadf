"""Agents the collector can drive: the plug-in interface and two built-ins.

The interface is shaped like OSWorld's agents, so existing ones plug in with a thin wrapper:

- `reset(task)`: a new episode starts (`task` is the task config; OSWorld agents take none);
- `predict(instruction, observation) -> (response, actions)`: one model turn; `observation`
  is OSWorld's dict (`screenshot` PNG bytes, `accessibility_tree`, `instruction`); actions
  are pyautogui code strings or the specials WAIT, DONE, FAIL and CALL_USER (DeskCraft: ask
  the user; never executed on the desktop);
- `take_calls() -> [ModelCall]`: the model calls made since the last take, with tokens and
  latency, so the collector records them as `llm_calls` rows (an agent without it records
  none);
- optional, as DeskCraft's interactive agents have them: `receive_user_message(text)`,
  `clear_done_from_history()`, `set_interactive_prompt(enable)`; and `restore(turns)`, which
  rebuilds the agent's memory from the recorded turns so `--resume` can continue an episode
  (without it, an interrupted episode is restarted).

`load_agent("scripted", ...)`, `load_agent("openai", ...)` or `load_agent("module:Class", ...)`.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

SPECIALS = ("WAIT", "DONE", "FAIL", "CALL_USER")
"""Actions the collector handles itself (OSWorld's three, plus DeskCraft's CALL_USER)."""
CALL_USER_PREFIX = "[CALL_USER]"
"""DeskCraft's agents start a response that asks the user with this; the question follows."""

BASE_URL_VARS = ("DESKSCORE_AGENT_BASE_URL", "OPENAI_BASE_URL")
KEY_VARS = ("DESKSCORE_AGENT_API_KEY", "OPENAI_API_KEY")
MODEL_VARS = ("DESKSCORE_AGENT_MODEL",)
DEFAULT_BASE_URL = "https://api.openai.com/v1"


class AgentError(Exception):
    """An agent that cannot be loaded or cannot answer; the message says what to do."""


class ModelCall(NamedTuple):
    """One model call an agent made: what `llm_calls` records of it."""

    stage: str
    """planning, reflection, grounding, ...: what the call was for."""
    model: str | None
    usage: dict[str, Any] | None
    """The provider's usage object, verbatim (OpenAI: prompt_tokens, completion_tokens, ...)."""
    latency_s: float | None
    started_at: str | None
    """ISO-8601 UTC."""


class TurnRecord(NamedTuple):
    """One recorded turn, as `restore` gets it back on resume."""

    instruction: str
    response: str
    actions: list[Any]
    screenshot: bytes | None
    """The screen the turn's last action left (the next turn's observation)."""
    user_messages: list[str]
    """What the user said after the turn."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


# --------------------------------------------------------------------------- parsing

_CODE_BLOCK = re.compile(r"```(?:\w+\s+)?(.*?)```", re.DOTALL)


def parse_actions(response: str) -> list[str]:
    """The actions of a model response, by OSWorld's prompt conventions: each fenced code
    block is one action (pyautogui code); a block, or a whole response, that is just WAIT,
    DONE, FAIL or CALL_USER is that special; a block whose last line is a special gives the
    code above it, then the special. A response starting with DeskCraft's "[CALL_USER]" asks
    the user."""
    text = (response or "").strip()
    if text.upper() in SPECIALS:
        return [text.upper()]
    if text.startswith(CALL_USER_PREFIX):
        return ["CALL_USER"]
    actions: list[str] = []
    for match in _CODE_BLOCK.findall(text):
        code = match.strip()
        if code.upper() in SPECIALS:
            actions.append(code.upper())
            continue
        lines = code.split("\n")
        if len(lines) > 1 and lines[-1].strip().upper() in SPECIALS:
            actions.append("\n".join(lines[:-1]).strip())
            actions.append(lines[-1].strip().upper())
        elif code:
            actions.append(code)
    return actions


def call_user_question(response: str) -> str:
    """The question of a CALL_USER turn: the text after "[CALL_USER]", else the response
    outside its code blocks."""
    text = (response or "").strip()
    if text.startswith(CALL_USER_PREFIX):
        return text[len(CALL_USER_PREFIX) :].strip()
    return _CODE_BLOCK.sub("", text).strip()


def special_of(action: Any) -> str | None:
    """WAIT, DONE, FAIL or CALL_USER when `action` is one (a string or a dict with
    action_type), else None."""
    if isinstance(action, str):
        upper = action.strip().upper()
        return upper if upper in SPECIALS else None
    if isinstance(action, Mapping):
        kind = action.get("action_type")
        if isinstance(kind, str) and kind.upper() in SPECIALS:
            return kind.upper()
    return None


# --------------------------------------------------------------------------- scripted agent


class ScriptedAgent:
    """Plays a plan file: for each task id, the turns to play in order.

    The plan is JSON: `{"<task_id>": [turn, ...], ...}` (optionally under a "tasks" key);
    a turn is an action string, a list of actions, or `{"response": ..., "actions": [...],
    "think_s": seconds}` (`think_s` stands for model time: the agent waits that long before
    answering). A task without a plan, or a plan played to its end, answers FAIL.
    """

    name = "scripted"
    model = None
    observation_type = "screenshot"

    def __init__(self, plan: str | os.PathLike[str] | Mapping[str, Any], **_: Any) -> None:
        if isinstance(plan, Mapping):
            data: Any = plan
            self.plan_source = "inline"
        else:
            path = Path(plan)
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise AgentError(f"plan file {path}: cannot be read as JSON ({e})") from None
            self.plan_source = path.name
        self.label = "scripted-" + Path(self.plan_source).stem
        if isinstance(data, Mapping) and isinstance(data.get("tasks"), Mapping):
            data = data["tasks"]
        if not isinstance(data, Mapping):
            raise AgentError("a plan is a JSON object of task id -> list of turns")
        self.plans: dict[str, list[Any]] = {str(k): list(v) for k, v in data.items()}
        self.turns: list[Any] = []
        self.position = 0
        self.task_id: str | None = None
        self.user_messages: list[str] = []

    def reset(self, task: Mapping[str, Any] | None = None) -> None:
        self.task_id = str(task.get("id")) if task else None
        self.turns = self.plans.get(self.task_id or "", [])
        self.position = 0
        self.user_messages = []

    def predict(self, instruction: str, observation: Mapping[str, Any]) -> tuple[str, list[Any]]:
        if self.position >= len(self.turns):
            why = "no plan for this task" if not self.turns else "plan played to its end"
            return f"{why} ({self.task_id})", ["FAIL"]
        turn = self.turns[self.position]
        self.position += 1
        if isinstance(turn, Mapping):
            delay = float(turn.get("think_s") or 0)
            if delay > 0:
                time.sleep(delay)
            actions = turn.get("actions")
            actions = [actions] if isinstance(actions, str | Mapping) else list(actions or [])
            response = turn.get("response")
        else:
            actions = [turn] if isinstance(turn, str) else list(turn)
            response = None
        if response is None:
            response = "\n".join(
                f"```{a}```" if special_of(a) else f"```python\n{a}\n```" for a in actions
            )
        return str(response), actions

    def take_calls(self) -> list[ModelCall]:
        return []

    def receive_user_message(self, message: str) -> None:
        self.user_messages.append(message)

    def restore(self, turns: Sequence[TurnRecord]) -> bool:
        self.position = len(turns)
        self.user_messages = [m for t in turns for m in t.user_messages]
        return True


# --------------------------------------------------------------------------- OpenAI-compatible agent

SYSTEM_PROMPT = """You operate a desktop computer to carry out the user's task.
Each turn you get a screenshot of the screen. Answer with a short reflection on what you see
and what was done so far, then the next action as Python code using `pyautogui`, inside one
fenced code block:
```python
# your code
```
Give coordinates yourself from the screenshot (pyautogui.locateCenterOnScreen and
pyautogui.screenshot are not available). Several lines are allowed; put a short
time.sleep(0.5) between actions that need the screen to update. Nothing is shared between
turns: each block must be complete on its own.
Instead of code you may answer with one of these special codes, alone in a code block:
```WAIT``` when you need to wait; ```FAIL``` when the task cannot be done (try hard first);
```DONE``` when the task is done."""

CALL_USER_PROMPT = """This is an interactive session with the user. If the instruction is
unclear or you need information only the user has, start your answer with [CALL_USER]
followed by your question, and end it with ```CALL_USER```."""


class OpenAIAgent:
    """A vision chat agent on any OpenAI-compatible chat-completions endpoint.

    Endpoint, model and key come from the environment: DESKSCORE_AGENT_BASE_URL (or
    OPENAI_BASE_URL; default the OpenAI API), DESKSCORE_AGENT_MODEL, DESKSCORE_AGENT_API_KEY (or
    OPENAI_API_KEY). `base_url` and `model` may also be given as options; the key may not (it
    would end up in shell history and run arguments). Each call's usage object and latency
    are kept for `take_calls`. The prompt keeps the last `history` turns (screenshot and
    answer), as OSWorld's prompt agent does.
    """

    name = "openai"
    observation_type = "screenshot"

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        history: int | str = 3,
        temperature: float | str = 0.0,
        max_tokens: int | str = 1500,
        timeout_s: float | str = 120.0,
        max_retries: int | str = 4,
        environ: Mapping[str, str] | None = None,
        **options: Any,
    ) -> None:
        from deskscore.collectors.chat import ChatClient

        env = os.environ if environ is None else environ
        if any(k in options for k in ("api_key", "key")):
            raise AgentError(
                "the API key is read from the environment only "
                f"({' or '.join(KEY_VARS)}); do not pass it as an option"
            )
        if options:
            raise AgentError(
                f"unknown option(s) for the openai agent: {', '.join(sorted(options))}"
            )
        model = model or next((env[v] for v in MODEL_VARS if env.get(v)), None)
        if not model:
            raise AgentError(
                f"no model for the openai agent: pass --agent openai:MODEL or set {MODEL_VARS[0]}"
            )
        base_url = base_url or next((env[v] for v in BASE_URL_VARS if env.get(v)), DEFAULT_BASE_URL)
        key = next((env[v] for v in KEY_VARS if env.get(v)), None)
        try:
            self.client = ChatClient(
                base_url,
                model,
                key,
                timeout_s=float(timeout_s),
                max_retries=int(max_retries),
            )
        except ValueError as e:
            raise AgentError(str(e)) from None
        self.model = model
        self.endpoint = self.client.where
        self.history_turns = max(0, int(history))
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.interactive = False
        self._calls: list[ModelCall] = []
        self.reset()

    def reset(self, task: Mapping[str, Any] | None = None) -> None:
        self.turns: list[tuple[str | None, str]] = []  # (screenshot data URL, response)
        self.pending: list[str] = []
        self.user_messages: list[str] = []

    def set_interactive_prompt(self, enable: bool = True) -> None:
        self.interactive = enable

    def receive_user_message(self, message: str) -> None:
        self.pending.append(message)
        self.user_messages.append(message)

    def clear_done_from_history(self) -> None:
        if self.turns and any(a in ("DONE", "FAIL") for a in parse_actions(self.turns[-1][1])):
            self.turns.pop()

    def _image(self, screenshot: bytes | None) -> str | None:
        from deskscore.collectors.image_parts import image_part

        return image_part(screenshot).data_url if screenshot else None

    def _messages(self, instruction: str, image: str | None) -> list[dict[str, Any]]:
        system = SYSTEM_PROMPT + ("\n\n" + CALL_USER_PROMPT if self.interactive else "")
        task = f"The task: {instruction}"
        if self.user_messages:
            task += "\n\nWhat the user said since:\n" + "\n".join(self.user_messages)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system + "\n\n" + task}]
        for past_image, past_response in (
            self.turns[-self.history_turns :] if self.history_turns else []
        ):
            messages.append(_user_turn("The screenshot then:", past_image))
            messages.append({"role": "assistant", "content": past_response})
        prompt = "The current screenshot. What is the next action?"
        if self.pending:
            prompt = "The user says: " + "\n".join(self.pending) + "\n\n" + prompt
        messages.append(_user_turn(prompt, image))
        return messages

    def predict(self, instruction: str, observation: Mapping[str, Any]) -> tuple[str, list[Any]]:
        from deskscore.collectors.chat import ChatError

        image = self._image(observation.get("screenshot"))
        messages = self._messages(instruction, image)
        started = now_iso()
        try:
            reply = self.client.complete(
                messages, temperature=self.temperature, max_tokens=self.max_tokens
            )
        except ChatError as e:
            raise AgentError(str(e)) from None
        self._calls.append(
            ModelCall("planning", reply.model or self.model, reply.usage, reply.latency_s, started)
        )
        self.pending = []
        response = reply.text or ""
        self.turns.append((image, response))
        return response, parse_actions(response)

    def take_calls(self) -> list[ModelCall]:
        calls, self._calls = self._calls, []
        return calls

    def restore(self, turns: Sequence[TurnRecord]) -> bool:
        self.reset()
        previous: bytes | None = None
        for t in turns:
            self.turns.append((self._image(previous), t.response))
            previous = t.screenshot
            self.user_messages.extend(t.user_messages)
        self.pending = list(turns[-1].user_messages) if turns else []
        return True


def _user_turn(text: str, image: str | None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if image:
        content.append({"type": "image_url", "image_url": {"url": image}})
    return {"role": "user", "content": content}


# --------------------------------------------------------------------------- loading

BUILT_IN: dict[str, Callable[..., Any]] = {"scripted": ScriptedAgent, "openai": OpenAIAgent}


def load_agent(spec: str, options: Mapping[str, Any] | None = None) -> Any:
    """An agent from its spec: `scripted:PLAN.json`, `openai[:MODEL]`, or `module:Class` (any
    importable class with OSWorld's predict). `options` become constructor keyword arguments."""
    opts = dict(options or {})
    name, _, arg = spec.partition(":")
    if name == "scripted":
        plan = arg or opts.pop("plan", None)
        if not plan:
            raise AgentError("the scripted agent needs a plan: --agent scripted:PLAN.json")
        return ScriptedAgent(plan, **opts)
    if name == "openai":
        if arg:
            opts.setdefault("model", arg)
        return OpenAIAgent(**opts)
    if not arg:
        raise AgentError(f"agent {spec!r}: give scripted:PLAN.json, openai[:MODEL] or module:Class")
    try:
        module = importlib.import_module(name)
    except ImportError as e:
        raise AgentError(f"agent {spec!r}: cannot import {name} ({e})") from None
    cls = getattr(module, arg, None)
    if cls is None:
        raise AgentError(f"agent {spec!r}: {name} has no {arg}")
    agent = cls(**opts)
    if not callable(getattr(agent, "predict", None)):
        raise AgentError(f"agent {spec!r}: {arg} has no predict(instruction, observation)")
    return agent


def agent_label(agent: Any, spec: str) -> str:
    """A display name: the agent's own label, else its model, else its spec."""
    for attr in ("label", "model"):
        value = getattr(agent, attr, None)
        if value:
            return str(value)
    return spec


__all__ = [
    "CALL_USER_PREFIX",
    "SPECIALS",
    "AgentError",
    "ModelCall",
    "OpenAIAgent",
    "ScriptedAgent",
    "TurnRecord",
    "agent_label",
    "call_user_question",
    "load_agent",
    "parse_actions",
    "special_of",
]

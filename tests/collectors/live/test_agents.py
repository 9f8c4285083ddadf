"""Agents: OSWorld's prompt conventions, the scripted agent, and the OpenAI-compatible agent
against a real chat-completions server on 127.0.0.1 playing scripted replies."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from deskscore.collectors.live.agents import (
    AgentError,
    OpenAIAgent,
    ScriptedAgent,
    TurnRecord,
    call_user_question,
    load_agent,
    parse_actions,
)

KEY = "sk-agent-test-0123456789abcdef"


def png(colour: str = "white") -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (320, 200), colour).save(buf, "PNG")
    return buf.getvalue()


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("response", "actions"),
    [
        ("DONE", ["DONE"]),
        ("  fail ", ["FAIL"]),
        ("I will click.\n```python\npyautogui.click(10, 20)\n```", ["pyautogui.click(10, 20)"]),
        ("```python\npyautogui.press('enter')\nDONE\n```", ["pyautogui.press('enter')", "DONE"]),
        ("first\n```code\na()\n```\nthen\n```WAIT```", ["a()", "WAIT"]),
        ("[CALL_USER] Which folder do you mean?", ["CALL_USER"]),
        ("Which folder?\n```CALL_USER```", ["CALL_USER"]),
        ("no code at all", []),
    ],
)
def test_actions_are_parsed_by_osworld_prompt_conventions(
    response: str, actions: list[str]
) -> None:
    assert parse_actions(response) == actions


def test_the_question_of_a_call_user_turn_is_the_text_around_the_marker() -> None:
    assert call_user_question("[CALL_USER] Which files?") == "Which files?"
    assert call_user_question("Which files go where?\n```CALL_USER```") == "Which files go where?"


# --------------------------------------------------------------------------- scripted


def test_the_scripted_agent_plays_its_plan_then_fails_and_resumes_at_the_recorded_turn(
    tmp_path,
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"t1": ["pyautogui.click(1, 2)", ["a()", "DONE"],
                                       {"response": "asking", "actions": ["CALL_USER"]}]}))  # fmt: skip
    agent = load_agent(f"scripted:{plan}")
    assert isinstance(agent, ScriptedAgent) and agent.label == "scripted-plan"
    agent.reset({"id": "t1"})
    assert agent.predict("x", {})[1] == ["pyautogui.click(1, 2)"]
    response, actions = agent.predict("x", {})
    assert actions == ["a()", "DONE"] and "```python\na()\n```" in response
    assert agent.predict("x", {}) == ("asking", ["CALL_USER"])
    assert agent.predict("x", {})[1] == ["FAIL"]
    agent.reset({"id": "t1"})
    assert agent.restore([TurnRecord("x", "r", [], None, []), TurnRecord("x", "r", [], None, [])])
    assert agent.predict("x", {}) == ("asking", ["CALL_USER"])
    agent.reset({"id": "other"})
    response, actions = agent.predict("x", {})
    assert actions == ["FAIL"] and "no plan" in response


def test_plug_in_agents_load_from_module_and_class() -> None:
    agent = load_agent("deskscore.collectors.live.agents:ScriptedAgent", {"plan": {"a": ["DONE"]}})
    assert isinstance(agent, ScriptedAgent)
    with pytest.raises(AgentError, match="has no"):
        load_agent("deskscore.collectors.live.agents:Nothing")
    with pytest.raises(AgentError, match="cannot import"):
        load_agent("no_such_module_xyz:Agent")


# --------------------------------------------------------------------------- OpenAI-compatible


def _agent(url: str, **kw: Any) -> OpenAIAgent:
    env = {"DESKSCORE_AGENT_BASE_URL": url, "DESKSCORE_AGENT_API_KEY": KEY}
    return OpenAIAgent(model="stub-model", environ=env, max_retries=0, **kw)


def test_the_openai_agent_sends_screenshots_and_records_tokens_and_latency(chat) -> None:
    server = chat("Clicking the terminal.\n```python\npyautogui.click(100, 200)\n```",
                  "It worked.\n```DONE```")  # fmt: skip
    agent = _agent(server.url, history=2)
    agent.reset({"id": "t"})
    response, actions = agent.predict("Open a terminal", {"screenshot": png("white")})
    assert actions == ["pyautogui.click(100, 200)"] and response.startswith("Clicking")
    [call] = agent.take_calls()
    assert call.stage == "planning" and call.model == "stub-model-2026"
    assert call.usage["prompt_tokens"] == 1001 and call.usage["completion_tokens"] == 40
    assert call.latency_s is not None and call.latency_s > 0 and call.started_at
    assert agent.take_calls() == []
    agent.receive_user_message("Use the blue one.")
    assert agent.predict("Open a terminal", {"screenshot": png("black")})[1] == ["DONE"]
    first, second = (r["body"] for r in server.requests)
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert second["model"] == "stub-model" and "Open a terminal" in second["messages"][0]["content"]
    images = [p for m in second["messages"] if isinstance(m["content"], list)
              for p in m["content"] if p["type"] == "image_url"]  # fmt: skip
    assert len(images) == 2 and images[0]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert any(m["role"] == "assistant" and m["content"].startswith("Clicking")
               for m in second["messages"])  # fmt: skip
    assert "Use the blue one." in json.dumps(second["messages"][-1])
    assert "[CALL_USER]" not in first["messages"][0]["content"]
    agent.set_interactive_prompt(True)
    agent.predict("x", {"screenshot": png()})
    assert "[CALL_USER]" in server.requests[-1]["body"]["messages"][0]["content"]


def test_the_openai_agent_never_shows_its_key_in_errors(chat) -> None:
    server = chat((401, json.dumps({"error": f"bad key {KEY}"}).encode()))
    agent = _agent(server.url)
    with pytest.raises(AgentError) as err:
        agent.predict("x", {"screenshot": png()})
    assert KEY not in str(err.value) and "401" in str(err.value)


def test_the_openai_agent_takes_its_key_from_the_environment_only() -> None:
    with pytest.raises(AgentError, match="environment only"):
        OpenAIAgent(model="m", api_key="sk-123", environ={})
    with pytest.raises(AgentError, match="no model"):
        OpenAIAgent(environ={"OPENAI_API_KEY": KEY})
    agent = OpenAIAgent(
        environ={"DESKSCORE_AGENT_MODEL": "m2", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    )
    assert agent.model == "m2" and agent.endpoint == "http://127.0.0.1:9/v1/chat/completions"

"""DeskCraft's interaction protocol: phases and triggers with the scripted user, and the LLM
user against a real chat-completions server on 127.0.0.1 playing scripted replies."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from deskscore.collectors.chat import ChatClient
from deskscore.collectors.live.users import (
    ALL_DONE_MESSAGE,
    LLMUser,
    Protocol,
    ScriptedUser,
    parse_user_reply,
)

KEY = "sk-user-test-0123456789abcdef"


def task(*phases: tuple[str, str, int | None], **extra: Any) -> dict[str, Any]:
    out = []
    for i, (instruction, trigger, value) in enumerate(phases, 1):
        t: dict[str, Any] = {"type": trigger}
        if value is not None:
            t["value"] = value
        out.append({"phase_id": i, "instruction": instruction, "trigger": t})
    return {"id": "INTERACTIVE_os_x", "domain": "os", "phases": out, **extra}


def kinds(outcome: Any) -> list[tuple[str, int | None, str | None, bool | None]]:
    return [(e.type, e.phase, e.message, e.phase_complete) for e in outcome.exchanges]


def test_a_question_in_an_agent_asks_phase_is_answered_and_completes_the_phase() -> None:
    p = Protocol(task(("Tidy my home folder.", "agent_asks", None),
                      ("Pictures to ~/Pictures, texts to ~/Documents.", "agent_done", None)),
                 ScriptedUser())  # fmt: skip
    instruction, first = p.start()
    assert instruction == "Tidy my home folder." and first.type == "initial_instruction"
    assert first.step is None and first.phase == 1
    out = p.after_turn(1, "[CALL_USER] How should I sort them?", ["CALL_USER"], False, None)
    assert kinds(out) == [
        ("call_user", 1, "How should I sort them?", None),
        ("clarify", 1, "Pictures to ~/Pictures, texts to ~/Documents.", True),
    ]
    assert out.exchanges[0].step == 1 and not out.stop and p.phase == 2
    assert out.instruction == "Pictures to ~/Pictures, texts to ~/Documents."
    assert kinds(p.after_turn(2, "moving", ["x()"], False, None)) == []
    last = p.after_turn(3, "done", ["DONE"], True, None)
    assert last.stop and last.done and kinds(last) == []


def test_done_with_phases_left_brings_the_next_phase_and_the_episode_goes_on() -> None:
    p = Protocol(task(("Write hello.", "agent_done", None), ("No, write hello world.", "agent_done", None)),
                 ScriptedUser())  # fmt: skip
    p.start()
    out = p.after_turn(1, "ok", ["a()", "DONE"], True, None)
    assert kinds(out) == [("new_instruction", 2, "No, write hello world.", True)]
    assert not out.done and out.cleared_done and not out.stop and p.phase == 2
    end = p.after_turn(2, "ok", ["DONE"], True, None)
    assert end.done and end.stop and kinds(end) == []


def test_a_step_count_trigger_interrupts_after_that_many_turns_of_the_phase() -> None:
    p = Protocol(task(("Make five folders.", "step_count", 2), ("Stop: make backend only.", "agent_done", None)),
                 ScriptedUser())  # fmt: skip
    p.start()
    assert kinds(p.after_turn(1, "", ["a()"], False, None)) == []
    out = p.after_turn(2, "", ["b()"], False, None)
    assert kinds(out) == [("new_instruction", 2, "Stop: make backend only.", True)]
    assert p.phase_start_turn == 2 and not out.stop
    assert kinds(p.after_turn(3, "", ["c()"], False, None)) == []  # agent_done now


def test_an_unexpected_question_only_clarifies() -> None:
    p = Protocol(task(("Write hello.", "agent_done", None), ("Now bye.", "agent_done", None)),
                 ScriptedUser())  # fmt: skip
    p.start()
    out = p.after_turn(1, "[CALL_USER] Which file?", ["CALL_USER"], False, None)
    assert kinds(out) == [
        ("call_user", 1, "Which file?", None),
        ("clarify", 1, "Write hello.", False),
    ]
    assert p.phase == 1 and not out.stop


def test_done_in_an_agent_asks_phase_without_asking_still_brings_the_next_phase() -> None:
    p = Protocol(task(("Tidy up.", "agent_asks", None), ("Move the pictures.", "agent_done", None)),
                 ScriptedUser())  # fmt: skip
    p.start()
    out = p.after_turn(1, "done", ["DONE"], True, None)
    assert kinds(out) == [("new_instruction", 1, "Move the pictures.", True)]
    assert out.cleared_done and not out.done and p.phase == 2


def test_the_protocol_state_survives_a_restore() -> None:
    spec = task(("A.", "step_count", 1), ("B.", "agent_done", None), ("C.", "agent_done", None))
    p = Protocol(spec, ScriptedUser())
    p.start()
    p.after_turn(1, "", ["a()"], False, None)
    q = Protocol(spec, ScriptedUser())
    q.restore(json.loads(json.dumps(p.state())))
    assert (q.idx, q.phase_start_turn, q.phase) == (1, 1, 2)
    assert kinds(q.after_turn(2, "", ["DONE"], True, None)) == [("new_instruction", 3, "C.", True)]


# --------------------------------------------------------------------------- the LLM user


def png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 48), "navy").save(buf, "PNG")
    return buf.getvalue()


SPEC = task(("Tidy my home folder.", "agent_asks", None),
            ("Pictures to ~/Pictures.", "agent_done", None),
            scenario_description="A messy home folder.",
            user_persona={"expertise_level": "expert", "communication_style": "terse"})  # fmt: skip


def llm_protocol(url: str) -> Protocol:
    return Protocol(SPEC, LLMUser(ChatClient(url, "user-model", KEY, max_retries=0), SPEC))


def test_the_llm_user_follows_deskcrafts_json_contract(chat) -> None:
    server = chat(
        '<think>they asked</think>```json\n{"action": "new_instruction", "message": '
        '"Put the pictures in ~/Pictures.", "phase_complete": false, "reason": "x"}\n```',
        'Sure. {"action": "feedback", "message": "Thanks, all good.", "phase_complete": true}',
        model="user-model",
    )
    p = llm_protocol(server.url)
    p.start()
    out = p.after_turn(1, "[CALL_USER] Where do pictures go?", ["CALL_USER"], False, png())
    # An expected question is answered: clarify, phase complete, whatever the model said.
    assert kinds(out)[1] == ("clarify", 1, "Put the pictures in ~/Pictures.", True)
    assert out.exchanges[1].reason == "x" and p.phase == 2
    system = server.requests[0]["body"]["messages"][0]["content"]
    assert "A messy home folder." in system and "expert" in system and "terse" in system
    assert "Tidy my home folder." in system and "Pictures to ~/Pictures." in system
    assert server.requests[0]["body"]["messages"][1] == {
        "role": "user",
        "content": "[Initial instruction] Tidy my home folder.",
    }
    content = server.requests[0]["body"]["messages"][-1]["content"]
    assert any("Where do pictures go?" in c.get("text", "") for c in content)
    assert any(c["type"] == "image_url" for c in content)
    last = p.after_turn(2, "moved", ["DONE"], True, png())
    assert last.stop and kinds(last) == []  # the last phase ends without a closing user turn
    assert [c["model"] for c in p.user.calls] == ["user-model"]


def test_an_unexpected_question_cannot_complete_a_phase_whatever_the_model_says(chat) -> None:
    server = chat(
        '{"action": "new_instruction", "message": "The txt ones.", "phase_complete": true}',
        model="user-model",
    )
    spec = task(("Move the notes.", "agent_done", None), ("Now the logs.", "agent_done", None))
    p = Protocol(spec, LLMUser(ChatClient(server.url, "m", None, max_retries=0), spec))
    p.start()
    out = p.after_turn(1, "[CALL_USER] Which notes?", ["CALL_USER"], False, None)
    assert kinds(out)[1] == ("clarify", 1, "The txt ones.", False) and p.phase == 1
    assert "did not call for" in json.dumps(server.requests[0]["body"]["messages"][-1])


def test_the_llm_user_falls_back_to_the_current_instruction_when_the_model_fails(chat) -> None:
    server = chat((500, b'{"error": "down"}'), model="user-model")
    spec = task(("Write hello.", "agent_done", None), ("Write bye.", "agent_done", None))
    p = Protocol(spec, LLMUser(ChatClient(server.url, "m", KEY, max_retries=0), spec))
    p.start()
    out = p.after_turn(1, "", ["DONE"], True, None)
    [reply] = out.exchanges
    # agent_done advanced the phase first, so the current instruction is the new phase's
    assert (reply.type, reply.message, reply.phase_complete) == (
        "new_instruction",
        "Write bye.",
        False,
    )
    assert "user simulator failed" in reply.reason and KEY not in reply.reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"action": "clarify", "message": "m", "phase_complete": "true"}', ("clarify", "m", True)),
        ('{"message": "only"}', ("new_instruction", "only", False)),
        ("just words", ("new_instruction", "just words", False)),
        (
            'x {"a": {"b": 1}} then {"action": "new_instruction", "message": "last"}',
            ("new_instruction", "last", False),
        ),
    ],
)
def test_user_replies_parse_with_deskcrafts_defaults(text: str, expected: tuple) -> None:
    r = parse_user_reply(text)
    assert (r["action"], r["message"], r["phase_complete"]) == expected


def test_after_the_last_phase_the_scripted_user_says_everything_is_done() -> None:
    p = Protocol(task(("Only.", "step_count", 1)), ScriptedUser())
    p.start()
    out = p.after_turn(1, "", ["a()"], False, None)
    assert kinds(out) == [("new_instruction", 1, ALL_DONE_MESSAGE, True)] and out.stop

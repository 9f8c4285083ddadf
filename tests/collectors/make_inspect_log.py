"""An OSWorld-shaped inspect_ai log made offline, for the tests of the inspect format.

Run as a script: `python make_inspect_log.py LOG_DIR`. inspect_evals' OSWorld task (a react agent,
inspect_ai's `computer` tool, `osworld_scorer`, samples with OSWorld ids and metadata {snapshot,
source}) is reproduced without a sandbox: mockllm plays a fixed script (with its usage given, so
no tokenizer is downloaded) and a stand-in `computer` tool takes the same arguments. Two samples
(one OSWorld task, one id no index holds) over two epochs; the scorer passes the OSWorld task in
epoch 1 only, and fails with an error on the other task in epoch 2 (an errored sample).
"""

import sys

from inspect_ai import Task, eval, task
from inspect_ai.agent import AgentPrompt, AgentSubmit, react
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, accuracy, scorer
from inspect_ai.tool import tool

KNOWN = "0f84bef9-9790-432e-92b7-eece357603fb"


@tool(name="computer")
def computer():
    async def execute(
        action: str, coordinate: list[int] | None = None, text: str | None = None
    ) -> str:
        """Use a mouse and keyboard.

        Args:
          action: The action to perform.
          coordinate: (x, y) pixel coordinate.
          text: Text to type or keys to press.
        """
        return f"did {action}"

    return execute


@scorer(metrics=[accuracy()], name="osworld_scorer")
def osworld_scorer():
    async def score(state, target: Target):
        if state.sample_id != KNOWN and state.epoch == 2:
            raise RuntimeError("OSWorld evaluator failed with exit code 1")
        return Score(value=1 if state.sample_id == KNOWN and state.epoch == 1 else 0)

    return score


@task
def osworld_like():
    samples = [
        Sample(
            input="Make the background of the slide blue.",
            id=KNOWN,
            metadata={"snapshot": "libreoffice_impress", "source": "https://example.org"},
        ),
        Sample(
            input="A task no index knows.",
            id="not-an-osworld-task",
            metadata={"snapshot": "os", "source": "https://example.org"},
        ),
    ]
    agent = react(
        prompt=AgentPrompt(
            instructions="You are an agent.", assistant_prompt=None, submit_prompt=None
        ),
        tools=[computer()],
        attempts=1,
        submit=AgentSubmit(answer_only=True, keep_in_messages=True),
    )
    return Task(dataset=samples, solver=agent, scorer=osworld_scorer(), message_limit=75)


def script():
    usage = ModelUsage(
        input_tokens=100, output_tokens=10, total_tokens=110, input_tokens_cache_read=20
    )
    calls = [
        ("computer", {"action": "screenshot"}, "Let me look."),
        ("computer", {"action": "left_click", "coordinate": [640, 400]}, "Clicking the slide."),
        ("computer", {"action": "type", "text": "blue"}, "Typing."),
        ("computer", {"action": "key", "text": "ctrl+s"}, "Saving."),
        ("submit", {"answer": "```DONE```"}, "Done."),
    ]
    out = []
    for name, args, text in calls:
        o = ModelOutput.for_tool_call("mockllm/model", name, args, content=text)
        o.usage = usage
        out.append(o)
    return out


outputs = [o for _ in range(4) for o in script()]
eval(
    osworld_like(),
    model=get_model("mockllm/model", custom_outputs=outputs),
    log_dir=sys.argv[1],
    display="none",
    epochs=2,
    max_samples=1,
    fail_on_error=False,
)

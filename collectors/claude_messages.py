"""Anthropic computer-use conversations (`messages.json` beside `traj.jsonl`): the instruction
and the model's reasoning of each turn, matched to the turn's step rows.

OSWorld's Claude agent writes its prompt to `messages.json` before every model call: a list of
`{role, content: [blocks]}`. Two shapes are read:

- *translated* (the OSWorld-Sec-Eval runs): only text blocks. The system prompt ends with
  "You are asked to complete the following task: <instruction>"; each past turn is a user
  screenshot message, the ASSISTANT message (its text is the turn's reasoning) and a user
  message "Executed a translation of your issued tool call: [...]" quoting, as a Python list
  literal, the actions `traj.jsonl` records for that turn.
- *tool_use* (other runners): assistant messages hold `tool_use` blocks `{id, name, input}`
  and users answer with `tool_result` blocks; the instruction is then the first user text.

Matching rule. The k-th assistant message is model turn k, which is traj `step_num` k + o:
o is 0 unless the runner kept only its last turns in the prompt (a 20-turn window), and it is
found by comparing executed-action lists, not assumed: the offset at which most turns' lists
equal the actions of their step_num wins (ties: the smallest). A turn whose list is empty
executed nothing and has no traj line (a step_num gap). Lists are compared after both sides
go through `parse_action`, so the comparison follows whatever the step rows store. Traj
step_nums past the last assistant message belong to the final turn (DONE/FAIL), whose reply
was never written: those steps keep no reply. tool_use turns are matched by the tool_use id
a Claude dict action carries, else by equal `input`, else by position (step_num k + o holding
as many actions as the turn has tool calls).

A reply is written into `steps.response` of every step of its turn that has none (a response
the trajectory records itself is kept). The episode's instruction is filled when the folder
gave none. Nothing here makes a read fail: an unreadable or malformed file, a turn that
matches no step, or a turn list that is not a literal becomes one quarantine row per file and
reason, naming what did not match; the rest of the episode stays as OSWorld's reader made it.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from deskscore.collectors.actions import parse_action
from deskscore.collectors.layout import RunFolder, TaskFolder
from deskscore.collectors.osworld import (
    EpisodeCalls,
    EpisodeRead,
    QuarantineRows,
    dumps_json,
    load_json_file,
)
from deskscore.collectors.source import Source

MESSAGES_FILE = "messages.json"
EXECUTED_PREFIX = "Executed a translation of your issued tool call:"
TASK_MARKER = "You are asked to complete the following task:"
_SCREENSHOT_PREFIX = "Here is the next screenshot"
_TODO = "the rest of the episode is read as OSWorld's; fix the file and re-ingest"
_SHOWN = 5  # turns named in one quarantine message


class ToolUse(NamedTuple):
    id: str | None
    name: str | None
    input: Any


class Turn(NamedTuple):
    """One assistant message: model turn `number` (1-based, in file order)."""

    number: int
    reply: str | None
    executed: list | None
    """The quoted list of executed actions; None when no such message follows the turn."""
    tool_uses: tuple[ToolUse, ...]


class Conversation(NamedTuple):
    instruction: str | None
    turns: list[Turn]
    problems: list[tuple[str, str]]
    """(reason, what) of parts that could not be read."""


class Matching(NamedTuple):
    """How a conversation's turns met the step rows."""

    replies: dict[int, str]
    """step_idx -> the reply of its turn."""
    offset: int
    """traj step_num = turn number + offset."""
    matched: list[int]
    """Turn numbers matched to steps (or, for an empty list, to no step)."""
    unmatched: list[tuple[int, str]]
    """(turn number, what did not match)."""
    after_last: list[int]
    """traj step_nums past the last turn: the final turn, whose reply was never written."""


# ---- reading the file -------------------------------------------------------------------------


def _blocks(content: Any) -> list[dict]:
    """A message's content as blocks: a string is one text block; junk is dropped."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        return [
            b if isinstance(b, dict) else {"type": "text", "text": b}
            for b in content
            if isinstance(b, dict | str)
        ]
    return []


def _texts(content: Any) -> list[str]:
    return [
        b["text"]
        for b in _blocks(content)
        if b.get("type", "text") == "text" and isinstance(b.get("text"), str)
    ]


def _instruction(system: Any, messages: list[dict]) -> str | None:
    """After the task marker of the system prompt; else the first user text before any
    assistant message that is not a screenshot notice."""
    for text in _texts(system):
        if TASK_MARKER in text:
            return text.rpartition(TASK_MARKER)[2].strip() or None
    for m in messages:
        if m.get("role") == "assistant":
            break
        if m.get("role") == "user":
            for text in _texts(m.get("content")):
                stripped = text.strip()
                if stripped and not stripped.startswith(_SCREENSHOT_PREFIX):
                    return stripped
    return None


def _executed(text: str) -> tuple[list | None, str | None]:
    """The list quoted after EXECUTED_PREFIX, or the reason it cannot be read."""
    body = text.strip()[len(EXECUTED_PREFIX) :].strip()
    try:
        value = ast.literal_eval(body)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
        return None, f"not a Python literal ({type(e).__name__})"
    if not isinstance(value, list | tuple):
        return None, f"a {type(value).__name__}, not a list"
    return list(value), None


def parse_conversation(obj: Any) -> Conversation:
    """Instruction and turns of a decoded messages.json: a list of messages, or an object
    holding `messages` (and maybe `system`). Never raises."""
    problems: list[tuple[str, str]] = []
    system: Any = None
    if isinstance(obj, dict) and isinstance(obj.get("messages"), list):
        system, obj = obj.get("system"), obj["messages"]
    if not isinstance(obj, list):
        problems.append(("unexpected_shape", f"holds a {type(obj).__name__}, not a list of "
                         "messages"))  # fmt: skip
        return Conversation(None, [], problems)
    messages = [m for m in obj if isinstance(m, dict)]
    if len(messages) < len(obj):
        problems.append(("unexpected_shape", f"{len(obj) - len(messages)} item(s) are not "
                         "message objects; they were skipped"))  # fmt: skip
    for m in messages:
        if m.get("role") == "system":
            system = m.get("content") if system is None else system
    turns: list[Turn] = []
    bad_lists: list[str] = []
    for i, m in enumerate(messages):
        if m.get("role") != "assistant":
            continue
        blocks = _blocks(m.get("content"))
        texts = [t for t in _texts(blocks) if t.strip()]
        uses = tuple(
            ToolUse(
                b.get("id") if isinstance(b.get("id"), str) else None,
                b.get("name") if isinstance(b.get("name"), str) else None,
                b.get("input"),
            )
            for b in blocks
            if b.get("type") == "tool_use"
        )
        executed = None
        for later in messages[i + 1 :]:
            if later.get("role") == "assistant":
                break
            hit = next(
                (t for t in _texts(later.get("content")) if t.lstrip().startswith(EXECUTED_PREFIX)),
                None,
            )
            if hit is not None:
                executed, why = _executed(hit)
                if why:
                    bad_lists.append(f"turn {len(turns) + 1}: {why}")
                break
        turns.append(Turn(len(turns) + 1, "\n\n".join(texts) or None, executed, uses))
    if bad_lists:
        problems.append(("invalid_literal", "the executed-actions text of " + _some(bad_lists)
                         + " cannot be read, so those turns are not matched"))  # fmt: skip
    return Conversation(_instruction(system, messages), turns, problems)


def _some(items: Sequence[str]) -> str:
    shown = "; ".join(items[:_SHOWN])
    return shown + (f" (and {len(items) - _SHOWN} more)" if len(items) > _SHOWN else "")


# ---- matching turns to step rows ------------------------------------------------------------


def _norm(action: Any) -> str | None:
    return parse_action(action)["action_text"]


def _recorded(row: dict) -> Any:
    """The action a step row was made from, where the row keeps it whole (dicts, lists)."""
    extra = row.get("extra")
    if isinstance(extra, str) and '"action"' in extra:
        try:
            value = json.loads(extra).get("action")
        except (ValueError, AttributeError, RecursionError):
            return None
        return value
    return None


def _by_step(rows: Sequence[dict]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for row in rows:
        if row.get("action_kind") != "error" and isinstance(row.get("step_num"), int):
            out.setdefault(row["step_num"], []).append(row)
    return out


def _best_offset(listed: list[Turn], actions: dict[int, list[str | None]]) -> int:
    """The offset at which most turns' executed lists equal their step's actions."""
    want = {t.number: [_norm(a) for a in t.executed or ()] for t in listed}
    candidates = {0}
    for t in listed:
        if want[t.number]:
            candidates.update(s - t.number for s, a in actions.items() if a == want[t.number])
    candidates = {o for o in candidates if o >= 0}

    def hits(o: int) -> int:
        return sum(actions.get(t.number + o, []) == want[t.number] for t in listed)

    return max(sorted(candidates), key=hits)


def match_turns(conv: Conversation, rows: Sequence[dict]) -> Matching:
    """Match the turns of `conv` to the step rows of its trajectory (see the module doc)."""
    steps = _by_step(rows)
    actions = {s: [r["action_text"] for r in rs] for s, rs in steps.items()}
    listed = [t for t in conv.turns if t.executed is not None]
    offset = _best_offset(listed, actions) if listed else 0
    replies: dict[int, str] = {}
    matched: list[int] = []
    unmatched: list[tuple[int, str]] = []
    taken: set[int] = set()

    def give(turn: Turn, chosen: Iterable[dict]) -> None:
        matched.append(turn.number)
        for r in chosen:
            taken.add(r["step_idx"])
            if turn.reply is not None:
                replies[r["step_idx"]] = turn.reply

    for t in listed:
        here = steps.get(t.number + offset, [])
        want = [_norm(a) for a in t.executed or ()]
        if actions.get(t.number + offset, []) == want:
            give(t, here)
        else:
            got = [r["action_text"] for r in here]
            unmatched.append((t.number, f"turn {t.number} executed {_short(want)}, traj step_num "
                              f"{t.number + offset} holds {_short(got)}"))  # fmt: skip
    by_id: dict[str, dict] = {}
    by_input: list[tuple[str, dict]] = []
    for row in rows:
        rec = _recorded(row)
        if isinstance(rec, dict):
            if isinstance(rec.get("id"), str):
                by_id.setdefault(rec["id"], row)
            if "input" in rec:
                by_input.append((dumps_json(rec["input"]), row))
    for t in conv.turns:
        if t.executed is not None or not t.tool_uses:
            continue
        chosen = []
        for use in t.tool_uses:
            row = by_id.get(use.id) if use.id else None
            if row is None:
                key = dumps_json(use.input)
                row = next(
                    (r for k, r in by_input if k == key and r["step_idx"] not in taken), None
                )
            if row is not None and row["step_idx"] not in taken:
                chosen.append(row)
                taken.add(row["step_idx"])
        if not chosen:
            here = steps.get(t.number + offset, [])
            if len(here) == len(t.tool_uses) and not any(r["step_idx"] in taken for r in here):
                chosen = here
        if chosen:
            give(t, chosen)
        else:
            unmatched.append((t.number, f"turn {t.number}'s {len(t.tool_uses)} tool call(s) "
                              "match no traj action by id, input or position"))  # fmt: skip
    last = len(conv.turns) + offset
    after = sorted(s for s in steps if s > last)
    return Matching(replies, offset, sorted(matched), unmatched, after)


def _short(items: list) -> str:
    text = repr(items)
    return text if len(text) <= 160 else text[:157] + "..."


# ---- the reader hook ------------------------------------------------------------------------


def add_messages(
    read: EpisodeRead, source: Source, task: TaskFolder, *, run_id: str, benchmark: str
) -> EpisodeRead:
    """`read` with the instruction and per-turn replies of the folder's messages.json (the same
    rows when it has none), and a quarantine row for each reason something did not fit."""
    if MESSAGES_FILE not in task.files:
        return read
    path = f"{task.path}/{MESSAGES_FILE}"
    q = QuarantineRows(source.uri, run_id, benchmark)
    loaded = load_json_file(source, path, q, MESSAGES_FILE, _TODO)
    episode, steps = read.episode, read.steps
    if loaded is not None:
        conv = parse_conversation(loaded[0])
        for reason, what in conv.problems:
            q.add(path, None, reason, f"{MESSAGES_FILE} {what}", _TODO, what)
        if conv.instruction is not None and episode.get("instruction") is None:
            episode = {**episode, "instruction": conv.instruction}
        m = match_turns(conv, steps)
        if m.unmatched:
            what = _some([w for _, w in m.unmatched])
            q.add(path, None, "unmatched_turns", f"{len(m.unmatched)} of {len(conv.turns)} "
                  f"turn(s) match no step: {what}", "the replies of those turns are not attached; "
                  "the rest of the episode is read", what)  # fmt: skip
        if m.replies:
            steps = [
                {**s, "response": m.replies[s["step_idx"]]}
                if s["response"] is None and s["step_idx"] in m.replies
                else s
                for s in steps
            ]
    return EpisodeRead(episode, steps, [*read.quarantine, *q.rows])


EpisodeReader = Callable[..., EpisodeCalls]


def with_messages(reader: EpisodeReader) -> EpisodeReader:
    """An episode reader for OSWorld-style task folders that also reads their messages.json."""

    def read_episode(
        source: Source,
        run: RunFolder,
        task: TaskFolder,
        *,
        run_id: str,
        benchmark: str,
        reported: dict | None = None,
    ) -> EpisodeCalls:
        calls = reader(source, run, task, run_id=run_id, benchmark=benchmark, reported=reported)
        read = add_messages(calls.read, source, task, run_id=run_id, benchmark=benchmark)
        return calls._replace(read=read)

    read_episode.__doc__ = reader.__doc__
    read_episode.__name__ = getattr(reader, "__name__", "read_episode")
    return read_episode


__all__ = [
    "EXECUTED_PREFIX",
    "MESSAGES_FILE",
    "TASK_MARKER",
    "Conversation",
    "Matching",
    "ToolUse",
    "Turn",
    "add_messages",
    "match_turns",
    "parse_conversation",
    "with_messages",
]

"""The episode loop: an agent drives a real desktop, every event recorded as it happens.

Per task: the provider gives a desktop (a controller URL) -> the task's setup steps -> turns
until the agent is done or `max_steps` turns are spent: the screen as observation ->
`agent.predict` -> each action executed through the controller (WAIT sleeps, DONE and FAIL
end, CALL_USER is an exchange with the user, never a step) and recorded with the screen it
leaves; interactive tasks run DeskCraft's protocol after each turn (`users.Protocol`) ->
the task's evaluator reads the final state -> the episode is folded into the warehouse.

`max_steps` counts model turns, as OSWorld's runner does (a turn may run several actions),
and is one budget over all phases; a CALL_USER turn counts too, so an agent that only asks
cannot run forever.

Resuming (`deskscore collect --resume`): an episode already folded is skipped; one whose live
record has ended is folded; one cut short is continued from its last recorded turn when the desktop is
provably the one that recorded it (the same controller process on the same machine, the
screen pixel-identical to the last recorded frame, the kill between two turns rather than
inside one, and an agent that can `restore` its memory), and restarted cleanly otherwise (its
live record dropped, a fresh desktop set up). A new container, or a screen that moved on,
cannot be trusted to hold the state the record says: continuing there would record a
trajectory that never happened.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from deskscore.collectors.formats import LIVE
from deskscore.collectors.live.agents import TurnRecord, special_of
from deskscore.collectors.live.client import Controller, ControllerError, SetupError
from deskscore.collectors.live.evaluators import evaluate
from deskscore.collectors.live.record import (
    EpisodeKeys,
    Frame,
    KnownScreenshots,
    LiveEpisode,
    Recorder,
    ScreenshotStore,
    fold_rows,
    merge_episode,
    purge_trash,
)
from deskscore.collectors.live.users import Protocol, is_interactive

FORMAT = LIVE.name
"""runs.format of a collected run."""
IDENTITY_COMMAND = 'echo "$(hostname) $PPID $(cut -d" " -f22 /proc/$PPID/stat)"'
"""Who runs the controller: machine name, the controller's pid and its start time (the shell
the controller spawns reports its parent)."""


class Settings(NamedTuple):
    """How a collection runs. The first fields are the command's options (their defaults are
    the `collect` command's, pipelines/options.py); the rest are the collector's own."""

    warehouse: str
    benchmark: str
    run_name: str
    max_steps: int
    parallel: int
    osworld_dir: str | None
    settle_s: float
    """Pause after an action before the screenshot, so the screen has redrawn."""
    python: str
    """The interpreter the controller runs pyautogui code with."""
    lock_wait_s: float
    wait_s: float = 2.0
    """How long WAIT sleeps (OSWorld: 2 s)."""
    setup_settle_s: float = 0.5
    """Pause after the setup steps before the first screenshot."""
    ready_timeout_s: float = 120.0


class EpisodeResult(NamedTuple):
    domain: str
    task_id: str
    outcome: str
    """collected, continued, restarted, folded (recorded before, folded now), skipped, failed."""
    n_steps: int
    result_status: str | None
    score: float | None
    seconds: float
    message: str | None = None


class Context(NamedTuple):
    """What one worker needs: its own agent and provider, the run's shared recorder state."""

    agent: Any
    provider: Any
    user_factory: Callable[[Mapping[str, Any]], Any]


def utc_stamp() -> str:
    """An action timestamp as OSWorld writes it (%Y%m%d@%H%M%S%f), in UTC."""
    return datetime.now(UTC).strftime("%Y%m%d@%H%M%S%f")


def env_identity(controller: Controller) -> str | None:
    """The controller process's identity (machine, pid, start time); None where it cannot
    be told (not Linux, or the command failed): such a desktop is never trusted on resume."""
    try:
        out = controller.execute(IDENTITY_COMMAND, shell=True)
    except ControllerError:
        return None
    text = (out.get("output") or "").strip()
    parts = text.split()
    return text if out.get("returncode") == 0 and len(parts) == 3 else None


def task_digest(task: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(task, sort_keys=True, default=str).encode()).hexdigest()[:16]


class Collector:
    """Collects the tasks of one run into a warehouse."""

    def __init__(
        self,
        settings: Settings,
        run_row: dict[str, Any],
        *,
        base_dir: str | None = None,
        log: Callable[[str], None] = print,
    ) -> None:
        from deskscore.collectors.warehouse import Warehouse

        self.s = settings
        self.wh = Warehouse(settings.warehouse)
        self.store = ScreenshotStore(settings.warehouse)
        self.run_row = run_row
        self.run_id = run_row["run_id"]
        self.base_dir = base_dir
        self.log = log
        self._fold_lock = threading.Lock()
        self._known: KnownScreenshots | None = None
        purge_trash(settings.warehouse)

    # ------------------------------------------------------------------ run

    def folded(self) -> set[tuple[str, str]]:
        part = {"benchmark": self.s.benchmark, "run_id": self.run_id}
        rows = self.wh.read("episodes", part, columns=["domain", "task_id"]).to_pylist()
        return {(r["domain"], r["task_id"]) for r in rows}

    def run(
        self, tasks: Sequence[Mapping[str, Any]], make_context: Callable[[], Context]
    ) -> list[EpisodeResult]:
        """Collect every task (`parallel` at a time, each worker with its own agent and
        desktop); returns one result per task, in task order."""
        done = self.folded()
        results: list[EpisodeResult | None] = [None] * len(tasks)
        local = threading.local()

        def work(i: int) -> None:
            if not hasattr(local, "ctx"):
                local.ctx = make_context()
            task = tasks[i]
            results[i] = self.episode(task, local.ctx, already=(task["domain"], task["id"]) in done)
            r = results[i]
            self.log(
                f"[{sum(x is not None for x in results)}/{len(tasks)}] {r.domain}/{r.task_id}: "
                f"{r.outcome}, {r.n_steps} step(s), "
                + (
                    f"score {r.score:g}"
                    if r.score is not None
                    else (r.result_status or "no result")
                )
                + f" in {r.seconds:.1f} s"
                + (f" ({r.message})" if r.message else "")
            )

        if self.s.parallel <= 1:
            for i in range(len(tasks)):
                work(i)
        else:
            with ThreadPoolExecutor(self.s.parallel) as pool:
                list(pool.map(work, range(len(tasks))))
        return [r for r in results if r is not None]

    # ------------------------------------------------------------------ one episode

    def episode(self, task: Mapping[str, Any], ctx: Context, *, already: bool) -> EpisodeResult:
        started = time.monotonic()
        keys = EpisodeKeys(self.run_id, self.s.benchmark, str(task["domain"]), str(task["id"]))
        live = LiveEpisode(self.s.warehouse, keys.benchmark, keys.run_id, keys.domain, keys.task_id)
        units = live.units() if live.exists() else []
        if already and not live.exists():
            return self._result(keys, "skipped", started, message="already collected")
        if units and units[-1].kind == "end":
            return self._fold(keys, live, task, "folded", started)
        try:
            outcome, message = self._drive(task, ctx, keys, live, units)
        except KeyboardInterrupt:
            raise
        except Exception as e:  # one broken episode must not stop the run
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            return self._result(keys, "failed", started, message=detail)
        return self._fold(keys, live, task, outcome, started, message)

    def _result(
        self,
        keys: EpisodeKeys,
        outcome: str,
        started: float,
        *,
        n_steps: int = 0,
        status: str | None = None,
        score: float | None = None,
        message: str | None = None,
    ) -> EpisodeResult:
        return EpisodeResult(
            keys.domain,
            keys.task_id,
            outcome,
            n_steps,
            status,
            score,
            time.monotonic() - started,
            message,
        )

    def _fold(
        self,
        keys: EpisodeKeys,
        live: LiveEpisode,
        task: Mapping[str, Any],
        outcome: str,
        started: float,
        message: str | None = None,
    ) -> EpisodeResult:
        from deskscore.collectors.live.osworld_dir import run_root, write_task_folder
        from deskscore.collectors.warehouse.lock import writer_lock

        units = live.units()
        folded = fold_rows(keys, units, live.meta())
        with self._fold_lock, writer_lock(self.s.warehouse, "collect", self.s.lock_wait_s):
            if self._known is None:
                self._known = KnownScreenshots(self.wh)
            with self.wh.transaction() as wh:  # the episode's tables appear together
                merge_episode(wh, keys, folded, self.run_row, self._known)
            if self.s.osworld_dir:
                write_task_folder(
                    run_root(self.s.osworld_dir, self.run_row["agent"]),
                    keys.domain,
                    keys.task_id,
                    units,
                    self.store,
                    instruction=task.get("instruction"),
                    interactive=is_interactive(task),
                )
            live.discard()
        ep = folded.episode
        return self._result(
            keys,
            outcome,
            started,
            n_steps=ep["n_steps"],
            status=ep["result_status"],
            score=ep["score"],
            message=message or ep.get("err_message"),
        )

    def _drive(
        self,
        task: Mapping[str, Any],
        ctx: Context,
        keys: EpisodeKeys,
        live: LiveEpisode,
        units: list[Any],
    ) -> tuple[str, str | None]:
        """Start a desktop, run (or continue) the episode, evaluate it; the live record
        then holds an end unit. Returns (outcome, message)."""
        url = ctx.provider.start()
        try:
            controller = Controller(url, python=self.s.python)
            controller.wait_ready(self.s.ready_timeout_s)
            identity = env_identity(controller)
            agent = ctx.agent
            protocol = Protocol(task, ctx.user_factory(task)) if is_interactive(task) else None
            if hasattr(agent, "reset"):
                agent.reset(task)
            if protocol is not None and hasattr(agent, "set_interactive_prompt"):
                asks = any(
                    (p.get("trigger") or {}).get("type") == "agent_asks" for p in protocol.phases
                )
                agent.set_interactive_prompt(asks)
            state = None
            note = None
            if units:
                state, why = self._continuation(
                    keys, live, units, controller, identity, agent, protocol
                )
                if state is None:
                    live.discard()
                    note = f"restarted: {why}"
            if state is None:
                state = self._begin(task, controller, identity, url, keys, live, agent, protocol)
                outcome = "restarted" if units else "collected"
            else:
                outcome, note = "continued", f"continued after turn {state['turn']}"
            self._loop(task, controller, agent, protocol, state)
        finally:
            ctx.provider.stop()
        return outcome, note

    def _begin(
        self,
        task: Mapping[str, Any],
        controller: Controller,
        identity: str | None,
        url: str,
        keys: EpisodeKeys,
        live: LiveEpisode,
        agent: Any,
        protocol: Protocol | None,
    ) -> dict[str, Any]:
        recorder = Recorder(live, keys, self.store)
        try:
            controller.run_setup(task.get("config") or [], base_dir=self.base_dir)
            time.sleep(self.s.setup_settle_s)
            frame = self.store.put(controller.screenshot())
            error = None
        except (SetupError, ControllerError) as e:
            frame, error = None, str(e)
        instruction = str(task.get("instruction") or "")
        live.begin(
            {
                "instruction": instruction,
                "identity": identity,
                "url": url,
                "task_sha": task_digest(task),
                "started_at": utc_stamp(),
                "initial_frame": frame.store_path if frame else None,
            }
        )
        if protocol is not None:
            instruction, first = protocol.start()
            recorder.exchanges([first])
        state = {
            "recorder": recorder,
            "turn": 0,
            "instruction": instruction,
            "frame": frame,
            "error": error,
            "last_special": None,
            "stopped": False,
        }
        return state

    def _continuation(
        self,
        keys: EpisodeKeys,
        live: LiveEpisode,
        units: list[Any],
        controller: Controller,
        identity: str | None,
        agent: Any,
        protocol: Protocol | None,
    ) -> tuple[dict[str, Any] | None, str]:
        """The loop state to go on from, or (None, why not)."""
        meta = live.meta()
        if identity is None or meta.get("identity") != identity:
            return None, "the desktop is not the one that recorded the episode"
        if not callable(getattr(agent, "restore", None)):
            return None, "the agent cannot restore its memory (no restore method)"
        turns = [u for u in units if u.kind == "turn"]
        if not turns:
            return None, "no complete turn was recorded"
        if units[-1].kind != "turn":
            return None, "the kill came inside a turn (an action may have run unrecorded)"
        last = turns[-1].meta
        try:
            screen = controller.screenshot()
        except ControllerError as e:
            return None, f"no screenshot ({e})"
        if hashlib.sha256(screen).hexdigest() != last.get("content_hash"):
            return None, "the screen differs from the last recorded frame"
        records = [
            TurnRecord(
                t.meta["instruction"],
                t.meta["response"],
                t.meta["actions"],
                self.store.read(t.meta["store_path"]) if t.meta.get("store_path") else None,
                t.meta.get("user_messages") or [],
            )
            for t in turns
        ]
        if not agent.restore(records):
            return None, "the agent declined to restore its memory"
        if protocol is not None and last.get("protocol") is not None:
            protocol.restore(last["protocol"])
        recorder = Recorder.resume(live, keys, self.store, units)
        return {
            "recorder": recorder,
            "turn": int(last["turn"]),
            "instruction": last["next_instruction"],
            "frame": self.store.put(screen),
            "error": None,
            "last_special": last.get("last_special"),
            "stopped": bool(last.get("stop")),
        }, ""

    # ------------------------------------------------------------------ the loop

    def _execute(self, controller: Controller, action: Any) -> dict[str, Any]:
        """Run one non-special action; returns extra record keys (exec_error when it failed)."""
        if isinstance(action, str):
            code = action
        elif isinstance(action, Mapping) and isinstance(action.get("command"), str):
            code = action["command"]
        else:
            return {"exec_error": f"unsupported action shape ({type(action).__name__}): not run"}
        out = controller.execute_python(code)
        if out.get("returncode") not in (0, None):
            text = (out.get("error") or out.get("output") or "").strip()
            return {"exec_error": text[-500:] or f"exit status {out.get('returncode')}"}
        return {}

    def _loop(
        self,
        task: Mapping[str, Any],
        controller: Controller,
        agent: Any,
        protocol: Protocol | None,
        state: dict[str, Any],
    ) -> None:
        rec: Recorder = state["recorder"]
        frame: Frame | None = state["frame"]
        turn: int = state["turn"]
        instruction: str = state["instruction"]
        last_special = state["last_special"]
        error = state["error"]
        if error is not None:
            rec.error(f"setup failed: {error}", None)
        wants_tree = "a11y" in str(getattr(agent, "observation_type", "screenshot"))
        stopped = state["stopped"]  # the last recorded turn ended the episode
        while not stopped and error is None and turn < self.s.max_steps:
            turn += 1
            obs = {
                "screenshot": frame.data if frame else None,
                "instruction": instruction,
                "accessibility_tree": controller.accessibility() if wants_tree else None,
            }
            try:
                response, actions = agent.predict(instruction, obs)
            except Exception as e:
                rec.calls(_take_calls(agent), turn)
                error = f"agent failed at turn {turn}: {type(e).__name__}: {e}"
                rec.error(error, turn)
                break
            rec.calls(_take_calls(agent), turn)
            response = "" if response is None else response
            if not isinstance(response, str):
                response = json.dumps(response, ensure_ascii=False, default=str)
            actions = list(actions or [])
            rec.turn_start(
                {"turn": turn, "response": response, "actions": [_jsonable(a) for a in actions]}
            )
            done = False
            try:
                for action in actions:
                    special = special_of(action)
                    if special == "CALL_USER":
                        continue
                    frame, done = self._step(
                        controller, rec, turn, action, special, response, protocol, frame
                    )
                    last_special = special
                    if done:
                        break
            except ControllerError as e:
                error = f"the desktop failed at turn {turn}: {e}"
                rec.error(error, turn)
                break
            messages: list[str] = []
            stop = done
            if protocol is not None:
                out = protocol.after_turn(
                    turn, response, actions, done, frame.data if frame else None
                )
                rec.exchanges(out.exchanges)
                if out.cleared_done and hasattr(agent, "clear_done_from_history"):
                    agent.clear_done_from_history()
                if out.message is not None:
                    messages.append(out.message)
                    if hasattr(agent, "receive_user_message"):
                        agent.receive_user_message(out.message)
                instruction, stop = out.instruction, out.stop
            rec.turn_end(
                {
                    "turn": turn,
                    "instruction": obs["instruction"],
                    "next_instruction": instruction,
                    "response": response,
                    "actions": [_jsonable(a) for a in actions],
                    "content_hash": frame.content_hash if frame else None,
                    "store_path": frame.store_path if frame else None,
                    "user_messages": messages,
                    "last_special": last_special,
                    "protocol": protocol.state() if protocol is not None else None,
                    "stop": stop,
                }
            )
            if stop:
                break
        self._finish(task, controller, rec, last_special, error)

    def _step(
        self,
        controller: Controller,
        rec: Recorder,
        turn: int,
        action: Any,
        special: str | None,
        response: str,
        protocol: Protocol | None,
        frame: Frame | None,
    ) -> tuple[Frame, bool]:
        stamp = utc_stamp()
        began = time.perf_counter()
        done, info, extra = False, {}, {}
        if special == "WAIT":
            time.sleep(self.s.wait_s)
        elif special == "FAIL":
            done, info = True, {"fail": True}
        elif special == "DONE":
            done, info = True, {"done": True}
        else:
            extra = self._execute(controller, action)
            time.sleep(self.s.settle_s)
        action_s = time.perf_counter() - began
        shot_began = time.perf_counter()
        new_frame = self.store.put(controller.screenshot())
        screenshot_s = time.perf_counter() - shot_began
        record: dict[str, Any] = {
            "step_num": turn,
            "action_timestamp": stamp,
            "action": _jsonable(action),
            "response": response,
            "reward": 0,
            "done": done,
            "info": info,
        }
        if protocol is not None:
            record["phase"] = protocol.phase
        record["screenshot_file"] = f"step_{turn}_{stamp}.png"
        record.update(extra)
        record["action_s"] = round(action_s, 6)
        record["screenshot_s"] = round(screenshot_s, 6)
        rec.step(record, new_frame)
        return new_frame, done

    def _finish(
        self,
        task: Mapping[str, Any],
        controller: Controller,
        rec: Recorder,
        last_special: str | None,
        error: str | None,
    ) -> None:
        if error is not None:
            rec.end(
                {
                    "result_status": "missing",
                    "score": None,
                    "details": {},
                    "err_message": f"{error}; not evaluated",
                }
            )
            return
        evaluation = evaluate(
            controller, task.get("evaluator"), last_action=last_special, base_dir=self.base_dir
        )
        status = {"ok": "ok", "unevaluated": "unevaluated"}.get(evaluation.status, "missing")
        reason = evaluation.details.get("reason")
        rec.end(
            {
                "result_status": status,
                "score": evaluation.score,
                "details": evaluation.details,
                "err_message": None if status == "ok" else reason,
            }
        )


def _take_calls(agent: Any) -> list[Any]:
    take = getattr(agent, "take_calls", None)
    return list(take()) if callable(take) else []


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


def run_row(
    *,
    run_id: str,
    benchmark: str,
    source: str,
    run_name: str,
    agent_label: str,
    model: str | None,
    observation_type: str,
    max_steps: int,
    args: Mapping[str, Any],
) -> dict[str, Any]:
    """The `runs` row of a collected run (n_task_folders: the episodes folded so far)."""
    from deskscore.schemas import TABLES

    row = {
        "run_id": run_id,
        "benchmark": benchmark,
        "source": source,
        "run_path": run_name,
        "format": FORMAT,
        "action_space": "pyautogui",
        "observation_type": observation_type,
        "model": model,
        "agent": agent_label,
        "max_steps": max_steps,
        "args_json": json.dumps(dict(args), sort_keys=True, default=str),
        "n_task_folders": 0,
        "summary_source": None,
        "fingerprint": None,
    }
    known = {f.name for f in TABLES["runs"].fields}
    return {k: v for k, v in row.items() if k in known}


def live_episodes(warehouse: str, benchmark: str, run_id: str) -> list[Path]:
    """Episodes of the run still in the live area (in flight, or cut short)."""
    from deskscore.collectors.live.record import LIVE_DIR
    from deskscore.collectors.warehouse.store import _segment

    base = Path(warehouse).resolve() / LIVE_DIR / _segment(benchmark) / _segment(run_id)
    return sorted(p.parent for p in base.glob("*/*/episode.json")) if base.is_dir() else []


__all__ = [
    "FORMAT",
    "Collector",
    "Context",
    "EpisodeResult",
    "Settings",
    "env_identity",
    "live_episodes",
    "run_row",
    "utc_stamp",
]

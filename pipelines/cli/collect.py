"""`deskscore collect`: run an agent on real desktops, straight into the warehouse.

The loop, the recording and the resume rules are in `deskscore.collectors.live` (see
collect.py and record.py there); this module parses the command line, builds the agent,
the desktops and the simulated user, and prints what was collected.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from deskscore.pipelines.cli.common import UserError
from deskscore.pipelines.options import CollectOptions, add_options

SECRET_WORDS = ("key", "token", "secret", "password")
"""Option names refused on the command line: secrets come from the environment only."""
USER_VARS = {
    "base_url": ("DESKSCORE_USER_BASE_URL",),
    "model": ("DESKSCORE_USER_MODEL",),
    "key": ("DESKSCORE_USER_API_KEY",),
}


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "collect",
        help="run an agent on real desktops (containers or a running controller) into the warehouse",
        description=(
            "Run an agent on each task: a desktop from the provider, the task's setup steps, "
            "then turns of screenshot -> agent -> actions through the desktop's controller "
            "(OSWorld's protocol) until DONE, FAIL or the step budget; interactive (DeskCraft) "
            "tasks get a simulated user. Every step is recorded as it happens (Parquet, the "
            "same tables ingest writes; screenshots content-addressed in the warehouse), the "
            "task's evaluator scores the final state, and --resume continues a killed run."
        ),
    )
    add_options(p, CollectOptions)
    p.set_defaults(handler=run)


def _options(pairs: Sequence[str]) -> dict[str, str]:

    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise UserError(f"--agent-option {pair!r}: expected NAME=VALUE")
        if any(w in name.lower() for w in SECRET_WORDS):
            raise UserError(
                f"--agent-option {name}: secrets are read from the environment only, never "
                "from the command line (they would land in the run's arguments)"
            )
        out[name] = value
    return out


def _provider_spec(o: CollectOptions) -> str:

    kind = o.provider
    if kind == "local":
        if not o.url:
            raise UserError("--provider local needs --url http://HOST:PORT of a running controller")
        return f"local:{o.url}"
    if kind == "docker" and o.image:
        return f"docker:{o.image}"
    return kind


def _user_factory(o: CollectOptions, environ: Mapping[str, str]) -> Any:
    from deskscore.collectors.live.users import make_user

    if o.user == "scripted":
        return lambda task: make_user("scripted", task)
    from deskscore.collectors.chat import ChatClient

    endpoint = o.user_endpoint or environ.get(USER_VARS["base_url"][0])
    model = o.user_model or environ.get(USER_VARS["model"][0])
    if not endpoint or not model:
        raise UserError(
            "--user llm needs --user-endpoint and --user-model (or DESKSCORE_USER_BASE_URL and "
            "DESKSCORE_USER_MODEL)"
        )
    key = environ.get(o.user_key_env) or None
    try:
        ChatClient(endpoint, model, key)
    except ValueError as e:
        raise UserError(str(e)) from None
    return lambda task: make_user("llm", task, ChatClient(endpoint, model, key))


def _check_image(provider: Any) -> None:
    """Fail at once, not once per task, when the engine or the image is missing; and remove
    the sandbox containers killed runs left behind."""
    import docker.errors

    from deskscore.collectors.live.providers import ProviderError, cleanup_leftovers

    try:
        provider.client.images.get(provider.image)
    except docker.errors.ImageNotFound:
        raise ProviderError(
            f"image {provider.image} is not in the Docker engine; build the sandbox with "
            "`deskscore sandbox build`, or pull the image you named"
        ) from None
    for name in cleanup_leftovers(provider.client):
        print(f"removed container {name}, left by a run that no longer runs", file=sys.stderr)


def _check_vm(provider: Any, parallel: int) -> int:
    """Fail at once when QEMU or the VM disk is missing, remove the VMs killed runs left
    behind, and lower `parallel` to what the memory holds (returned)."""
    from deskscore.collectors.live.providers import ProviderError
    from deskscore.collectors.live.qemu import QEMU_OVERHEAD_MB, cleanup_vm_leftovers
    from deskscore.collectors.live.qemu import parallel_bound as bound

    if not provider.disk.exists():
        raise ProviderError(
            f"the VM disk {provider.disk.tag} is not built; build it with "
            "`deskscore sandbox build --vm`"
        )
    for name in cleanup_vm_leftovers():
        print(f"removed VM {name}, left by a run that no longer runs", file=sys.stderr)
    allowed = bound(parallel, provider.memory_mb + QEMU_OVERHEAD_MB)
    if allowed < parallel:
        print(
            f"deskscore collect: --parallel {parallel} lowered to {allowed}: the available "
            f"memory holds {allowed} VM(s) of {provider.memory_mb} MB",
            file=sys.stderr,
        )
    return allowed


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    o = CollectOptions.from_args(args)
    from deskscore.collectors.chat import display_url
    from deskscore.collectors.ids import run_id as make_run_id
    from deskscore.collectors.live.agents import AgentError, agent_label, load_agent
    from deskscore.collectors.live.collect import (
        Collector,
        Context,
        Settings,
        live_episodes,
        run_row,
    )
    from deskscore.collectors.live.providers import ProviderError, provider_from_spec
    from deskscore.collectors.live.record import ScreenshotStore
    from deskscore.collectors.live.tasks import load_tasks
    from deskscore.collectors.warehouse import Warehouse

    if beam_args:
        raise UserError(f"unknown options {' '.join(beam_args)} (collect does not run in Beam)")
    if o.max_steps < 1 or o.parallel < 1:
        raise UserError("--max-steps and --parallel must be at least 1")
    environ = dict(os.environ)
    try:
        task_set = load_tasks(o.tasks)
    except ValueError as e:
        raise UserError(str(e)) from None
    for problem in task_set.problems:
        print(f"deskscore collect: task left out: {problem}", file=sys.stderr)
    if not task_set.tasks:
        raise UserError("no task to collect")
    agent_options = _options(o.agent_option)
    spec = _provider_spec(o)
    if spec.split(":", 1)[0] == "docker":
        from deskscore.pipelines.infra.extras import require

        require("docker", "deskscore collect --provider docker")
    if spec.startswith("local:") and o.parallel > 1:
        raise UserError("--provider local is one desktop: --parallel must be 1")
    try:
        probe = load_agent(o.agent, agent_options)
        provider = provider_from_spec(spec)
        if getattr(provider, "name", "") == "docker":
            _check_image(provider)
        parallel = o.parallel
        if getattr(provider, "name", "") == "qemu":
            parallel = _check_vm(provider, parallel)
    except (AgentError, ValueError, ProviderError) as e:
        raise UserError(str(e)) from None
    users = _user_factory(o, environ)
    label = agent_label(probe, o.agent)
    benchmark = o.benchmark or ("sandbox" if o.tasks is None else "live")
    run_name = o.run_name or f"{label}@{task_set.name}"
    rid = make_run_id("live", f"{benchmark}/{run_name}")
    wh = Warehouse(o.warehouse)
    part = {"benchmark": benchmark, "run_id": rid}
    held = wh.read("episodes", part, columns=["task_id"]).num_rows
    in_flight = live_episodes(o.warehouse, benchmark, rid)
    if (held or in_flight) and not o.resume:
        raise UserError(
            f"run {run_name!r} ({rid}) already has {held} collected episode(s)"
            + (f" and {len(in_flight)} interrupted" if in_flight else "")
            + "; pass --resume to continue it, or --run-name NAME to start another run"
        )
    run_args = {
        "tasks": o.tasks or "(bundled sandbox tasks)",
        "agent": o.agent,
        "agent_options": agent_options,
        "provider": display_url(spec.partition(":")[2]) if spec.startswith("local:") else spec,
        "max_steps": o.max_steps,
        "user": o.user,
        "user_model": o.user_model if o.user == "llm" else None,
        "settle_s": o.settle,
        "python": o.python,
    }
    row = run_row(
        run_id=rid,
        benchmark=benchmark,
        source=ScreenshotStore(o.warehouse).uri,
        run_name=run_name,
        agent_label=label,
        model=getattr(probe, "model", None),
        observation_type=str(getattr(probe, "observation_type", "screenshot")),
        max_steps=o.max_steps,
        args=run_args,
    )
    settings = Settings(
        warehouse=o.warehouse,
        benchmark=benchmark,
        run_name=run_name,
        max_steps=o.max_steps,
        parallel=parallel,
        osworld_dir=o.osworld_dir,
        settle_s=o.settle,
        python=o.python,
        lock_wait_s=o.wait,
    )
    if o.osworld_dir:
        from deskscore.collectors.live.osworld_dir import run_root, write_args

        write_args(
            run_root(o.osworld_dir, label),
            {
                **run_args,
                "model": label,
                "action_space": "pyautogui",
                "observation_type": "screenshot",
            },
        )
    first = [probe]

    labels = {"run_id": rid} if spec.split(":", 1)[0] in ("docker", "qemu") else {}

    def make_context() -> Context:
        agent = first.pop() if first else load_agent(o.agent, agent_options)
        return Context(agent, provider_from_spec(spec, **labels), users)

    collector = Collector(
        settings, row, base_dir=task_set.base_dir, log=lambda line: print(line, flush=True)
    )
    print(
        f"collecting {len(task_set.tasks)} task(s) of {task_set.name} with {label} on {spec} "
        f"into {o.warehouse} (benchmark {benchmark}, run {run_name}, id {rid})",
        flush=True,
    )
    try:
        results = collector.run(task_set.tasks, make_context)
    except ProviderError as e:
        raise UserError(str(e)) from None
    counts: dict[str, int] = {}
    for r in results:
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
    scored = [r.score for r in results if r.score is not None]
    print(
        "done: "
        + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        + (f"; success {sum(s == 1 for s in scored)}/{len(scored)} evaluated" if scored else "")
        + f"; run id {rid}"
    )
    return 1 if counts.get("failed") else 0


__all__ = ["add_parser", "run"]

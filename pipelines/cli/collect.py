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

SECRET_WORDS = ("key", "token", "secret", "password")
"""Option names refused on the command line: secrets come from the environment only."""
USER_VARS = {
    "base_url": ("DESKSCORE_USER_BASE_URL",),
    "model": ("DESKSCORE_USER_MODEL",),
    "key": ("DESKSCORE_USER_API_KEY",),
}


def add_parser(sub: Any) -> None:
    """The `collect` subcommand's arguments (registered by pipelines/cli.py)."""
    from deskscore.pipelines.cli.args import warehouse_arg

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
    p.add_argument(
        "--tasks",
        help="task configs: a JSON file (a list, or {domain: [...]}) or an OSWorld-style folder "
        "of <domain>/<id>.json (default: the bundled sandbox tasks)",
    )
    p.add_argument(
        "--agent",
        required=True,
        help="scripted:PLAN.json, openai[:MODEL] (endpoint and key from the environment: "
        "DESKSCORE_AGENT_BASE_URL or OPENAI_BASE_URL, DESKSCORE_AGENT_API_KEY or "
        "OPENAI_API_KEY), or module:Class (an OSWorld-shaped agent)",
    )
    p.add_argument(
        "--agent-option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a constructor argument of the agent (repeatable); never a key: keys come from the "
        "environment",
    )
    p.add_argument(
        "--provider",
        default="docker",
        help="docker (the sandbox image; --image for another), host (the sandbox desktop on "
        "this machine, needs Xvfb), or local (a controller already running at --url)",
    )
    p.add_argument("--image", help="docker provider: the image (default: the sandbox image)")
    p.add_argument("--url", help="local provider: the controller's URL, e.g. http://127.0.0.1:5000")
    warehouse_arg(p)
    p.add_argument(
        "--benchmark",
        help="benchmark name stored with the run (default: sandbox for the bundled tasks, "
        "else live)",
    )
    p.add_argument(
        "--run-name",
        help="the run's name; its id derives from it and the benchmark (default: "
        "<agent>@<task set>)",
    )
    p.add_argument(
        "--max-steps", type=int, default=15, help="model turns per episode, all phases (default 15)"
    )
    p.add_argument(
        "--parallel", type=int, default=1, help="episodes at once, each on its own desktop"
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run: skip collected episodes, finish or restart interrupted ones",
    )
    p.add_argument(
        "--osworld-dir",
        metavar="DIR",
        help="also write OSWorld-style result folders (traj.jsonl, result.txt, step_N_<ts>.png)",
    )
    p.add_argument(
        "--user",
        default="scripted",
        choices=("scripted", "llm"),
        help="simulated user of interactive tasks: scripted (answers from the phase "
        "instructions) or llm (an OpenAI-compatible model with DeskCraft's JSON contract: "
        "--user-endpoint and --user-model, or DESKSCORE_USER_BASE_URL and DESKSCORE_USER_MODEL; "
        "key from --user-key-env)",
    )
    p.add_argument("--user-endpoint", help="llm user: base URL of the API")
    p.add_argument("--user-model", help="llm user: the model")
    p.add_argument(
        "--user-key-env",
        default="DESKSCORE_USER_API_KEY",
        metavar="NAME",
        help="llm user: environment variable holding its API key (default DESKSCORE_USER_API_KEY)",
    )
    p.add_argument(
        "--settle", type=float, default=0.5, help="seconds after an action before its screenshot"
    )
    p.add_argument(
        "--python",
        default="python",
        help="interpreter the controller runs pyautogui code with (default python, as OSWorld)",
    )
    p.add_argument(
        "--wait",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="how long an episode's fold waits for another job's writer lock (default 600)",
    )
    p.set_defaults(handler=cmd_collect)


def _options(pairs: Sequence[str]) -> dict[str, str]:
    from deskscore.pipelines.cli.commands import UserError

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


def _provider_spec(args: argparse.Namespace) -> str:
    from deskscore.pipelines.cli.commands import UserError

    kind = args.provider
    if kind == "local":
        if not args.url:
            raise UserError("--provider local needs --url http://HOST:PORT of a running controller")
        return f"local:{args.url}"
    if kind == "docker" and args.image:
        return f"docker:{args.image}"
    return kind


def _user_factory(args: argparse.Namespace, environ: Mapping[str, str]) -> Any:
    from deskscore.collectors.live.users import make_user
    from deskscore.pipelines.cli.commands import UserError

    if args.user == "scripted":
        return lambda task: make_user("scripted", task)
    from deskscore.collectors.chat import ChatClient

    endpoint = args.user_endpoint or environ.get(USER_VARS["base_url"][0])
    model = args.user_model or environ.get(USER_VARS["model"][0])
    if not endpoint or not model:
        raise UserError(
            "--user llm needs --user-endpoint and --user-model (or DESKSCORE_USER_BASE_URL and "
            "DESKSCORE_USER_MODEL)"
        )
    key = environ.get(args.user_key_env) or None
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


def cmd_collect(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
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
    from deskscore.pipelines.cli.commands import UserError

    if beam_args:
        raise UserError(f"unknown options {' '.join(beam_args)} (collect does not run in Beam)")
    if args.max_steps < 1 or args.parallel < 1:
        raise UserError("--max-steps and --parallel must be at least 1")
    environ = dict(os.environ)
    try:
        task_set = load_tasks(args.tasks)
    except ValueError as e:
        raise UserError(str(e)) from None
    for problem in task_set.problems:
        print(f"deskscore collect: task left out: {problem}", file=sys.stderr)
    if not task_set.tasks:
        raise UserError("no task to collect")
    options = _options(args.agent_option)
    spec = _provider_spec(args)
    if spec.startswith("local:") and args.parallel > 1:
        raise UserError("--provider local is one desktop: --parallel must be 1")
    try:
        probe = load_agent(args.agent, options)
        provider = provider_from_spec(spec)
        if getattr(provider, "name", "") == "docker":
            _check_image(provider)
    except (AgentError, ValueError, ProviderError) as e:
        raise UserError(str(e)) from None
    users = _user_factory(args, environ)
    label = agent_label(probe, args.agent)
    benchmark = args.benchmark or ("sandbox" if args.tasks is None else "live")
    run_name = args.run_name or f"{label}@{task_set.name}"
    rid = make_run_id("live", f"{benchmark}/{run_name}")
    wh = Warehouse(args.warehouse)
    part = {"benchmark": benchmark, "run_id": rid}
    held = wh.read("episodes", part, columns=["task_id"]).num_rows
    in_flight = live_episodes(args.warehouse, benchmark, rid)
    if (held or in_flight) and not args.resume:
        raise UserError(
            f"run {run_name!r} ({rid}) already has {held} collected episode(s)"
            + (f" and {len(in_flight)} interrupted" if in_flight else "")
            + "; pass --resume to continue it, or --run-name NAME to start another run"
        )
    run_args = {
        "tasks": args.tasks or "(bundled sandbox tasks)",
        "agent": args.agent,
        "agent_options": options,
        "provider": display_url(spec.partition(":")[2]) if spec.startswith("local:") else spec,
        "max_steps": args.max_steps,
        "user": args.user,
        "user_model": args.user_model if args.user == "llm" else None,
        "settle_s": args.settle,
        "python": args.python,
    }
    row = run_row(
        run_id=rid,
        benchmark=benchmark,
        source=ScreenshotStore(args.warehouse).uri,
        run_name=run_name,
        agent_label=label,
        model=getattr(probe, "model", None),
        observation_type=str(getattr(probe, "observation_type", "screenshot")),
        max_steps=args.max_steps,
        args=run_args,
    )
    settings = Settings(
        warehouse=args.warehouse,
        benchmark=benchmark,
        run_name=run_name,
        max_steps=args.max_steps,
        parallel=args.parallel,
        osworld_dir=args.osworld_dir,
        settle_s=args.settle,
        python=args.python,
        lock_wait_s=args.wait,
    )
    if args.osworld_dir:
        from deskscore.collectors.live.osworld_dir import run_root, write_args

        write_args(
            run_root(args.osworld_dir, label),
            {
                **run_args,
                "model": label,
                "action_space": "pyautogui",
                "observation_type": "screenshot",
            },
        )
    first = [probe]

    labels = {"run_id": rid} if spec.split(":", 1)[0] == "docker" else {}

    def make_context() -> Context:
        agent = first.pop() if first else load_agent(args.agent, options)
        return Context(agent, provider_from_spec(spec, **labels), users)

    collector = Collector(
        settings, row, base_dir=task_set.base_dir, log=lambda line: print(line, flush=True)
    )
    print(
        f"collecting {len(task_set.tasks)} task(s) of {task_set.name} with {label} on {spec} "
        f"into {args.warehouse} (benchmark {benchmark}, run {run_name}, id {rid})",
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


__all__ = ["add_parser", "cmd_collect"]

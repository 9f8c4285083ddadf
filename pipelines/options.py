"""Each job's options: one frozen object per job, built once, from the command line or by a caller.

A field is declared once, with its default, its help and its command-line flag (`option`);
`add_options` turns the declarations into argparse arguments (each help ends with the default
it shows, taken from the field) and `from_args` builds the object back from the parsed
arguments. Jobs take the object whole, so an option travels in one form from the command line
to the stage that uses it, and what is derived from options (a score configuration, its file
name) is a property here, not re-derived along the way.

Only the standard library and light deskscore modules are imported: the CLI builds its parser
from these classes without loading Beam.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from deskscore.collectors.image_parts import MAX_SIDE
from deskscore.pipelines.infra.runner import ENGINES
from deskscore.scorers.config import (
    COMPAT_MODES,
    DEFAULT_BOOTSTRAP_RESAMPLES,
    DEFAULT_BOOTSTRAP_SEED,
    DEFAULT_COMPAT,
    DEFAULT_HUMAN_VERSION,
    DEFAULT_MAX_STEPS_SCORING,
    HUMAN_VERSIONS,
    ScoreConfig,
)
from deskscore.scorers.judge import DEFAULT_K, check_k

DEFAULT_WAREHOUSE = "warehouse"
DEFAULT_WAIT = 600.0
"""Seconds a job that writes waits for another job's writer lock, in every command: long
enough for an ingest or a score to finish, so jobs queue instead of failing."""
SETTINGS = ("warehouse", "wait")
"""Fields whose default a user can set once (the environment, deskscore.toml: see
pipelines.cli.settings): on the command line they default to None, filled in after parsing."""

T = TypeVar("T", bound="JobOptions")


def option(default: Any, *flags: str, help: str, **argparse_kw: Any) -> Any:
    """A dataclass field that is also a command-line option.

    `flags` are the option strings ('--max-steps-scoring'), or one bare name for a positional
    argument, or none for a field callers set but the command line does not; `argparse_kw`
    holds what else argparse needs (type, choices, action, metavar, nargs)."""
    meta = {"flags": flags, "help": help, "argparse": argparse_kw}
    if isinstance(default, list | dict | set):
        raise TypeError("option defaults must be immutable (use a tuple)")
    return field(default=default, metadata=meta)


def _shown_default(f: dataclasses.Field[Any]) -> str:
    if f.name in SETTINGS:
        where = "$DESKSCORE_WAREHOUSE, else " if f.name == "warehouse" else ""
        value = f"{f.default:g}" if isinstance(f.default, float) else f.default
        return f" (default: {where}deskscore.toml's {f.name}, else {value})"
    action = f.metadata["argparse"].get("action")
    if action in ("store_true", "store_false", "append") or f.default in (None, (), ""):
        return ""
    return f" (default {f.default})"


def add_options(
    parser: argparse.ArgumentParser, cls: type[JobOptions], *, skip: Sequence[str] = ()
) -> None:
    """Declare every command-line field of `cls` (but `skip`) on `parser`."""
    for f in fields(cls):
        flags = f.metadata.get("flags") if f.metadata else None
        if not flags or f.name in skip:
            continue
        kw = dict(f.metadata["argparse"])
        kw["help"] = f.metadata["help"] + _shown_default(f)
        if flags[0].startswith("-"):
            kw["dest"] = f.name
            # argparse appends to its default: start from None, `from_args` makes it a tuple
            kw["default"] = (
                None if kw.get("action") == "append" or f.name in SETTINGS else f.default
            )
            parser.add_argument(*flags, **kw)
        else:
            parser.add_argument(f.name, **kw)


def _value(f: dataclasses.Field[Any], raw: Any) -> Any:
    if raw is None and (f.default == () or f.name in SETTINGS):
        return f.default
    if isinstance(raw, list):
        return tuple(raw)
    return raw


@dataclass(frozen=True)
class JobOptions:
    """What every job that writes the warehouse takes."""

    warehouse: str = option(DEFAULT_WAREHOUSE, "--warehouse", help="the warehouse folder")
    wait: float = option(
        DEFAULT_WAIT,
        "--wait",
        type=float,
        metavar="SECONDS",
        help="if another job is writing the warehouse, wait this long for it (0: refuse at once)",
    )
    beam_args: tuple[str, ...] = ()
    """Standard Beam pipeline options (--runner=..., ...), for jobs that run in Beam."""

    @classmethod
    def from_args(cls: type[T], args: argparse.Namespace, beam_args: Sequence[str] = ()) -> T:
        """The options of a parsed command line (fields it does not set keep their default)."""
        values = {
            f.name: _value(f, getattr(args, f.name))
            for f in fields(cls)
            if f.init and hasattr(args, f.name)
        }
        return cls(**values, beam_args=tuple(beam_args))

    def replace(self: T, **changes: Any) -> T:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class BeamJobOptions(JobOptions):
    """What every job whose stages run per run or per source takes (see infra.runner)."""

    engine: str = option(
        "auto",
        "--engine",
        choices=ENGINES,
        help="where the stages run: direct (this process, no pipeline), local (this process "
        "and --workers - 1 worker processes, no pipeline), beam (a Beam pipeline: the local "
        "runner, or the one --runner=... names), auto (beam when a Beam option is given, "
        "direct for one or two runs or one worker, else local)",
    )
    workers: int | None = option(
        None,
        "--workers",
        type=int,
        help="local worker processes (default: one per core when there is more than one "
        "archive or run; 1 runs everything in this process)",
    )


def _runs(what: str) -> Any:
    return option((), "--run", action="append", help=f"{what} only this run id (repeatable)")


def _force(what: str) -> Any:
    return option(False, "--force", action="store_true", help=what)


def _compact() -> Any:
    return option(
        True,
        "--no-compact",
        action="store_false",
        help="leave small run files as they are (default: fold them into packs afterwards)",
    )


PRICES_HELP = (
    "a price CSV (columns model,input_per_mtok,cached_input_per_mtok,cache_write_per_mtok,"
    "output_per_mtok,read_on,source; USD per million tokens) whose rows replace or add to the "
    "bundled price table"
)


@dataclass(frozen=True)
class IngestOptions(BeamJobOptions):
    """`deskscore ingest`: which sources, read how, into which warehouse."""

    sources: tuple[str, ...] = option(
        (),
        "sources",
        nargs="+",
        help="result folders, .zip archives, fsspec URLs, globs ('runs/*.zip', "
        "'s3://bucket/*.zip') or @FILE (a list file, one source per line)",
    )
    benchmark: str = option("osworld", "--benchmark", help="benchmark name stored with the runs")
    layout: str | None = option(
        None,
        "--layout",
        help="where task folders sit, e.g. '{domain}/{task_id}' (default: find <domain>/<uuid>/ "
        "folders)",
    )
    agent: str | None = option(
        None,
        "--agent",
        metavar="NAME",
        help="who ran these runs, stored as runs.agent (default: the model from args.json or the "
        "folder levels, else the run's folder)",
    )
    run_name: str | None = option(
        None,
        "--run-name",
        metavar="NAME",
        help="the name tables show these runs by (runs.run_name); runs that share a name are "
        "told apart by the part of their paths that differs (default: the agent)",
    )
    force: bool = _force("read and rewrite every source, even those already ingested unchanged")
    compact: bool = _compact()
    trial_of: str | None = option(
        None,
        "--trial-of",
        metavar="NAME",
        help="the runs of these sources are trials of one configuration named NAME (their "
        "runs.run_group), e.g. results1/ and results2/ ingested one after the other; trial "
        "figures (pass@k, pass^k) are computed per group. Relabelling an ingested source "
        "needs --force",
    )

    @property
    def recorded(self) -> dict[str, str | None]:
        """The options that decide a source's rows besides its bytes, recorded with the source
        (table `sources`) and with each of its runs: the next ingest reads a source again when
        one of them differs, and `check` re-counts a run with the layout it was found with."""
        return {
            "benchmark": self.benchmark,
            "layout": self.layout,
            "agent": self.agent,
            "run_name": self.run_name,
        }


@dataclass(frozen=True)
class ScoreOptions(BeamJobOptions):
    """`deskscore score`: one scoring configuration, and the stages computed with it."""

    human_version: str = option(
        DEFAULT_HUMAN_VERSION,
        "--human-version",
        choices=HUMAN_VERSIONS,
        help="OSWorld-Human data version",
    )
    max_steps_scoring: int = option(
        DEFAULT_MAX_STEPS_SCORING,
        "--max-steps-scoring",
        type=int,
        help="the floor of S, the step budget of WES- and WES (S = max(this, the run's longest "
        "t_agent); 15 as OSWorld-Human)",
    )
    compat: str = option(
        DEFAULT_COMPAT,
        "--compat",
        choices=COMPAT_MODES,
        help="scoring rules: 'deskscore' counts executed actions as t_agent (runner error "
        "lines and blank or garbled lines are not steps), scores an episode with no action 0 "
        "instead of dividing by zero, treats an empty, unparseable or non-finite result.txt as "
        "not run, clamps r into [0, 1] and caps a task's WES+ at r; 'osworld-human' reproduces "
        "OSWorld-Human's score.py exactly, quirks included (t_agent = lines of traj.jsonl)",
    )
    human_path: str | None = option(
        None,
        "--human-path",
        help="an OSWorld-Human data folder to read instead of the bundled figures",
    )
    runs: tuple[str, ...] = _runs("score")
    loops: bool = option(
        True, "--no-loops", action="store_false", help="skip loop detection (loop_spans)"
    )
    costs: bool = option(
        True,
        "--no-costs",
        action="store_false",
        help="skip pricing the model calls (run_costs, ...)",
    )
    prices: str | None = option(None, "--prices", help=PRICES_HELP)
    deskcraft_tasks: str | None = option(
        None,
        "--deskcraft-tasks",
        metavar="DIR",
        help="DeskCraft's evaluation_examples folder, read into the tasks table (default: the "
        "bundled DeskCraft task figures, written when DeskCraft runs are scored)",
    )
    bootstrap_resamples: int = option(
        DEFAULT_BOOTSTRAP_RESAMPLES,
        "--bootstrap-resamples",
        type=int,
        metavar="B",
        help="bootstrap resamples of the tasks behind each run figure's standard error and 95%% "
        "interval (run_score_intervals; 0: none)",
    )
    bootstrap_seed: int = option(
        DEFAULT_BOOTSTRAP_SEED,
        "--bootstrap-seed",
        type=int,
        help="the bootstrap's seed, so intervals are reproducible",
    )
    force: bool = _force(
        "score every run again, even those whose inputs are unchanged since last time"
    )
    compact: bool = _compact()

    @property
    def config(self) -> ScoreConfig:
        """The scoring configuration the figures are stored under."""
        return ScoreConfig(self.human_version, self.max_steps_scoring, self.compat)


@dataclass(frozen=True)
class CostOptions(BeamJobOptions):
    """`deskscore cost`: pricing runs again (the score job prices them too)."""

    prices: str | None = option(
        None, "--prices", help=PRICES_HELP + "; the runs are priced again with it before printing"
    )
    runs: tuple[str, ...] = _runs("price and print")


@dataclass(frozen=True)
class HashOptions(BeamJobOptions):
    """`deskscore hash`: screenshots of which runs, decoded how."""

    runs: tuple[str, ...] = _runs("hash")
    threads: int | None = None
    """Decoding threads per worker (default: the CPU count, 2 to 8)."""
    max_pixels: int | None = None
    """Images above this many pixels are not decoded (default: the image rules' cap)."""


@dataclass(frozen=True)
class ReportOptions(JobOptions):
    """`deskscore report`: which runs, written where."""

    out: str = option("report.html", "--out", help="the HTML file")
    runs: tuple[str, ...] = _runs("report")
    png: str | None = option(
        None, "--png", help="also write each figure as a PNG (300 dpi) into this folder"
    )
    svg: str | None = option(
        None, "--svg", help="also write each figure as an SVG into this folder"
    )
    pdf: str | None = option(None, "--pdf", help="also write each figure as a PDF into this folder")


@dataclass(frozen=True)
class JudgeOptions(JobOptions):
    """`deskscore judge`: which endpoint and model judge, how many rounds, how hard to push.

    The API key is not an option: it is read from the environment variable `api_key_env`
    names, by the command, and lives only in the HTTP client."""

    endpoint: str = option(
        "",
        "--endpoint",
        required=True,
        help="base URL of the API, e.g. https://api.openai.com/v1 (POST "
        "<endpoint>/chat/completions)",
    )
    model: str = option(
        "", "--model", required=True, help="the judge model, as the endpoint names it"
    )
    k: int = option(DEFAULT_K, "--k", type=int, help="consecutive passing rounds needed")
    rounds: int | None = option(
        None, "--rounds", type=int, help="most rounds played per episode (default: k; >= k)"
    )
    max_screenshots: int = option(
        6,
        "--max-screenshots",
        type=int,
        help="screenshots sent per episode, evenly spaced, the last included",
    )
    runs: tuple[str, ...] = _runs("judge")
    api_key_env: str = option(
        "OPENAI_API_KEY",
        "--api-key-env",
        metavar="NAME",
        help="environment variable holding the API key",
    )
    concurrency: int = option(4, "--concurrency", type=int, help="requests in flight at once")
    timeout_s: float = option(
        120.0, "--timeout", type=float, metavar="SECONDS", help="seconds to wait for one reply"
    )
    max_retries: int = option(
        4,
        "--max-retries",
        type=int,
        help="retries of a request after 429, 5xx or a network failure",
    )
    backoff_s: float = 1.0
    """First retry's pause; it doubles per retry, with jitter."""
    max_side: int = MAX_SIDE
    """Screenshots are downscaled to at most this many pixels per side before they are sent."""

    @property
    def budget(self) -> int:
        """Rounds at most per episode (raises ValueError for a bad k or rounds)."""
        return check_k(self.k, self.rounds)


@dataclass(frozen=True)
class CollectOptions(JobOptions):
    """`deskscore collect`: which tasks, which agent on which desktops, recorded how."""

    tasks: str | None = option(
        None,
        "--tasks",
        help="task configs: a JSON file (a list, or {domain: [...]}) or an OSWorld-style folder "
        "of <domain>/<id>.json (default: the bundled sandbox tasks)",
    )
    agent: str = option(
        "",
        "--agent",
        required=True,
        help="scripted:PLAN.json, openai[:MODEL] (endpoint and key from the environment: "
        "DESKSCORE_AGENT_BASE_URL or OPENAI_BASE_URL, DESKSCORE_AGENT_API_KEY or "
        "OPENAI_API_KEY), or module:Class (an OSWorld-shaped agent)",
    )
    agent_option: tuple[str, ...] = option(
        (),
        "--agent-option",
        action="append",
        metavar="NAME=VALUE",
        help="a constructor argument of the agent (repeatable); never a key: keys come from "
        "the environment",
    )
    provider: str = option(
        "docker",
        "--provider",
        help="docker (the sandbox image; --image for another), host (the sandbox desktop on "
        "this machine, needs Xvfb), qemu (the sandbox in a VM per episode, resumed from a "
        "saved state; qemu:boot boots each one), or local (a controller already running at "
        "--url)",
    )
    image: str | None = option(
        None, "--image", help="docker provider: the image (default: the sandbox image)"
    )
    url: str | None = option(
        None, "--url", help="local provider: the controller's URL, e.g. http://127.0.0.1:5000"
    )
    benchmark: str | None = option(
        None,
        "--benchmark",
        help="benchmark name stored with the run (default: sandbox for the bundled tasks, "
        "else live)",
    )
    run_name: str | None = option(
        None,
        "--run-name",
        help="the run's name; its id derives from it and the benchmark (default: "
        "<agent>@<task set>)",
    )
    max_steps: int = option(15, "--max-steps", type=int, help="model turns per episode, all phases")
    parallel: int = option(
        1, "--parallel", type=int, help="episodes at once, each on its own desktop"
    )
    resume: bool = option(
        False,
        "--resume",
        action="store_true",
        help="continue the run: skip collected episodes, finish or restart interrupted ones",
    )
    osworld_dir: str | None = option(
        None,
        "--osworld-dir",
        metavar="DIR",
        help="also write OSWorld-style result folders (traj.jsonl, result.txt, step_N_<ts>.png)",
    )
    user: str = option(
        "scripted",
        "--user",
        choices=("scripted", "llm"),
        help="simulated user of interactive tasks: scripted (answers from the phase "
        "instructions) or llm (an OpenAI-compatible model with DeskCraft's JSON contract: "
        "--user-endpoint and --user-model, or DESKSCORE_USER_BASE_URL and "
        "DESKSCORE_USER_MODEL; key from --user-key-env)",
    )
    user_endpoint: str | None = option(
        None, "--user-endpoint", help="llm user: base URL of the API"
    )
    user_model: str | None = option(None, "--user-model", help="llm user: the model")
    user_key_env: str = option(
        "DESKSCORE_USER_API_KEY",
        "--user-key-env",
        metavar="NAME",
        help="llm user: environment variable holding its API key",
    )
    settle: float = option(
        0.5, "--settle", type=float, help="seconds after an action before its screenshot"
    )
    python: str = option(
        "python",
        "--python",
        help="interpreter the controller runs pyautogui code with (as OSWorld)",
    )
    wait: float = option(
        DEFAULT_WAIT,
        "--wait",
        type=float,
        metavar="SECONDS",
        help="how long an episode's fold waits for another job's writer lock",
    )


__all__ = [
    "DEFAULT_WAIT",
    "DEFAULT_WAREHOUSE",
    "PRICES_HELP",
    "SETTINGS",
    "BeamJobOptions",
    "CollectOptions",
    "CostOptions",
    "HashOptions",
    "IngestOptions",
    "JobOptions",
    "JudgeOptions",
    "ReportOptions",
    "ScoreOptions",
    "add_options",
    "option",
]

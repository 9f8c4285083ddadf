"""Running a Beam pipeline: the local runner pinned, any other runner through standard options."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from typing import Any


def _given(beam_args: Sequence[str], flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in beam_args)


def local_workers(parallel: int | None, workers: int | None = None) -> int:
    """Worker processes for a local run of `parallel` independent elements: `workers` when
    the user chose, else one per core, never more than there are elements to share."""
    if workers is not None:
        return max(1, workers)
    return max(1, min(os.cpu_count() or 1, parallel or 1))


RUNNER_ALIASES = {"DaskRunner": "apache_beam.runners.dask.dask_runner.DaskRunner"}
"""Short runner names Beam itself does not resolve (it knows DirectRunner, FlinkRunner, ...)."""


def _option(beam_args: Sequence[str], flag: str) -> str | None:
    for i, a in enumerate(beam_args):
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
        if a == flag and i + 1 < len(beam_args):
            return beam_args[i + 1]
    return None


def runner_args(beam_args: Sequence[str], parallel: int | None) -> list[str]:
    """`beam_args` with a short runner name resolved, and for a Dask cluster one partition per
    element unless --dask_npartitions is given: Beam's Dask runner does not spread elements
    on a Reshuffle, so partitions are its only parallelism."""
    args = list(beam_args)
    for i, a in enumerate(args):
        name = a.split("=", 1)[1] if a.startswith("--runner=") else None
        if name in RUNNER_ALIASES:
            args[i] = f"--runner={RUNNER_ALIASES[name]}"
        elif a == "--runner" and i + 1 < len(args) and args[i + 1] in RUNNER_ALIASES:
            args[i + 1] = RUNNER_ALIASES[args[i + 1]]
    runner = _option(args, "--runner") or ""
    if runner.endswith("DaskRunner") and not _given(args, "--dask_npartitions") and parallel:
        args.append(f"--dask_npartitions={max(1, parallel)}")
    return args


class RunnerUnavailable(RuntimeError):
    """The runner --runner names cannot run from here; the message says why in one line and
    what to do."""


DASK_PROBE_SECONDS = 10.0
"""How long a Dask scheduler has to answer before a job starts (--dask_connection_timeout
overrides it)."""


def _probe_dask(address: str, timeout: float) -> str | None:
    """None if a Dask scheduler answers at `address` within `timeout` seconds, else why not.
    The client connects in a thread of its own: on an address that is not a scheduler (its
    dashboard, say) it would wait for a handshake that never comes."""
    import threading

    from distributed import Client

    outcome: list[str | None] = []

    def connect() -> None:
        try:
            Client(address, timeout=timeout, set_as_default=False).close()
            outcome.append(None)
        except Exception as exc:
            outcome.append(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    thread = threading.Thread(target=connect, name="dask-probe", daemon=True)
    thread.start()
    thread.join(timeout + 1)
    return outcome[0] if outcome else f"no answer after {timeout:g} s"


def check_runner(beam_args: Sequence[str]) -> None:
    """Raise RunnerUnavailable before any work when the Dask runner cannot run: the dask extra
    is missing, or no scheduler answers at --dask_client_address (Beam's runner would fail
    later with a traceback, or hang). Other runners are left to Beam."""
    runner = _option(beam_args, "--runner") or ""
    if not runner.endswith("DaskRunner"):
        return
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise RunnerUnavailable(
            "--runner=DaskRunner needs the dask extra: pip install 'deskscore[dask]'"
        ) from None
    address = _option(beam_args, "--dask_client_address")
    if not address:
        return  # Beam starts a Dask cluster of this machine's processes
    timeout = float(_option(beam_args, "--dask_connection_timeout") or DASK_PROBE_SECONDS)
    why = _probe_dask(address, timeout)
    if why is not None:
        raise RunnerUnavailable(
            f"no Dask scheduler answers at {address} ({why}): start one ('dask scheduler') "
            "or fix --dask_client_address"
        )


def pipeline(
    beam_args: Sequence[str] = (), *, parallel: int | None = None, workers: int | None = None
) -> Any:
    """A Beam pipeline for `beam_args` (standard Beam flags such as --runner=FlinkRunner).

    Without --runner the in-process FnApiRunner is pinned: the default runner would first try
    to download Prism, which is slower and impossible offline. With more than one worker
    (see `local_workers`; `parallel` is how many independent elements the job starts from)
    it runs them as processes (`multi_processing`): reading archives is Python work under
    the GIL, so threads give no speed-up here while processes use every core (see
    benchmarks/batch.py). --direct_num_workers and --direct_running_mode still win.
    """
    from deskscore.pipelines.infra.extras import require

    require("apache_beam", "a Beam pipeline (--engine beam, or Beam's options such as --runner)")
    import apache_beam as beam
    from apache_beam.options.pipeline_options import (
        DirectOptions,
        PipelineOptions,
    )

    logging.getLogger("apache_beam").setLevel(logging.ERROR)
    logging.getLogger().setLevel(logging.ERROR)  # Beam's import warns about optional GCP clients
    beam_args = runner_args(beam_args, parallel)
    check_runner(beam_args)
    options = PipelineOptions(beam_args)
    if _given(beam_args, "--runner"):
        return beam.Pipeline(options=options)
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner

    direct = options.view_as(DirectOptions)
    if _given(beam_args, "--direct_running_mode") or _given(beam_args, "--direct_num_workers"):
        return beam.Pipeline(runner=FnApiRunner(), options=options)
    n = local_workers(parallel, workers)
    direct.direct_num_workers = n
    direct.direct_running_mode = "in_memory"  # the environment below makes it processes
    if n == 1:
        return beam.Pipeline(runner=FnApiRunner(), options=options)
    from apache_beam.transforms.environments import SubprocessSDKEnvironment

    worker = SubprocessSDKEnvironment.from_command_string(
        f"{sys.executable} -m deskscore.pipelines.infra.worker"
    )
    return beam.Pipeline(runner=FnApiRunner(default_environment=worker), options=options)


def counters(result: Any) -> dict[str, int]:
    """Committed counter values of a finished pipeline, by name (summed over steps)."""
    from apache_beam.metrics.metric import MetricsFilter

    out: dict[str, int] = {}
    for metric in result.metrics().query(MetricsFilter())["counters"]:
        name = metric.key.metric.name
        value = metric.committed if metric.committed is not None else metric.attempted
        out[name] = out.get(name, 0) + int(value or 0)
    return out


ENGINES = ("auto", "beam", "direct", "local")
"""Where a job's stages run: `direct`, this process, no pipeline; `local`, this process and
worker processes of this machine sharing the elements (no pipeline either: the same stage
calls); `beam`, a Beam pipeline (its local runner, or the one --runner names); `auto`, beam
when a Beam option is given, direct for fewer than `LOCAL_FROM` elements or one worker, else
local."""

LOCAL_FROM = 3
"""Elements from which `auto` starts worker processes: a worker costs about half a second to
start (an interpreter and its imports), about what reading half a run costs."""


def choose_engine(
    engine: str, n_elements: int, workers: int | None, beam_args: Sequence[str]
) -> str:
    """`engine` resolved to 'beam', 'direct' or 'local' (see ENGINES)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: use one of {', '.join(ENGINES)}")
    if engine != "auto":
        return engine
    if beam_args:
        return "beam"
    if n_elements < LOCAL_FROM or local_workers(n_elements, workers) == 1:
        return "direct"
    return "local"


def run_direct(stages: Sequence[Any], elements: Sequence[Any]) -> list[Any]:
    """Each element through every stage in turn, in this process (as a fused Beam chain runs
    them); returns what the last stage yielded."""
    from deskscore.pipelines.infra.local import LocalPool

    return LocalPool(1).run_stages(stages, elements)


def run_stages(
    stages: Sequence[Any],
    elements: Sequence[Any],
    *,
    engine: str = "auto",
    workers: int | None = None,
    beam_args: Sequence[str] = (),
    pool: Any = None,
) -> str:
    """Run `elements` through `stages` (see deskscore.pipelines.stages.base) on the engine
    chosen (see ENGINES); returns the engine used. A failure anywhere raises, after which
    nothing may be recorded as done: the job's caller records it only after this returns."""
    if not elements:
        return "direct"
    from deskscore.collectors.formats import process_local

    if process_local():
        workers = 1  # a format registered in this process is known here only
    used = choose_engine(engine, len(elements), workers, beam_args)
    if used != "beam":
        return run_here(stages, elements, engine=used, workers=workers, pool=pool)[0]
    from deskscore.pipelines.infra.extras import require

    require("apache_beam", "a Beam pipeline (--engine beam, or Beam's options such as --runner)")
    import apache_beam as beam

    from deskscore.pipelines.infra.beam_stages import Stages

    p = pipeline(beam_args, parallel=len(elements), workers=workers)
    _ = p | "Elements" >> beam.Create(list(elements)) | "Stages" >> Stages(stages)
    p.run().wait_until_finish()
    return used


def run_here(
    stages: Sequence[Any],
    elements: Sequence[Any],
    *,
    engine: str,
    workers: int | None = None,
    pool: Any = None,
) -> tuple[str, list[Any]]:
    """`run_stages` on this machine without a pipeline (`engine` 'direct' or 'local'), for
    a job that needs what the last stage yielded: (the engine used, those outputs, in
    element order)."""
    from deskscore.collectors.formats import process_local

    if engine not in ("direct", "local"):
        raise ValueError(f"run_here runs 'direct' or 'local', not {engine!r}")
    if process_local():
        workers = 1  # a format registered in this process is known here only
    if engine == "local" and local_workers(len(elements), workers) == 1:
        engine = "direct"
    if engine == "direct":
        return engine, run_direct(stages, elements)
    if pool is not None:
        return engine, pool.run_stages(stages, elements)
    from deskscore.pipelines.infra.local import local_pool

    with local_pool(local_workers(len(elements), workers)) as own:
        return engine, own.run_stages(stages, elements)

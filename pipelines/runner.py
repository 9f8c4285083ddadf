"""Running a Beam pipeline: the local runner pinned, any other runner through standard options."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any


def pipeline(beam_args: Sequence[str] = ()) -> Any:
    """A Beam pipeline for `beam_args` (standard Beam flags such as --runner=FlinkRunner).

    Without --runner the in-process FnApiRunner is pinned: the default runner would first try
    to download Prism, which is slower and impossible offline.
    """
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    logging.getLogger("apache_beam").setLevel(logging.ERROR)
    logging.getLogger().setLevel(logging.ERROR)  # Beam's import warns about optional GCP clients
    options = PipelineOptions(list(beam_args))
    if any(a == "--runner" or a.startswith("--runner=") for a in beam_args):
        return beam.Pipeline(options=options)
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner

    return beam.Pipeline(runner=FnApiRunner(), options=options)


def counters(result: Any) -> dict[str, int]:
    """Committed counter values of a finished pipeline, by name (summed over steps)."""
    from apache_beam.metrics.metric import MetricsFilter

    out: dict[str, int] = {}
    for metric in result.metrics().query(MetricsFilter())["counters"]:
        name = metric.key.metric.name
        value = metric.committed if metric.committed is not None else metric.attempted
        out[name] = out.get(name, 0) + int(value or 0)
    return out

"""Stages as Beam transforms: each stage one ParDo, chained, so a job is one linear pipeline.

One chain, one terminal: no tagged outputs, no side inputs, no output from `finish_bundle`, so
every Beam runner computes every stage (some runners split tagged outputs differently, or
compute only one of several sinks). Figures are read back from what the stages wrote, not
taken from Beam metrics, which not every runner reports.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import apache_beam as beam

from deskscore.pipelines.infra.memory import released

if TYPE_CHECKING:
    from deskscore.pipelines.stages.base import Stage


class StageFn(beam.DoFn):
    """A stage run by Beam: its setup and teardown per worker, its process per element,
    with the element's memory given back to the system before the outputs go on."""

    def __init__(self, stage: Stage) -> None:
        self.stage = stage

    def setup(self) -> None:
        self.stage.setup()

    def process(self, element: Any) -> Iterator[Any]:
        yield from released(self.stage.process, element)

    def teardown(self) -> None:
        self.stage.teardown()


def step_name(stage: Stage) -> str:
    return type(stage).__name__.removesuffix("Stage")


class Stages(beam.PTransform):
    """Elements -> the last stage's outputs, through `stages` in order. Elements are spread
    over the workers first, and again after a stage that fans out (one element in, many
    out, e.g. a source into its runs)."""

    def __init__(self, stages: Sequence[Stage]) -> None:
        super().__init__()
        self.stages = list(stages)

    def expand(self, elements: beam.PCollection) -> beam.PCollection:
        out = elements | "Spread" >> beam.Reshuffle()
        for stage in self.stages:
            name = step_name(stage)
            out = out | name >> beam.ParDo(StageFn(stage))
            if getattr(stage, "fans_out", False):
                out = out | f"Spread{name}" >> beam.Reshuffle()
        return out

"""`deskscore cost --prices`: pricing runs again, outside a score job.

The score job prices every run it scores; this job re-prices runs with another price table
(or prices runs no score has priced yet), through the same stage.
"""

from __future__ import annotations

from collections.abc import Sequence

from deskscore.pipelines.options import CostOptions


def run_costs(options: CostOptions, run_ids: Sequence[str] | None = None) -> list[str]:
    """Price the runs `run_ids` (default: `options.runs`, or every run) with the bundled price
    table overridden by `options.prices`; returns the run ids priced. Raises PriceError for a
    bad price file, before anything is written."""
    from deskscore.collectors.warehouse import Warehouse
    from deskscore.pipelines.infra.runner import run_stages
    from deskscore.pipelines.jobs.score import check_outputs
    from deskscore.pipelines.stages.base import run_keys
    from deskscore.pipelines.stages.costs import CostsStage
    from deskscore.scorers.cost import load_prices

    table = load_prices(options.prices)
    with Warehouse(options.warehouse).transaction() as wh:
        keys = run_keys(wh, run_ids if run_ids is not None else options.runs)
        stage = CostsStage(str(wh.root), table, job=wh.job)
        run_stages(
            [stage],
            keys,
            engine=options.engine,
            workers=options.workers,
            beam_args=options.beam_args,
        )
        check_outputs(wh, [stage], keys)
    return [k.run_id for k in keys]

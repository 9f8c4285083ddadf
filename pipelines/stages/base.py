"""What every per-run stage shares: the run key, and the stage class the jobs chain.

A stage is plain Python: `setup` once per worker, `process(element)` per element (yielding
what the next stage takes), `teardown` at the end. It knows nothing of Beam, so the same
stages run as a Beam pipeline (`infra.runner` wraps each one in a DoFn and chains them) and
directly, in this process, where starting a pipeline would cost more than the work.

Most stages are per run (`RunStage`): `run(key)` reads the run's partitions, computes with
the pure scorers and writes the run's files; the key then goes on to the next stage.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

if TYPE_CHECKING:
    from deskscore.collectors.warehouse import Warehouse
    from deskscore.scorers.config import ScoreConfig


class RunKey(NamedTuple):
    """A run of the warehouse, as every per-run stage addresses it (from the `runs` table)."""

    benchmark: str
    run_id: str
    format: str
    """The reader that produced the run (runs.format)."""
    source: str
    """Where its files are (runs.source): stages that read screenshots open it."""

    @property
    def partition(self) -> dict[str, str]:
        """The run's partition in every per-run table."""
        return {"benchmark": self.benchmark, "run_id": self.run_id}


def config_rows(
    wh: Warehouse,
    name: str,
    columns: list[str],
    config: ScoreConfig,
    partitions: Sequence[dict[str, str]] | None = None,
) -> list[dict]:
    """Rows of a score table under `config`: its file in every run's partition (or in those
    of `partitions`, each run's rows together and in order), not those of the other
    configurations scored."""
    import pyarrow.compute as pc

    keys = ["human_version", "max_steps_scoring", "compat"]
    wanted = [*columns, *keys]
    data = (
        wh.read(name, columns=wanted, file=config.file)
        if partitions is None
        else wh.read_partitions(name, partitions, columns=wanted, file=config.file)
    )
    human, budget, compat = config.key()
    mask = pc.and_(
        pc.and_(
            pc.equal(data.column("human_version"), human),
            pc.equal(data.column("max_steps_scoring"), budget),
        ),
        pc.equal(data.column("compat"), compat),
    )
    return data.filter(mask).select(columns).to_pylist()


def run_keys(wh: Warehouse, run_ids: Iterable[str] = ()) -> list[RunKey]:
    """The warehouse's runs (only `run_ids`, when given), sorted by benchmark and run id."""
    wanted = set(run_ids)
    rows = wh.read("runs", columns=["benchmark", "run_id", "format", "source"]).to_pylist()
    keys = {
        RunKey(r["benchmark"], r["run_id"], r["format"], r["source"])
        for r in rows
        if not wanted or r["run_id"] in wanted
    }
    return sorted(keys)


class Stage:
    """One step of a job. Instances travel to worker processes (pickled), so they hold only
    small, picklable settings until `setup` opens what a worker needs."""

    label: ClassVar[str]
    """What progress counts for this stage ('runs scored', 'loops', ...)."""
    pack_writes: bool = False
    """Whether the stage's warehouse writes runs' small tables straight into packs (see
    `Warehouse`): only where its teardown is sure to run before the job checks its outputs
    (this machine's engines, not a Beam runner, which may never call it)."""

    def __init__(self, warehouse: str, job: str | None = None) -> None:
        self.warehouse = warehouse
        self.job = job
        """The transaction the stage's writes belong to (see collectors.warehouse): they
        become visible when the job commits, after every stage has run."""

    def setup(self) -> None:
        """Once per worker, before the first element: open the warehouse."""
        from deskscore.collectors.warehouse import Warehouse
        from deskscore.pipelines.infra.memory import arrow_on_malloc
        from deskscore.schemas.validate import pyarrow_without_pandas

        arrow_on_malloc()
        pyarrow_without_pandas()
        self.wh = Warehouse(self.warehouse, self.job, pack_writes=self.pack_writes)

    def process(self, element: Any) -> Iterator[Any]:
        """Do this stage's work for `element`; yield what the next stage takes."""
        raise NotImplementedError

    def teardown(self) -> None:
        """Once per worker, after the last element."""
        wh = getattr(self, "wh", None)
        if wh is not None:
            wh.close()


class RunStage(Stage):
    """A per-run step: subclasses set `label` and `writes`, and implement `run`."""

    writes: ClassVar[Sequence[str]]
    """The tables whose partition files `run` writes for each run, as file 'data' unless
    `outputs` says otherwise."""

    def outputs(self) -> list[tuple[str, str]]:
        """(table, file name) of every file `run` writes in a run's partitions."""
        return [(name, "data") for name in self.writes]

    def missing(self, wh: Warehouse, key: RunKey) -> list[str]:
        """The outputs of this stage that the run lacks, as 'table/file' (read from the
        warehouse: a job checks them before it records the run as done)."""
        return [
            f"{name}/{file}"
            for name, file in self.outputs()
            if not wh.has_file(name, key.partition, file)
        ]

    def run(self, key: RunKey) -> Any:
        """Read the run's partitions, compute, and write this stage's files for the run; what
        it returns goes on to the next stage in place of the key (None: the key itself)."""
        raise NotImplementedError

    def process(self, element: RunKey) -> Iterator[Any]:
        from deskscore.pipelines.infra import progress

        handed_on = self.run(element)
        progress.tick(self.label)
        yield element if handed_on is None else handed_on


__all__ = ["RunKey", "RunStage", "Stage", "run_keys"]

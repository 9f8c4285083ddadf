"""The ingest stage: each run read and written as one unit.

A run is read (`pipelines.stages.read.read_run`) and its tables written by the same worker,
so no episode crosses a shuffle and a worker holds one run at a time. A run whose content
hash equals the stored one is not rewritten (its files, and so its scores, stay as they are),
unless `force` is set.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from deskscore.pipelines.infra import progress
from deskscore.pipelines.stages.base import RunStage
from deskscore.pipelines.stages.elements import ListedSource, RunWork, SourceItem

STAGE = "ingest"
"""Each stage keeps its own quarantine file in a run's partition, so one never erases another's."""
GONE = "unreadable_source"
"""The quarantine reason of a run whose source changed under the ingest."""
UNSTORABLE = "unstorable_run"
"""The quarantine reason of a run holding a value its tables cannot store (one no reader's
check foresaw): the run is left out, the ingest goes on."""
_UNSTORABLE_ERRORS = (ValueError, TypeError, OverflowError, UnicodeError, RecursionError)
"""What building a run's Arrow tables raises on such a value (Arrow's own errors derive from
ValueError and TypeError)."""


def sorted_quarantine(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda q: (q["location"], q.get("line_no") or 0, q["reason"]))


def write_source_problems(wh: Any, benchmark: str, source_run_id: str, rows: list[dict]) -> None:
    """A source's own quarantine partition (removed when it has no problem, which clears an
    earlier list)."""
    part = {"benchmark": benchmark, "run_id": source_run_id}
    if rows:
        wh.write("quarantine", sorted_quarantine(rows), part, file=STAGE)
    else:
        wh.remove("quarantine", part, file=STAGE)


class IngestStage(RunStage):
    """RunWork -> the run's partitions, written atomically: runs, episodes, steps,
    step_actions, llm_calls (an empty file when the archive records no call), interactions
    (formats that record them) and this stage's quarantine."""

    label = "runs written"
    writes = ("runs", "episodes", "steps", "step_actions", "llm_calls")

    def __init__(
        self,
        warehouse: str,
        layout: str | None,
        force: bool,
        run_fields: dict[str, Any] | None = None,
        job: str | None = None,
    ) -> None:
        super().__init__(warehouse, job)
        self.layout = layout
        self.force = force
        self.run_fields = dict(run_fields or {})
        """Fields every run row of this ingest gets (the options recorded with it)."""

    def setup(self) -> None:
        from deskscore.pipelines.stages.read import OpenSources

        super().setup()
        self._sources = OpenSources(self.layout)

    def teardown(self) -> None:
        sources = getattr(self, "_sources", None)
        if sources is not None:
            sources.close()
        super().teardown()

    def missing(self, wh: Any, work: RunWork) -> list[str]:
        """A run gone from its source while it was ingested, or holding a value its tables
        cannot store, has a quarantine row instead of its tables (the next ingest reads the
        source again)."""
        gaps = super().missing(wh, work)
        if gaps:
            reasons = wh.read("quarantine", work.partition, columns=["reason"], file=STAGE)
            if {GONE, UNSTORABLE} & set(reasons.column(0).to_pylist()):
                return []
        return gaps

    def process(self, element: RunWork | SourceItem) -> Iterator[RunWork | ListedSource]:
        """A run: read and write it. A source: list it and, when it holds a single run, read
        that run here with the source still open (its directory parsed once, not twice);
        yield the listing, saying whether its runs were read."""
        if isinstance(element, SourceItem):
            yield self._list_and_read(element)
            return
        self.run(element)  # progress is ticked inside: written and unchanged runs apart
        yield element

    def _list_and_read(self, item: SourceItem) -> ListedSource:
        from deskscore.pipelines.stages.discover import open_and_list

        listing, opened = open_and_list(*item)
        if opened is None:
            return ListedSource(listing, False)
        source, runs = opened
        try:
            if len(listing.runs) != 1:
                return ListedSource(listing, False)
            work = listing.runs[0]
            self.run(work, (source, runs[work.key.run_id]))
        finally:
            source.close()  # its one run is read: keeping it open would only hold memory
        return ListedSource(listing, True)

    def _unchanged(self, part: dict[str, str], run: dict[str, Any]) -> bool:
        """Whether the stored run has this content hash; a new source stamp or name is
        recorded."""
        stored = self.wh.read("runs", part).to_pylist()
        if len(stored) != 1 or stored[0]["content_hash"] != run["content_hash"]:
            return False
        if any(stored[0].get(k) != v for k, v in run.items()):
            self.wh.write("runs", [run], part)  # same tables; only the stamp or names moved
        return True

    def _quarantine_run(self, work: RunWork, reason: str, message: str) -> None:
        """The run's one quarantine row, in place of its tables."""
        key = work.key
        row = {
            "run_id": key.run_id,
            "benchmark": key.benchmark,
            "source": key.source,
            "location": work.run_path,
            "line_no": None,
            "reason": reason,
            "message": message,
            "excerpt": None,
        }
        self.wh.write("quarantine", [row], work.partition, file=STAGE)

    def run(self, work: RunWork, opened: tuple[Any, Any] | None = None) -> None:
        """Read and write the run `work` names, from `opened` (its source and RunFolder,
        when the caller has just listed it) or from this worker's open sources."""
        from deskscore.collectors.source import SourceError
        from deskscore.pipelines.stages.read import read_run
        from deskscore.schemas import conform_rows

        key, part = work.key, work.partition
        try:
            source, run = (
                opened if opened is not None else self._sources.run(key.source, key.run_id)
            )
        except SourceError as exc:
            run, problem = None, f"{exc}; the source changed while it was being ingested"
        else:
            problem = f"{key.source}: run {work.run_path or '.'} is gone from the source"
        if run is None:
            self._quarantine_run(work, GONE, problem + "; ingest it again")
            return
        try:  # every table of the run built before any is written: all of them, or none
            read = read_run(source, run, work)
            read.run.update(self.run_fields)
            run_row = conform_rows("runs", [read.run])
            quarantine = conform_rows("quarantine", sorted_quarantine(read.quarantine))
        except _UNSTORABLE_ERRORS as exc:
            where = f"{key.source}!{work.run_path}" if work.run_path else key.source
            self._quarantine_run(
                work,
                UNSTORABLE,
                f"{where}: the run holds a value its tables cannot store "
                f"({type(exc).__name__}: {exc}); the run was left out, the rest ingested. "
                "Please report it with the file that holds the value",
            )
            return
        progress.tick("episodes", read.n_episodes)
        if not self.force and self._unchanged(part, read.run):
            progress.tick("runs unchanged")
            return
        self.wh.write("runs", run_row, part)
        for name, table in read.tables.items():  # interactions: formats that record exchanges
            self.wh.write(name, table, part)
        if quarantine.num_rows:
            self.wh.write("quarantine", quarantine, part, file=STAGE)
        else:
            self.wh.remove("quarantine", part, file=STAGE)
        progress.tick("runs written")

"""The first step of ingest: open each source, list it once, and name the runs it holds.

On this machine's engines a worker lists a source and, when it holds a single run, reads that
run before closing it (`IngestStage` with a `SourceItem`): listing a zip parses its central
directory, a fifth of the cost of reading the run, and it is paid once. The runs of a source
that holds several are handed out one per element, so a release of many runs in one archive
spreads over every worker. On Beam the job lists every source first, then the runs are the
pipeline's elements.
"""

from __future__ import annotations

from typing import Any

from deskscore.pipelines.stages.base import RunKey
from deskscore.pipelines.stages.elements import RunWork, SourceListing


def problem_rows(
    source: str, benchmark: str, run_id: str, items: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Quarantine rows of a source's own problems (location, reason, message, excerpt)."""
    return [
        {
            "run_id": run_id,
            "benchmark": benchmark,
            "source": source,
            "location": item.get("location") or "",
            "line_no": item.get("line_no"),
            "reason": item.get("reason") or "source_problem",
            "message": item.get("message") or "",
            "excerpt": item.get("excerpt"),
        }
        for item in items
    ]


def list_source(
    uri: str,
    stamp: str | None,
    benchmark: str,
    layout: str | None,
    trial_of: str | None = None,
) -> SourceListing:
    """Open `uri`, list it, and find its runs (`stamp`: the source's stamp taken when the
    ingest was planned, before opening it, so a change while it is read is caught by the next
    ingest). `trial_of` makes every run found a trial of that group (`ingest --trial-of`).
    Never raises for the source's content: problems become quarantine rows."""
    listing, opened = open_and_list(uri, stamp, benchmark, layout, trial_of)
    if opened is not None:
        opened[0].close()
    return listing


_SOME_UUID = "00000000-0000-0000-0000-000000000000"


def _no_task_folders_todo(files: list[str], layout: str | None = None) -> str:
    """What to do about a source where no task folder was found, for the sources users point
    at by mistake, told by the discovery rules themselves: a --layout one level short (a zip
    of one top folder), a domain folder (one level more above it would make it a run), a task
    folder (two levels more); otherwise how OSWorld trees are found and what --layout is
    for."""
    from deskscore.collectors.layout import discover

    if layout is not None:
        deeper = f"*/{layout.strip().strip('/')}"
        try:
            found = discover(files, deeper)
        except ValueError:  # a pattern one level deeper that the rules refuse
            found = []
        if found:
            return (
                f"--layout is matched from the source's top, and {layout!r} finds nothing "
                f"there: its task folders sit one level deeper; pass --layout '{deeper}'"
            )
        return (
            f"--layout {layout!r} matches no folder from the source's top (inside a folder, "
            "at a zip's root); check its levels against the source's folders"
        )
    if discover(f"_/{f}" for f in files):
        return (
            "Its folders are task folders: it is a domain folder; ingest the run folder above "
            "it, which holds <domain>/<task_id>/ folders"
        )
    if discover(f"_/{_SOME_UUID}/{f}" for f in files):
        return (
            "It holds a task's files itself: it is a task folder; ingest the run folder that "
            "holds <domain>/<task_id>/ folders (two levels up)"
        )
    return (
        "OSWorld trees are found by their <domain>/<uuid>/ folders; for other trees pass "
        "--layout, e.g. --layout '{domain}/{task_id}'"
    )


def open_and_list(
    uri: str,
    stamp: str | None,
    benchmark: str,
    layout: str | None,
    trial_of: str | None = None,
) -> tuple[SourceListing, tuple[Any, dict[str, Any]] | None]:
    """`list_source`, leaving the source open: the listing, and (the open source, its
    RunFolders by run id) for reading them without listing the source again (None when it
    could not be opened). The caller closes the source."""
    from deskscore.collectors.ids import source_id
    from deskscore.collectors.layout import discover_source
    from deskscore.collectors.source import SourceError, open_source
    from deskscore.collectors.trials import run_identity, trial_label
    from deskscore.pipelines.infra import progress

    sid = source_id(uri)
    try:
        source = open_source(uri)
    except SourceError as exc:
        item = {"location": "", "reason": "unreadable_source", "message": str(exc)}
        return SourceListing(uri, 0, 0, [], problem_rows(uri, benchmark, sid, [item])), None
    try:
        files = source.files()
        problems = list(getattr(source, "problems", []) or [])
        runs, listed = discover_source(source, layout)
        problems.extend(listed)
        if not runs and not listed:
            problems.append(
                {
                    "location": "",
                    "reason": "no_task_folders",
                    "message": (
                        f"{source.uri}: no task folders found ({len(files)} files). "
                        + _no_task_folders_todo(files, layout)
                    ),
                }
            )
        work = []
        by_id = {}
        for run in runs:
            run_id, group = run_identity(source.uri, run)
            key = RunKey(benchmark, run_id, run.format, source.uri)
            trial = trial_label(run, source.name, trial_of)
            work.append(RunWork(key, run.run_path, stamp, trial, trial_of or group))
            by_id[run_id] = run
            progress.tick("runs found")
        n_tasks = sum(len(r.tasks) for r in runs)
        rows = problem_rows(source.uri, benchmark, source_id(source.uri), problems)
    except BaseException:
        source.close()
        raise
    return SourceListing(uri, len(files), n_tasks, work, rows), (source, by_id)

"""The trajectory formats deskscore reads: one `Format` object each, in one registry.

A format says everything the rest of deskscore needs to know about an archive layout:

- how its task folders are found in a source's listing (`find`, default discovery) and
  whether a folder at a `--layout` pattern's depth is one of its task folders (`at_layout`);
- how a run's metadata and its episodes are read (`read_run_meta`, `read_episode`, and
  `read_light`, the single-run read of score.py that builds no step rows);
- how its tasks key into OSWorld-Human's data (`human_key`: by task id, or by instruction
  text as UI-TARS submissions do), which task facts describe its tasks (`facts_family`:
  infeasible flags, `conj`, DeskCraft's levels and modes), and whether `deskscore check` can
  re-count its trajectory lines from the source (`recount_lines`), or how it re-counts a form
  whose units are not JSONL lines (`recount`).

Discovery, ingest, scoring, verdicts, the task index, `check` and score.py look a format up
here by the name `runs.format` stores; nothing else compares format names.

Detection order is the registry's order: a folder two formats would claim belongs to the
one registered first (a format declares `before` to be tried ahead of another, e.g. a richer
variant of OSWorld's folders before "osworld"). Under `--layout`, formats that recognise a
folder by what it holds are tried in that order, and a folder none of them claims belongs to
the `layout_default` format (OSWorld's: any folder of trajectory files).

Adding a format is one call: `register(Format(name=..., find=..., read_episode=...))`.

How a format reaches worker processes: Beam's multi-process local runner, and any remote
runner, runs the ingest and score stages in other Python processes, which import this module
afresh. Each sees the built-in formats and those declared under the `deskscore.formats`
entry-point group of an installed distribution, loaded on first use in every process, e.g.
in the plugin's pyproject.toml::

    [project.entry-points."deskscore.formats"]
    myformat = "mypackage.formats:MYFORMAT"   # a Format (or a callable returning one)

A format passed to `register()` exists in the calling process only (`process_local()`
names them): while there is one, `run_ingest` and `run_score` run their stages in-process,
with one worker. Declare it as an entry point to use every core.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from deskscore.collectors import inspect_log
from deskscore.collectors.claude_messages import with_messages
from deskscore.collectors.deskcraft import INTERACTION_LOG, read_deskcraft_episode
from deskscore.collectors.deskcraft_tasks import BENCHMARK as DESKCRAFT_BENCHMARK
from deskscore.collectors.layout import RunFolder, TaskFolder, is_deskcraft_stem, is_uuid
from deskscore.collectors.osworld import EpisodeCalls, EpisodeRead, read_episode
from deskscore.collectors.osworld import read_episode_calls as _read_osworld
from deskscore.collectors.run_meta import RunMeta, read_run_meta
from deskscore.collectors.source import Source
from deskscore.collectors.step_traces import (
    find_trace_runs,
    holds_traces,
    read_trace_episode,
    read_trace_run_meta,
    recount_problems,
)
from deskscore.collectors.trials import with_trial_folders
from deskscore.collectors.uitars import read_uitars_episode
from deskscore.scorers.domains import UITARS_DOMAIN

ENTRY_POINT_GROUP = "deskscore.formats"

BY_TASK_ID = "task_id"
"""Human data key: the task folder's (domain, task id)."""
BY_INSTRUCTION = "instruction"
"""Human data key: the instruction text (UI-TARS submissions name tasks by it)."""

FAMILY_OSWORLD = "osworld"
FAMILY_DESKCRAFT = "deskcraft"
"""Task-facts families: the benchmark whose `tasks` rows describe a format's tasks."""

Listing = Mapping[str, tuple[str, ...]]
"""A source's files by folder: folder path ('' = the source root) -> the sorted names of the
files directly in it (macOS archive metadata left out)."""


class Found(NamedTuple):
    """A task folder a format recognised, and the root of the run it belongs to."""

    run_path: str
    task: TaskFolder
    trial: str | None = None
    """The trial it belongs to, for trial folders below task folders (collectors.trials)."""


class EpisodeReader(Protocol):
    """Reads one task folder fully; never raises on bad content (it becomes quarantine)."""

    def __call__(
        self,
        source: Source,
        run: RunFolder,
        task: TaskFolder,
        *,
        run_id: str,
        benchmark: str,
        reported: dict | None = None,
    ) -> EpisodeCalls: ...


class LightReader(Protocol):
    """Reads one task folder for single-run scoring: no step rows."""

    def __call__(
        self, source: Source, run: RunFolder, task: TaskFolder, *, run_id: str, benchmark: str
    ) -> EpisodeRead: ...


class MetaReader(Protocol):
    """Reads a run's `runs` row and the runner's own per-task results."""

    def __call__(
        self, source: Source, run: RunFolder, *, run_id: str, benchmark: str
    ) -> RunMeta: ...


class Recount(Protocol):
    """`deskscore check` for a format whose units are not JSONL lines: what the warehouse's
    rows of one run (its episodes and quarantine rows) lost against the source."""

    def __call__(
        self,
        source: Source,
        run: RunFolder,
        episodes: Sequence[Mapping[str, Any]],
        quarantine: Sequence[Mapping[str, Any]],
    ) -> list[str]: ...


class Expander(Protocol):
    """Turns a run found by name into the runs it holds (an inspect_ai log: one per epoch),
    with the problems met (quarantine-shaped dicts: location, reason, message)."""

    def __call__(self, source: Source, run: RunFolder) -> tuple[list[RunFolder], list[dict]]: ...


class RunReader(Protocol):
    """Reads every episode of a run at once (a log file that holds the whole run)."""

    def __call__(
        self,
        source: Source,
        run: RunFolder,
        *,
        run_id: str,
        benchmark: str,
        reported: Mapping[tuple[str, str], dict],
    ) -> list[EpisodeCalls]: ...


class LineCounter(Protocol):
    """Re-counts a run's trajectory lines from its source for `deskscore check`: traj_file ->
    lines, as the episodes record them (episodes.traj_file, episodes.n_lines)."""

    def __call__(self, source: Source, run: RunFolder) -> dict[str, int]: ...


class FormatError(ValueError):
    """An unknown format name, a clashing registration or a broken entry point."""


def _finds_nothing(listing: Listing) -> Iterator[Found]:
    return iter(())


def _never(task: TaskFolder) -> bool:
    return False


@dataclass(frozen=True)
class Format:
    """One archive format: detection, readers, and how its tasks are scored.

    `find` sees the whole listing, so detection may look beyond one folder (a per-run file
    beside the task folders, trial levels below them, a single log file per run); formats
    that look at one folder at a time build it with `each_folder`. A format whose episodes are
    not one per task folder (one log file holding a whole run) subclasses this and overrides
    `episodes`.
    """

    name: str
    """What `runs.format` stores."""
    read_episode: EpisodeReader
    """One task folder -> its episode, steps, quarantine, model calls (and exchanges)."""
    find: Callable[[Listing], Iterable[Found]] = _finds_nothing
    """Default discovery: this format's task folders in a source's listing."""
    at_layout: Callable[[TaskFolder], bool] = _never
    """Under --layout: whether this folder at the pattern's depth is one of this format's."""
    layout_default: bool = False
    """Under --layout: this format takes the folders no other format claims."""
    read_light: LightReader | None = None
    """The episode and quarantine rows without step rows; None: the full read, steps dropped."""
    read_run_meta: MetaReader = read_run_meta
    human_key: str = BY_TASK_ID
    """How its tasks key into OSWorld-Human's data: BY_TASK_ID or BY_INSTRUCTION."""
    facts_family: str = FAMILY_OSWORLD
    """Whose task facts (infeasible, conj, levels, modes) describe its tasks."""
    recount_lines: bool = False
    """`deskscore check` may re-count the lines of its task folders' *.jsonl files."""
    recount: Recount | None = None
    """`deskscore check` re-counts its runs with this instead (see `Recount`)."""
    before: str | None = None
    """Detection: tried before this registered format (None: after every one so far)."""
    expand_run: Expander | None = None
    """When listing: the runs a run found by name holds (None: the run as found)."""
    read_run: RunReader | None = None
    """Every episode of a run at once, instead of `read_episode` per task folder."""
    count_lines: LineCounter | None = None
    """`check`'s re-count (with recount_lines); None: the lines of each task folder's *.jsonl."""

    def expand(self, source: Source, run: RunFolder) -> tuple[list[RunFolder], list[dict]]:
        """The runs `run` holds, and the problems met listing them."""
        if self.expand_run is None:
            return [run], []
        return self.expand_run(source, run)

    def episodes(
        self,
        source: Source,
        run: RunFolder,
        *,
        run_id: str,
        benchmark: str,
        reported: Mapping[tuple[str, str], dict],
    ) -> list[EpisodeCalls]:
        """Every episode of `run`, one per task folder, in task order; `reported` holds the
        runner's own results by (domain, task id as the folder names it)."""
        return list(
            self.iter_episodes(source, run, run_id=run_id, benchmark=benchmark, reported=reported)
        )

    def iter_episodes(
        self,
        source: Source,
        run: RunFolder,
        *,
        run_id: str,
        benchmark: str,
        reported: Mapping[tuple[str, str], dict],
    ) -> Iterator[EpisodeCalls]:
        """`episodes`, one at a time: a caller that turns each into columns at once holds one
        episode's rows, not the run's."""
        if self.read_run is not None:
            yield from self.read_run(
                source, run, run_id=run_id, benchmark=benchmark, reported=reported
            )
            return
        for task in run.tasks:
            yield self.read_episode(
                source,
                run,
                task,
                run_id=run_id,
                benchmark=benchmark,
                reported=reported.get((task.domain, task.task_id)),
            )

    def light(
        self, source: Source, run: RunFolder, task: TaskFolder, *, run_id: str, benchmark: str
    ) -> EpisodeRead:
        """The read single-run scoring needs: episode and quarantine rows, no step rows."""
        if self.read_light is not None:
            return self.read_light(source, run, task, run_id=run_id, benchmark=benchmark)
        read = self.read_episode(source, run, task, run_id=run_id, benchmark=benchmark).read
        return read._replace(steps=[], actions=[])


def each_folder(
    detect: Callable[[str, tuple[str, ...]], Found | None],
) -> Callable[[Listing], Iterator[Found]]:
    """A `find` from a test of one folder (its path and file names); the root is never one."""

    def find(listing: Listing) -> Iterator[Found]:
        for folder, names in listing.items():
            if folder:
                found = detect(folder, names)
                if found is not None:
                    yield found

    return find


# ---- the built-in formats ------------------------------------------------------------------


def _split(path: str) -> tuple[str, str]:
    parent, _, name = path.rpartition("/")
    return parent, name


def _has_trajectory(names: tuple[str, ...]) -> bool:
    return any(n.endswith(".jsonl") for n in names)


def _uitars_submission(names: tuple[str, ...]) -> bool:
    return "data.json" in names and "meta.json" in names and not _has_trajectory(names)


def _osworld_folder(path: str, names: tuple[str, ...]) -> Found | None:
    """A UUID-named folder under its domain holding a trajectory or a result."""
    parent, name = _split(path)
    if is_uuid(name) and parent and (_has_trajectory(names) or "result.txt" in names):
        run_path, domain = _split(parent)
        return Found(run_path, TaskFolder(path, domain, name, names))
    return None


def _deskcraft_folder(path: str, names: tuple[str, ...]) -> Found | None:
    """A folder named by a DeskCraft task stem, under its app key's folder, holding a
    trajectory, a result or an interaction log."""
    parent, name = _split(path)
    if (
        parent
        and is_deskcraft_stem(name, _split(parent)[1])
        and (_has_trajectory(names) or "result.txt" in names or INTERACTION_LOG in names)
    ):
        run_path, domain = _split(parent)
        return Found(run_path, TaskFolder(path, domain, name, names))
    return None


def _deskcraft_at_layout(task: TaskFolder) -> bool:
    """Named by a DeskCraft stem of the domain level's app, unless it holds a UI-TARS
    submission (which is UI-TARS's whatever its name)."""
    return is_deskcraft_stem(task.task_id, task.domain) and not _uitars_submission(task.files)


def _uitars_folder(path: str, names: tuple[str, ...]) -> Found | None:
    """data.json + meta.json without a trajectory; the run is the folder above, and tasks
    have no domain (they are named by instruction)."""
    if _uitars_submission(names):
        parent, name = _split(path)
        return Found(parent, TaskFolder(path, UITARS_DOMAIN, name, names))
    return None


def _uitars_at_layout(task: TaskFolder) -> bool:
    return _uitars_submission(task.files)


def _read_osworld_light(
    source: Source, run: RunFolder, task: TaskFolder, *, run_id: str, benchmark: str
) -> EpisodeRead:
    return read_episode(source, run, task, run_id=run_id, benchmark=benchmark, steps=False)


def _read_uitars(
    source: Source,
    run: RunFolder,
    task: TaskFolder,
    *,
    run_id: str,
    benchmark: str,
    reported: dict | None = None,
) -> EpisodeCalls:
    """UI-TARS records no model calls and its runs no summaries (`reported` is unused)."""
    return EpisodeCalls(
        read_uitars_episode(source, run, task, run_id=run_id, benchmark=benchmark), []
    )


def _collected_not_read(source: Source, run: RunFolder, task: TaskFolder, **_: Any) -> Any:
    raise FormatError(
        f"{source.uri}!{task.path}: live runs are written by `deskscore collect` straight into "
        "the warehouse; there is no archive to read"
    )


OSWORLD = Format(
    name="osworld",
    read_episode=with_messages(_read_osworld),
    find=with_trial_folders(_osworld_folder),
    layout_default=True,
    read_light=_read_osworld_light,
    recount_lines=True,
)
"""OSWorld result folders: <domain>/<uuid>/ with traj.jsonl, result.txt, screenshots, and the
messages.json of Anthropic computer-use runs (instruction, per-turn replies: read as part of the
folder, not as a format of its own, so a run whose folders differ stays one run); trial folders
<domain>/<uuid>/<trial>/ make one run per trial (collectors.trials)."""

DESKCRAFT = Format(
    name="deskcraft",
    read_episode=read_deskcraft_episode,
    find=each_folder(_deskcraft_folder),
    at_layout=_deskcraft_at_layout,
    facts_family=FAMILY_DESKCRAFT,
    recount_lines=True,
)
"""DeskCraft runs: OSWorld's files in folders named by task stems, plus the interaction log."""

UITARS = Format(
    name="uitars",
    read_episode=_read_uitars,
    find=each_folder(_uitars_folder),
    at_layout=_uitars_at_layout,
    human_key=BY_INSTRUCTION,
)
"""UI-TARS submissions: <task>/data.json + meta.json, keyed by instruction."""

STEP_TRACES = Format(
    name="step-traces",
    read_episode=read_trace_episode,
    find=lambda listing: (Found(run, task) for run, task in find_trace_runs(listing)),
    at_layout=lambda task: holds_traces(task.files),
    read_run_meta=read_trace_run_meta,
    recount=recount_problems,
)
"""<run>/<task_id>/step_NN_trace.json + <run>/results.csv (an unverified form: see
`collectors.step_traces`); first in BUILT_IN, so tried before OSWorld's folders, which a uuid
folder holding a result.txt beside its step files would also be."""

LIVE = Format(name="live", read_episode=_collected_not_read)
"""Runs `deskscore collect` records: never found in archives; their screenshots live in the
warehouse's store, so `check` cannot re-count them from a source."""

INSPECT = Format(
    name=inspect_log.FORMAT,
    read_episode=inspect_log.read_log_episode,
    find=inspect_log.find_logs,
    expand_run=inspect_log.expand_log,
    read_run=inspect_log.read_log,
    read_run_meta=inspect_log.read_log_meta,
    count_lines=inspect_log.count_log_lines,
    recount_lines=True,
)
"""inspect_ai evaluation logs (.eval) of OSWorld: one run per log file and epoch (epochs are
trials), read through inspect_ai's own log reader (the `inspect` extra)."""

BUILT_IN = (STEP_TRACES, OSWORLD, DESKCRAFT, UITARS, LIVE, INSPECT)


# ---- the registry --------------------------------------------------------------------------

_lock = threading.RLock()
_registry: list[Format] = list(BUILT_IN)
_entry_points_loaded = False
_process_local: set[str] = set()


def _insert(fmt: Format) -> None:
    if not isinstance(fmt, Format):
        raise FormatError(f"{fmt!r} is not a deskscore.collectors.formats.Format")
    for known in _registry:
        if known.name == fmt.name:
            if known is fmt:
                return
            raise FormatError(f"a format named {fmt.name!r} is already registered")
    if fmt.before is None:
        _registry.append(fmt)
        return
    names = [f.name for f in _registry]
    if fmt.before not in names:
        raise FormatError(
            f"format {fmt.name!r} is to be tried before {fmt.before!r}, which is not registered "
            f"(known: {', '.join(names)})"
        )
    _registry.insert(names.index(fmt.before), fmt)


def _entry_point_format(ep: Any) -> Format:
    try:
        obj = ep.load()
        fmt = obj if isinstance(obj, Format) else obj()
    except Exception as e:
        raise FormatError(
            f"entry point {ep.name} = {ep.value} in group {ENTRY_POINT_GROUP!r} could not be "
            f"loaded ({type(e).__name__}: {e}); fix or uninstall the package that declares it"
        ) from e
    if not isinstance(fmt, Format) or fmt.name != ep.name:
        raise FormatError(
            f"entry point {ep.name} = {ep.value} in group {ENTRY_POINT_GROUP!r} must give a "
            f"Format named {ep.name!r}, not {fmt!r}"
        )
    return fmt


def _load_entry_points() -> None:
    """Register the formats installed distributions declare, once per process, by name."""
    global _entry_points_loaded
    with _lock:
        if _entry_points_loaded:
            return
        _entry_points_loaded = True  # before loading: a plugin's import may consult the registry
        from importlib.metadata import entry_points

        try:
            for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
                _insert(_entry_point_format(ep))
        except FormatError:
            _entry_points_loaded = False  # so every later lookup raises it again
            raise


def registered() -> tuple[Format, ...]:
    """Every format, in detection order."""
    _load_entry_points()
    with _lock:
        return tuple(_registry)


def names() -> tuple[str, ...]:
    return tuple(f.name for f in registered())


def get(name: str) -> Format:
    """The format `runs.format` calls `name`; FormatError names the known ones."""
    with _lock:
        for fmt in _registry:
            if fmt.name == name:
                return fmt
    for fmt in registered():  # not built in: maybe an installed plugin's
        if fmt.name == name:
            return fmt
    raise FormatError(
        f"unknown trajectory format {name!r} (known: {', '.join(names())}); a format defined "
        f"outside deskscore must be registered (deskscore.collectors.formats.register) or "
        f"declared under the {ENTRY_POINT_GROUP!r} entry-point group of an installed package"
    )


def register(fmt: Format) -> Format:
    """Add `fmt` to the registry (after every format so far, or before `fmt.before`) and
    return it. Registering the same object again does nothing; another format of the same
    name is an error. In this process only: see the module's doc for worker processes."""
    _load_entry_points()
    with _lock:
        if not any(f is fmt for f in _registry):
            _insert(fmt)
            _process_local.add(fmt.name)
    return fmt


def unregister(name: str) -> None:
    """Remove a format registered at run time (tests, notebooks); built-ins stay."""
    with _lock:
        if any(f.name == name for f in BUILT_IN):
            raise FormatError(f"{name!r} is built in and cannot be unregistered")
        _registry[:] = [f for f in _registry if f.name != name]
        _process_local.discard(name)


def process_local() -> tuple[str, ...]:
    """Formats `register()` added in this process, which worker processes cannot see."""
    with _lock:
        return tuple(sorted(_process_local))


def task_family(benchmark: str, format_name: str) -> str:
    """The task facts a run's tasks take: its format's, except that every run of the DeskCraft
    benchmark takes DeskCraft's (a DeskCraft run read with OSWorld's layout, say)."""
    if benchmark == DESKCRAFT_BENCHMARK:
        return FAMILY_DESKCRAFT
    return get(format_name).facts_family


__all__ = [
    "BUILT_IN",
    "BY_INSTRUCTION",
    "BY_TASK_ID",
    "DESKCRAFT",
    "ENTRY_POINT_GROUP",
    "FAMILY_DESKCRAFT",
    "FAMILY_OSWORLD",
    "INSPECT",
    "LIVE",
    "OSWORLD",
    "STEP_TRACES",
    "UITARS",
    "EpisodeCalls",
    "EpisodeRead",
    "Expander",
    "Format",
    "FormatError",
    "Found",
    "LineCounter",
    "Listing",
    "Recount",
    "RunReader",
    "each_folder",
    "get",
    "names",
    "process_local",
    "register",
    "registered",
    "task_family",
    "unregister",
]

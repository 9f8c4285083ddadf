"""Score one agent run on OSWorld-Human: a drop-in for OSWorld-Human's `score.py`.

    python score.py --result-path RUN    (the repository's score.py runs this)
    python -m deskscore.score_py --result-path RUN [--max-steps-scoring 15] [--uitars]
                    [--human-path DIR | --human-version {2025-06,verified}]
                    [--compat {osworld-human,deskscore}]

RUN is the `<model>` folder (RUN/<domain>/<task_id>/traj.jsonl, result.txt), a .zip of it,
or an fsspec URL. Like the original, it reads the human data from the current folder unless
--human-path is given; --human-version alone uses the step counts bundled with deskscore.

It prints what the original prints, in the same order and, under the default
--compat osworld-human, with the same four figures to the last character. Then it adds the
paper's second-form WES per granularity. Where the original stops with a traceback (an
empty traj.jsonl, a line that is not JSON, an unparseable result.txt), this prints a NOTE
naming the file and line and how it was counted, and goes on. --compat deskscore applies
deskscore's fixed rules (see deskscore.scorers.wes).

Only the standard library and deskscore's light readers and scorers are imported, so it
starts as fast as the original.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from deskscore.collectors import formats, limits
from deskscore.collectors.files import escaped, storable
from deskscore.collectors.human import BUNDLED_VERSIONS, HumanSkip, HumanTask
from deskscore.collectors.human import iter_human_tasks as _iter_human_tasks
from deskscore.collectors.ids import thunderbird_old_to_new
from deskscore.collectors.layout import RunFolder, TaskFolder
from deskscore.collectors.lfs import LFS_POINTER
from deskscore.collectors.lines import count_stream_lines
from deskscore.pipelines.cli.output import printable
from deskscore.scorers.config import ScoreConfig
from deskscore.scorers.domains import OSWORLD_DOMAINS, UITARS_DOMAIN
from deskscore.scorers.run import match_human, score_run

if TYPE_CHECKING:
    from deskscore.collectors.source import Source

_DOMAINS = frozenset(OSWORLD_DOMAINS)
_BAD_LINE = {
    "blank_line": ("is blank", "JSONDecodeError"),
    "invalid_json": ("is not valid JSON", "JSONDecodeError"),
    "not_utf8": ("is not UTF-8", "UnicodeDecodeError"),
}
_MAX_LINE_NOTES = 3  # per file; the rest are summed up in one line
_UNREAD_LINES = (
    "line_too_long",
    "over_run_cap",
    "over_trajectory_cap",
)  # lines counted, not parsed (caps)
_FILE_FAULTS = ("unreadable_file", "too_large", "special_file")  # files that were not read


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Score trajectories on OSWorld-Human (a drop-in for its score.py).",
        epilog="--compat deskscore fixes the original's quirks: t_agent counts executed "
        "actions (not file lines), an empty trajectory scores 0 instead of dividing by zero, "
        "an empty, unparseable or non-finite result.txt counts as not run, r is clamped to "
        "[0, 1], per-task WES+ is capped at r, and a result without a trajectory counts.",
    )
    p.add_argument(
        "--result-path",
        required=True,
        help="The run's <model> folder, a .zip of it, or an fsspec URL.",
    )
    p.add_argument("--max-steps-scoring", type=int, default=15)
    p.add_argument(
        "--uitars", action="store_true", help="UI-TARS trajectories have a different structure."
    )
    p.add_argument(
        "--human-path",
        default=None,
        help="OSWorld-Human data folder (default: the current folder, as the original).",
    )
    p.add_argument(
        "--human-version",
        choices=BUNDLED_VERSIONS,
        default=None,
        help="Without --human-path: use the step counts bundled with deskscore.",
    )
    p.add_argument(
        "--compat",
        choices=("osworld-human", "deskscore"),
        default="osworld-human",
        help="Scoring rules (default osworld-human: the original's, exactly).",
    )
    return p.parse_args(argv)


# ---- human data ---------------------------------------------------------------------------


_NEVER = "\0"
"""Marks the domain of a human task that no trajectory matches: one whose key is not a string
(the original's dict then never equals a folder's name) or whose ground truth has no len()
(the original stops with a TypeError when it scores one; here it counts as not found, and a
NOTE says so when the run has it). It counts among the human tasks, as in the original; no
folder name holds this character."""


def _load_human(
    args: argparse.Namespace, out: Callable[[str], None]
) -> tuple[list[tuple[str, str, int, int]], set[tuple[str, str]]]:
    """Human tasks in the original's dict order, and those of them (domain, task id) whose
    key is a string and whose ground truth has no len(); skip lines go to `out` as the
    original prints them."""
    if args.human_path is None and args.human_version is not None:
        if args.uitars:
            _fail(
                "--uitars matches tasks by instruction text, which the bundled figures do not "
                "hold; pass --human-path with the OSWorld-Human data folder"
            )
        from deskscore.collectors.human import load_bundled

        bundled = [
            (r["domain"], r["task_id"], r["single_steps"], r["grouped_steps"])
            for r in load_bundled(args.human_version)
        ]
        return bundled, set()
    path = args.human_path if args.human_path is not None else "./"
    # The original's dict: keyed by (domain, the file's key as JSON gave it); a repeated key
    # keeps its first place and takes the last file.
    tasks: dict[tuple[str, str, str], HumanTask] = {}
    for item in _iter_human_tasks(path, listdir_order=True, use_query=args.uitars):
        if isinstance(item, HumanSkip):
            out(item.message if item.domain else f"NOTE: {item.message}")
            continue
        domain = UITARS_DOMAIN if args.uitars else item.domain
        tasks[(domain, item.task_id, item.key_type)] = item._replace(domain=domain)
    human, unsized = [], set()
    for (domain, task_id, key_type), item in tasks.items():
        single, grouped = item.single_steps, item.grouped_steps
        if key_type in ("list", "dict"):
            out(f"NOTE: {escaped(item.file)}: its key is a JSON {key_type}; the original stops "
                "here (TypeError: unhashable); counted as a task not found")  # fmt: skip
        if key_type != "str" or single is None or grouped is None:
            domain = _NEVER + domain  # counted, never matched (see _NEVER)
            if key_type == "str":
                unsized.add((domain, task_id))
        human.append((domain, task_id, single or 0, grouped or 0))
    return human, unsized


def _fail(message: str) -> None:
    sys.stdout.flush()
    print(printable(f"error: {message}", lines=True), file=sys.stderr)
    sys.exit(2)


# ---- trajectories -------------------------------------------------------------------------


class _Run:
    """What the traversal found: episodes (dicts), how to name their folders, and notes."""

    def __init__(self) -> None:
        self.episodes: list[dict] = []
        self.display: list[str] = []  # folder as the original names it in its messages
        self.extra_t: list[int] = []
        self.unread: set[int] = set()  # episodes whose trajectory file could not be read


def _listdir(path: str, out: Callable[[str], None]) -> list[str]:
    """os.listdir in its order, without the names that are not UTF-8 (a NOTE says which);
    a folder that cannot be listed ends the run with a one-line error."""
    try:
        names = os.listdir(path)
    except OSError as e:
        _fail(f"cannot list the folder {escaped(path)} ({e.strerror or e}); check its permissions")
    kept = []
    for name in names:
        if storable(name):
            kept.append(name)
        else:
            out(f"NOTE: {escaped(os.path.join(path, name))}: the name is not valid UTF-8 (shown "
                "escaped); left out")  # fmt: skip
    return kept


def _walk_local(
    root: str, uitars: bool, out: Callable[[str], None]
) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(display path, domain, task folder, file names) in the original's os.listdir order."""
    found = []
    if uitars:
        for task in _listdir(root, out):
            full = os.path.join(root, task)
            if os.path.isdir(full):
                found.append((full, UITARS_DOMAIN, task, tuple(_listdir(full, out))))
        return found
    for app in _listdir(root, out):
        if app not in _DOMAINS:
            continue
        app_path = os.path.join(root, app)
        if not os.path.isdir(app_path):
            continue
        for task in _listdir(app_path, out):
            full = os.path.join(app_path, task)
            if os.path.isdir(full):
                found.append((full, app, task, tuple(_listdir(full, out))))
    return found


def _read_run(args: argparse.Namespace, out: Callable[[str], None]) -> _Run:
    """Read the run's task folders and print what each gives as the original does, in its
    order (the reading itself goes by path: see the line budget below)."""
    from deskscore.collectors.source import SourceError, open_source

    root = args.result_path
    local = "://" not in root and os.path.isdir(root)
    try:
        source = open_source(root, follow_links=True)  # as the original, through every link
    except SourceError as e:
        _fail(f"{e}")
    run = _Run()
    # --uitars: the run is a UI-TARS submission, keyed by instruction; else OSWorld's folders
    fmt = formats.UITARS if args.uitars else formats.OSWORLD
    if local:
        listing = [
            (d, dom, t, path_files, f"{dom}/{t}" if dom != UITARS_DOMAIN else t)
            for d, dom, t, path_files in _walk_local(root, args.uitars, out)
        ]
    else:
        from deskscore.collectors.layout import discover

        runs = [
            r for r in discover(source.files()) if formats.get(r.format).human_key == fmt.human_key
        ]
        if len(runs) > 1:
            names = ", ".join(repr(r.run_path) for r in runs)
            _fail(
                f"{root} holds {len(runs)} runs ({names}); score.py scores one run: give "
                "the folder or archive of one run"
            )
        listing = []
        for r in runs:
            for t in r.tasks:
                if args.uitars or t.domain in _DOMAINS:
                    listing.append((f"{source.uri}!{t.path}", t.domain, t.task_id, t.files, t.path))
    folder_run = RunFolder("", fmt.name, ())
    # The run's line budget (`limits.RUN_LINES`) goes to its tasks in the order ingest reads
    # them (by path), so the lines past it, and the steps, are the same whatever order the
    # folder lists its tasks in; what each task prints keeps the original's order.
    read: dict[int, tuple[_Run, list[str]]] = {}
    with limits.run_budget():
        for i in sorted(range(len(listing)), key=lambda i: listing[i][4]):
            read[i] = (_Run(), [])
            _read_task(args, source, fmt, folder_run, read[i][0], listing[i], read[i][1].append)
    for i in range(len(listing)):
        one, printed = read.pop(i)
        run.unread.update(len(run.episodes) + k for k in one.unread)
        run.episodes += one.episodes
        run.display += one.display
        run.extra_t += one.extra_t
        for line in printed:
            out(line)
    return run


def _read_task(
    args: argparse.Namespace,
    source: Source,
    fmt: formats.Format,
    folder_run: RunFolder,
    run: _Run,
    listed: tuple[str, str, str, tuple[str, ...], str],
    out: Callable[[str], None],
) -> None:
    """Read one task folder into `run`, printing as the original does."""
    from deskscore.collectors.source import SourceError

    original = args.compat == "osworld-human"
    display, domain, task_id, names, rel = listed
    jsonl = [n for n in names if n.endswith(".jsonl")]
    files = names
    if original and len(jsonl) > 1:
        # The original reads every *.jsonl; the last one listed sets t_agent, all count
        # toward S.
        files = (*(n for n in names if not n.endswith(".jsonl")), jsonl[-1])
        for n in jsonl[:-1]:
            with contextlib.suppress(SourceError), source.open(f"{rel}/{n}") as stream:
                run.extra_t.append(count_stream_lines(stream))
    task = TaskFolder(rel, domain, task_id, tuple(files))
    light = fmt.light(source, folder_run, task, run_id="score.py", benchmark="osworld")
    ep, q = light.episode, light.quarantine
    if any(r["reason"] in _FILE_FAULTS and r["location"].endswith(".jsonl") for r in q):
        run.unread.add(len(run.episodes))
    run.episodes.append(ep)
    run.display.append(display)
    fault = _result_fault(source, f"{rel}/result.txt") if "result.txt" in names else None
    _traversal_lines(args, ep, q, display, len(jsonl) if original else 1, fault, out)


def _result_fault(source: Source, path: str) -> str | None:
    """The exception the original's `f.readlines()[0]` raises on result.txt before it parses
    a number (it reads the whole file as UTF-8): UnicodeDecodeError, IndexError for a file
    without a line, or None. Decoded a block at a time, so a 1 GB result.txt costs a block of
    memory, not the file."""
    import codecs

    from deskscore.collectors.source import SourceError

    decoder = codecs.getincrementaldecoder("utf-8")()
    empty = True
    try:
        with source.open(path) as stream:
            while block := stream.read(1 << 20):
                empty = False
                decoder.decode(block)
        decoder.decode(b"", final=True)
    except SourceError:
        return None  # noted as a file that could not be read
    except UnicodeDecodeError:
        return "UnicodeDecodeError"
    return "IndexError" if empty else None


def _traversal_lines(
    args: argparse.Namespace,
    ep: dict,
    q: list[dict],
    display: str,
    n_jsonl: int,
    fault: str | None,
    out: Callable[[str], None],
) -> None:
    """What the original prints (or where it would stop) while reading one task folder;
    `fault`: the exception it raises reading result.txt (see `_result_fault`)."""
    original = args.compat == "osworld-human"
    has_traj = ep.get("traj_file") is not None
    if original and not has_traj and not args.uitars:
        return  # the original never looks into a folder without a *.jsonl
    q = [row for row in q if _read_by_original(row["location"])]
    if not args.uitars:
        bad = [row for row in q if row["reason"] in _BAD_LINE]
        how = (
            "counted as a step, as the original counts lines"
            if original
            else "not counted as a step"
        )
        # a row may stand for several consecutive lines: each is noted as the original stops
        first = [(row, row["line_no"] + k) for row in bad for k in range(row["n_lines"] or 1)
                 if k < _MAX_LINE_NOTES]  # fmt: skip
        n_bad = sum(row["n_lines"] or 1 for row in bad)
        for row, line_no in first[:_MAX_LINE_NOTES]:
            what, exc = _BAD_LINE[row["reason"]]
            out(
                f"NOTE: {display}/{_base(row['location'])}: line {line_no} {what}; "
                f"the original stops here ({exc}); {how}"
            )
        if n_bad > _MAX_LINE_NOTES:
            out(
                f"NOTE: {display}/{_base(bad[0]['location'])}: "
                f"{n_bad - _MAX_LINE_NOTES} more such lines, {how}"
            )
        for row in q:
            if row["reason"] in _UNREAD_LINES:
                out(
                    f"NOTE: {display}/{_base(row['location'])}: {row['n_lines'] or 1} line(s) "
                    f"from line {row['line_no']} not read ({row['reason']}); {how}"
                )
    for row in q:
        if row["reason"] == LFS_POINTER:  # what the original parses fails at its first line
            traj = row["location"].endswith(".jsonl")
            if not traj:
                exc, how = "ValueError", "task left out as if it had no result"
            elif original:
                exc, how = "JSONDecodeError", "its lines counted as the original counts lines"
            else:
                exc, how = "JSONDecodeError", "no step counted"
            out(
                f"NOTE: {display}/{_base(row['location'])} is a Git LFS pointer, not the file "
                f"(run `git lfs pull` in the clone); the original stops here ({exc}); {how}"
            )
        elif row["reason"] in _FILE_FAULTS:
            how = (
                "counted as an empty trajectory (WES+ 0, WES- 0)"
                if row["location"].endswith(".jsonl")
                else "task left out as if it had no result"
            )
            out(
                f"NOTE: {display}/{_base(row['location'])} could not be read "
                f"({row['message']}); the original stops here; {how}"
            )
    status = ep.get("result_status")
    if args.uitars and (not has_traj or ep.get("instruction") is None):
        what = "data.json" if not has_traj else '"query" in meta.json'
        out(
            f"NOTE: {display} has no {what}; left out (the original reuses the previous "
            "folder's values here, or stops)"
        )
        return
    if status == "missing":
        if not has_traj:
            return
        for _ in range(n_jsonl):
            out(f"Result file not found for {ep['source_task_id']} in {display}")
        return
    if status == "ok" and fault is not None and not args.uitars:
        out(f"NOTE: {display}/result.txt is not UTF-8; the original stops here ({fault}); "
            "scored from its first line, invalid bytes replaced")  # fmt: skip
    elif status in ("empty", "unparseable") and not args.uitars:
        raw = ep.get("result_raw")
        if status == "empty":
            what, exc = "is empty", fault or "ValueError"
        elif _non_finite(raw):
            if original:
                return  # float() accepts it: the original scores it, and so do we
            what, exc = f"is {raw!r}, not a finite number", None
        elif raw is None:
            return  # unreadable: noted above
        else:
            what, exc = f"is unparseable ({raw!r})", fault or "ValueError"
        stop = f"the original stops here ({exc}); " if exc else ""
        out(f"NOTE: {display}/result.txt {what}; {stop}task left out as if it had no result")
    elif status in ("empty", "unparseable"):
        traj = ep.get("traj_file") or "data.json"
        out(
            f"NOTE: {display}/{_base(traj)}: no usable score "
            f"({ep.get('result_raw')!r}); task left out as if it had no result"
        )


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


_ORIGINAL_READS = ("result.txt", "data.json", "meta.json")


def _read_by_original(path: str) -> bool:
    """Whether the original opens this file of a task folder (its trajectories, result.txt
    and UI-TARS's two files): a fault in any other (token_usage.json, say) changes nothing it
    prints, so it gets no note of where the original stops."""
    return path.endswith(".jsonl") or _base(path) in _ORIGINAL_READS


def _non_finite(raw: object) -> bool:
    if not isinstance(raw, str):
        return False
    try:
        value = float(raw)
    except ValueError:
        return False
    return value != value or value in (float("inf"), float("-inf"))


# ---- main ---------------------------------------------------------------------------------


def _zero_steps_note(ep: dict, display: str, original: bool) -> str | None:
    """A NOTE for a scored task with no steps: the original divides by zero on it."""
    traj = ep.get("traj_file")
    if traj is None:
        return (
            f"NOTE: {display} has a result but no trajectory; counted as run with t_agent 0 "
            "(WES+ 0, WES- 0); the original ignores such a folder"
        )
    if ep.get("n_lines") == 0:
        return (
            f"NOTE: {display}/{_base(traj)} is empty; the original divides by zero here; "
            "counted with WES+ 0 and WES- 0"
        )
    if not original and ep.get("n_steps") == 0:
        return (
            f"NOTE: {display}/{_base(traj)} holds no executed action; counted with WES+ 0 "
            "and WES- 0"
        )
    return None


def _meta(domain: str, task_id: str) -> str:
    """A task as the original prints it (TaskMeta.__str__)."""
    return f"{task_id[:100]}..." if domain == UITARS_DOMAIN else f"{domain}/{task_id}"


def _out(text: str) -> None:
    """Print one of the original's lines; control characters that folder names, task ids
    or instructions bring are shown escaped (a terminal would obey them), nothing else."""
    print(printable(text, lines=True))


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    out = _out
    human, unsized = _load_human(args, out)
    n_human = len({(d, t) for d, t, _, _ in human})
    out(f"Found {n_human} human tasks")
    if n_human == 0:
        where = os.path.abspath(args.human_path or ".")
        _fail(
            f"no OSWorld-Human tasks found in {where}: run from the human data folder, or "
            "pass --human-path DIR or --human-version {" + ",".join(BUNDLED_VERSIONS) + "}"
        )
    out("Getting task trajectory")
    run = _read_run(args, out)
    original = args.compat == "osworld-human"
    matches = match_human(run.episodes, human, compat=args.compat)
    rows, totals = score_run(
        run.episodes,
        human,
        run_id="score.py",
        benchmark="osworld",
        config=ScoreConfig(args.human_version or "folder", args.max_steps_scoring, args.compat),
        extra_t_agent=run.extra_t,
    )
    keys = set()
    for ep, row in zip(run.episodes, rows, strict=True):
        if original and ep.get("traj_file") is None:
            continue
        if row["reward"] is None or (args.uitars and ep.get("instruction") is None):
            continue  # no result, or (UI-TARS) no query: left out, as its NOTE said
        keys.add(ep.get("instruction") if args.uitars else (ep["domain"], ep["source_task_id"]))
    out(f"Found {len(keys)} trajectories.")

    new_to_old = {new: old for old, new in thunderbird_old_to_new().items()}
    skipped = 0
    for m in matches:
        if m.episode is None:
            skipped += 1
            domain, shown = m.domain.removeprefix(_NEVER), m.task_id
            if (m.domain, m.task_id) in unsized and match_human(
                run.episodes, [(domain, m.task_id, 0, 0)], compat=args.compat
            )[0].episode is not None:
                out(f"NOTE: Task '{_meta(domain, shown)}' has a trajectory but its human "
                    "ground truth has no len(); the original stops here (TypeError); "
                    "counted as not found, with score of 0")  # fmt: skip
                continue
            if domain == "thunderbird" and m.task_id in new_to_old:
                shown = new_to_old[m.task_id]
            out(
                f"Task '{_meta(domain, shown)}' not found in trajectories, skipping "
                "with score of 0."
            )
            continue
        ep, row = run.episodes[m.episode], rows[m.episode]
        shown = (ep.get("instruction") or "") if args.uitars else ep["source_task_id"]
        t, r = row["t_agent"] or 0, row["reward"]
        if m.episode in run.unread:
            continue  # its NOTE said how it is counted; the original stopped before any WARN
        note = _zero_steps_note(ep, run.display[m.episode], original)
        if note:
            out(note)
        if t < m.grouped_steps and r > 0.9:
            out(
                f"WARN: Task '{_meta(m.domain, shown)}' successfully completed in {t} "
                f"instead of expected {m.grouped_steps}"
            )

    out("\n=== RESULTS ===")
    out(f"Skipped {skipped} tasks that were not found in trajectories.")
    if totals["n_tasks_matched"] == 0 and not original:
        out("NOTE: no task of the run matched a human task: the figures over them are n/a")
    out(
        f"Original OSWorld Result: {_shown(totals['success_rate_human'], 100, '%')} "
        f"(on {n_human} human tasks)"
    )
    out(f"Single Action WES+: {_shown(totals['wes_plus_single'], 100)}")
    out(f"Grouped Action WES+: {_shown(totals['wes_plus_grouped'], 100)}")
    out(f"WES-: {_shown(totals['wes_minus'], 1)}")
    out(f"Single Action WES: {_shown(totals['wes_single'], 100)}")
    out(f"Grouped Action WES: {_shown(totals['wes_grouped'], 100)}")
    return 0


def _shown(figure: float | None, scale: int, unit: str = "") -> str:
    """A figure as the original prints it; n/a where the deskscore rules leave it null (no
    task matched), a case the original prints as 0."""
    return "n/a" if figure is None else f"{scale * figure:.2f}{unit}"


if __name__ == "__main__":
    sys.exit(main())

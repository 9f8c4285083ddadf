"""`deskscore check`: prove that a warehouse lost nothing and holds nothing dangling.

Three families of findings, each a line a person can act on:
- accounting: every run's task folders are episodes, and every trajectory line is a step row
  or a quarantine row (re-counted from the source when it can still be opened, its task
  folders found with the `--layout` the run was ingested with);
- schema: every Parquet file carries the current schema version;
- orphans: rows keyed by an episode (or a run) that the warehouse does not hold.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, NamedTuple

from deskscore.pipelines.cli.args import summary_format_arg, warehouse_arg
from deskscore.pipelines.cli.common import existing_warehouse
from deskscore.pipelines.cli.output import printable, say

EPISODE_KEYED = (
    "steps", "episode_scores", "loop_spans", "screenshot_refs", "llm_calls", "interactions",
    "verdicts", "judge_calls", "step_actions",
)  # fmt: skip
"""Tables whose rows belong to one episode: (run_id, domain, task_id) must be in episodes."""

_MAX_LISTED = 20


class CheckResult(NamedTuple):
    problems: list[str]
    facts: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def _keys(wh: object, name: str) -> list[tuple]:
    from deskscore.schemas import TABLES

    cols = [
        c for c in ("run_id", "domain", "task_id") if c in {f.name for f in TABLES[name].fields}
    ]
    data = wh.read(name, columns=cols)  # type: ignore[attr-defined]
    return list(zip(*(data.column(c).to_pylist() for c in cols), strict=True))


def _manifest_problems(wh: Any) -> tuple[list[str], dict[Path, int | None]]:
    """Files the current version lists that are missing or cannot be read (cut short,
    overwritten), and packs holding row groups no slot claims (rows a reader of the whole
    file would see twice, or stale); with the schema version of every file, each footer
    read once."""
    from deskscore.collectors.warehouse import runs_in_pack, schema_version_of
    from deskscore.schemas import TABLES
    from deskscore.schemas.manifest import unreadable_file

    problems = []
    versions: dict[Path, int | None] = {}
    unreadable: set[Path] = set()  # named once, and a pack's footer not read again
    manifest = wh.manifest()
    for name in TABLES:
        claimed: dict[str, set[int]] = {}
        for key, entry in manifest.tables.get(name, {}).items():
            path = wh.table_dir(name) / entry.file
            if not path.is_file():
                problems.append(
                    f"{name}: {path} is listed but missing ({key}); re-run the job that "
                    f"writes {name} with --force"
                )
                continue
            if path in unreadable:
                continue
            if path not in versions:
                try:
                    versions[path] = schema_version_of(path)
                except Exception as e:  # a truncated or foreign file
                    problems.append(str(unreadable_file(name, path, e)))
                    unreadable.add(path)
                    continue
            if entry.groups is not None:
                claimed.setdefault(entry.file, set()).update(entry.groups)
        for file, groups in sorted(claimed.items()):
            path = wh.table_dir(name) / file
            every = {g for gs in runs_in_pack(path).values() for g in gs}
            if every - groups:
                problems.append(
                    f"{name}: pack {path} holds {len(every - groups)} row group(s) no run "
                    "claims: its rows would be read twice or stale; run the job again to "
                    "repack it"
                )
    return problems, versions


def _schema_problems(wh: Any, versions: dict[Path, int | None]) -> list[str]:
    """Files written under another schema version than this one's."""
    from deskscore.collectors.warehouse import SCHEMA_VERSION

    return [
        f"{path}: schema version {version}, expected {SCHEMA_VERSION}; re-run the job that "
        f"writes {path.relative_to(wh.root).parts[0]}"
        for path, version in sorted(versions.items())
        if version != SCHEMA_VERSION
    ]


def _source_counts(
    source_uri: str, run_id: str, layout: str | None = None
) -> tuple[dict[str, int | None], int] | None:
    """Lines of each trajectory file (None for one listed but unreadable: its quarantine row
    accounts for it) and the task folders of one run, re-read from its source and found as
    ingest found them (with the `layout` it recorded, or default discovery; the format's own
    count when it has one); None when the source cannot be opened any more (moved, offline)."""
    from deskscore.collectors.formats import get
    from deskscore.collectors.layout import discover_source
    from deskscore.collectors.lines import count_stream_lines
    from deskscore.collectors.source import SourceError, open_source
    from deskscore.collectors.trials import run_identity

    try:
        src = open_source(source_uri)
    except (SourceError, OSError):
        return None
    with src:
        found, _ = discover_source(src, layout)
        runs = [r for r in found if run_identity(src.uri, r)[0] == run_id]
        if not runs:
            return {}, 0
        counter = get(runs[0].format).count_lines
        if counter is not None:
            return counter(src, runs[0]), len(runs[0].tasks)
        lines: dict[str, int | None] = {}
        for task in runs[0].tasks:
            for name in task.files:
                if name.endswith(".jsonl"):
                    path = f"{task.path}/{name}"
                    try:
                        with src.open(path) as stream:  # streamed: never held whole
                            lines[path] = count_stream_lines(stream)
                    except SourceError:
                        lines[path] = None
        return lines, len(runs[0].tasks)


def _format_recount(
    run: dict[str, Any],
    recount: Any,
    episodes: list[dict[str, Any]],
    quarantine: list[dict[str, Any]],
) -> tuple[list[str], int] | None:
    """What a format's own re-count (`Format.recount`) finds lost in one run, and the run's
    task folders now; None when the source cannot be opened any more."""
    from deskscore.collectors.layout import discover
    from deskscore.collectors.source import SourceError, open_source

    try:
        src = open_source(run["source"])
    except (SourceError, OSError):
        return None
    with src:
        found = discover(src.files(), run.get("layout"))
        runs = [r for r in found if r.run_path == run["run_path"]]
        if not runs:
            return [], 0
        return recount(src, runs[0], episodes, quarantine), len(runs[0].tasks)


def _trajectory_rows(
    run_id: str, traj: str, lines: Counter, located: dict[str, list[tuple[str, int]]]
) -> int:
    """Quarantined lines of an episode's trajectory: the lines its file's line rows stand for
    or, when the trajectory is several files of one folder named by a pattern
    (step_*_trace.json), the items quarantined at any file the pattern matches."""
    folder, _, name = traj.rpartition("/")
    if not any(c in name for c in "*?["):
        return lines[(run_id, traj)]
    return sum(
        n
        for loc, n in located.get(run_id, ())
        if loc.rpartition("/")[0] == folder and fnmatchcase(loc.rpartition("/")[2], name)
    )


def _duplicate_problems(runs: list[dict[str, Any]], episodes: list[dict[str, Any]]) -> list[str]:
    """Runs or episodes held twice (e.g. by a run's own file and a pack)."""
    problems = []
    for rid, n in sorted(Counter(r["run_id"] for r in runs).items()):
        if n > 1:
            problems.append(
                f"runs: run {rid} has {n} rows (its rows are held twice); re-ingest its source "
                "with `deskscore ingest SOURCE --force`"
            )
    seen = Counter((e["run_id"], e["domain"], e["task_id"]) for e in episodes)
    for (rid, domain, task), n in sorted(seen.items()):
        if n > 1:
            problems.append(
                f"episodes: {domain}/{task} of run {rid} has {n} rows; re-ingest the run's "
                "source with `deskscore ingest SOURCE --force`"
            )
    return problems[:_MAX_LISTED]


def _score_problems(wh: Any) -> list[str]:
    """Runs recorded as scored (score_inputs) whose figures are missing: the record says
    done, so only `--force` would score them again."""
    from deskscore.scorers.config import ScoreConfig

    problems = []
    for r in wh.read("score_inputs").to_pylist():
        config = ScoreConfig(r["human_version"], r["max_steps_scoring"], r["compat"])
        part = {"benchmark": r["benchmark"], "run_id": r["run_id"]}
        lacking = [
            name
            for name in ("episode_scores", "run_scores")
            if not wh.has_file(name, part, config.file)
        ]
        if lacking:
            problems.append(
                f"score_inputs: run {r['run_id']} is recorded as scored ({config.describe()}) "
                f"but has no {' or '.join(lacking)}; run `deskscore score --force --run "
                f"{r['run_id']} --human-version {config.human_version} --max-steps-scoring "
                f"{config.max_steps_scoring} --compat {config.compat}`"
            )
    return problems[:_MAX_LISTED]


def _screenshot_problems(wh: Any) -> list[str]:
    """Hashed references whose content has no screenshots row anywhere, and no quarantine row
    of the run saying why (unreadable when read again, changed, too large...)."""
    refs = wh.read("screenshot_refs", columns=["run_id", "screenshot_path", "content_hash"])
    stored = set(wh.read("screenshots", columns=["content_hash"]).column(0).to_pylist())
    explained = {
        (q["run_id"], q["location"])
        for q in wh.read("quarantine", columns=["run_id", "location"]).to_pylist()
    }
    lacking: Counter = Counter()
    for r in refs.to_pylist():
        digest = r["content_hash"]
        unexplained = (r["run_id"], r["screenshot_path"]) not in explained
        if digest is not None and digest not in stored and unexplained:
            lacking[r["run_id"]] += 1
    return [
        f"screenshot_refs: run {rid}: {n} hashed reference(s) whose content has no screenshots "
        f"row; run `deskscore hash --run {rid}`"
        for rid, n in sorted(lacking.items())[:_MAX_LISTED]
    ]


def check_warehouse(warehouse: str | os.PathLike[str], *, sources: bool = True) -> CheckResult:
    """Every finding about `warehouse`; `sources=False` skips re-reading the archives."""
    from deskscore.collectors.formats import get as get_format
    from deskscore.collectors.warehouse import Warehouse
    from deskscore.schemas.manifest import WarehouseDamaged

    wh = Warehouse(Path(warehouse))
    try:
        problems, versions = _manifest_problems(wh)
    except WarehouseDamaged as exc:  # no version to check the tables against
        return CheckResult([str(exc)], ["the warehouse's manifest is damaged"])
    if problems:  # the tables cannot be read as they are: say what is broken, nothing more
        return CheckResult(problems, ["the warehouse's current version lists broken files"])
    problems = _schema_problems(wh, versions)
    facts = [f"{len(versions)} Parquet file(s) checked for schema version"]

    runs = wh.read("runs").to_pylist()
    run_ids = {r["run_id"] for r in runs}
    episodes = wh.read("episodes").to_pylist()
    episode_keys = {(e["run_id"], e["domain"], e["task_id"]) for e in episodes}
    for e in episodes:
        if e["run_id"] not in run_ids:
            problems.append(
                f"episodes: {e['task_path']} belongs to run {e['run_id']}, which has no runs row"
            )
    step_counts = Counter(_keys(wh, "steps"))
    for name in EPISODE_KEYED:
        orphans = Counter(k for k in _keys(wh, name) if k not in episode_keys)
        for key, n in sorted(orphans.items())[:_MAX_LISTED]:
            problems.append(f"{name}: {n} row(s) of run {key[0]} task {key[1]}/{key[2]} "
                            "have no episode; re-ingest that run")  # fmt: skip

    q_rows = wh.read(
        "quarantine", columns=["run_id", "location", "line_no", "n_lines", "reason"]
    ).to_pylist()
    quarantined: Counter = Counter()  # lines, not rows: a row may stand for a run of lines
    located: dict[str, list[tuple[str, int]]] = {}
    for q in q_rows:
        items = q["n_lines"] or 1
        if q["line_no"] is not None:
            quarantined[(q["run_id"], q["location"])] += items
        located.setdefault(q["run_id"], []).append((q["location"], items))
    per_run = Counter(e["run_id"] for e in episodes)
    n_lines = 0
    for e in episodes:
        key = (e["run_id"], e["domain"], e["task_id"])
        steps, lines = step_counts[key], e["n_lines"]
        n_lines += lines
        if steps + e["n_quarantined"] != lines:
            problems.append(
                f"episodes: {e['task_path']}: {lines} trajectory line(s) but {steps} step row(s) + "
                f"{e['n_quarantined']} quarantined; re-ingest run {e['run_id']}"
            )
        if not e["traj_file"]:
            continue
        held_q = _trajectory_rows(e["run_id"], e["traj_file"], quarantined, located)
        if held_q != e["n_quarantined"]:
            problems.append(
                f"quarantine: {e['traj_file']}: {held_q} line(s) in rows, but the episode counts "
                f"{e['n_quarantined']}; re-ingest run {e['run_id']}"
            )
    facts.append(f"{len(episodes)} episode(s), {n_lines} trajectory line(s) accounted for")

    problems.extend(_duplicate_problems(runs, episodes))
    problems.extend(_score_problems(wh))
    problems.extend(_screenshot_problems(wh))
    unreachable = 0
    for run in runs:
        rid = run["run_id"]
        if not per_run[rid]:
            problems.append(
                f"runs: {run['source']}!{run['run_path']} (run {rid}) has no episode; re-ingest "
                "its source with `deskscore ingest SOURCE --force` (with the --layout it needs)"
            )
        elif per_run[rid] != run["n_task_folders"]:
            problems.append(
                f"runs: {run['source']}!{run['run_path']}: {run['n_task_folders']} task folder(s) "
                f"but {per_run[rid]} episode(s); re-ingest it"
            )
        fmt = get_format(run["format"])
        if sources and fmt.recount is not None:
            mine = [e for e in episodes if e["run_id"] == rid]
            held_q = [q for q in q_rows if q["run_id"] == rid]
            found = _format_recount(run, fmt.recount, mine, held_q)
            if found is None:
                unreachable += 1
                continue
            lost, n_tasks = found
            problems.extend(lost)
            if n_tasks != run["n_task_folders"]:
                problems.append(
                    f"runs: {run['source']}!{run['run_path']} now has {n_tasks} task folder(s), "
                    f"the warehouse {run['n_task_folders']}; the source changed since ingest: "
                    "re-ingest it"
                )
            continue
        if not sources or not fmt.recount_lines:
            continue
        counted = _source_counts(run["source"], rid, run.get("layout"))
        if counted is None:
            unreachable += 1
            continue
        lines, n_tasks = counted
        if n_tasks != run["n_task_folders"]:
            problems.append(
                f"runs: {run['source']}!{run['run_path']} now has {n_tasks} task folder(s), the "
                f"warehouse {run['n_task_folders']}; the source changed since ingest: re-ingest it"
            )
        held = {e["traj_file"]: e["n_lines"] for e in episodes if e["run_id"] == rid}
        for path, n in sorted(lines.items()):
            if path in held and n is not None and held[path] != n:
                problems.append(
                    f"{run['source']}!{path}: {n} line(s) in the source, {held[path]} in the "
                    "warehouse; re-ingest the run"
                )
        gone = [p for p in held if p is not None and p not in lines] if n_tasks else []
        for path in sorted(gone):  # (a run gone whole is one problem, above)
            problems.append(
                f"{run['source']}!{path}: {held[path]} line(s) in the warehouse, but the file "
                "is no longer in the source; re-ingest the run"
            )
    facts.append(
        f"{len(runs)} run(s); {len(runs) - unreachable} re-counted from their source"
        + (f", {unreachable} source(s) not reachable (not re-counted)" if unreachable else "")
    )
    return CheckResult(problems, facts)


def check_text(result: CheckResult) -> str:
    """The report `deskscore check` prints."""
    lines = [*result.facts]
    if result.ok:
        lines.append("check passed: nothing lost, no orphan rows, one schema version")
    else:
        lines.append(f"check FAILED: {len(result.problems)} problem(s)")
        lines.extend(f"  {printable(p)}" for p in result.problems)
    return "\n".join(lines)


__all__ = ["EPISODE_KEYED", "CheckResult", "check_summary", "check_text", "check_warehouse"]


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="prove nothing was lost: every source line in a table or quarantine, no orphan rows",
    )
    warehouse_arg(p)
    p.add_argument(
        "--no-sources", action="store_true", help="do not re-read the archives to re-count lines"
    )
    summary_format_arg(p)
    p.set_defaults(handler=run)


def check_summary(result: CheckResult) -> dict[str, Any]:
    """The check as `--format json` prints it and the Python API returns it."""
    return {"ok": result.ok, "problems": list(result.problems), "facts": list(result.facts)}


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    result = check_warehouse(existing_warehouse(args.warehouse), sources=not args.no_sources)
    if getattr(args, "format", "table") == "json":
        say(json.dumps(check_summary(result), indent=2), "json")
    else:
        say(check_text(result))
    return 0 if result.ok else 1

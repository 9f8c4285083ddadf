"""The Python API: the commands' jobs and queries as functions (see docs/python-api.md).

Each function runs what its command runs (the same job, the same queries, the same checks)
and returns what the command's `--format json` prints, or, for queries, DuckDB and Polars
objects. The warehouse, when not given, is found as the commands find it: the environment
variable DESKSCORE_WAREHOUSE, then `deskscore.toml` in the working folder, then ./warehouse.
Problems the caller can fix raise `deskscore.UserError` with the message the command prints.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from deskscore.collectors.osworld import EpisodeCalls
    from deskscore.sql.export import Exported

Warehouse = str | os.PathLike[str] | None


def _warehouse(warehouse: Warehouse) -> str:
    from deskscore.pipelines.cli.settings import resolved

    return str(resolved("warehouse", None if warehouse is None else os.fspath(warehouse)))


def _existing(warehouse: Warehouse) -> Path:
    from deskscore.pipelines.cli.common import existing_warehouse

    return existing_warehouse(_warehouse(warehouse))


def connect(warehouse: Warehouse = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with every view of the warehouse (`SHOW TABLES` lists them), fixed
    at one version of it, that reads no file and writes none: `con.sql(...).pl()`, `.arrow()`
    and `.df()` (with pandas installed) give the rows. The same confinement as `deskscore sql`."""
    from deskscore.sql.confine import confined_connect

    return confined_connect(_existing(warehouse))


def ingest(
    sources: str | Sequence[str], warehouse: Warehouse = None, **options: Any
) -> dict[str, Any]:
    """Ingest `sources` (folders, .zip archives, fsspec URLs, globs, @list files) as
    `deskscore ingest` does; `options` are its options by field name (benchmark, layout,
    agent, run_name, force, trial_of, engine, workers, wait: pipelines.options.IngestOptions).
    Returns the summary `deskscore ingest --format json` prints."""
    from deskscore.pipelines.cli.ingest import ingest as run_ingest
    from deskscore.pipelines.cli.ingest import ingest_summary
    from deskscore.pipelines.cli.settings import resolved
    from deskscore.pipelines.options import IngestOptions

    listed = (sources,) if isinstance(sources, str | os.PathLike) else tuple(sources)
    options.setdefault("wait", resolved("wait"))
    opts = IngestOptions(
        sources=tuple(os.fspath(s) for s in listed), warehouse=_warehouse(warehouse), **options
    )
    return ingest_summary(run_ingest(opts))


def score(warehouse: Warehouse = None, **options: Any) -> dict[str, Any]:
    """Score the warehouse as `deskscore score` does; `options` are its options by field name
    (max_steps_scoring, human_version, compat, runs, force, prices, bootstrap_resamples, ...:
    pipelines.options.ScoreOptions). Returns the summary `deskscore score --format json`
    prints."""
    from deskscore.pipelines.cli.score import score as run_score
    from deskscore.pipelines.cli.settings import resolved
    from deskscore.pipelines.options import ScoreOptions

    options.setdefault("wait", resolved("wait"))
    if isinstance(options.get("runs"), str):
        options["runs"] = (options["runs"],)
    elif "runs" in options:
        options["runs"] = tuple(options["runs"])
    return run_score(ScoreOptions(warehouse=_warehouse(warehouse), **options))


def check(warehouse: Warehouse = None, *, sources: bool = True) -> dict[str, Any]:
    """`deskscore check`: whether nothing was lost ({"ok", "problems", "facts"}); with
    `sources`, the archives are read again to re-count their lines."""
    from deskscore.pipelines.cli.check import check_summary, check_warehouse

    return check_summary(check_warehouse(_existing(warehouse), sources=sources))


def leaderboard(
    warehouse: Warehouse = None,
    *,
    by: str | None = None,
    ci: bool = False,
    human_version: str | None = None,
    max_steps_scoring: int | None = None,
    compat: str | None = None,
    level_source: str = "stem",
    split: str = "all",
    runs: Sequence[str] = (),
) -> pl.DataFrame:
    """The leaderboard as a Polars DataFrame: the rows and columns of `deskscore leaderboard
    --format json` (one row per run, ranked; with `by`, one per run and slice: domain or app
    for OSWorld runs, level, app, domain or mode for DeskCraft runs). `ci` adds each figure's
    standard error and 95% interval (<column>_se, _ci_low, _ci_high). The configuration not
    given is chosen as the command chooses it (the only one scored, else the defaults);
    `runs` (run ids) narrows it to those runs, as --run does."""
    import json

    import polars as pl

    from deskscore.pipelines.cli.breakdowns import BY, breakdown_text
    from deskscore.pipelines.cli.leaderboard import leaderboard_text

    root = str(_existing(warehouse))
    chosen = {
        "human_version": human_version,
        "max_steps_scoring": max_steps_scoring,
        "compat": compat,
        "ci": "pm" if ci else "none",
        "runs": [runs] if isinstance(runs, str) else list(runs),
    }
    if by is None:
        texts = [leaderboard_text(root, "json", **chosen)]
    else:
        if by not in BY:
            raise ValueError(f"by={by!r}: use one of {', '.join(BY)}")
        text = breakdown_text(root, by, "json", level_source=level_source, split=split, **chosen)
        texts = _json_documents(text)  # OSWorld runs, then DeskCraft runs
    frames = [
        pl.from_dicts(rows, infer_schema_length=None)
        for rows in (json.loads(t) if isinstance(t, str) else t for t in texts)
        if rows
    ]
    if not frames:
        return pl.DataFrame()
    return pl.concat(frames, how="diagonal_relaxed") if len(frames) > 1 else frames[0]


def _json_documents(text: str) -> list[Any]:
    """The JSON documents of `text`, one after the other (a breakdown prints one per family)."""
    import json

    decoder, out, i = json.JSONDecoder(), [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        value, i = decoder.raw_decode(text, i)
        out.append(value)
    return out


def export(
    warehouse: Warehouse,
    items: str | Sequence[str],
    out: str | os.PathLike[str],
    format: str = "parquet",
) -> list[Exported]:
    """`deskscore export`: the rows of a view, a table or a query (or, with format "hf",
    several of them) written to `out` as parquet, csv, json, or a Hugging Face datasets folder.
    Returns what was written (name, query, path, rows)."""
    from deskscore.pipelines.cli.common import UserError
    from deskscore.sql.export import ExportError
    from deskscore.sql.export import export as write

    listed = [items] if isinstance(items, str) else list(items)
    try:
        return write(_existing(warehouse), listed, format, out)
    except ExportError as exc:
        raise UserError(str(exc)) from None


def episodes(source: str, *, layout: str | None = None) -> Iterator[EpisodeCalls]:
    """Every episode of every run in `source` (a folder, .zip or fsspec URL), read by the
    format that claims it (deskscore.formats), without a warehouse: each item's `.read` holds
    the episode row, its step rows and its quarantine rows, `.calls` the model calls. Runs
    are found as `deskscore ingest` finds them (`layout` as its --layout)."""
    from deskscore.collectors import formats
    from deskscore.collectors.ids import source_id
    from deskscore.collectors.layout import discover_source
    from deskscore.collectors.source import open_source

    opened = open_source(source)
    runs, _ = discover_source(opened, layout)
    for run in runs:
        run_id = source_id(f"{opened.uri}!{run.run_path}")
        yield from formats.get(run.format).iter_episodes(
            opened, run, run_id=run_id, benchmark="osworld", reported={}
        )


__all__ = ["check", "connect", "episodes", "export", "ingest", "leaderboard", "score"]

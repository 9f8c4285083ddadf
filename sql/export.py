"""Writing a view, a table or a query's rows to a file: Parquet, CSV, JSON, or a folder that
Hugging Face `datasets` loads (Parquet files under data/ and a README.md dataset card whose
`configs:` YAML names them).

The rows are read on a confined connection (sql.confine), the one `deskscore sql` uses: the
query reads the warehouse through its views only, and DuckDB may write in the output's folder
and nowhere else, whatever the query says.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FILE_FORMATS = ("parquet", "csv", "json")
HF = "hf"
"""A Hugging Face datasets folder: data/<config>/train-00000-of-00001.parquet + README.md."""
FORMATS = (*FILE_FORMATS, HF)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ExportError(ValueError):
    """An export that cannot be made as asked; the message says what to do instead."""


@dataclass(frozen=True)
class Exported:
    """One relation written: its name (a view's, or `query_<n>`), the query that made it, the
    file, and how many rows."""

    name: str
    query: str
    path: Path
    rows: int


def query_of(table_or_query: str) -> tuple[str, str | None]:
    """(SQL, view name or None): a bare name stands for every row of that view or table."""
    text = table_or_query.strip()
    if _NAME.fullmatch(text):
        return f'SELECT * FROM "{text}"', text
    return text, None


def check_out(warehouse: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """`out` resolved; ExportError when it lies in the warehouse's folder (its export area
    `exports/` excepted), where it could replace a table's file."""
    root = Path(warehouse).resolve()
    target = Path(out).resolve()
    if target.is_relative_to(root / "exports") or not target.is_relative_to(root):
        return target
    raise ExportError(
        f"{out}: would write in the warehouse's folder; name a path outside {root}, or in "
        f"{root / 'exports'}"
    )


def _check_target(target: Path, out: str | os.PathLike[str], fmt: str) -> None:
    """ExportError, before any query runs, for an --out that cannot take what `fmt` writes: a
    file format onto a folder (or no path at all), hf's folder onto a file."""
    if not os.fspath(out):
        raise ExportError("--out is empty: name the file to write (the folder with --format hf)")
    if fmt == HF and target.exists() and not target.is_dir():
        raise ExportError(
            f"--out {out}: is a file, and --format hf writes a folder; name a folder (new or "
            "existing)"
        )
    if fmt != HF and target.is_dir():
        raise ExportError(
            f"--out {out}: is a folder; name the file to write, e.g. {Path(out) / f'rows.{fmt}'}"
        )


def _write(con: Any, relation: Any, path: Path, fmt: str) -> None:
    if fmt == "parquet":
        relation.write_parquet(str(path))
    elif fmt == "csv":
        relation.write_csv(str(path), header=True)
    else:  # json: one array of objects, as `deskscore sql --format json` prints
        _finite(relation).create_view("exported_rows", replace=True)
        con.execute(f"COPY exported_rows TO '{_escaped(path)}' (FORMAT json, ARRAY true)")


def _finite(relation: Any) -> Any:
    """`relation` with NaN and infinity as NULL in its float columns, as `deskscore sql
    --format json` prints them (pipelines.cli.output): JSON has no word for them, and the
    bare NaN / Infinity DuckDB's writer would put there are refused by strict readers and
    jq. Done in DuckDB, so that a large export still streams at DuckDB's speed."""
    if not any(str(t) in ("DOUBLE", "FLOAT") for t in relation.types):
        return relation
    columns = []  # by position (#n): two columns may have one name
    for n, (name, kind) in enumerate(zip(relation.columns, relation.types, strict=True), 1):
        value = f"#{n}"
        if str(kind) in ("DOUBLE", "FLOAT"):
            value = f"CASE WHEN isfinite({value}) THEN {value} END"
        quoted = name.replace('"', '""')
        columns.append(f'{value} AS "{quoted}"')
    return relation.project(", ".join(columns))


def _escaped(path: Path) -> str:
    return str(path).replace("'", "''")


def _relation(con: Any, sql: str) -> Any:
    relation = con.sql(sql)
    if relation is None:
        raise ExportError(f"not a query, nothing to export: {sql!r}")
    return relation


def export(
    warehouse: str | os.PathLike[str],
    items: Sequence[str],
    fmt: str,
    out: str | os.PathLike[str],
) -> list[Exported]:
    """Write the rows of each of `items` (view or table names, or SELECT queries) in `fmt` to
    `out`: a file for one item in parquet/csv/json, a folder for hf (one dataset config per
    item). Returns what was written."""
    import duckdb

    from deskscore.sql.confine import confined_connect, error_line

    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    if not items:
        raise ExportError("name a view, a table or a query to export")
    if fmt != HF and len(items) > 1:
        raise ExportError(f"--format {fmt} writes one file: export one item at a time, or use hf")
    target = check_out(warehouse, out)
    _check_target(target, out, fmt)
    queries = [query_of(item) for item in items]
    names = [name or f"query_{i + 1}" for i, (_, name) in enumerate(queries)]
    if len(set(names)) != len(names):
        raise ExportError("an item is named twice")
    folder = target if fmt == HF else target.parent
    if fmt == HF:
        finals = [folder / "data" / n / "train-00000-of-00001.parquet" for n in names]
    else:
        finals = [target]
    # The query may write in a fresh folder of its own only, never where the warehouse is;
    # the files are moved into place once written.
    try:
        folder.mkdir(parents=True, exist_ok=True)
        staging = tempfile.TemporaryDirectory(dir=folder, prefix=".deskscore-export-")
    except OSError as exc:
        raise ExportError(
            f"--out {out}: cannot write in {folder} ({exc.strerror or exc}); name a path in a "
            "folder you can write"
        ) from None
    with staging as stage:
        staged = [Path(stage) / f"{i}.{'parquet' if fmt == HF else fmt}" for i in range(len(names))]
        con = confined_connect(warehouse, stage, only=[sql for sql, _ in queries])
        written = []
        try:
            for (sql, _), name, path in zip(queries, names, staged, strict=True):
                relation = _relation(con, sql)
                _write(con, relation, path, "parquet" if fmt == HF else fmt)
                [(rows,)] = relation.aggregate("count(*)").fetchall()
                written.append((name, sql, path, int(rows)))
        except duckdb.PermissionException as exc:
            raise ExportError(
                f"{error_line(exc)} (an export reads the warehouse through its views only and "
                f"writes {target} only)"
            ) from None
        except duckdb.Error as exc:  # at parse time, or while the rows are computed and written
            raise ExportError(
                f'{error_line(exc)}; fix the query (views: deskscore sql "SHOW TABLES")'
            ) from None
        finally:
            con.close()
        done = []
        for (name, sql, path, rows), final in zip(written, finals, strict=True):
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, final)
            done.append(Exported(name, sql, final, rows))
    if fmt == HF:
        (folder / "README.md").write_text(dataset_card(done, folder), encoding="utf-8")
    return done


def dataset_card(written: Sequence[Exported], folder: Path) -> str:
    """A README.md for the Hugging Face Hub: the `configs:` YAML `datasets.load_dataset`
    reads (one config per exported item, its Parquet files as the train split), then what
    each config holds and the query that made it."""
    import json

    lines = ["---", "configs:"]
    for i, item in enumerate(written):
        lines.append(f"- config_name: {item.name}")
        if i == 0:
            lines.append("  default: true")
        lines += [
            "  data_files:",
            "  - split: train",
            f"    path: {json.dumps(item.path.relative_to(folder).as_posix())}",
        ]
    lines += ["tags:", "- deskscore", "---", "", "# Figures exported by deskscore", ""]
    lines.append(
        "Each configuration is one view, table or query of a deskscore warehouse, written as "
        "Parquet. Load one with `datasets.load_dataset(PATH, NAME)` or read its files with any "
        "Parquet reader."
    )
    lines.append("")
    lines += ["| config | rows | query |", "|---|---:|---|"]
    for item in written:
        query = item.query.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {item.name} | {item.rows} | `{query}` |")
    return "\n".join(lines) + "\n"


__all__ = ["FORMATS", "ExportError", "Exported", "check_out", "dataset_card", "export", "query_of"]

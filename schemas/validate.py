"""Turning declarations into pyarrow schemas, and rows into conforming Arrow tables.

pyarrow is imported inside the functions so that importing the declarations stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from deskscore.schemas.tables import SCHEMA_VERSION, TABLES, Table, awaiting_metrics

if TYPE_CHECKING:
    import pyarrow as pa


def table(name: str) -> Table:
    """The declaration of table `name`; a clear error names the known tables."""
    try:
        decl = TABLES[name]
    except KeyError:
        raise KeyError(f"unknown table {name!r}; known: {', '.join(sorted(TABLES))}") from None
    if awaiting_metrics(name):
        raise RuntimeError(
            f"{name}'s metric columns are declared by the metric registry: import "
            "deskscore.scorers.metrics before using the table"
        )
    return decl


@cache
def pyarrow_without_pandas() -> None:
    """Let pyarrow look for pandas now, with pandas hidden, so that it never imports it.

    pyarrow's first `pa.array(...)` of a process imports pandas, when it is installed, only to
    ask whether the list given is a pandas object: about 0.4 s and 50 MB in every process that
    builds an array (the command and each of its workers), for nothing, since no deskscore
    code hands pyarrow pandas objects. A later `to_pandas()` still works: pyarrow imports
    pandas again when an operation needs it."""
    import importlib.abc
    import sys

    if "pandas" in sys.modules:
        return  # already imported: nothing to save

    class Hidden(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
            if name == "pandas" or name.startswith("pandas."):
                raise ImportError(f"{name} is hidden while pyarrow looks for it")

    import pyarrow as pa

    hidden = Hidden()
    sys.meta_path.insert(0, hidden)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(hidden)


def _arrow_type(type_name: str) -> pa.DataType:
    import pyarrow as pa

    simple = {
        "string": pa.string(),
        "json": pa.string(),
        "bool": pa.bool_(),
        "int32": pa.int32(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }
    if type_name in simple:
        return simple[type_name]
    if type_name.startswith("list<") and type_name.endswith(">"):
        return pa.list_(_arrow_type(type_name[5:-1]))
    raise ValueError(f"unknown field type {type_name!r}")


def arrow_schema(name: str) -> pa.Schema:
    """The pyarrow schema of table `name`, with each field's doc and the schema version as metadata."""
    return _arrow_schema(table(name))


@cache
def _arrow_schema(decl: Table) -> pa.Schema:
    """Cached by declaration, not name: registering a metric changes the score tables'."""
    import pyarrow as pa

    fields = [
        pa.field(
            f.name,
            _arrow_type(f.type),
            nullable=not f.required,
            metadata={"doc": f.doc, "type": f.type},
        )
        for f in decl.fields
    ]
    return pa.schema(
        fields,
        metadata={
            "deskscore.table": decl.name,
            "deskscore.schema_version": str(SCHEMA_VERSION),
            "doc": decl.doc,
        },
    )


def conform_rows(name: str, rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Build an Arrow table of `name` from dict rows.

    Missing keys become null; unknown keys are an error (a reader that invents a column is a
    bug, not data); a null in a required field raises with the offending row's key.
    """
    rows = list(rows)
    return _conformed(name, _columns(name, table(name).columns, rows))


def conform_columns(name: str, columns: Mapping[str, list[Any]]) -> pa.Table:
    """`conform_rows` for rows held as columns (a `ColumnRows`' lists, all of one length):
    the same checks and errors, with no row built."""
    decl = table(name)
    unknown = set(columns) - set(decl.columns)
    if unknown:
        raise ValueError(f"{name}: row has columns the schema lacks: {sorted(unknown)}")
    n = len(next(iter(columns.values()))) if columns else 0
    return _conformed(name, {c: columns[c] if c in columns else [None] * n for c in decl.columns})


def _conformed(name: str, columns: dict[str, list[Any]]) -> pa.Table:
    import pyarrow as pa

    pyarrow_without_pandas()
    decl = table(name)
    schema = arrow_schema(name)
    for f in decl.fields:
        if f.required and None in columns[f.name]:
            bad = columns[f.name].index(None)
            key = {k: columns[k][bad] for k in decl.key}
            raise ValueError(f"{name}: required field {f.name!r} is null in row {key}")
    arrays = [pa.array(columns[f.name], type=schema.field(f.name).type) for f in decl.fields]
    return pa.Table.from_arrays(arrays, schema=schema)


class ColumnRows(Sequence[dict[str, Any]]):
    """Rows of one table held as one list per column, as a reader that makes many rows at a
    time builds them (a run's tens of thousands of model calls): ingest turns the lists into
    Arrow arrays directly (`conform_columns`), with no dict per row to build and then take
    apart again, which cost more than the arrays themselves.

    Read as a sequence it is the rows, each a dict, so every caller of a reader sees what it
    always saw. The first such read builds the dicts once and drops the columns (`columns`
    is then None): a caller may change those dicts, and they are what the rows are from then
    on."""

    __slots__ = ("_columns", "_n", "_rows")

    def __init__(self, columns: dict[str, list[Any]]) -> None:
        lengths = {len(v) for v in columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")
        self._columns: dict[str, list[Any]] | None = columns
        self._n = lengths.pop() if lengths else 0
        self._rows: list[dict[str, Any]] | None = None

    @property
    def columns(self) -> dict[str, list[Any]] | None:
        """The columns, until a row has been read as a dict."""
        return self._columns

    def _materialised(self) -> list[dict[str, Any]]:
        if self._rows is None:
            columns = self._columns or {}
            names = tuple(columns)
            self._rows = [
                dict(zip(names, values, strict=True))
                for values in zip(*columns.values(), strict=True)
            ]
            self._columns = None
        return self._rows

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: Any) -> Any:
        return self._materialised()[i]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._materialised())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ColumnRows({self._materialised()!r})"


def _columns(
    name: str, names: tuple[str, ...], rows: list[Mapping[str, Any]]
) -> dict[str, list[Any]]:
    """The rows transposed into one list per column. The readers' rows usually hold every
    column and nothing else: then each column is gathered in C, one pass per column (a run
    has tens of thousands of rows; a Python loop per cell cost more than building the Arrow
    arrays, and a tuple per row then transposed cost twice these passes); otherwise each
    cell is looked up, missing ones null."""
    if not rows:
        return {c: [] for c in names}
    if set(map(len, rows)) == {len(names)}:
        try:
            return {c: list(map(itemgetter(c), rows)) for c in names}
        except KeyError:
            pass  # as many keys, not the same ones: the slow path names the stranger
    known = set(names)
    for row in rows:
        if not row.keys() <= known:
            extra = set(row) - known
            raise ValueError(f"{name}: row has columns the schema lacks: {sorted(extra)}")
    return {c: [row.get(c) for row in rows] for c in names}

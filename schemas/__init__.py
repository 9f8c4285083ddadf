"""The warehouse contract: one declaration per table, every field documented.

Tables are declared as plain data (`Field` tuples) so that light code paths such as
`score.py` can name columns without importing pyarrow; `arrow_schema()` builds the pyarrow
schema on demand for writers and validators.
"""

from deskscore.schemas.tables import SCHEMA_VERSION, TABLES, Field, Table
from deskscore.schemas.validate import arrow_schema, conform_rows, table

__all__ = [
    "SCHEMA_VERSION",
    "TABLES",
    "Field",
    "Table",
    "arrow_schema",
    "conform_rows",
    "table",
]

"""DuckDB over the warehouse: raw relations, then staging views, intermediate building blocks
and marts, in that order."""

from deskscore.sql.loader import (
    DUCKDB_TYPES,
    connect,
    intermediate_names,
    mart_names,
    staging_names,
)

__all__ = ["DUCKDB_TYPES", "connect", "intermediate_names", "mart_names", "staging_names"]

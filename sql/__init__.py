"""DuckDB over the warehouse: raw relations, then staging views, then marts, in that order."""

from deskscore.sql.loader import DUCKDB_TYPES, connect, mart_names, staging_names

__all__ = ["DUCKDB_TYPES", "connect", "mart_names", "staging_names"]

"""The Parquet warehouse: its files (`store`), what an open warehouse keeps of its manifest
between reads (`views`), and the lock that keeps one writer at a time (`lock`)."""

from deskscore.collectors.warehouse.store import (
    PACK_DIR,
    SCHEMA_VERSION,
    Compaction,
    Warehouse,
    runs_in_pack,
    schema_version_of,
)

__all__ = [
    "PACK_DIR",
    "SCHEMA_VERSION",
    "Compaction",
    "Warehouse",
    "runs_in_pack",
    "schema_version_of",
]

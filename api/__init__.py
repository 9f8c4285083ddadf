"""deskscore: re-score computer-use-agent trajectory archives offline and query them with SQL.

The Python API, for notebooks and scripts (docs/python-api.md)::

    import deskscore

    deskscore.ingest(["results/"], warehouse="wh")      # the `deskscore ingest` job
    deskscore.score(warehouse="wh", max_steps_scoring=50)
    board = deskscore.leaderboard("wh")                 # a Polars DataFrame
    con = deskscore.connect("wh")                       # DuckDB, read-only, every view
    con.sql("SELECT * FROM run_scores").pl()
    deskscore.export("wh", "leaderboard", "board.parquet")
    deskscore.formats.get("osworld")                    # the readers, without a warehouse

Every name is loaded when first used, so `import deskscore` (and the `deskscore` command,
which imports this package first) stays quick.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deskscore.collectors import formats
    from deskscore.pipelines.cli.common import UserError
    from deskscore.session import check, connect, episodes, export, ingest, leaderboard, score

_LAZY = {
    "connect": "deskscore.session",
    "ingest": "deskscore.session",
    "score": "deskscore.session",
    "check": "deskscore.session",
    "episodes": "deskscore.session",
    "leaderboard": "deskscore.session",
    "export": "deskscore.session",
    "UserError": "deskscore.pipelines.cli.common",
}
"""Public name -> the module that defines it."""

__all__ = [
    "UserError",
    "__version__",
    "check",
    "connect",
    "episodes",
    "export",
    "formats",
    "ingest",
    "leaderboard",
    "score",
]


def __getattr__(name: str) -> Any:  # PEP 562: load on first use
    if name == "formats":
        value: Any = importlib.import_module("deskscore.collectors.formats")
    elif name == "__version__":
        from deskscore.pipelines.cli.main import version

        value = version()
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'deskscore' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

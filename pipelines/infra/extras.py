"""The optional parts of deskscore: which extra of the distribution brings which module, and
the one-line error a command gives when the extra it needs is not installed.

The light install (`pip install deskscore`) reads, scores, queries and exports on the local
engine; Apache Beam (`--engine beam`, Beam's runner options), the Docker client (`collect`,
`sandbox`), matplotlib (`report`) and Starlette with uvicorn (`view`) are extras."""

from __future__ import annotations

import importlib.util

EXTRAS = {
    "apache_beam": "beam",
    "docker": "collect",
    "matplotlib": "report",
    "starlette": "viewer",
    "distributed": "dask",
}
"""Top-level module -> the extra that installs it."""


class MissingExtra(ImportError):
    """A command needs an extra that is not installed; the message says what to install."""


def has(module: str) -> bool:
    """Whether `module` can be imported (without importing it: cheap)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # a module left in sys.modules without a spec
        return True


def require(module: str, what: str) -> None:
    """Raise MissingExtra, naming `what` needs it and the pip command, unless `module` is
    installed."""
    if not has(module):
        extra = EXTRAS[module]
        raise MissingExtra(
            f"{what} needs the {extra} extra, which is not installed: "
            f"pip install 'deskscore[{extra}]'"
        )


__all__ = ["EXTRAS", "MissingExtra", "has", "require"]

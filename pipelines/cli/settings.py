"""Defaults a user sets once instead of on every command line: the warehouse, how long a job
waits for another's writer lock, and the decimals tables show.

Precedence: the command line, then the environment (`DESKSCORE_WAREHOUSE`), then the file
`deskscore.toml` in the working folder, then the built-in default. The file holds top-level
keys only, e.g.::

    warehouse = "demo/warehouse"
    wait = 60
    digits = 3
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from deskscore.pipelines.cli.args import MAX_DIGITS
from deskscore.sql.cells import DEFAULT_DIGITS

CONFIG_FILE = "deskscore.toml"
"""Read from the working folder when present."""
WAREHOUSE_ENV = "DESKSCORE_WAREHOUSE"

DEFAULT_WAREHOUSE = "warehouse"
DEFAULT_WAIT = 600.0
"""As pipelines.options' (a test keeps them the same): not imported from there, so that a
command that only reads, such as `deskscore sql`, does not wait on every job's options."""

KEYS: dict[str, type] = {"warehouse": str, "wait": float, "digits": int}
"""What deskscore.toml may set, and the type of each."""


class SettingsError(ValueError):
    """deskscore.toml cannot be used; the message says how to fix it."""


def file_settings(folder: str | os.PathLike[str] = ".") -> dict[str, Any]:
    """The settings of `folder`/deskscore.toml ({} without one), each checked against KEYS."""
    import tomllib

    path = Path(folder) / CONFIG_FILE
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: not valid TOML ({exc}); fix or remove it") from None
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise SettingsError(
            f"{path}: unknown setting(s) {', '.join(unknown)}; it may set {', '.join(KEYS)}"
        )
    out: dict[str, Any] = {}
    for key, value in data.items():
        kind = KEYS[key]
        ok = isinstance(value, kind) or (kind is float and isinstance(value, int))
        if not ok or isinstance(value, bool):
            raise SettingsError(f"{path}: {key} must be a {kind.__name__}, not {value!r}")
        if key == "digits" and not 0 <= value <= MAX_DIGITS:
            raise SettingsError(f"{path}: digits must be from 0 to {MAX_DIGITS}, not {value}")
        out[key] = kind(value)
    return out


def resolved(
    key: str,
    given: Any = None,
    env: Mapping[str, str] | None = None,
    folder: str | os.PathLike[str] = ".",
    from_file: Mapping[str, Any] | None = None,
) -> Any:
    """The value of setting `key`: `given` (the command line's) unless None, else the
    environment's (warehouse only), else deskscore.toml's (`from_file` when the caller has
    read it already), else the built-in default."""
    if given is not None:
        return given
    env = os.environ if env is None else env
    if key == "warehouse" and env.get(WAREHOUSE_ENV):
        return env[WAREHOUSE_ENV]
    if from_file is None:
        from_file = file_settings(folder)
    if key in from_file:
        return from_file[key]
    return {"warehouse": DEFAULT_WAREHOUSE, "wait": DEFAULT_WAIT, "digits": DEFAULT_DIGITS}[key]


def warehouse_source(given: str | None = None, from_file: Mapping[str, Any] | None = None) -> str:
    """Where the warehouse setting came from, for an error message that says what to change."""
    if given is not None:
        return "--warehouse"
    if os.environ.get(WAREHOUSE_ENV):
        return f"${WAREHOUSE_ENV}"
    if "warehouse" in (file_settings() if from_file is None else from_file):
        return CONFIG_FILE
    return f"the default (pass --warehouse, set ${WAREHOUSE_ENV}, or write {CONFIG_FILE})"


def apply(args: argparse.Namespace) -> None:
    """Fill the settings a parsed command line left unset (None) from the environment,
    deskscore.toml or the defaults; remember which the warehouse came from. The file is read
    once, and only when a setting is left unset."""
    keys = [k for k in KEYS if hasattr(args, k)]
    unset = any(getattr(args, k) is None for k in keys)
    from_file = file_settings() if unset else {}
    for key in keys:
        if key == "warehouse":
            args.warehouse_from = warehouse_source(args.warehouse, from_file)
        setattr(args, key, resolved(key, getattr(args, key), from_file=from_file))


__all__ = [
    "CONFIG_FILE",
    "DEFAULT_DIGITS",
    "DEFAULT_WAIT",
    "DEFAULT_WAREHOUSE",
    "KEYS",
    "WAREHOUSE_ENV",
    "SettingsError",
    "apply",
    "file_settings",
    "resolved",
    "warehouse_source",
]

"""Which scoring configurations a warehouse holds figures for, and the one a report shows.

A warehouse keeps figures of several configurations side by side (OSWorld-Human data
version, floor of S, rules). A report shows one, named in its title: each option the user
did not give takes the only value the scored configurations (among those that fit the
options chosen so far) have for it, else the scoring default. So a warehouse scored once,
any way, shows that; one scored several ways shows the defaults unless told otherwise; and a
configuration that was never scored is said so, naming those that were and the command that
scores it, instead of printing an empty table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deskscore.pipelines.cli.common import UserError
from deskscore.scorers.config import ScoreConfig

OPTIONS = ("human_version", "max_steps_scoring", "compat")
"""The configuration's options, in the order they are chosen."""


def deskcraft_run(alias: str = "") -> str:
    """A SQL condition on a runs row (qualified by `alias`): a DeskCraft run, as the DeskCraft
    marts select them. Its tasks are never OSWorld-Human's; its slices are the DeskCraft
    marts'."""
    a = f"{alias}." if alias else ""
    return f"({a}benchmark = 'deskcraft' OR {a}format = 'deskcraft')"


def scored_configurations(con: Any) -> list[ScoreConfig]:
    """The configurations run_scores holds figures for, sorted."""
    rows = con.sql(
        "SELECT DISTINCT human_version, max_steps_scoring, compat FROM run_scores ORDER BY ALL"
    ).fetchall()
    return [ScoreConfig(*row) for row in rows]


def chosen_configuration(
    configs: Sequence[ScoreConfig],
    *,
    human_version: str | None = None,
    max_steps_scoring: int | None = None,
    compat: str | None = None,
) -> ScoreConfig:
    """The configuration to show: each option as given; one not given takes the only value
    the scored configurations fitting the options chosen so far have, else its default."""
    given = {"human_version": human_version, "max_steps_scoring": max_steps_scoring}
    given["compat"] = compat
    default = ScoreConfig()
    chosen: dict[str, Any] = {}
    for name in OPTIONS:
        value = given[name]
        if value is None:
            fits = {
                getattr(c, name)
                for c in configs
                if all(getattr(c, k) == v for k, v in chosen.items())
            }
            value = fits.pop() if len(fits) == 1 else getattr(default, name)
        chosen[name] = value
    return ScoreConfig(**chosen)


def flags(config: ScoreConfig) -> str:
    """The command-line options that select `config`."""
    return (
        f"--human-version {config.human_version} --max-steps-scoring "
        f"{config.max_steps_scoring} --compat {config.compat}"
    )


def not_scored(warehouse: str, config: ScoreConfig, configs: Sequence[ScoreConfig]) -> str:
    """What to say when `config` has no figures: those it has, and how to score it."""
    if not configs:
        return f"no run in {warehouse} is scored yet: run 'deskscore score --warehouse {warehouse}'"
    held = "; ".join(f"{c.describe()} ({flags(c)})" for c in configs)
    return (
        f"no figures for {config.describe()} in {warehouse}. It holds figures for: {held}. "
        f"Pass those options, or score this configuration: 'deskscore score --warehouse "
        f"{warehouse} {flags(config)}'"
    )


def configuration(
    con: Any,
    warehouse: str,
    *,
    human_version: str | None = None,
    max_steps_scoring: int | None = None,
    compat: str | None = None,
) -> ScoreConfig:
    """The configuration to show (see `chosen_configuration`); UserError when it was never
    scored."""
    configs = scored_configurations(con)
    config = chosen_configuration(
        configs, human_version=human_version, max_steps_scoring=max_steps_scoring, compat=compat
    )
    if config not in configs:
        raise UserError(not_scored(warehouse, config, configs))
    return config


def only_runs(
    condition: str, params: dict[str, Any], runs: Sequence[str], alias: str = ""
) -> tuple[str, dict[str, Any]]:
    """`condition` narrowed to the run ids `runs` (repeatable --run), unless it is empty."""
    if not runs:
        return condition, params
    prefix = f"{alias}." if alias else ""
    return f"{condition} AND {prefix}run_id IN (SELECT unnest($runs))", params | {
        "runs": list(runs)
    }


def where(config: ScoreConfig, alias: str = "") -> tuple[str, dict[str, Any]]:
    """A SQL condition (and its parameters) selecting `config`'s rows of a view (its columns
    qualified by `alias`, when given)."""
    prefix = f"{alias}." if alias else ""
    condition = " AND ".join(f"{prefix}{k} = ${k}" for k in OPTIONS)
    return condition, {k: getattr(config, k) for k in OPTIONS}

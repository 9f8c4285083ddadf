"""The metric registry: the declared metrics, in order, and what is derived from them.

Registering a metric is all it takes to add one: `score_run` computes it, the score tables
gain its columns (this module fills the hook `deskscore.schemas.tables.set_metric_fields`,
since schemas import nothing of ours), the SQL views and the leaderboard show it.
"""

from __future__ import annotations

from deskscore.schemas.tables import TABLES, Field, set_metric_fields
from deskscore.scorers.metrics.declare import EPISODES, HUMAN_TASKS, Metric

EPISODE_TABLE = "episode_scores"
RUN_TABLE = "run_scores"
BOARD_TABLES = (RUN_TABLE, "run_costs")
"""Run-level tables the leaderboard view joins: a metric stored elsewhere cannot be on it."""

_METRICS: dict[str, Metric] = {}


def metrics() -> tuple[Metric, ...]:
    """Every registered metric, in registration order (the leaderboard's order)."""
    return tuple(_METRICS.values())


def metric(name: str) -> Metric:
    """The metric called `name`; KeyError listing the known names otherwise."""
    try:
        return _METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(_METRICS)}") from None


def better(name: str, a: float, b: float) -> bool:
    """Whether value `a` of metric `name` is strictly better than `b`."""
    return a > b if metric(name).direction == "higher" else a < b


def computed() -> tuple[Metric, ...]:
    """The metrics score_run computes, in the order it computes them: registration order,
    except that what a metric needs comes before it."""
    return _computing_order(_METRICS)


def _computing_order(known: dict[str, Metric]) -> tuple[Metric, ...]:
    out: dict[str, Metric] = {}

    def place(m: Metric, trail: tuple[str, ...]) -> None:
        if m.name in trail:
            raise ValueError(f"metrics need each other: {' -> '.join((*trail, m.name))}")
        for name in m.needs:
            place(known[name], (*trail, m.name))
        out.setdefault(m.name, m)

    for m in known.values():
        if m.table is None:
            place(m, ())
    return tuple(out.values())


def score_fields(table: str) -> tuple[Field, ...]:
    """The metric columns of episode_scores or run_scores, in computing order."""
    if table == EPISODE_TABLE:
        parts = [(m.name, m.episode) for m in computed() if m.episode is not None]
    elif table == RUN_TABLE:
        parts = [(m.name, m.run) for m in computed() if m.run is not None]
    else:
        raise KeyError(f"{table!r} holds no metric score_run computes")
    return tuple(Field(name, p.type, p.doc) for name, p in parts)


def field(m: Metric) -> Field:
    """A metric's field: in run_scores for one score_run computes, else in `m.table`."""
    table = m.table or RUN_TABLE
    return next(f for f in TABLES[table].fields if f.name == m.name)


def board() -> tuple[Metric, ...]:
    """The leaderboard view's figures, in order: every run_scores figure, and the figures of
    other run-level tables that have a header."""
    return tuple(
        m for m in _METRICS.values() if (m.table is None and m.run) or (m.table and m.header)
    )


def version_bumps() -> int:
    """How many times the registered metrics' definitions changed (versions count from 1 and
    only rise), so a score version built on it rises whenever one metric's does."""
    return sum(m.version - 1 for m in _METRICS.values())


def _sync_tables() -> None:
    for table in (EPISODE_TABLE, RUN_TABLE):
        set_metric_fields(table, score_fields(table))


def _check(m: Metric, known: dict[str, Metric]) -> None:
    """ValueError saying what is wrong with declaring `m` beside the `known` metrics."""

    def fail(why: str) -> None:
        raise ValueError(f"metric {m.name!r}: {why}")

    if not m.name.isidentifier() or m.name != m.name.lower():
        fail("the name must be a lower-case identifier (it names columns)")
    if m.name in known:
        fail("already registered")
    if m.direction not in ("higher", "lower"):
        fail("direction must be 'higher' or 'lower'")
    if isinstance(m.version, bool) or not isinstance(m.version, int) or m.version < 1:
        fail("the version must be an int from 1")
    if m.table is not None:
        if m.episode or m.run or m.needs:
            fail(f"{m.table} is computed by another scorer: no episode, run or needs here")
        if m.table not in TABLES or m.name not in TABLES[m.table].columns:
            fail(f"table {m.table!r} has no column {m.name!r}")
    elif m.episode is None and m.run is None:
        fail("give a per-episode value, a run aggregate, or the table another scorer fills")
    if m.run is not None:
        if m.run.over not in (EPISODES, HUMAN_TASKS):
            fail(f"over must be {EPISODES!r} or {HUMAN_TASKS!r}")
        if m.run.value is None and m.episode is None:
            fail("a run aggregate without a per-episode value needs its own `value`")
    if (m.header or m.percent) and (m.table or RUN_TABLE) not in BOARD_TABLES:
        fail(f"the leaderboard joins {', '.join(BOARD_TABLES)} only")
    if (m.header or m.percent) and m.table is None and m.run is None:
        fail("the leaderboard shows run figures: give a run aggregate")
    fixed = {f.name for t in (EPISODE_TABLE, RUN_TABLE) for f in TABLES[t].fields}
    if m.table is None and m.name in fixed - set(_METRICS):
        fail("the score tables already have a column of that name")
    if m.column in {x.column for x in known.values()}:
        fail(f"the leaderboard view already has a column {m.column!r}")


def register(*new: Metric) -> None:
    """Add metrics, in order; what one needs may come later in the same call. ValueError
    saying what is wrong with a declaration otherwise, and then none is added."""
    known = dict(_METRICS)
    for m in new:
        _check(m, known)
        known[m.name] = m
    for m in new:
        for name in m.needs:
            if name not in known or known[name].run is None or known[name].table:
                raise ValueError(f"metric {m.name!r} needs {name!r}: no run figure of that name")
    _computing_order(known)
    _METRICS.update((m.name, m) for m in new)
    _sync_tables()


def unregister(name: str) -> None:
    """Remove a metric; ValueError when another one needs it."""
    metric(name)
    users = [m.name for m in _METRICS.values() if name in m.needs]
    if users:
        raise ValueError(f"metric {name!r} is needed by {', '.join(users)}")
    del _METRICS[name]
    _sync_tables()

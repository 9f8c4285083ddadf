"""`deskscore report`: one self-contained HTML page of the standard benchmark pictures.

Charts are drawn with Matplotlib (Agg, no display, no network) and embedded as base64 PNG
data URIs, so the page needs no script to show them and opens offline anywhere; the same PNGs
can be written to folders for papers (PNG at 300 dpi, SVG, PDF), each figure drawing an agent in
the same colour (pipelines.cli.colours). The only script is a few lines that sort the
leaderboard table. A Content-Security-Policy meta tag forbids the browser to fetch anything.
Archive content (agent names, actions, paths) is untrusted: every text goes through
html.escape, chart labels are drawn as plain text (no mathtext: a `$` in a name is a dollar
sign, not a formula to parse), and screenshots are decoded under hash's image rules.
"""

from __future__ import annotations

import argparse
import base64
import io
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any, NamedTuple

from deskscore.pipelines.cli.colours import (
    FRONT,
    HUMAN,
    OUTCOME_COLOURS,
    STAGE_COLOURS,
    agent_colours,
)
from deskscore.pipelines.cli.columns import leaderboard_compact
from deskscore.pipelines.cli.common import UserError, check_runs, existing_warehouse, make_folder
from deskscore.pipelines.cli.output import cell_text, printable, say
from deskscore.pipelines.options import ReportOptions, add_options
from deskscore.scorers.metrics import metric

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

SECTIONS = (
    ("leaderboard", "Leaderboard"),
    ("wes", "Success vs WES+"),
    ("domains", "Per domain"),
    ("human-steps", "Human vs agent steps"),
    ("step-ratios", "Step ratios"),
    ("levels", "Per level"),
    ("budget", "Step budget"),
    ("loops", "Loops"),
    ("latency", "Latency"),
    ("latency-step", "Latency by step"),
    ("cost-step", "Cost by step"),
    ("pareto", "Cost-accuracy"),
    ("episodes", "Episodes"),
)
"""Section ids and titles, in page order: every section is always present (with a note when
its data does not exist yet), so links and tests can rely on the ids."""


STAGES = ("planning", "reflection", "judging", "grounding", "retrieval", "other",
          "screenshot", "action", "unattributed")  # fmt: skip
OUTCOMES = (("n_recovered", "recovered"), ("n_abandoned", "abandoned"),
            ("n_step_limit", "hit step limit"))  # fmt: skip

FIGURE_NAMES = (
    "wes_scatter", "domain_heatmap", "human_vs_agent_steps", "step_ratio_distribution",
    "per_level", "step_budget", "loop_outcomes", "latency_stages", "latency_by_step",
    "cost_by_step", "cost_pareto",
)  # fmt: skip
"""Every figure the report can draw: the files of these names in an output folder that a
report did not write this time are stale, and removed."""

FILE_FORMATS = ("png", "svg", "pdf")
FILE_DPI = 300
"""Resolution of the figure files (the page embeds them at 100 dpi)."""

TOP_LOOPING = 20
PER_RUN = 2
MAX_STEPS_SHOWN = 60
"""Steps shown of an episode without a loop span (from the first)."""
SPAN_CONTEXT = 3
"""Steps shown before and after each loop span of an episode that has one."""
THUMB_WIDTH = 160
TEXT_CHARS = 120
RESPONSE_CHARS = 400


@dataclass
class ReportResult:
    """What was written: the page, the figures, their files per format, counts."""

    path: Path
    sections: list[str]
    figures: list[str] = field(default_factory=list)
    files: dict[str, list[Path]] = field(default_factory=dict)
    removed: list[Path] = field(default_factory=list)
    n_episodes: int = 0
    n_thumbnails: int = 0

    @property
    def png_files(self) -> list[Path]:
        return self.files.get("png", [])

    @property
    def n_images(self) -> int:
        return len(self.figures) + self.n_thumbnails


def _label_points(ax: Any, rows: list[dict[str, Any]], colours: dict[str, str]) -> None:
    """Name each point of a scatter by its agent, just above and to the right of it."""
    for r in rows:
        ax.annotate(
            r["agent"],
            (r["x"], r["y"]),
            textcoords="offset points",
            xytext=(5, 4),
            fontsize=8,
            color=colours.get(r["agent"], "black"),
        )


LOG_TICKS = (0.1, 0.2, 0.5, 1, 2, 3, 5, 10, 20, 50, 100)


def _plain_log_ticks(axis: Any, values: Sequence[float]) -> None:
    """Ticks of a log axis at round numbers, labelled as plain numbers (the default labels
    are mathtext, which PLAIN_TEXT does not parse)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    lo, hi = min(values), max(values)
    ticks = [t for t in LOG_TICKS if lo / 1.5 <= t <= hi * 1.5] or [1]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_locator(NullLocator())


def _horizontal(ax: Any) -> dict[str, Any]:
    """boxplot's argument for horizontal boxes: `orientation` since Matplotlib 3.10, `vert`
    before (deprecated since)."""
    import inspect

    params = inspect.signature(ax.boxplot).parameters
    return {"orientation": "horizontal"} if "orientation" in params else {"vert": False}


def _colour_ticks(labels: Any, colours: dict[str, str]) -> None:
    """Tick labels that name agents, in the agents' colours."""
    for t in labels:
        if t.get_text() in colours:
            t.set_color(colours[t.get_text()])


def _interval_join(alias: str, name: str) -> str:
    """A LEFT JOIN of a figure's interval (the leaderboard's method) onto leaderboard rows `l`."""
    keys = " AND ".join(
        f"{alias}.{k} = l.{k}" for k in ("run_id", "human_version", "max_steps_scoring", "compat")
    )
    return (
        f" LEFT JOIN leaderboard_intervals AS {alias} ON {keys} AND {alias}.metric = '{name}' "
        f"AND {alias}.method = 'bootstrap_domain'"
    )


def _error_bars(ax: Any, r: dict[str, Any]) -> None:
    """A point's 95% intervals as error bars (x_low/x_high, y_low/y_high; none when absent)."""
    has = {a: r.get(f"{a}_low") is not None and r.get(f"{a}_high") is not None for a in "xy"}
    if not any(has.values()):
        return

    def err(a: str) -> Any:
        return [[r[a] - r[f"{a}_low"]], [r[f"{a}_high"] - r[a]]] if has[a] else None

    ax.errorbar(r["x"], r["y"], xerr=err("x"), yerr=err("y"), fmt="none", ecolor="gray",
                elinewidth=1, capsize=3)  # fmt: skip


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


PLAIN_TEXT = {"text.parse_math": False, "text.usetex": False}
"""Matplotlib settings for labels taken from archives: drawn as they are written."""


NO_METADATA = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}
"""What each format would stamp that changes from one run to the next: left out."""


def _render(
    draw: Callable[[Any], None],
    fmt: str = "png",
    dpi: int = 100,
    width: float = 7.5,
    height: float = 4.2,
) -> bytes:
    """Render one figure off-screen (no pyplot: no global state, no display), every text
    as plain text (`PLAIN_TEXT`) with its control characters shown escaped (names from
    archives: raw, ESC or CR reached the terminal in matplotlib's missing-glyph warnings,
    and made SVG files XML cannot read), as `fmt` (png, svg, pdf)."""
    import warnings

    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(PLAIN_TEXT | {"svg.hashsalt": "deskscore"}):
        fig = Figure(figsize=(width, height), dpi=dpi, layout="constrained")
        with warnings.catch_warnings():  # texts measured while drawn are still raw: a glyph
            # that stays missing once they are escaped is warned of when the figure is saved
            warnings.filterwarnings("ignore", message="Glyph .* missing from font")
            draw(fig)
        _escape_texts(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=NO_METADATA[fmt])
    return buf.getvalue()


def _escape_texts(fig: Any) -> None:
    """Every text of a drawn figure with its control characters shown escaped: its texts,
    and the tick labels its axes make their tick texts from again when it is saved (set
    again, escaped, only on an axis that has such a label)."""
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        text.set_text(printable(text.get_text()))
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t.get_text() for t in axis.get_majorticklabels()]
            shown = [printable(label) for label in labels]
            if shown != labels:
                axis.set_ticks(axis.get_majorticklocs(), shown)


def _note(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'


class _Builder:
    def __init__(self, con: Any, run_ids: Sequence[str] | None, out_dirs: dict[str, Path]) -> None:
        self.con = con
        self.out_dirs = out_dirs
        self.params: dict[str, Any] = {"runs": list(run_ids)} if run_ids else {}
        self.where = "run_id IN (SELECT unnest($runs))" if run_ids else "true"
        self.figures: list[str] = []
        self.files: dict[str, list[Path]] = {fmt: [] for fmt in out_dirs}
        self.n_thumbnails = 0
        names = self.rows(
            "SELECT r.agent, l.label FROM runs AS r JOIN run_labels AS l USING (run_id) "
            "WHERE {where}"
        )
        # figures name a run by its agent or by its label: both get the run's colour
        self.colours = agent_colours(n for r in names for n in (r["agent"], r["label"]))

    def rows(self, sql: str) -> list[dict[str, Any]]:
        rel = self.con.sql(sql.replace("{where}", self.where), params=self.params or None)
        cols = rel.columns
        return [dict(zip(cols, r, strict=True)) for r in rel.fetchall()]

    def colour(self, agent: str) -> str:
        return self.colours.get(agent, "black")

    def figure(self, name: str, alt: str, draw: Callable[[Any], None], **size: float) -> str:
        png = _render(draw, **size)
        self.figures.append(name)
        for fmt, folder in self.out_dirs.items():
            path = folder / f"{name}.{fmt}"
            path.write_bytes(_render(draw, fmt, FILE_DPI, **size))
            self.files[fmt].append(path)
        return f'<img class="fig" alt="{escape(alt)}" src="{_data_uri(png)}">'

    # -- sections ---------------------------------------------------------------------------

    def leaderboard(self) -> str:
        columns = leaderboard_compact()
        cols = ", ".join(c for c, _ in columns)
        rows = self.rows(f"SELECT {cols} FROM leaderboard WHERE {{where}}")
        if not rows:
            return _note("No scored runs yet: run 'deskscore score' first.")
        head = "".join(f'<th data-col="{i}">{escape(h)}</th>' for i, (_, h) in enumerate(columns))
        body = "".join(
            "<tr>"
            + "".join(
                f'<td data-v="{escape(cell_text(r[c]))}"{_NUM if _is_number(r[c]) else ""}>'
                f"{escape(cell_text(r[c]))}</td>"
                for c, _ in columns
            )
            + "</tr>"
            for r in rows
        )
        return (
            _note("Click a column header to sort.")
            + f'<table id="leaderboard-table" class="sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>"
        )

    def wes(self) -> str:
        rows = self.rows(
            "SELECT l.agent, l.y, l.x, 100 * iy.ci_low AS y_low, 100 * iy.ci_high AS y_high, "
            "100 * ix.ci_low AS x_low, 100 * ix.ci_high AS x_high FROM ("
            "SELECT label AS agent, success_rate_run_pct AS y, wes_plus_single_pct AS x, run_id, "
            "human_version, max_steps_scoring, compat FROM leaderboard "
            "WHERE {where} AND x IS NOT NULL AND y IS NOT NULL) AS l "
            + _interval_join("iy", "success_rate_run")
            + _interval_join("ix", "wes_plus_single")
        )
        if not rows:
            return _note("No run has WES+ yet: score runs with OSWorld-Human figures.")

        def draw(fig: Any) -> None:
            ax = fig.subplots()
            for r in rows:
                ax.scatter(r["x"], r["y"], s=60, color=self.colour(r["agent"]))
                _error_bars(ax, r)
            _label_points(ax, rows, self.colours)
            ax.set_xlabel(metric("wes_plus_single").axis_label)
            ax.set_ylabel(metric("success_rate_run").axis_label)
            ax.set_title("Success rate vs efficiency (WES+), one point per run, 95% intervals")
            ax.grid(alpha=0.3)

        return self.figure("wes_scatter", "success rate against WES+ per agent", draw)

    def domains(self) -> str:
        rows = self.rows(
            "SELECT label AS agent, domain, success_rate_run_pct AS v FROM per_domain WHERE {where}"
        )
        if not rows:
            return _note("No per-domain scores yet.")
        agents = sorted({r["agent"] for r in rows})
        domains = sorted({r["domain"] for r in rows})
        grid = [[float("nan")] * len(domains) for _ in agents]
        for r in rows:
            if r["v"] is not None:
                grid[agents.index(r["agent"])][domains.index(r["domain"])] = r["v"]

        def draw(fig: Any) -> None:
            ax = fig.subplots()
            im = ax.imshow(grid, cmap="viridis", vmin=0, vmax=100, aspect="auto")
            ax.set_xticks(range(len(domains)), domains, rotation=40, ha="right", fontsize=8)
            ax.set_yticks(range(len(agents)), agents, fontsize=8)
            _colour_ticks(ax.get_yticklabels(), self.colours)
            for i, line in enumerate(grid):
                for j, v in enumerate(line):
                    if v == v:  # not NaN
                        ax.text(
                            j,
                            i,
                            f"{v:.0f}",
                            ha="center",
                            va="center",
                            fontsize=7,
                            color="white" if v < 60 else "black",
                        )
            fig.colorbar(im, ax=ax, label=metric("success_rate_run").axis_label)
            ax.set_title("Success rate per domain (app)")

        height = max(3.0, 1.2 + 0.45 * len(agents))
        return self.figure(
            "domain_heatmap", "success rate per agent and domain", draw, width=9.0, height=height
        )

    def _configuration(self) -> str:
        """SQL for the one scoring configuration a figure over episode scores shows: the
        first the warehouse holds (the leaderboard's order)."""
        return (
            "(SELECT human_version, max_steps_scoring, compat FROM episode_scores "
            "WHERE {where} GROUP BY ALL ORDER BY human_version, max_steps_scoring, compat LIMIT 1)"
        )

    def human_steps(self) -> str:
        rows = self.rows(
            "SELECT l.label AS agent, s.domain, avg(s.t_agent) AS agent_steps, "
            "avg(s.t_human_single) AS human_steps, count(*) AS n FROM episode_scores AS s "
            "JOIN run_labels AS l USING (run_id) "
            f"JOIN {self._configuration()} AS c USING (human_version, max_steps_scoring, compat) "
            "WHERE {where} AND s.scored AND s.success AND s.t_human_single IS NOT NULL "
            "AND s.t_agent IS NOT NULL GROUP BY ALL ORDER BY s.domain, agent"
        )
        if not rows:
            return _note("No solved task with OSWorld-Human steps yet.")
        agents = sorted({r["agent"] for r in rows})
        domains = sorted({r["domain"] for r in rows})
        got = {(r["agent"], r["domain"]): r for r in rows}

        def draw(fig: Any) -> None:
            ax = fig.subplots()
            width = 0.8 / len(agents)
            for k, agent in enumerate(agents):
                for i, domain in enumerate(domains):
                    r = got.get((agent, domain))
                    if r is None:
                        continue
                    x = i + (k - (len(agents) - 1) / 2) * width
                    ax.bar(x, r["agent_steps"], width * 0.95, color=self.colour(agent),
                           label=agent if i == min(j for j, d in enumerate(domains)
                                                   if (agent, d) in got) else None)  # fmt: skip
                    ax.hlines(r["human_steps"], x - width * 0.45, x + width * 0.45,
                              colors=HUMAN, linewidth=2.5,
                              label="human, same tasks" if (k, i) == (0, 0) else None)  # fmt: skip
            ax.set_xticks(range(len(domains)), domains, rotation=35, ha="right", fontsize=8)
            ax.set_ylabel("mean steps per solved task")
            ax.set_title("Steps per domain: agents (bars) vs OSWorld-Human (black marks)")
            ax.grid(axis="y", alpha=0.3)
            ax.legend(fontsize=7, ncols=2)

        return _note(
            "Mean steps of the tasks each run solved, per domain, with the human's mean steps "
            "(single-action granularity) on the same tasks; episode_scores, one configuration."
        ) + self.figure(
            "human_vs_agent_steps", "human and agent steps per domain", draw, width=10.0
        )

    def step_ratios(self) -> str:
        rows = self.rows(
            "SELECT l.label AS agent, s.step_ratio_single AS ratio FROM episode_scores AS s "
            "JOIN run_labels AS l USING (run_id) "
            f"JOIN {self._configuration()} AS c USING (human_version, max_steps_scoring, compat) "
            "WHERE {where} AND s.scored AND s.success AND s.step_ratio_single > 0 "
            "ORDER BY agent"
        )
        if not rows:
            return _note("No solved task with a step ratio yet.")
        agents = sorted({r["agent"] for r in rows})
        ratios = [[r["ratio"] for r in rows if r["agent"] == a] for a in agents]

        def draw(fig: Any) -> None:
            ax = fig.subplots()
            box = ax.boxplot(ratios, widths=0.6, patch_artist=True, showfliers=False,
                             medianprops={"color": "black"}, **_horizontal(ax))  # fmt: skip
            for patch, agent in zip(box["boxes"], agents, strict=True):
                patch.set_facecolor(self.colour(agent))
                patch.set_alpha(0.45)
            for i, (agent, vals) in enumerate(zip(agents, ratios, strict=True)):
                ys = [i + 1 + 0.25 * ((j * 0.618) % 1 - 0.5) for j in range(len(vals))]
                ax.scatter(vals, ys, s=10, color=self.colour(agent), zorder=3)
            ax.axvline(1.0, color=HUMAN, linestyle="--", linewidth=1)
            ax.set_xscale("log")
            _plain_log_ticks(ax.xaxis, [r["ratio"] for r in rows])
            ax.set_yticks(range(1, len(agents) + 1), agents, fontsize=8)
            ax.invert_yaxis()  # the first agent on top, as in the legends
            _colour_ticks(ax.get_yticklabels(), self.colours)
            ax.set_xlabel("agent steps / human steps (log scale; dashed: as many as the human)")
            ax.set_title("Distribution of step ratios over solved tasks")
            ax.grid(axis="x", alpha=0.3, which="both")

        return self.figure(
            "step_ratio_distribution",
            "distribution of agent to human step ratios per agent",
            draw,
            height=max(2.8, 1.3 + 0.5 * len(agents)),
        )

    def levels(self) -> str:
        rows = self.rows(
            "SELECT agent, run_id, level_source, level, strict_success_pct AS v FROM per_level "
            "WHERE {where} AND split = 'all' AND level <> 'unlabelled' AND v IS NOT NULL "
            "ORDER BY level_source DESC, agent, run_id, level"
        )
        if not rows:
            return _note(
                "Per-level bars appear once the warehouse holds DeskCraft levels; "
                "these runs carry no level data."
            )
        sources = [s for s in ("stem", "difficulty") if any(r["level_source"] == s for r in rows)]
        runs = sorted({(r["agent"], r["run_id"]) for r in rows})
        levels = ("L1", "L2", "L3")

        def draw(fig: Any) -> None:
            axes = fig.subplots(1, len(sources), sharey=True, squeeze=False)[0]
            width = 0.8 / len(runs)
            for ax, source in zip(axes, sources, strict=True):
                for k, (agent, run_id) in enumerate(runs):
                    got = {
                        r["level"]: r["v"]
                        for r in rows
                        if r["level_source"] == source and r["run_id"] == run_id
                    }
                    xs = [i + (k - (len(runs) - 1) / 2) * width for i in range(len(levels))]
                    ax.bar(
                        xs,
                        [got.get(lv, 0.0) for lv in levels],
                        width,
                        label=agent,
                        color=self.colour(agent),
                    )
                ax.set_xticks(range(len(levels)), levels)
                ax.set_title(
                    "level from the " + ("stem prefix" if source == "stem" else "difficulty field"),
                    fontsize=9,
                )
                ax.grid(axis="y", alpha=0.3)
            axes[0].set_ylabel(metric("strict_success_rate_run").axis_label)
            axes[0].legend(fontsize=8)

        return _note(
            "DeskCraft strict success (score 1) per difficulty level, from each level source "
            "(per_level view; tasks a source leaves unlabelled are not drawn)."
        ) + self.figure("per_level", "strict success per DeskCraft level and agent", draw)

    def budget(self) -> str:
        rows = self.rows(
            "SELECT agent, run_id, budget, accuracy_pct, budget_unit FROM step_budget WHERE {where}"
        )
        units = " or ".join(sorted({r["budget_unit"] for r in rows}))
        if not rows:
            return _note("No episodes with a result yet.")
        series: dict[tuple[str, str], list[tuple[int, float]]] = {}
        for r in rows:
            series.setdefault((r["agent"], r["run_id"]), []).append(
                (r["budget"], r["accuracy_pct"])
            )

        def draw(fig: Any) -> None:
            ax = fig.subplots()
            for (agent, _), pts in sorted(series.items()):
                ax.plot(
                    [b for b, _ in pts],
                    [a for _, a in pts],
                    marker="o",
                    ms=3,
                    label=agent,
                    color=self.colour(agent),
                )
            ax.set_xlabel(f"step budget ({units})")
            ax.set_ylabel("tasks solved within budget (%)")
            ax.set_title("Accuracy vs step budget")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)

        return _note(
            "A task counts at budget b if it succeeded (score 1) within b turns (OSWorld) or "
            "environment steps (DeskCraft; questions to the user are not steps); step_budget view."
        ) + self.figure("step_budget", "accuracy against step budget per agent", draw)

    def loops(self) -> str:
        rows = self.rows(
            "SELECT agent, sum(n_recovered) AS n_recovered, sum(n_abandoned) AS n_abandoned, "
            "sum(n_step_limit) AS n_step_limit FROM episode_loops WHERE {where} "
            "GROUP BY agent ORDER BY agent"
        )
        if not any(sum(r[k] or 0 for k, _ in OUTCOMES) for r in rows):
            return _note("No loop spans found (or loops not detected yet: run 'deskscore score').")

        def draw(fig: Any) -> None:
            ax = fig.subplots()
            agents = [r["agent"] for r in rows]
            left = [0.0] * len(rows)
            for key, label in OUTCOMES:
                vals = [float(r[key] or 0) for r in rows]
                ax.barh(
                    agents,
                    vals,
                    left=left,
                    label=label,
                    color=OUTCOME_COLOURS[key],
                    edgecolor="#555555",
                    linewidth=0.5,
                )
                left = [a + b for a, b in zip(left, vals, strict=True)]
            _colour_ticks(ax.get_yticklabels(), self.colours)
            ax.set_xlabel("loop spans")
            ax.set_title("How loops end, per agent")
            ax.legend(fontsize=8)

        return self.figure(
            "loop_outcomes",
            "loop outcome split per agent",
            draw,
            height=max(2.5, 1.2 + 0.45 * len(rows)),
        )

    def latency(self) -> str:
        rows = self.rows(
            "SELECT agent, stage, share, note FROM latency_breakdown WHERE domain = '(all)' "
            "AND agent IN (SELECT agent FROM runs WHERE {where}) ORDER BY agent"
        )
        shares: dict[str, dict[str, float]] = {}
        notes = []
        for r in rows:
            shares.setdefault(r["agent"], {})
            if r["share"] is not None:
                shares[r["agent"]][r["stage"]] = 100 * r["share"]
            elif r["note"] and f"{r['agent']}: {r['note']}" not in notes:
                notes.append(f"{r['agent']}: {r['note']}")
        shares = {a: s for a, s in shares.items() if s}
        extra = "".join(_note(n) for n in notes)
        if not shares:
            return _note("No timed episodes yet.") + extra

        def draw(fig: Any) -> None:
            ax = fig.subplots()
            agents = sorted(shares)
            left = [0.0] * len(agents)
            for stage in STAGES:
                vals = [shares[a].get(stage, 0.0) for a in agents]
                if any(vals):
                    ax.barh(
                        agents,
                        vals,
                        left=left,
                        label=stage,
                        color=STAGE_COLOURS.get(stage, "#d9d9d9"),
                        edgecolor="#555555",
                        linewidth=0.5,
                    )
                    left = [a + b for a, b in zip(left, vals, strict=True)]
            _colour_ticks(ax.get_yticklabels(), self.colours)
            ax.set_xlabel("share of task time (%)")
            ax.set_title("Where the task time goes, per stage")
            # below the axes: inside, it hid the bars it explains
            ax.legend(fontsize=7, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.15))

        return (
            self.figure(
                "latency_stages",
                "latency breakdown per stage",
                draw,
                height=max(2.5, 1.4 + 0.5 * len(shares)),
            )
            + extra
        )

    def latency_step(self) -> str:
        rows = self.rows(
            "SELECT agent, benchmark, first_turn, last_turn, median_turn_s, growth_vs_first, "
            "n_timed_turns FROM latency_by_step WHERE agent IN (SELECT agent FROM runs WHERE "
            "{where}) AND median_turn_s IS NOT NULL ORDER BY agent, benchmark, first_turn"
        )
        if not rows:
            return _note("No timed turns yet.")
        series: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in rows:
            series.setdefault((r["agent"], r["benchmark"]), []).append(r)
        several = len({b for _, b in series}) > 1

        def draw(fig: Any) -> None:
            ax1, ax2 = fig.subplots(1, 2)
            for (agent, benchmark), pts in sorted(series.items()):
                xs = [(p["first_turn"] + p["last_turn"]) / 2 for p in pts]
                label = f"{agent} ({benchmark})" if several else agent
                c = self.colour(agent)
                ax1.plot(xs, [p["median_turn_s"] for p in pts], marker="o", ms=3, color=c,
                         label=label)  # fmt: skip
                ax2.plot(xs, [p["growth_vs_first"] for p in pts], marker="o", ms=3, color=c,
                         label=label)  # fmt: skip
            ax1.set_ylabel("median seconds per turn")
            ax2.set_ylabel("x the first five turns")
            ax2.axhline(1.0, color=HUMAN, linestyle="--", linewidth=1)
            for ax in (ax1, ax2):
                ax.set_xlabel("turn (buckets of five)")
                ax.grid(alpha=0.3)
            ax1.set_title("Time per turn as the episode goes on")
            ax2.set_title("Growth against turns 1-5")
            ax2.legend(fontsize=7)

        return _note(
            "Median time of a turn per bucket of five turns (latency_by_step view): prompts "
            "that carry the history make late turns slower."
        ) + self.figure("latency_by_step", "latency by step index per agent", draw, width=10.0)

    def cost_step(self) -> str:
        rows = self.rows(
            "SELECT agent, run_id, turn, mean_step_cost_usd, cumulative_cost_usd, growth "
            "FROM cost_by_step WHERE {where} AND mean_step_cost_usd IS NOT NULL"
        )
        if not rows:
            return _note("No priced model calls yet: run 'deskscore cost'.")
        series: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in rows:
            series.setdefault((r["agent"], r["run_id"]), []).append(r)

        def draw(fig: Any) -> None:
            ax1, ax2 = fig.subplots(1, 2)
            for (agent, _), pts in sorted(series.items()):
                turns = [p["turn"] for p in pts]
                label = f"{agent} ({pts[0]['growth']})"
                c = self.colour(agent)
                ax1.plot(turns, [p["mean_step_cost_usd"] for p in pts], label=label, color=c)
                ax2.plot(turns, [p["cumulative_cost_usd"] for p in pts], label=label, color=c)
            ax1.set_title("Mean cost of a turn")
            ax2.set_title("Cumulative cost to reach a turn")
            for ax in (ax1, ax2):
                ax.set_xlabel("turn")
                ax.set_ylabel("USD")
                ax.grid(alpha=0.3)
            ax2.legend(fontsize=7)

        return self.figure("cost_by_step", "cost by step per agent", draw, width=10.0)

    def pareto(self) -> str:
        rows = self.rows(
            "SELECT agent, success_rate_run_pct AS y, cost_per_task_usd AS x, on_front "
            "FROM cost_pareto WHERE {where} AND on_front IS NOT NULL ORDER BY x"
        )
        if not rows:
            return _note("No run has a complete cost yet.")

        def draw(fig: Any) -> None:
            ax = fig.subplots()
            front = [r for r in rows if r["on_front"]]
            ax.step(
                [r["x"] for r in front],
                [r["y"] for r in front],
                where="post",
                color=FRONT,
                linewidth=1,
                label="front",
            )
            for r in rows:
                ax.scatter(
                    r["x"],
                    r["y"],
                    s=60,
                    marker="o" if r["on_front"] else "x",
                    color=self.colour(r["agent"]),
                )
            _label_points(ax, rows, self.colours)
            ax.scatter([], [], marker="o", color="gray", label="on the front")
            ax.scatter([], [], marker="x", color="gray", label="dominated")
            ax.margins(x=0.2, y=0.12)  # room for the names beside the points
            ax.set_xlabel(metric("cost_per_task_usd").axis_label)
            ax.set_ylabel(metric("success_rate_run").axis_label)
            ax.set_title("Cost-accuracy front")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)

        return self.figure("cost_pareto", "cost against accuracy with the front", draw)

    # -- drill-down ---------------------------------------------------------------------------

    def chosen_episodes(self) -> list[dict[str, Any]]:
        """The most looping episodes, then a few per run (longest first), without repeats."""
        return self.rows(
            f"""
            WITH el AS (SELECT * FROM episode_loops WHERE {{where}}),
            top AS (
                SELECT run_id, domain, task_id, 0 AS grp, looping_steps AS k1, n_turns AS k2
                FROM el WHERE looping_steps > 0
                ORDER BY looping_steps DESC, run_id, domain, task_id LIMIT {TOP_LOOPING}
            ),
            per_run AS (
                SELECT run_id, domain, task_id, 1 AS grp, 0 AS k1, n_turns AS k2
                FROM el WHERE (run_id, domain, task_id) NOT IN (SELECT (run_id, domain, task_id) FROM top)
                QUALIFY row_number() OVER (
                    PARTITION BY run_id ORDER BY n_turns DESC, domain, task_id) <= {PER_RUN}
            ),
            chosen AS (SELECT * FROM top UNION ALL SELECT * FROM per_run)
            SELECT c.run_id, c.domain, c.task_id, el.agent, el.score, el.n_turns,
                   el.looping_steps, el.ended_by, r.source,
                   coalesce(e.instruction, (SELECT any_value(t.instruction) FROM tasks AS t
                       WHERE t.domain = c.domain AND t.task_id = c.task_id)) AS instruction
            FROM chosen AS c
            JOIN el USING (run_id, domain, task_id)
            JOIN runs AS r USING (run_id)
            JOIN episodes AS e USING (run_id, domain, task_id)
            ORDER BY c.grp, c.k1 DESC, c.k2 DESC, c.run_id, c.domain, c.task_id
            """
        )

    def episodes(self, chosen: list[dict[str, Any]]) -> str:
        if not chosen:
            return _note("No episodes yet.")
        steps = self.rows(self._steps_sql())
        spans = self.rows(
            "SELECT run_id, domain, task_id, first_step, last_step, outcome, signals "
            "FROM loop_spans WHERE {where} AND (run_id, domain, task_id) IN "
            "(SELECT (run_id, domain, task_id) FROM _chosen) ORDER BY first_step"
        )
        by_ep: dict[tuple, list[dict[str, Any]]] = {}
        for s in steps:
            by_ep.setdefault((s["run_id"], s["domain"], s["task_id"]), []).append(s)
        spans_by: dict[tuple, list[dict[str, Any]]] = {}
        for s in spans:
            spans_by.setdefault((s["run_id"], s["domain"], s["task_id"]), []).append(s)
        index, parts = [], []
        sources: dict[str, Any] = {}
        try:
            for n, ep in enumerate(chosen):
                key = (ep["run_id"], ep["domain"], ep["task_id"])
                anchor = f"ep-{n}"
                title = f"{ep['agent']} / {ep['domain']} / {ep['task_id']}"
                index.append(
                    f'<li><a href="#{anchor}">{escape(title)}</a> '
                    f"({cell_text(ep['looping_steps'])} looping steps, score {cell_text(ep['score'])})</li>"
                )
                parts.append(
                    self._episode(
                        anchor, title, ep, by_ep.get(key, []), spans_by.get(key, []), sources
                    )
                )
        finally:
            for src in sources.values():
                if src is not None:
                    src.close()
        return (
            _note(
                f"The {TOP_LOOPING} most looping episodes, then the {PER_RUN} longest of each run. "
                f"An episode with loops shows each loop span with {SPAN_CONTEXT} steps either "
                f"side; one without, its first {MAX_STEPS_SHOWN} steps. Rows inside a loop span "
                "are highlighted; every step shown has its screenshot."
            )
            + f'<ol class="index">{"".join(index)}</ol>'
            + "".join(parts)
        )

    def _steps_sql(self) -> str:
        return (
            "SELECT run_id, domain, task_id, step_idx, step_num, action_kind, action_text, dt_s, "
            "screenshot_path, response FROM steps WHERE {where} AND (run_id, domain, task_id) IN "
            "(SELECT (run_id, domain, task_id) FROM _chosen) ORDER BY step_idx"
        )

    def _thumb(self, source_uri: str, path: str | None, sources: dict[str, Any]) -> str:
        if not path:
            return ""
        if source_uri not in sources:
            from deskscore.collectors.source import open_source

            try:
                sources[source_uri] = open_source(source_uri)
            except Exception:  # a moved or unreadable archive: no thumbnails, page still built
                sources[source_uri] = None
        src = sources[source_uri]
        if src is None:
            return ""
        try:
            from deskscore.collectors.screenshots import open_screenshot

            with open_screenshot(src, path) as im:  # hash's image rules: formats, pixel cap
                im = im.convert("RGB")
                height = max(1, round(im.height * THUMB_WIDTH / im.width))
                small = im.resize((THUMB_WIDTH, height))
                buf = io.BytesIO()
                small.save(buf, format="PNG", optimize=True)
        except Exception:  # missing or undecodable screenshot: the row shows without one
            return ""
        self.n_thumbnails += 1
        return f'<img class="thumb" alt="screenshot" src="{_data_uri(buf.getvalue())}">'

    def _episode(
        self,
        anchor: str,
        title: str,
        ep: dict[str, Any],
        steps: list[dict[str, Any]],
        spans: list[dict[str, Any]],
        sources: dict[str, Any],
    ) -> str:
        def in_span(idx: int) -> dict[str, Any] | None:
            return next((s for s in spans if s["first_step"] <= idx <= s["last_step"]), None)

        by_idx = {s["step_idx"]: s for s in steps}
        shown = shown_steps(
            [s["step_idx"] for s in steps], [(p["first_step"], p["last_step"]) for p in spans]
        )
        rows = []
        for idx in shown:
            if isinstance(idx, Gap):
                rows.append(f'<tr class="gap"><td colspan="8">{idx.n} step(s) not shown</td></tr>')
                continue
            s = by_idx[idx]
            span = in_span(idx)
            thumb = self._thumb(ep["source"], s["screenshot_path"], sources)
            cls = ' class="loop"' if span else ""
            rows.append(
                f"<tr{cls}><td>{cell_text(s['step_idx'])}</td><td>{cell_text(s['step_num'])}</td>"
                f"<td>{escape(cell_text(s['action_kind']))}</td>"
                f"<td><code>{escape(_clip(s['action_text'], TEXT_CHARS))}</code></td>"
                f'<td class="response">{escape(_clip(s["response"], RESPONSE_CHARS))}</td>'
                f"<td>{escape(cell_text(s['dt_s']))}</td>"
                f"<td>{escape(span['outcome']) if span else ''}</td><td>{thumb}</td></tr>"
            )
        span_list = "".join(
            f"<li>steps {s['first_step']}-{s['last_step']}: {escape(cell_text(s['outcome']))} "
            f"({escape(', '.join(s['signals'] or []))})</li>"
            for s in spans
        )
        instruction = ep.get("instruction") or "(not in the archive nor in the task index)"
        return (
            f'<div class="episode" id="{anchor}"><h3>{escape(title)}</h3>'
            f"<p>run {escape(ep['run_id'])}, {cell_text(ep['n_turns'])} turns, score "
            f"{escape(cell_text(ep['score']))}, ended by {escape(cell_text(ep['ended_by']))}</p>"
            f'<p class="instruction"><b>Instruction:</b> {escape(instruction)}</p>'
            + (f"<ul>{span_list}</ul>" if span_list else "")
            + '<table class="steps"><thead><tr><th>idx</th><th>turn</th><th>kind</th>'
            "<th>action</th><th>response</th><th>dt s</th><th>loop</th><th>screen</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
        )


_NUM = ' class="num"'


def _clip(text: str | None, n: int) -> str:
    text = text or ""
    return text if len(text) <= n else text[: n - 1] + "…"


class Gap(NamedTuple):
    """Steps left out of a drill-down between the steps shown."""

    n: int


def shown_steps(
    step_idxs: Sequence[int],
    spans: Sequence[tuple[int, int]],
    context: int = SPAN_CONTEXT,
    limit: int = MAX_STEPS_SHOWN,
) -> list[int | Gap]:
    """The steps a drill-down shows, in order, with a Gap where steps are left out: each loop
    span (first, last step index) with `context` steps either side, or, without a span, the
    first `limit` steps. Wherever a span lies, it is shown whole."""
    if spans:
        keep = [i for i in step_idxs if any(a - context <= i <= b + context for a, b in spans)]
    else:
        keep = list(step_idxs[:limit])
    out: list[int | Gap] = []
    position = {idx: k for k, idx in enumerate(step_idxs)}
    last = -1
    for idx in keep:
        if position[idx] > last + 1:
            out.append(Gap(position[idx] - last - 1))
        out.append(idx)
        last = position[idx]
    if last < len(step_idxs) - 1:
        out.append(Gap(len(step_idxs) - 1 - last))
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


STYLE = """
body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fff}
nav{position:sticky;top:0;background:#1f3b57;padding:.5em 1em;z-index:1}
nav a{color:#fff;margin-right:1em;text-decoration:none;font-size:.9em}
main{padding:0 1.5em 2em;max-width:1200px}
section{border-bottom:1px solid #ddd;padding:.5em 0 1em}
table{border-collapse:collapse;font-size:.85em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
table.sortable th{cursor:pointer;background:#eef2f6}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.loop{background:#ffe3c4}
tr.gap td{color:#777;font-style:italic;text-align:center;background:#f4f4f4}
td.response{max-width:28em;font-size:.9em}
.instruction{background:#f4f7fa;padding:.4em .6em;border-left:4px solid #1f3b57}
img.fig{max-width:100%;display:block;margin:.5em 0}
img.thumb{width:160px}
.note{color:#555;font-size:.9em}
code{white-space:pre-wrap;word-break:break-all}
"""

SORT_SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function(t){
  t.querySelectorAll('th').forEach(function(th,i){
    th.addEventListener('click',function(){
      var b=t.tBodies[0],rows=Array.from(b.rows),asc=th.dataset.asc!=='1';
      rows.sort(function(x,y){
        var a=x.cells[i].dataset.v,c=y.cells[i].dataset.v,na=parseFloat(a),nc=parseFloat(c);
        var r=(!isNaN(na)&&!isNaN(nc))?na-nc:a.localeCompare(c);return asc?r:-r;});
      th.dataset.asc=asc?'1':'0';rows.forEach(function(r){b.appendChild(r);});
    });
  });
});
"""


def _check_places(out: str, out_dirs: dict[str, Path]) -> None:
    """UserError, before anything is drawn, for a page or figure folder that cannot be
    written: an empty --out or one naming a folder, a figure folder that is a file, a folder
    that cannot be made or written. Their folders are made here."""
    page = Path(out)
    if not out:
        raise UserError("--out is empty: name the HTML file to write, e.g. report.html")
    if page.is_dir():
        raise UserError(
            f"--out {out}: is a folder; name the HTML file, e.g. {page / 'report.html'}"
        )
    for fmt, folder in out_dirs.items():  # every one checked before any is made
        if folder.exists() and not folder.is_dir():
            raise UserError(f"--{fmt} {folder}: is a file; name a folder for the figures")
    places = [(f"--out {out} (its folder {page.parent})", page.parent, "the report")]
    places += [(f"--{fmt} {folder}", folder, "the figures") for fmt, folder in out_dirs.items()]
    for option, folder, purpose in places:
        make_folder(folder, option, purpose)
        if not os.access(folder, os.W_OK):
            raise UserError(f"{option}: cannot write in {folder}; name a folder you can write")


def remove_stale(out_dirs: dict[str, Path], drawn: Sequence[str]) -> list[Path]:
    """Remove, from each figure folder, the files of report figures (FIGURE_NAMES) that this
    report did not draw: left from an earlier one, they would pass for current. Any other
    file is the user's and stays."""
    removed = []
    for fmt, folder in out_dirs.items():
        for name in FIGURE_NAMES:
            path = folder / f"{name}.{fmt}"
            if name not in drawn and path.is_file():
                path.unlink()
                removed.append(path)
    return removed


def build_report(
    warehouse: str,
    out: str,
    *,
    run_ids: Sequence[str] | None = None,
    png_dir: str | None = None,
    svg_dir: str | None = None,
    pdf_dir: str | None = None,
) -> ReportResult:
    """Write the report page to `out`, and each figure into each of `png_dir`, `svg_dir`,
    `pdf_dir` given (removing there the figures of an earlier report that this one did not
    draw); UserError when the warehouse holds no run, or not the `run_ids` asked for."""
    import matplotlib

    matplotlib.use("Agg")
    from deskscore.sql import connect

    con = connect(warehouse)
    check_runs(warehouse, run_ids, con)
    folders = {"png": png_dir, "svg": svg_dir, "pdf": pdf_dir}
    out_dirs = {fmt: Path(d) for fmt, d in folders.items() if d}
    _check_places(out, out_dirs)
    b = _Builder(con, run_ids, out_dirs)
    b.con.execute(
        "CREATE OR REPLACE TEMP TABLE _chosen (run_id VARCHAR, domain VARCHAR, task_id VARCHAR)"
    )
    makers = {
        "leaderboard": b.leaderboard,
        "wes": b.wes,
        "domains": b.domains,
        "human-steps": b.human_steps,
        "step-ratios": b.step_ratios,
        "levels": b.levels,
        "budget": b.budget,
        "loops": b.loops,
        "latency": b.latency,
        "latency-step": b.latency_step,
        "cost-step": b.cost_step,
        "pareto": b.pareto,
    }
    chosen = b.chosen_episodes()
    if chosen:
        con.executemany(
            "INSERT INTO _chosen VALUES (?, ?, ?)",
            [[c["run_id"], c["domain"], c["task_id"]] for c in chosen],
        )
    bodies = {sid: make() for sid, make in makers.items()}
    bodies["episodes"] = b.episodes(chosen)
    nav = "".join(f'<a href="#{sid}">{escape(t)}</a>' for sid, t in SECTIONS)
    sections = "".join(
        f'<section id="{sid}"><h2>{escape(t)}</h2>{bodies[sid]}</section>' for sid, t in SECTIONS
    )
    scope = ", ".join(run_ids) if run_ids else "all runs"
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<title>deskscore report</title>"
        f"<style>{STYLE}</style></head><body><nav>{nav}</nav><main>"
        f'<h1>deskscore report</h1><p class="note">{escape(scope)}</p>{sections}</main>'
        f"<script>{SORT_SCRIPT}</script></body></html>\n"
    )
    path = Path(out)
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"--out {out}: cannot write it ({exc.strerror or exc})") from None
    return ReportResult(
        path=path,
        sections=[sid for sid, _ in SECTIONS],
        figures=b.figures,
        files=b.files,
        removed=remove_stale(out_dirs, b.figures),
        n_episodes=len(chosen),
        n_thumbnails=b.n_thumbnails,
    )


__all__ = [
    "CSP",
    "FIGURE_NAMES",
    "SECTIONS",
    "ReportResult",
    "build_report",
    "remove_stale",
    "shown_steps",
]


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "report", help="write one self-contained HTML page of charts and episode drill-downs"
    )
    add_options(p, ReportOptions, skip=("wait",))
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, beam_args: Sequence[str]) -> int:
    options = ReportOptions.from_args(args)
    root = existing_warehouse(options.warehouse)
    result = build_report(
        str(root),
        options.out,
        run_ids=options.runs or None,
        png_dir=options.png,
        svg_dir=options.svg,
        pdf_dir=options.pdf,
    )
    written = "".join(
        f"; {fmt.upper()}s in {folder}"
        for fmt, folder in (("png", options.png), ("svg", options.svg), ("pdf", options.pdf))
        if folder
    )
    stale = f"; removed {len(result.removed)} stale figure file(s)" if result.removed else ""
    say(
        f"wrote {result.path}: {len(result.figures)} figure(s), {result.n_episodes} episode(s), "
        f"{result.n_thumbnails} thumbnail(s)" + written + stale
    )
    return 0

"""A scoring configuration: what a set of figures was computed against.

Figures depend on three choices, and a warehouse keeps figures for several configurations side
by side: the OSWorld-Human data version (the human step counts and the N of the
denominators), S's floor (`--max-steps-scoring`; S = max(floor, the run's longest t_agent)),
and the rule set (`compat`, see `deskscore.scorers.wes`). This is the one place their
defaults are written; command lines, jobs and `score.py` read them from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from deskscore.scorers.wes import COMPAT_MODES, DEFAULT_COMPAT, check_compat

HUMAN_VERSIONS: tuple[str, ...] = ("2025-06", "verified")
"""OSWorld-Human data versions deskscore bundles (see datasets/)."""

DEFAULT_HUMAN_VERSION = "verified"
DEFAULT_MAX_STEPS_SCORING = 15
"""OSWorld-Human's default floor of S."""
DEFAULT_BOOTSTRAP_RESAMPLES = 1000
"""Resamples behind each run figure's interval (scorers.intervals)."""
DEFAULT_BOOTSTRAP_SEED = 0


@dataclass(frozen=True)
class ScoreConfig:
    """One scoring configuration. Frozen and hashable: it keys stored figures."""

    human_version: str = DEFAULT_HUMAN_VERSION
    """OSWorld-Human data version: 2025-06 or verified."""
    max_steps_scoring: int = DEFAULT_MAX_STEPS_SCORING
    """The floor of S, the step budget WES- and WES divide by."""
    compat: str = DEFAULT_COMPAT
    """Rule set: deskscore (default) or osworld-human (the original's quirks)."""

    def __post_init__(self) -> None:
        check_compat(self.compat)

    @property
    def file(self) -> str:
        """The file name of this configuration's figures inside a run's partition, so
        configurations coexist (and a re-score replaces only its own file)."""
        return f"{self.human_version}-s{self.max_steps_scoring}-{self.compat}"

    def key(self) -> tuple[str, int, str]:
        """(human_version, max_steps_scoring, compat): how tables key a configuration."""
        return (self.human_version, self.max_steps_scoring, self.compat)

    def describe(self) -> str:
        """The configuration as people read it in a title."""
        return (
            f"OSWorld-Human {self.human_version}, step budget S = max({self.max_steps_scoring}, "
            f"longest run), {self.compat} rules"
        )


__all__ = [
    "COMPAT_MODES",
    "DEFAULT_BOOTSTRAP_RESAMPLES",
    "DEFAULT_BOOTSTRAP_SEED",
    "DEFAULT_COMPAT",
    "DEFAULT_HUMAN_VERSION",
    "DEFAULT_MAX_STEPS_SCORING",
    "HUMAN_VERSIONS",
    "ScoreConfig",
]

"""TreeCUA's judged success: a task succeeds only if the judge passes it k times in a row.

One judging round can pass a failed trajectory by chance (a model's verdict is noisy, even at
temperature 0 across servers), so TreeCUA asks for two consecutive passing rounds. The rule,
exactly, for k >= 1 and a budget of R >= k rounds (default R = k):

- rounds are played in order, 1, 2, ..., at most R;
- the episode passes as soon as k consecutive rounds have passed;
- it fails as soon as that can no longer happen within R rounds: when the trailing run of
  passes plus the rounds left is below k (with R = k: at the first round that does not pass),
  and at the latest after round R;
- a round that does not pass is a "fail" verdict, an unparseable reply or a bad body alike;
- the score is the fraction of the rounds played that passed (a pass after [fail, pass,
  pass] with R = 3 scores 2/3).

Rounds are therefore never played beyond the decision, which is what makes the rule cheap:
with k = R = 2 a clear failure costs one request.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

RULE = "k_consecutive"
"""The `verdicts.rule` of judged rows."""
DEFAULT_K = 2


class KDecision(NamedTuple):
    """Where an episode stands after the rounds played so far."""

    decided: bool
    """True when no further round can change the outcome."""
    passed: bool | None
    """The outcome once decided (None before)."""
    score: float | None
    """Fraction of the rounds played that passed (None before any round)."""
    rounds_played: int


def check_k(k: int, rounds: int | None) -> int:
    """The round budget R for `k` (default k); ValueError unless 1 <= k <= R."""
    budget = k if rounds is None else rounds
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if budget < k:
        raise ValueError(
            f"--rounds ({budget}) must be at least k ({k}): k passes in a row need k rounds"
        )
    return budget


def k_consecutive(
    outcomes: Sequence[bool], k: int = DEFAULT_K, rounds: int | None = None
) -> KDecision:
    """The k-consecutive-passes rule over `outcomes` (True = the round passed), in round order.

    Outcomes past the decision are ignored: the rule is decided by the shortest prefix that
    decides it, as the rounds would have stopped there.
    """
    budget = check_k(k, rounds)
    run = 0
    for played, ok in enumerate(outcomes[:budget], start=1):
        run = run + 1 if ok else 0
        passes = sum(bool(o) for o in outcomes[:played])
        if run >= k:
            return KDecision(True, True, passes / played, played)
        if run + (budget - played) < k:
            return KDecision(True, False, passes / played, played)
    played = min(len(outcomes), budget)
    score = sum(bool(o) for o in outcomes[:played]) / played if played else None
    return KDecision(False, None, score, played)


__all__ = ["DEFAULT_K", "RULE", "KDecision", "check_k", "k_consecutive"]

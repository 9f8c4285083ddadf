"""Random streams derived from names, so every part of a run draws from its own stream.

A stream is keyed by the seed and the names of what it decides (agent, task, purpose): adding a
draw to one part of the generator leaves the bytes of every other part unchanged.
"""

from __future__ import annotations

import hashlib
import random


def rng(*parts: object) -> random.Random:
    """A generator seeded by sha256 of the parts (joined by the unit separator)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def stable_unit(*parts: object) -> float:
    """A number in [0, 1) fixed by the parts: a per-name choice without a stream."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32

"""Pool rules: only a pool's newest generation counts, and it is complete when all its slices are in."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol


class _SliceHeader(Protocol):
    name: str
    driver: str
    pool: str
    generation: int
    count: int


@dataclass(frozen=True, slots=True)
class PoolState:
    """The newest generation of one pool and whether all of its slices are present."""

    generation: int
    slices: int
    expected: int

    @property
    def complete(self) -> bool:
        """All ``resourceSliceCount`` slices of the newest generation are present."""
        return self.slices == self.expected


def pool_states(headers: Iterable[_SliceHeader]) -> dict[tuple[str, str], PoolState]:
    """The state of every (driver, pool) among the given slices (one pass)."""
    state: dict[tuple[str, str], list] = {}  # key -> [newest generation, its slice names, expected count]
    for h in headers:
        key = (h.driver, h.pool)
        seen = state.get(key)
        if seen is None or h.generation > seen[0]:
            state[key] = [h.generation, {h.name}, h.count]
        elif h.generation == seen[0]:
            seen[1].add(h.name)
            # Slices of one generation should agree; if they do not, the largest count is the safe reading.
            seen[2] = max(seen[2], h.count)
    return {key: PoolState(generation, len(names), expected) for key, (generation, names, expected) in state.items()}

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
    """The state of every (driver, pool) among the given slices."""
    newest: dict[tuple[str, str], int] = {}
    headers = list(headers)
    for h in headers:
        key = (h.driver, h.pool)
        if h.generation > newest.get(key, -1):
            newest[key] = h.generation
    names: dict[tuple[str, str], set[str]] = {}
    expected: dict[tuple[str, str], int] = {}
    for h in headers:
        key = (h.driver, h.pool)
        if h.generation == newest[key]:
            names.setdefault(key, set()).add(h.name)
            # Slices of one generation should agree; if they do not, the largest count is the safe reading.
            expected[key] = max(expected.get(key, 0), h.count)
    return {key: PoolState(newest[key], len(names[key]), expected[key]) for key in newest}
